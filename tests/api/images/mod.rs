//! Images (issue 11): the storage model under them, uploads, renditions and the answers
//! that serve them, on both backends. The helpers here make images and read what is stored.

mod crash;
mod renditions;
mod storage;
mod uploads;

use std::io::Cursor;

use serde_json::Value;

use crate::ads::{created, minimal};
use crate::helpers::{TestApp, User, expect_json};

pub fn encoded(format: image::ImageFormat, width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x * 7 % 256) as u8, (y * 5 % 256) as u8, 120])
    });
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

pub fn jpeg(width: u32, height: u32) -> Vec<u8> {
    encoded(image::ImageFormat::Jpeg, width, height)
}

pub fn png(width: u32, height: u32) -> Vec<u8> {
    encoded(image::ImageFormat::Png, width, height)
}

/// A `multipart/form-data` body of `(field, content type, bytes)`: its content type and
/// bytes.
pub fn multipart(parts: &[(&str, Option<&str>, Vec<u8>)]) -> (String, Vec<u8>) {
    multipart_with_boundary("souk-test-boundary-7c1f", parts)
}

/// A form of `parts` whose boundary is `boundary` (a client draws one for each request).
pub fn multipart_with_boundary(
    boundary: &str,
    parts: &[(&str, Option<&str>, Vec<u8>)],
) -> (String, Vec<u8>) {
    let mut body = Vec::new();
    for (n, (field, content_type, bytes)) in parts.iter().enumerate() {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        body.extend_from_slice(
            format!("Content-Disposition: form-data; name=\"{field}\"; filename=\"f{n}\"\r\n")
                .as_bytes(),
        );
        if let Some(content_type) = content_type {
            body.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// A seller and the path of a new online ad of theirs.
pub async fn new_ad(app: &TestApp) -> (User, String) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(app, &seller.token, &minimal("Fiets met foto's")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    (seller, path)
}

pub async fn upload(
    app: &TestApp,
    token: &str,
    ad: &str,
    content_type: &str,
    body: Vec<u8>,
) -> reqwest::Response {
    upload_as(app, token, ad, content_type, body).await
}

pub async fn upload_as(
    app: &TestApp,
    token: &str,
    ad: &str,
    content_type: &str,
    body: Vec<u8>,
) -> reqwest::Response {
    app.post(&format!("{ad}/images"))
        .token(token)
        .bytes(content_type, body)
        .send()
        .await
}

/// The media ids of a list of images (its `_embedded` images), in order.
pub fn media_ids(list: &Value) -> Vec<String> {
    list["_embedded"]["svc:advertisement-image"]
        .as_array()
        .unwrap()
        .iter()
        .map(|image| image["mediaId"].as_str().unwrap().to_owned())
        .collect()
}

/// Uploads one file; the new images.
pub async fn uploaded(
    app: &TestApp,
    token: &str,
    ad: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Vec<Value> {
    let answer = expect_json(upload(app, token, ad, content_type, body).await, 201).await;
    answer["_embedded"]["svc:advertisement-image"]
        .as_array()
        .unwrap()
        .clone()
}

/// How many image rows there are.
pub async fn image_count(app: &TestApp) -> i64 {
    app.db
        .read(|conn| {
            Box::pin(async move {
                conn.query_one("SELECT COUNT(*) AS n FROM images", &[])
                    .await?
                    .get::<i64>("n")
            })
        })
        .await
        .unwrap()
}

/// Every key in the app's blob store (originals and renditions), sorted.
pub async fn blob_files(app: &TestApp) -> Vec<String> {
    app.blobs.keys().await.expect("list the blob store")
}

/// A new image of the ad `item` (just uploaded: processing); its mediaId.
pub async fn new_image(app: &TestApp, token: &str, item: &str) -> String {
    let images = uploaded(
        app,
        token,
        &format!("/v1/advertisements/{item}"),
        "image/png",
        png(6, 4),
    )
    .await;
    images[0]["mediaId"].as_str().unwrap().to_owned()
}

/// A new image of the ad `item` whose renditions exist; its mediaId.
pub async fn available_image(app: &TestApp, token: &str, item: &str) -> String {
    let media_id = new_image(app, token, item).await;
    wait_until_available(app, token, &media_id).await;
    media_id
}

/// Waits (up to 30 s) until the rendition workers made an image's renditions.
pub async fn wait_until_available(app: &TestApp, token: &str, media_id: &str) -> Value {
    for _ in 0..300 {
        let image = expect_json(
            app.get_with(&format!("/v1/images/{media_id}"), token).await,
            200,
        )
        .await;
        if image["status"] == "available" {
            return image;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{media_id} did not become available");
}
