//! Renditions: a 12-megapixel phone photo with an EXIF orientation and a GPS position comes
//! back as four upright renditions without any metadata; blobs carry strong ETags and
//! long-lived caching; WebP where `Accept` prefers it; deleting frees the blobs; an image
//! is seen by whoever may see its ad.

use image::ImageFormat;
use serde_json::{Value, json};

use super::{
    available_image, blob_files, encoded, image_count, multipart, new_ad, new_image, uploaded,
    wait_until_available,
};
use crate::ads::{created, minimal, status};
use crate::helpers::{TestApp, expect_json, field_codes};
use crate::{both_backends, every_store};

every_store!(
    a_phone_photo_comes_back_upright_without_metadata,
    deleting_an_image_frees_its_blobs,
    deleting_an_ad_removes_its_images,
    an_image_is_seen_as_its_ad_is,
    a_change_elsewhere_reaches_blob_answers_within_the_bound,
);

both_backends!(
    a_blob_store_that_fails_is_unavailable_not_a_missing_image,
    an_image_that_does_not_decode_goes_and_the_next_moves_up,
);

/// A JPEG as a phone writes it: `width` x `height` stored with EXIF orientation 6 (turn 90
/// degrees clockwise to show) and a GPS position. The stored image's top-left quarter is
/// red, the rest grey.
fn phone_photo(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        if x < width / 2 && y < height / 2 {
            image::Rgb([220, 20, 20])
        } else {
            image::Rgb([128, 128, 128])
        }
    });
    let mut jpeg = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut jpeg), ImageFormat::Jpeg)
        .unwrap();
    let exif = exif_with_orientation_and_gps(6);
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&((exif.len() + 2) as u16).to_be_bytes());
    segment.extend_from_slice(&exif);
    // Right after SOI, where cameras put it.
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&segment);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// `Exif\0\0` and a little-endian TIFF: IFD0 with Orientation and a GPS IFD pointer; the
/// GPS IFD with latitude 52°22'N.
fn exif_with_orientation_and_gps(orientation: u16) -> Vec<u8> {
    let mut tiff: Vec<u8> = b"II*\0".to_vec();
    tiff.extend_from_slice(&8u32.to_le_bytes());
    let entry = |tag: u16, kind: u16, count: u32, value: u32| {
        let mut e = tag.to_le_bytes().to_vec();
        e.extend_from_slice(&kind.to_le_bytes());
        e.extend_from_slice(&count.to_le_bytes());
        e.extend_from_slice(&value.to_le_bytes());
        e
    };
    // IFD0 at 8: 2 entries (2 + 2*12 + 4 = 30 bytes), the GPS IFD at 38.
    tiff.extend_from_slice(&2u16.to_le_bytes());
    tiff.extend(entry(0x0112, 3, 1, u32::from(orientation)));
    tiff.extend(entry(0x8825, 4, 1, 38));
    tiff.extend_from_slice(&0u32.to_le_bytes());
    // GPS IFD at 38: 2 entries (30 bytes), the latitude's rationals at 68.
    tiff.extend_from_slice(&2u16.to_le_bytes());
    tiff.extend(entry(0x0001, 2, 2, u32::from_le_bytes(*b"N\0\0\0")));
    tiff.extend(entry(0x0002, 5, 3, 68));
    tiff.extend_from_slice(&0u32.to_le_bytes());
    for (numerator, denominator) in [(52u32, 1u32), (22, 1), (0, 1)] {
        tiff.extend_from_slice(&numerator.to_le_bytes());
        tiff.extend_from_slice(&denominator.to_le_bytes());
    }
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend(tiff);
    exif
}

async fn blob(
    app: &TestApp,
    token: &str,
    media_id: &str,
    size: &str,
    accept: &str,
) -> reqwest::Response {
    app.request(
        reqwest::Method::GET,
        &format!("/v1/images/{media_id}/{size}/blob"),
    )
    .token(token)
    .header("accept", accept)
    .send()
    .await
}

async fn a_phone_photo_comes_back_upright_without_metadata(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let photo = phone_photo(4000, 3000);
    assert!(
        photo.windows(4).any(|w| w == b"Exif"),
        "the upload has EXIF"
    );
    let images = uploaded(&app, &seller.token, &ad, "image/jpeg", photo).await;
    let media_id = images[0]["mediaId"].as_str().unwrap().to_owned();
    assert_eq!(images[0]["status"], "processing");
    wait_until_available(&app, &seller.token, &media_id).await;
    // Shown upright, the photo is 3000 x 4000.
    for (size, width, height) in [
        ("small", 150, 200),
        ("medium", 375, 500),
        ("large", 768, 1024),
        ("xlarge", 1200, 1600),
    ] {
        let response = blob(&app, &seller.token, &media_id, size, "image/jpeg").await;
        assert_eq!(response.status(), 200, "{size}");
        let headers = response.headers().clone();
        assert_eq!(headers["content-type"], "image/jpeg");
        assert_eq!(
            headers["cache-control"],
            "private, max-age=31536000, immutable"
        );
        let bytes = response.bytes().await.unwrap().to_vec();
        let sha = souk::images::blobs::sha256_hex(&bytes);
        assert_eq!(
            headers["etag"],
            format!("\"{sha}\""),
            "strong: the bytes' SHA-256"
        );
        assert!(
            !bytes.windows(4).any(|w| w == b"Exif") && !bytes.windows(2).any(|w| w == [0xFF, 0xE1]),
            "{size}: no EXIF, no APP1"
        );
        let decoded = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(decoded.dimensions(), (width, height), "{size}");
        // Turned clockwise: the stored top-left (red) is now the top-right.
        let red = |x: u32, y: u32| {
            let [r, g, _] = decoded.get_pixel(x, y).0;
            r > 180 && g < 80
        };
        assert!(red(width * 3 / 4, height / 4), "{size}: top-right is red");
        assert!(!red(width / 4, height / 4), "{size}: top-left is not");
        let meta_path = format!("/v1/images/{media_id}/{size}/meta");
        let mut meta = expect_json(app.get_with(&meta_path, &seller.token).await, 200).await;
        let links = meta.as_object_mut().unwrap().remove("_links").unwrap();
        assert_eq!(links["self"]["href"], meta_path);
        assert_eq!(
            links["svc:image-blob"]["href"],
            format!("/v1/images/{media_id}/{size}/blob")
        );
        assert_eq!(
            meta,
            serde_json::json!({"width": width, "height": height, "contentType": "image/jpeg",
                               "bytes": bytes.len(), "sha256": sha})
        );
        let again = app
            .request(
                reqwest::Method::GET,
                &format!("/v1/images/{media_id}/{size}/blob"),
            )
            .token(&seller.token)
            .header("if-none-match", format!("\"{sha}\""))
            .send()
            .await;
        assert_eq!(again.status(), 304, "{size}");
    }
    // WebP follows the JPEGs; a client that prefers it gets it.
    let mut webp: Option<Vec<u8>> = None;
    for _ in 0..300 {
        let response = blob(
            &app,
            &seller.token,
            &media_id,
            "large",
            "image/webp,image/*;q=0.8",
        )
        .await;
        if response.headers()["content-type"] == "image/webp" {
            webp = Some(response.bytes().await.unwrap().to_vec());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let webp = webp.expect("a WebP rendition");
    let decoded = image::load_from_memory_with_format(&webp, ImageFormat::WebP).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (768, 1024));
    // The original (with its GPS position) is gone once the renditions exist.
    let mut originals = Vec::new();
    for _ in 0..100 {
        originals = blob_files(&app)
            .await
            .into_iter()
            .filter(|f| f.contains("originals"))
            .collect();
        if originals.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(originals, Vec::<String>::new());
}

async fn deleting_an_image_frees_its_blobs(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let first = uploaded(
        &app,
        &seller.token,
        &ad,
        "image/png",
        encoded(ImageFormat::Png, 40, 30),
    )
    .await;
    let same = uploaded(
        &app,
        &seller.token,
        &ad,
        "image/png",
        encoded(ImageFormat::Png, 40, 30),
    )
    .await;
    let id = |images: &Vec<Value>| images[0]["mediaId"].as_str().unwrap().to_owned();
    let (first, same) = (id(&first), id(&same));
    wait_until_available(&app, &seller.token, &first).await;
    wait_until_available(&app, &seller.token, &same).await;
    let settled = || async {
        for _ in 0..100 {
            if !blob_files(&app)
                .await
                .iter()
                .any(|f| f.contains("originals"))
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        blob_files(&app).await
    };
    let both = settled().await;
    assert!(!both.is_empty());
    // Identical renditions are one blob: the second image added none.
    let deleted = app
        .delete(&format!("/v1/images/{first}"))
        .token(&seller.token)
        .send()
        .await;
    assert_eq!(deleted.status(), 204);
    // The sweeper the deletion woke may not have run yet: one more sweep, to be sure.
    souk::usecase::images::sweep(&app.db, &app.blobs, &app.clock).await;
    assert_eq!(
        blob_files(&app).await,
        both,
        "the other image still uses every blob"
    );
    let gone = expect_json(
        app.get_with(&format!("/v1/images/{first}"), &seller.token)
            .await,
        404,
    )
    .await;
    assert_eq!(gone["code"], "image-not-found");
    let deleted = app
        .delete(&format!("/v1/images/{same}"))
        .token(&seller.token)
        .send()
        .await;
    assert_eq!(deleted.status(), 204);
    // The sweeper, woken by the deletion, frees them soon after the answer.
    until_no_bytes(&app, "the last reference freed them").await;
}

/// Deleting an ad, with DELETE or by setting its status, removes its images: a deleted ad
/// is shown to no one ever again, so they would only take room. Their blobs go with the
/// last reference, and the original of one still being made goes too.
async fn deleting_an_ad_removes_its_images(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let item = ad.rsplit('/').next().unwrap().to_owned();
    available_image(&app, &seller.token, &item).await;
    let second = created(&app, &seller.token, &minimal("Tweede fiets")).await;
    let second_path = second["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    let second_item = second["itemId"].as_str().unwrap().to_owned();
    new_image(&app, &seller.token, &second_item).await;
    assert_eq!(image_count(&app).await, 2);

    let deleted = app.delete(&ad).token(&seller.token).send().await;
    assert_eq!(deleted.status(), 204);
    let changed = expect_json(
        status(&app, &seller.token, &second_path, "deleted").await,
        200,
    )
    .await;
    assert_eq!(
        changed["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"],
        serde_json::json!([]),
        "the deleted ad's answer shows no image"
    );
    assert_eq!(image_count(&app).await, 0, "no image row is left");
    until_no_bytes(&app, "the deleted ads' bytes are freed").await;
}

/// Waits (up to 10 s) until the blob store holds nothing: the sweeper, woken by a
/// deletion, runs after its answer.
async fn until_no_bytes(app: &TestApp, what: &str) {
    for _ in 0..100 {
        if blob_files(app).await.is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{what}: not within 10 s, {:?}", blob_files(app).await);
}

/// The statuses of the image, its blob and its meta for `token`; each refusal must be the
/// image's 404.
async fn image_answers(app: &TestApp, token: &str, media_id: &str) -> [u16; 3] {
    let mut statuses = [0; 3];
    for (status, path) in statuses.iter_mut().zip([
        format!("/v1/images/{media_id}"),
        format!("/v1/images/{media_id}/small/blob"),
        format!("/v1/images/{media_id}/large/meta"),
    ]) {
        let answer = app.get_with(&path, token).await;
        *status = answer.status().as_u16();
        if *status == 404 {
            assert_eq!(
                expect_json(answer, 404).await["code"],
                "image-not-found",
                "{path}"
            );
        } else if *status == 400 {
            let error = expect_json(answer, 400).await;
            assert_eq!(error["details"][0]["field"], "mediaId", "{path}");
        }
    }
    statuses
}

/// An image, its blobs and its meta are seen by whoever may see its ad: anyone while the
/// ad is online, its seller alone while it is paused, nobody once it is deleted.
async fn an_image_is_seen_as_its_ad_is(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let other = app.user("koper@souk.test").await;
    let item = ad.rsplit('/').next().unwrap();
    let media_id = available_image(&app, &seller.token, item).await;
    assert_eq!(
        image_answers(&app, &seller.token, &media_id).await,
        [200; 3]
    );
    assert_eq!(image_answers(&app, &other.token, &media_id).await, [200; 3]);
    let upper = media_id.to_uppercase();
    assert_eq!(
        image_answers(&app, &other.token, &upper).await,
        [200; 3],
        "one id"
    );

    expect_json(status(&app, &seller.token, &ad, "paused").await, 200).await;
    assert_eq!(image_answers(&app, &other.token, &media_id).await, [404; 3]);
    assert_eq!(
        image_answers(&app, &seller.token, &media_id).await,
        [200; 3]
    );

    expect_json(status(&app, &seller.token, &ad, "online").await, 200).await;
    assert_eq!(image_answers(&app, &other.token, &media_id).await, [200; 3]);

    let deleted = app.delete(&ad).token(&seller.token).send().await;
    assert_eq!(deleted.status(), 204);
    assert_eq!(
        image_answers(&app, &seller.token, &media_id).await,
        [404; 3]
    );
    assert_eq!(image_answers(&app, &other.token, &media_id).await, [404; 3]);
    // The id in upper case is the same id; an id of the right shape that no image has is
    // not found.
    let unknown = "0b1e3c62-5d1f-4c7e-9a0f-1d2e3f405162";
    for gone in [media_id.to_uppercase().as_str(), unknown] {
        assert_eq!(image_answers(&app, &seller.token, gone).await, [404; 3]);
        let delete = app
            .delete(&format!("/v1/images/{gone}"))
            .token(&seller.token);
        let answer = expect_json(delete.send().await, 404).await;
        assert_eq!(answer["code"], "image-not-found", "{gone}");
    }
    // Ids that no image could have (PostgreSQL refuses a NUL in text): malformed, 400.
    for malformed in ["%00", "x%00y", "0"] {
        assert_eq!(
            image_answers(&app, &seller.token, malformed).await,
            [400; 3],
            "{malformed}"
        );
        let delete = app
            .delete(&format!("/v1/images/{malformed}"))
            .token(&seller.token);
        let answer = expect_json(delete.send().await, 400).await;
        assert_eq!(
            field_codes(&answer),
            [("mediaId".to_owned(), "invalid-value".to_owned())]
        );
    }
}

/// A blob answer's lookup is kept (`usecase::images::RenditionLookups`): a change made by
/// another process (another replica; here a second handle on the database, whose writes
/// this server does not count) reaches it within the bound, as a revoked token does; a
/// change through this server at once (`an_image_is_seen_as_its_ad_is`).
async fn a_change_elsewhere_reaches_blob_answers_within_the_bound(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let other = app.user("koper@souk.test").await;
    let item = ad.rsplit('/').next().unwrap();
    let media_id = available_image(&app, &seller.token, item).await;
    let blob = format!("/v1/images/{media_id}/small/blob");
    assert_eq!(app.get_with(&blob, &other.token).await.status(), 200);

    let elsewhere = souk::store::Db::open(&app.database_url, &Default::default())
        .await
        .unwrap();
    let (number, now) = (
        souk::domain::advertisement::ItemId::parse(item)
            .unwrap()
            .number(),
        app.clock.now(),
    );
    let paused = elsewhere
        .write(move |conn| {
            Box::pin(async move {
                let record = souk::store::ads::get(conn, number).await?.unwrap();
                let status = souk::domain::advertisement::AdStatus::Paused;
                souk::store::ads::set_status(conn, &record, status, None, now).await
            })
        })
        .await
        .unwrap();
    assert!(paused);
    app.clock.advance(souk::usecase::images::LOOKUP_SECONDS);
    let answer = app.get_with(&blob, &other.token).await;
    assert_eq!(expect_json(answer, 404).await["code"], "image-not-found");
}

/// A blob store that fails (here a file of the local store that cannot be opened: a link to
/// itself) answers 503 `service-unavailable`, not a 404 that a client or a cache would take
/// for the image's end; once the store reads again, the image is served.
async fn a_blob_store_that_fails_is_unavailable_not_a_missing_image(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let item = ad.rsplit('/').next().unwrap();
    let media_id = available_image(&app, &seller.token, item).await;
    let store = app.config.data_dir.join("images");
    let files: Vec<_> = blob_files(&app)
        .await
        .into_iter()
        .filter(|key| key.starts_with("blobs/"))
        .map(|key| store.join(key))
        .collect();
    assert!(!files.is_empty());
    for file in &files {
        std::fs::rename(file, file.with_extension("kept")).unwrap();
        std::os::unix::fs::symlink(file, file).unwrap();
    }
    let answer = blob(&app, &seller.token, &media_id, "small", "image/jpeg").await;
    assert_eq!(
        expect_json(answer, 503).await["code"],
        "service-unavailable"
    );

    for file in &files {
        std::fs::remove_file(file).unwrap();
        std::fs::rename(file.with_extension("kept"), file).unwrap();
    }
    let answer = blob(&app, &seller.token, &media_id, "small", "image/jpeg").await;
    assert_eq!(answer.status(), 200);
}

/// A PNG that passes the checks (its header and end are whole) but whose pixels do not
/// decode is removed by the rendition worker, and the ad's later image moves up: `imageId`
/// stays the position from 1.
async fn an_image_that_does_not_decode_goes_and_the_next_moves_up(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let mut broken = encoded(ImageFormat::Png, 40, 30);
    let middle = broken.len() / 2;
    for byte in &mut broken[middle - 8..middle + 8] {
        *byte ^= 0xFF;
    }
    let good = encoded(ImageFormat::Png, 40, 30);
    // In one request, so that both are numbered before the worker sees the first.
    let (content_type, form) = multipart(&[
        ("file", Some("image/png"), broken),
        ("file", Some("image/png"), good),
    ]);
    let added = uploaded(&app, &seller.token, &ad, &content_type, form).await;
    assert_eq!(
        (&added[0]["imageId"], &added[1]["imageId"]),
        (&json!(1), &json!(2))
    );
    let broken_id = added[0]["mediaId"].as_str().unwrap().to_owned();
    let good_id = added[1]["mediaId"].as_str().unwrap().to_owned();
    wait_until_available(&app, &seller.token, &good_id).await;
    let mut status = 0;
    for _ in 0..300 {
        status = app
            .get_with(&format!("/v1/images/{broken_id}"), &seller.token)
            .await
            .status()
            .as_u16();
        if status == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 404, "the image that does not decode went");
    let good = expect_json(
        app.get_with(&format!("/v1/images/{good_id}"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(good["imageId"], 1, "moved up");
}
