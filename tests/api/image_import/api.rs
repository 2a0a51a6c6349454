//! `POST /v1/advertisements/{itemId}/images` with `{"urls": [...], "replaceAll": ...}`:
//! Souk fetches each URL from the test's image server (allow-listed) and the bytes go
//! through the checks of an upload; any failure stores nothing.

use serde_json::{Value, json};

use super::ImageServer;
use crate::both_backends;
use crate::helpers::{Backend, TestApp, expect_json, field_codes, pairs};
use crate::images::{blob_files, image_count, jpeg, new_ad};

both_backends!(refused_without_the_allow_list);

/// Starts Souk with the image server allow-listed.
async fn app_reaching(server: &ImageServer, backend: Backend, test: &str) -> TestApp {
    TestApp::start_with(
        backend,
        test,
        &[
            ("SOUK_IMAGE_FETCH_ALLOW", &server.allow_entry()),
            ("SOUK_IMAGE_FETCH_TIMEOUT_SECS", "2"),
            ("SOUK_IMAGE_FETCH_MAX_REDIRECTS", "3"),
            ("SOUK_MAX_IMAGE_BYTES", "65536"),
        ],
    )
    .await
}

/// Declares a test `async fn name(app: TestApp, server: ImageServer)` on both backends,
/// with an image server serving a JPEG and Souk allowed to reach it.
macro_rules! with_image_server {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                let server = ImageServer::start(jpeg(64, 48)).await;
                let app = app_reaching(&server, Backend::Sqlite, module_path!()).await;
                super::$name(app, server).await;
            }

            #[tokio::test]
            #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
            async fn postgres() {
                let server = ImageServer::start(jpeg(64, 48)).await;
                let app = app_reaching(&server, Backend::Postgres, module_path!()).await;
                super::$name(app, server).await;
            }
        }
    )+};
}

with_image_server!(
    urls_are_fetched_and_added_as_images,
    replace_all_swaps_the_images_for_the_fetched_ones,
    a_url_that_fails_stores_nothing,
    fetched_bytes_are_checked_as_uploads_are,
    only_the_seller_makes_souk_fetch,
);

async fn import(app: &TestApp, token: &str, ad: &str, body: &Value) -> reqwest::Response {
    app.post(&format!("{ad}/images"))
        .token(token)
        .json(body)
        .send()
        .await
}

fn new_images(answer: &Value) -> Vec<Value> {
    answer["_embedded"]["svc:advertisement-image"]
        .as_array()
        .expect("images")
        .clone()
}

async fn urls_are_fetched_and_added_as_images(app: TestApp, server: ImageServer) {
    let (seller, ad) = new_ad(&app).await;
    let body = json!({"urls": [server.url("/photo.jpg"), server.url("/hops/2")]});
    let response = import(&app, &seller.token, &ad, &body).await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let added = new_images(&expect_json(response, 201).await);
    assert_eq!(added.len(), 2);
    assert_eq!(location, added[0]["_links"]["self"]["href"]);
    assert_eq!(added[1]["imageId"], 2);
    assert_eq!(server.photo_hits(), 2);
    assert_eq!(image_count(&app).await, 2);
    // Without replaceAll they come after the ad's images.
    let more = json!({"urls": [server.url("/photo.jpg")], "replaceAll": false});
    let added = new_images(&expect_json(import(&app, &seller.token, &ad, &more).await, 201).await);
    assert_eq!(added[0]["imageId"], 3);
}

async fn replace_all_swaps_the_images_for_the_fetched_ones(app: TestApp, server: ImageServer) {
    let (seller, ad) = new_ad(&app).await;
    let two = json!({"urls": [server.url("/photo.jpg"), server.url("/photo.jpg")]});
    let before = new_images(&expect_json(import(&app, &seller.token, &ad, &two).await, 201).await);
    let one = json!({"urls": [server.url("/photo.jpg")], "replaceAll": true});
    let after = new_images(&expect_json(import(&app, &seller.token, &ad, &one).await, 201).await);
    assert_eq!(after[0]["imageId"], 1);
    let list = expect_json(
        app.get_with(&format!("{ad}/images"), &seller.token).await,
        200,
    )
    .await;
    let listed = new_images(&list);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["mediaId"], after[0]["mediaId"]);
    assert_ne!(listed[0]["mediaId"], before[0]["mediaId"]);
}

/// Each kind of failing URL, alone or beside a good one: 400 `validation-failure` naming
/// the URL, and neither a row nor a byte stored.
async fn a_url_that_fails_stores_nothing(app: TestApp, server: ImageServer) {
    let (seller, ad) = new_ad(&app).await;
    let good = server.url("/photo.jpg");
    let port = server.port;
    for (url, code) in [
        (server.url("/page.html"), "not-an-image"),
        (server.url("/loop"), "too-many-redirects"),
        (server.url("/slow"), "too-slow"),
        (server.url("/big"), "too-large"),
        (server.url("/missing"), "error-status"),
        (
            format!("http://127.0.0.1:{port}/photo.jpg"),
            "address-refused",
        ),
        (
            server.url("/redirect?to=http://169.254.169.254/latest/meta-data/"),
            "address-refused",
        ),
        ("ftp://example.com/a.jpg".to_owned(), "invalid-url"),
    ] {
        let body = json!({"urls": [good, url]});
        let error = expect_json(import(&app, &seller.token, &ad, &body).await, 400).await;
        assert_eq!(error["code"], "validation-failure", "{url}");
        assert_eq!(field_codes(&error), pairs(&[("urls[1]", code)]), "{url}");
        assert_eq!(error["details"][0]["value"], url);
        assert_eq!(image_count(&app).await, 0, "{url}");
        assert!(
            blob_files(&app).await.is_empty(),
            "{url}: {:?}",
            blob_files(&app).await
        );
    }
    // Not a single URL, or not a list of them.
    for body in [json!({"urls": []}), json!({"replaceAll": true})] {
        let error = expect_json(import(&app, &seller.token, &ad, &body).await, 400).await;
        assert_eq!(field_codes(&error), pairs(&[("urls", "missing")]), "{body}");
    }
    let error = expect_json(
        import(
            &app,
            &seller.token,
            &ad,
            &json!({"urls": "http://x.test/a.jpg"}),
        )
        .await,
        400,
    )
    .await;
    assert_eq!(
        field_codes(&error),
        vec![("urls".to_owned(), "invalid-value".to_owned())]
    );
    let many: Vec<String> = (0..25).map(|_| good.clone()).collect();
    let error = expect_json(
        import(&app, &seller.token, &ad, &json!({"urls": many})).await,
        400,
    )
    .await;
    assert_eq!(field_codes(&error)[0].1, "too-many-images");
    assert_eq!(image_count(&app).await, 0);
}

/// A server that says `image/jpeg` does not make bytes an image: the checks of an upload
/// decide, and name the URL.
async fn fetched_bytes_are_checked_as_uploads_are(app: TestApp, server: ImageServer) {
    let (seller, ad) = new_ad(&app).await;
    for (path, code) in [
        ("/fake.jpg", "not-an-image"),
        ("/mislabelled.png", "content-type-mismatch"),
    ] {
        let body = json!({"urls": [server.url("/photo.jpg"), server.url(path)]});
        let error = expect_json(import(&app, &seller.token, &ad, &body).await, 400).await;
        assert_eq!(field_codes(&error), pairs(&[("urls[1]", code)]), "{path}");
        assert_eq!(image_count(&app).await, 0, "{path}");
        assert!(blob_files(&app).await.is_empty(), "{path}");
    }
}

/// A user who is not the seller gets 403, and Souk fetches nothing for them.
async fn only_the_seller_makes_souk_fetch(app: TestApp, server: ImageServer) {
    let (_seller, ad) = new_ad(&app).await;
    let other = app.user("ander@souk.test").await;
    let body = json!({"urls": [server.url("/photo.jpg")]});
    let error = expect_json(import(&app, &other.token, &ad, &body).await, 403).await;
    assert_eq!(error["code"], "unauthorized");
    assert_eq!(server.photo_hits(), 0);
}

/// Without the allow-list the image server on loopback is out of reach, by address, by
/// name and through a redirect from a public-looking start.
async fn refused_without_the_allow_list(app: TestApp) {
    let server = ImageServer::start(jpeg(64, 48)).await;
    let (seller, ad) = new_ad(&app).await;
    let port = server.port;
    let body = json!({"urls": [
        server.url("/photo.jpg"),
        format!("http://127.0.0.1:{port}/photo.jpg"),
        format!("http://[::ffff:7f00:1]:{port}/photo.jpg"),
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/a.jpg",
    ]});
    let error = expect_json(import(&app, &seller.token, &ad, &body).await, 400).await;
    let codes: Vec<String> = field_codes(&error)
        .into_iter()
        .map(|(_, code)| code)
        .collect();
    assert_eq!(codes, vec!["address-refused"; 5]);
    assert_eq!(server.photo_hits(), 0);
    assert_eq!(image_count(&app).await, 0);
}
