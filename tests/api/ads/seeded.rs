//! `souk seed` makes ads that pass the API's own checks.

use serde_json::json;

use super::put;
use crate::both_backends;
use crate::helpers::{TestApp, expect_json};

both_backends!(seeded_ads_are_valid,);

/// `souk seed` makes ads that pass the API's own checks.
async fn seeded_ads_are_valid(app: TestApp) {
    let output = app.souk(&["seed", "--ads", "600", "--users", "7"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("seeded 7 users and 600 ads"));
    let (token, _) = app
        .user_token(&app.app_client, "seed-1-0@souk.test", "seed-password", None)
        .await;
    let me = app.get_with("/v1/me", &token).await;
    let user_path = me.headers()["location"].to_str().unwrap().to_owned();
    let own = expect_json(
        app.get_with("/v1/advertisements?limit=100", &token).await,
        200,
    )
    .await;
    let total = own["totalCount"].as_i64().unwrap();
    assert!(total > 40, "about 600/7 ads each: {total}");
    let public = app
        .get_json(&format!("{user_path}/advertisements"), 200)
        .await;
    assert_eq!(public["totalCount"], total, "all online");
    // Every ad has three images' metadata, embedded in order, with a link per size.
    let mut media_ids = std::collections::HashSet::new();
    for ad in own["_embedded"]["svc:advertisement"].as_array().unwrap() {
        assert!(
            ad["location"]["cityName"].is_string(),
            "every seeded postcode is in the locations table: {}",
            ad["location"]
        );
        let images =
            ad["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"]
                .as_array()
                .unwrap();
        assert_eq!(images.len(), 3, "{ad}");
        for (position, image) in images.iter().enumerate() {
            let media_id = image["mediaId"].as_str().unwrap();
            assert_eq!(media_id.len(), 36, "a UUID: {media_id}");
            assert!(media_ids.insert(media_id.to_owned()), "unique: {media_id}");
            assert_eq!(image["imageId"], position as i64 + 1);
            assert_eq!(image["status"], "available");
            for size in ["small", "medium", "large", "xlarge"] {
                assert_eq!(
                    image["_links"][size]["href"],
                    format!("/v1/images/{media_id}/{size}/blob")
                );
            }
            assert_eq!(
                image["_links"]["svc:image-meta"],
                json!({"href": format!("/v1/images/{media_id}/{{size}}/meta"), "templated": true})
            );
        }
    }
    // One ad read alone embeds the same images.
    let first = &own["_embedded"]["svc:advertisement"][0];
    let alone = app
        .get_json(first["_links"]["self"]["href"].as_str().unwrap(), 200)
        .await;
    assert_eq!(alone["_embedded"], first["_embedded"]);
    // Every ad of this seller survives a PUT of itself: it is valid for its category.
    for ad in own["_embedded"]["svc:advertisement"]
        .as_array()
        .unwrap()
        .iter()
        .take(30)
    {
        let path = ad["_links"]["self"]["href"].as_str().unwrap();
        let put = put(&app, &token, path, ad).await;
        let answer = expect_json(put, 200).await;
        assert_eq!(answer["_embedded"], ad["_embedded"], "images stay");
    }
}
