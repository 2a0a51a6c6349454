//! Uploads: the bytes or a multipart form, by the seller only; every bad file refused with
//! nothing stored, neither rows nor bytes; at most 24 images; `replaceAll`.

use serde_json::{Value, json};

use super::{
    blob_files, image_count, jpeg, media_ids, multipart, new_ad, new_image, png, upload, upload_as,
    uploaded,
};
use crate::every_store;
use crate::helpers::{TestApp, expect_json, field_codes};

every_store!(
    an_upload_answers_with_the_new_images,
    a_multipart_form_adds_several_images,
    bad_files_are_refused_and_nothing_is_stored,
    an_ad_holds_at_most_24_images,
    replace_all_swaps_the_images,
    replace_all_is_true_or_false,
    only_the_seller_uploads,
    a_stranger_with_a_key_is_refused_before_the_body,
    a_keyed_list_of_urls_is_read_no_further_than_a_list_may_be,
    a_keyed_form_sent_again_with_another_boundary_is_the_same_request,
    a_body_cut_off_is_refused_as_such,
    the_seller_orders_the_images,
    uploads_at_the_same_moment_each_get_their_places,
    one_image_deleted_twice_at_once_is_deleted_once,
);

async fn an_upload_answers_with_the_new_images(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let response = upload(&app, &seller.token, &ad, "image/jpeg", jpeg(64, 48)).await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    // The body lists the new images: it is not the representation of the first.
    assert!(response.headers().get("content-location").is_none());
    let body = expect_json(response, 201).await;
    let images = body["_embedded"]["svc:advertisement-image"]
        .as_array()
        .unwrap();
    assert_eq!(images.len(), 1);
    let media_id = images[0]["mediaId"].as_str().unwrap();
    assert_eq!(location, format!("/v1/images/{media_id}"));
    assert_eq!(images[0]["imageId"], 1);
    assert_eq!(images[0]["_links"]["self"]["href"], location);
    assert_eq!(
        images[0]["_links"]["small"]["href"],
        format!("/v1/images/{media_id}/small/blob")
    );
    // The list, the image itself and the ad's embedded images agree.
    let list = expect_json(
        app.get_with(&format!("{ad}/images"), &seller.token).await,
        200,
    )
    .await;
    assert_eq!(
        list["_embedded"]["svc:advertisement-image"][0]["mediaId"],
        media_id
    );
    let one = expect_json(app.get_with(&location, &seller.token).await, 200).await;
    assert_eq!(one["mediaId"], media_id);
    assert_eq!(one["_links"]["svc:advertisement"]["href"], ad);
    assert_eq!(one["_links"]["curies"][0]["name"], "svc", "{one}");
    let read = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    let embedded =
        &read["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"][0];
    assert_eq!(embedded["mediaId"], media_id);
    assert_eq!(embedded["_links"]["self"]["href"], location, "its own link");
    // A search result carries the images once more, directly (as api.md and the
    // original's search results have them).
    let found = expect_json(
        app.get_with("/v1/search?query=fiets&withImages=true", &seller.token)
            .await,
        200,
    )
    .await;
    let result = &found["_embedded"]["svc:search-result"][0];
    assert_eq!(result["_links"]["self"]["href"], ad);
    assert_eq!(
        result["_embedded"]["svc:advertisement-image"],
        result["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"]
    );
    assert_eq!(
        result["_embedded"]["svc:advertisement-image"][0]["mediaId"],
        media_id
    );
    let second = uploaded(&app, &seller.token, &ad, "image/png", png(20, 20)).await;
    assert_eq!(second[0]["imageId"], 2, "after the first");
}

async fn a_multipart_form_adds_several_images(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let (content_type, body) = multipart(&[
        ("file", Some("image/jpeg"), jpeg(30, 20)),
        ("file", Some("image/png"), png(10, 10)),
        ("file", None, jpeg(12, 12)),
    ]);
    let added = expect_json(
        upload(&app, &seller.token, &ad, &content_type, body).await,
        201,
    )
    .await;
    let images = added["_embedded"]["svc:advertisement-image"]
        .as_array()
        .unwrap();
    let positions: Vec<&Value> = images.iter().map(|i| &i["imageId"]).collect();
    assert_eq!(positions, [&json!(1), &json!(2), &json!(3)]);
    assert_eq!(image_count(&app).await, 3);
}

/// Every bad file of issue 11's point 4 is refused with its status and code, and leaves the
/// database and the blob store as they were; a good file beside a bad one is not stored
/// either.
async fn bad_files_are_refused_and_nothing_is_stored(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let good = jpeg(64, 48);
    let truncated = good[..good.len() / 2].to_vec();
    let mut bomb = png(1, 1);
    bomb[16..20].copy_from_slice(&60_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&60_000u32.to_be_bytes());
    let crc = crc32(&bomb[12..29]);
    bomb[29..33].copy_from_slice(&crc.to_be_bytes());
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec();
    let oversized = {
        let mut big = jpeg(16, 16);
        big.resize(20 * 1024 * 1024 + 1, 0);
        big
    };
    let (form_type, form) = multipart(&[
        ("file", Some("image/jpeg"), good.clone()),
        ("file", Some("image/jpeg"), b"not an image".to_vec()),
    ]);
    let cases: Vec<(&str, String, Vec<u8>, u16, &str)> = vec![
        (
            "not an image",
            "image/jpeg".into(),
            b"<html>no</html>".to_vec(),
            400,
            "not-an-image",
        ),
        (
            "truncated",
            "image/jpeg".into(),
            truncated,
            400,
            "truncated",
        ),
        (
            "a lying type",
            "image/png".into(),
            good.clone(),
            400,
            "content-type-mismatch",
        ),
        ("a bomb", "image/png".into(), bomb, 400, "too-many-pixels"),
        (
            "unsupported",
            "image/gif".into(),
            gif,
            415,
            "unsupported-format",
        ),
        (
            "oversized",
            "image/jpeg".into(),
            oversized,
            413,
            "too-large",
        ),
        ("one bad file of two", form_type, form, 400, "not-an-image"),
    ];
    for (what, content_type, body, status, code) in cases {
        let refused = expect_json(
            upload(&app, &seller.token, &ad, &content_type, body).await,
            status,
        )
        .await;
        assert_eq!(refused["details"][0]["code"], code, "{what}: {refused}");
        assert_eq!(image_count(&app).await, 0, "{what}: no row");
        assert_eq!(
            blob_files(&app).await,
            Vec::<String>::new(),
            "{what}: no bytes"
        );
    }
    let text = app
        .post(&format!("{ad}/images"))
        .token(&seller.token)
        .body("text/plain", "hello")
        .send()
        .await;
    assert_eq!(
        expect_json(text, 400).await["code"],
        "incorrect-content-type"
    );
    assert_eq!(image_count(&app).await, 0);
}

async fn an_ad_holds_at_most_24_images(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let files: Vec<(&str, Option<&str>, Vec<u8>)> = (0..24)
        .map(|n| ("file", Some("image/png"), png(4 + n, 4)))
        .collect();
    let (content_type, body) = multipart(&files);
    expect_json(
        upload(&app, &seller.token, &ad, &content_type, body).await,
        201,
    )
    .await;
    let refused = expect_json(
        upload(&app, &seller.token, &ad, "image/png", png(5, 5)).await,
        400,
    )
    .await;
    assert_eq!(refused["details"][0]["code"], "too-many-images");
    assert_eq!(image_count(&app).await, 24);
    // Once the 24 are made, no original is left: the 25th stored none.
    for _ in 0..300 {
        if !blob_files(&app)
            .await
            .iter()
            .any(|f| f.contains("originals"))
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("originals left: {:?}", blob_files(&app).await);
}

/// Six uploads to one ad at once: each is stored, numbered after the others (on
/// PostgreSQL two transactions would otherwise number theirs after the same last image).
async fn uploads_at_the_same_moment_each_get_their_places(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let racing = (0..6).map(|n| {
        let (app, token, ad) = (&app, &seller.token, &ad);
        async move {
            let answer = upload(app, token, ad, "image/png", png(4 + n, 4)).await;
            answer.status().as_u16()
        }
    });
    let statuses = futures_util::future::join_all(racing).await;
    assert_eq!(statuses, [201; 6]);
    let list = expect_json(
        app.get_with(&format!("{ad}/images"), &seller.token).await,
        200,
    )
    .await;
    let numbers: Vec<i64> = list["_embedded"]["svc:advertisement-image"]
        .as_array()
        .unwrap()
        .iter()
        .map(|image| image["imageId"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
}

async fn replace_all_swaps_the_images(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let first = uploaded(&app, &seller.token, &ad, "image/png", png(8, 8)).await;
    let second = uploaded(&app, &seller.token, &ad, "image/png", png(9, 9)).await;
    let replaced = app
        .post(&format!("{ad}/images?replaceAll=true"))
        .token(&seller.token)
        .bytes("image/jpeg", jpeg(10, 10))
        .send()
        .await;
    let replaced = expect_json(replaced, 201).await;
    assert_eq!(
        replaced["_embedded"]["svc:advertisement-image"][0]["imageId"],
        1
    );
    let list = expect_json(
        app.get_with(&format!("{ad}/images"), &seller.token).await,
        200,
    )
    .await;
    let images = list["_embedded"]["svc:advertisement-image"]
        .as_array()
        .unwrap();
    assert_eq!(images.len(), 1);
    assert_eq!(
        images[0]["mediaId"],
        replaced["_embedded"]["svc:advertisement-image"][0]["mediaId"]
    );
    for gone in [&first, &second] {
        let gone = gone[0]["_links"]["self"]["href"].as_str().unwrap();
        assert_eq!(
            expect_json(app.get_with(gone, &seller.token).await, 404).await["code"],
            "image-not-found"
        );
    }
}

async fn replace_all_is_true_or_false(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    uploaded(&app, &seller.token, &ad, "image/png", png(8, 8)).await;
    let refused = app
        .post(&format!("{ad}/images?replaceAll=yes"))
        .token(&seller.token)
        .bytes("image/jpeg", jpeg(10, 10))
        .send()
        .await;
    let refused = expect_json(refused, 400).await;
    assert_eq!(refused["code"], "validation-failure");
    assert_eq!(refused["details"][0]["field"], "replaceAll");
    assert_eq!(refused["details"][0]["code"], "not-a-boolean");
    assert_eq!(
        image_count(&app).await,
        1,
        "nothing added, nothing replaced"
    );
    // Someone else is refused as such, not told what is wrong with the request.
    let other = app.user("ander@souk.test").await;
    let refused = app
        .post(&format!("{ad}/images?replaceAll=yes"))
        .token(&other.token)
        .bytes("image/jpeg", jpeg(10, 10))
        .send()
        .await;
    assert_eq!(expect_json(refused, 403).await["code"], "unauthorized");
    let (content_type, body) = multipart(&[
        ("replaceAll", None, b"maybe".to_vec()),
        ("file", Some("image/jpeg"), jpeg(12, 12)),
    ]);
    let refused = upload(&app, &seller.token, &ad, &content_type, body).await;
    assert_eq!(
        expect_json(refused, 400).await["details"][0]["field"],
        "replaceAll"
    );
    assert_eq!(image_count(&app).await, 1);
}

async fn only_the_seller_uploads(app: TestApp) {
    let (_, ad) = new_ad(&app).await;
    let other = app.user("ander@souk.test").await;
    let refused = upload(&app, &other.token, &ad, "image/jpeg", jpeg(8, 8)).await;
    assert_eq!(expect_json(refused, 403).await["code"], "unauthorized");
    let client = upload_as(&app, &app.token, &ad, "image/jpeg", jpeg(8, 8)).await;
    assert_eq!(client.status(), 403);
    // Someone else's bad file is 403 too: the body counts only for the seller.
    let bad = upload(&app, &other.token, &ad, "image/jpeg", b"nope".to_vec()).await;
    assert_eq!(expect_json(bad, 403).await["code"], "unauthorized");
    assert_eq!(image_count(&app).await, 0);
}

/// An `Idempotency-Key` does not make Souk read a body before it knows the caller may
/// upload (by the handler's own checks): an upload of 50 MB by someone else, a client or a
/// token without `write`, its first KiB sent and the rest held back, is answered 403 at
/// once. (The key's fingerprint read the whole body first, up to 480 MB by
/// default, for any caller, and the refusal came only after it.)
async fn a_stranger_with_a_key_is_refused_before_the_body(app: TestApp) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (seller, ad) = new_ad(&app).await;
    let other = app.user("ander@souk.test").await;
    // Someone else, a client, and the seller with a token that may only read.
    let read_only = app.token_of(&seller, Some("read")).await;
    for token in [other.token.as_str(), app.token.as_str(), read_only.as_str()] {
        let address = app.url("").trim_start_matches("http://").to_owned();
        let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
        let head = format!(
            "POST {ad}/images HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
             Idempotency-Key: vreemd\r\nContent-Type: image/jpeg\r\n\
             Content-Length: 50000000\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&[0xFF; 1024]).await.unwrap();
        let mut answer = vec![0; 12];
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            stream.read_exact(&mut answer),
        )
        .await;
        assert!(read.is_ok(), "no answer while the body is held back");
        assert_eq!(String::from_utf8_lossy(&answer), "HTTP/1.1 403");
    }
    assert_eq!(image_count(&app).await, 0);
    // The seller's upload with a key is kept and replayed.
    let with_key = || {
        app.post(&format!("{ad}/images"))
            .token(&seller.token)
            .header("idempotency-key", "eigen")
            .bytes("image/jpeg", jpeg(8, 8))
            .send()
    };
    let first = expect_json(with_key().await, 201).await;
    let again = with_key().await;
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    assert_eq!(expect_json(again, 201).await, first);
    assert_eq!(image_count(&app).await, 1);
}

/// With an `Idempotency-Key` the body is read before the handler, for the key's
/// fingerprint: no further than the handler would read it, the room reserved for it in
/// the upload budget. A list of URLs that runs past 256 KiB is 413 at once, the rest of a
/// body announced as 50 MB held back. (The key's reading went on to 480 MB, every
/// image of an ad, against the 512 KiB reserved for a list.)
async fn a_keyed_list_of_urls_is_read_no_further_than_a_list_may_be(app: TestApp) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (seller, ad) = new_ad(&app).await;
    let address = app.url("").trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST {ad}/images HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\
         Idempotency-Key: lange-lijst\r\nContent-Type: application/json\r\n\
         Content-Length: 50000000\r\n\r\n",
        seller.token
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(b"{\"urls\": [\"").await.unwrap();
    stream.write_all(&[b'a'; 300 * 1024]).await.unwrap();
    let mut answer = vec![0; 12];
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_exact(&mut answer),
    )
    .await;
    assert!(
        read.is_ok(),
        "no answer while the rest of the body is held back"
    );
    assert_eq!(String::from_utf8_lossy(&answer), "HTTP/1.1 413");
    assert_eq!(image_count(&app).await, 0);
}

/// A client draws a form's boundary afresh for each request: a retry of a keyed upload
/// with the same files under another boundary is the same request, and is replayed (it was
/// 422, every retry another request); other files under the key are another request. So
/// is a retry whose token, sent as `access_token`, was refreshed meanwhile.
async fn a_keyed_form_sent_again_with_another_boundary_is_the_same_request(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let files = |second: Vec<u8>| {
        vec![
            ("file", Some("image/jpeg"), jpeg(30, 20)),
            ("file", Some("image/png"), second),
        ]
    };
    let send = |boundary: &'static str,
                parts: Vec<(&'static str, Option<&'static str>, Vec<u8>)>| {
        let (content_type, body) = super::multipart_with_boundary(boundary, &parts);
        app.post(&format!("{ad}/images"))
            .token(&seller.token)
            .header("idempotency-key", "formulier")
            .bytes(&content_type, body)
            .send()
    };
    let first = expect_json(send("grens-een", files(png(10, 10))).await, 201).await;
    let again = send("grens-twee", files(png(10, 10))).await;
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    assert_eq!(expect_json(again, 201).await, first);
    assert_eq!(image_count(&app).await, 2);
    let other = expect_json(send("grens-drie", files(png(11, 10))).await, 422).await;
    assert_eq!(other["code"], "idempotency-key-reused");
    // The token in the query, refreshed between the two.
    let path = |token: &str| format!("{ad}/images?access_token={token}&replaceAll=false");
    let retry = |token: String| {
        app.post(&path(&token))
            .header("idempotency-key", "vernieuwd")
            .bytes("image/jpeg", jpeg(8, 8))
            .send()
    };
    let before = app.token_of(&seller, None).await;
    let after = app.token_of(&seller, None).await;
    assert_ne!(before, after);
    let first = expect_json(retry(before).await, 201).await;
    let again = retry(after).await;
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    assert_eq!(expect_json(again, 201).await, first);
    assert_eq!(image_count(&app).await, 3);
}

/// An upload whose body stops short of its `Content-Length` (the client's connection
/// dropped, a proxy cut it) is 400 `invalid-request`, with a key or without: not 413,
/// which would tell the client to send a smaller file. Nothing is stored.
async fn a_body_cut_off_is_refused_as_such(app: TestApp) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (seller, ad) = new_ad(&app).await;
    let token = &seller.token;
    for key in ["", "Idempotency-Key: afgebroken\r\n"] {
        let address = app.url("").trim_start_matches("http://").to_owned();
        let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
        let head = format!(
            "POST {ad}/images HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
             {key}Content-Type: image/jpeg\r\nContent-Length: 5000\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&jpeg(64, 48)[..1000]).await.unwrap();
        stream.shutdown().await.unwrap();
        let mut answer = String::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            stream.read_to_string(&mut answer),
        )
        .await;
        assert!(read.is_ok(), "no answer to a cut-off body");
        assert!(answer.starts_with("HTTP/1.1 400"), "{key}: {answer}");
        assert!(
            answer.contains("\"code\":\"invalid-request\""),
            "{key}: {answer}"
        );
    }
    assert_eq!(image_count(&app).await, 0);
}

/// `PUT {ad}/images/order` puts every image of the ad in the order given; the ad, its
/// list of images and the order's answer all show that order, and a list that is not the
/// ad's images, each once, is refused and changes nothing.
async fn the_seller_orders_the_images(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let (content_type, body) = multipart(&[
        ("file", Some("image/jpeg"), jpeg(30, 20)),
        ("file", Some("image/png"), png(10, 10)),
        ("file", Some("image/jpeg"), jpeg(12, 12)),
    ]);
    let added = expect_json(
        upload(&app, &seller.token, &ad, &content_type, body).await,
        201,
    )
    .await;
    let uploaded = media_ids(&added);
    let embedded = |read: &Value| media_ids(&read["_embedded"]["svc:advertisement-images"]);
    let order = |ids: &[String]| {
        app.put(&format!("{ad}/images/order"))
            .token(&seller.token)
            .json(&json!({ "mediaIds": ids }))
            .send()
    };
    let reversed: Vec<String> = uploaded.iter().rev().cloned().collect();
    let answer = expect_json(order(&reversed).await, 200).await;
    assert_eq!(media_ids(&answer), reversed);
    let read = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(embedded(&read), reversed, "the ad's embedded images");
    let positions: Vec<&Value> =
        read["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| &i["imageId"])
            .collect();
    assert_eq!(positions, [&json!(1), &json!(2), &json!(3)]);
    let list = expect_json(
        app.get_with(&format!("{ad}/images"), &seller.token).await,
        200,
    )
    .await;
    assert_eq!(media_ids(&list), reversed);
    // Not each image once: refused, and the order stays.
    let [first, second, third] = [0, 1, 2].map(|i| uploaded[i].clone());
    for wrong in [
        vec![first.clone(), second.clone()],
        vec![first.clone(), first, second, third],
    ] {
        let refused = expect_json(order(&wrong).await, 400).await;
        assert_eq!(refused["details"][0]["field"], "mediaIds");
        assert_eq!(refused["details"][0]["code"], "not-the-images");
    }
    // Not a list, or no list: a field error too.
    for (body, code) in [
        (json!({ "mediaIds": uploaded[0] }), "invalid-value"),
        (json!({}), "missing"),
    ] {
        let put = app.put(&format!("{ad}/images/order")).token(&seller.token);
        let refused = expect_json(put.json(&body).send().await, 400).await;
        assert_eq!(
            field_codes(&refused),
            [("mediaIds".to_owned(), code.to_owned())]
        );
    }
    let read = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(embedded(&read), reversed, "unchanged by the refusals");
    // A media id is read in either case, as in a path.
    let shouted: Vec<String> = uploaded.iter().map(|id| id.to_uppercase()).collect();
    let answer = expect_json(order(&shouted).await, 200).await;
    assert_eq!(media_ids(&answer), uploaded);
    let answer = expect_json(order(&reversed).await, 200).await;
    assert_eq!(media_ids(&answer), reversed);

    // Deleting the first image moves the others up: `imageId` stays the position from 1.
    let deleted = app
        .delete(&format!("/v1/images/{}", reversed[0]))
        .token(&seller.token)
        .send()
        .await;
    assert_eq!(deleted.status(), 204);
    let list = expect_json(
        app.get_with(&format!("{ad}/images"), &seller.token).await,
        200,
    )
    .await;
    assert_eq!(media_ids(&list), reversed[1..]);
    let positions: Vec<&Value> = list["_embedded"]["svc:advertisement-image"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["imageId"])
        .collect();
    assert_eq!(positions, [&json!(1), &json!(2)]);
}

/// The CRC of a PNG chunk (type and data), so that a doctored header is well formed.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[tokio::test]
async fn an_upload_is_bounded_as_a_whole_sqlite() {
    an_upload_is_bounded_as_a_whole(crate::helpers::Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn an_upload_is_bounded_as_a_whole_postgres() {
    an_upload_is_bounded_as_a_whole(crate::helpers::Backend::Postgres).await;
}

/// Each file of a form is bounded, and so is the whole body (files, at most an ad's number
/// of them, and room for the form's own text): what a form carries besides files (a
/// preamble, a long `replaceAll`) is not read without end.
async fn an_upload_is_bounded_as_a_whole(backend: crate::helpers::Backend) {
    let settings = [
        ("SOUK_MAX_IMAGE_BYTES", "10000"),
        ("SOUK_MAX_IMAGES_PER_AD", "2"),
    ];
    let app = TestApp::start_with(
        backend,
        &format!("uploads::bounded::{backend:?}"),
        &settings,
    )
    .await;
    let (seller, ad) = new_ad(&app).await;

    // 200 KB before the first part: past 2 files of 10 KB and 64 KB of form.
    let (content_type, form) = multipart(&[("file", Some("image/png"), png(8, 8))]);
    let mut body = vec![b'x'; 200 * 1024];
    body.extend_from_slice(b"\r\n");
    body.extend_from_slice(&form);
    let refused = upload(&app, &seller.token, &ad, &content_type, body).await;
    assert_eq!(expect_json(refused, 413).await["code"], "payload-too-large");
    assert_eq!(image_count(&app).await, 0);

    // A `replaceAll` of 50 KB is read as far as a boolean could go.
    let (content_type, body) = multipart(&[
        ("replaceAll", None, vec![b'y'; 50 * 1024]),
        ("file", Some("image/png"), png(8, 8)),
    ]);
    let refused = expect_json(
        upload(&app, &seller.token, &ad, &content_type, body).await,
        400,
    )
    .await;
    assert_eq!(refused["details"][0]["code"], "not-a-boolean");
    let echoed = refused["details"][0]["value"].as_str().unwrap();
    assert!(echoed.len() <= 64, "{} bytes echoed", echoed.len());

    // The same form without the preamble is taken.
    let (content_type, body) = multipart(&[("file", Some("image/png"), png(8, 8))]);
    expect_json(
        upload(&app, &seller.token, &ad, &content_type, body).await,
        201,
    )
    .await;
}

/// Two deletions of one image at the same moment (a double click): one deletes it (204),
/// the other finds it gone (404). On PostgreSQL both read the image before either held
/// the ad, and both answered 204. Five rounds, since a round may not overlap.
async fn one_image_deleted_twice_at_once_is_deleted_once(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let item = ad.rsplit('/').next().unwrap().to_owned();
    for round in 0..5 {
        let media_id = new_image(&app, &seller.token, &item).await;
        let delete = || {
            app.delete(&format!("/v1/images/{media_id}"))
                .token(&seller.token)
                .send()
        };
        let (one, other) = tokio::join!(delete(), delete());
        let mut statuses = [one.status().as_u16(), other.status().as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [204, 404], "round {round}");
        assert_eq!(image_count(&app).await, 0, "round {round}");
    }
}

/// Uploads take room in a budget of memory (`SOUK_UPLOAD_MEMORY_BYTES`) before their bodies
/// are read, and wait for it: while a first upload holds room for a body still coming, a
/// second that does not fit beside it waits, and goes once the first is answered.
#[tokio::test]
async fn uploads_wait_their_turn_for_memory() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let settings = [("SOUK_UPLOAD_MEMORY_BYTES", "1048576")];
    let app =
        TestApp::start_with(crate::helpers::Backend::Sqlite, "upload_budget", &settings).await;
    let (seller, ad) = new_ad(&app).await;
    let reserved = || async {
        let metrics = app.get("/metrics").await.text().await.unwrap();
        let line = metrics
            .lines()
            .find_map(|line| line.strip_prefix("souk_upload_memory_reserved_bytes "))
            .expect("the gauge")
            .to_owned();
        line.parse::<usize>().unwrap()
    };
    let (first_image, second_image) = (noise_png(490, 490), noise_png(370, 370));
    assert!(
        first_image.len() + second_image.len() > 1 << 20,
        "together past the budget"
    );
    // The first sends its head and a little of its body, and holds its room.
    let address = app.url("").trim_start_matches("http://").to_owned();
    let mut first = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST {ad}/images HTTP/1.1\r\nHost: souk\r\nAuthorization: Bearer {}\r\n\
         Content-Type: image/png\r\nContent-Length: {}\r\n\r\n",
        seller.token,
        first_image.len()
    );
    first.write_all(head.as_bytes()).await.unwrap();
    first.write_all(&first_image[..1000]).await.unwrap();
    let held = first_image.len().div_ceil(1024) * 1024;
    let mut now = 0;
    for _ in 0..100 {
        now = reserved().await;
        if now == held {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        now, held,
        "room for the first body, reserved before it is read"
    );
    // The second does not fit beside it: it waits, promised what room there is.
    let second = {
        let request = app
            .post(&format!("{ad}/images"))
            .token(&seller.token)
            .bytes("image/png", second_image);
        tokio::spawn(async move { request.send().await.status().as_u16() })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!second.is_finished(), "the second waits for room");
    assert_eq!(reserved().await, 1 << 20, "the rest promised to the second");
    // The rest of the first: it is answered, and the second goes.
    first.write_all(&first_image[1000..]).await.unwrap();
    let mut answer = [0; 12];
    first.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 201");
    assert_eq!(second.await.unwrap(), 201);
    assert_eq!(image_count(&app).await, 2);
    for _ in 0..100 {
        if reserved().await == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("room still reserved after both uploads were answered");
}

/// The JSON form reserves room for its short list, gives it back once the list is read, and
/// only then waits for room for the downloads: holding one while waiting for the other, a
/// list sent chunked (its room the most a list may be) with a key (twice that) waited for
/// itself until its request timed out.
#[tokio::test]
async fn an_import_by_url_never_waits_for_its_own_room() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let settings = [
        ("SOUK_UPLOAD_MEMORY_BYTES", "1048576"),
        ("SOUK_REQUEST_TIMEOUT_SECS", "5"),
    ];
    let app = TestApp::start_with(
        crate::helpers::Backend::Sqlite,
        "upload_import_room",
        &settings,
    )
    .await;
    let (seller, ad) = new_ad(&app).await;
    let urls: Vec<String> = (0..4)
        .map(|n| format!("http://127.0.0.1:9/{n}.jpg"))
        .collect();
    let body = json!({ "urls": urls }).to_string();
    let address = app.url("").trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let request = format!(
        "POST {ad}/images HTTP/1.1\r\nHost: souk\r\nAuthorization: Bearer {}\r\n\
         Idempotency-Key: lijst\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        seller.token,
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    // Loopback is no address an import may reach: every URL is a field error, at once.
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("address-refused"), "{answer}");
}

/// A PNG of noise, which does not compress: about 3 bytes a pixel.
fn noise_png(width: u32, height: u32) -> Vec<u8> {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64 ^ u64::from(width);
    let image = image::RgbImage::from_fn(width, height, |_, _| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let [r, g, b, ..] = seed.to_le_bytes();
        image::Rgb([r, g, b])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}
