//! `souk seed` makes ads that pass the API's own checks.

use serde_json::json;

use super::put;
use crate::both_backends;
use crate::helpers::{Backend, TestApp, expect_json};

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
    // The kept search total comes folded into one row (PostgreSQL appends a change per
    // statement until the upkeep folds them), and counts every seeded ad.
    let (rows, total): (i64, i64) = app
        .db
        .read(|conn| {
            Box::pin(async move {
                let row = conn
                    .query_one(
                        "SELECT COUNT(*) AS n, CAST(SUM(n) AS BIGINT) AS total \
                         FROM search_docs_total",
                        &[],
                    )
                    .await?;
                Ok::<_, souk::store::DbError>((row.get("n")?, row.get("total")?))
            })
        })
        .await
        .unwrap();
    assert_eq!((rows, total), (1, 600));
    if app.backend == Backend::Postgres {
        // And in one page: the fold leaves its row behind the pages the appended changes
        // filled (three here), which VACUUM can only cut off once the row is moved to the
        // front (`Db::settle_after_bulk_load`); else every unfiltered count reads them all.
        let pages: i64 = app
            .db
            .read(|conn| {
                Box::pin(async move {
                    conn.query_one(
                        "SELECT pg_relation_size('search_docs_total') / 8192 AS pages",
                        &[],
                    )
                    .await?
                    .get("pages")
                })
            })
            .await
            .unwrap();
        assert_eq!(pages, 1);
    }
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
    // Their blobs exist: a seeded image serves its renditions, whole, with their type.
    let image = &own["_embedded"]["svc:advertisement"][0]["_embedded"]["svc:advertisement-images"]
        ["_embedded"]["svc:advertisement-image"][0];
    let media_id = image["mediaId"].as_str().unwrap();
    for size in ["small", "medium", "large", "xlarge"] {
        let meta = app
            .get_json(&format!("/v1/images/{media_id}/{size}/meta"), 200)
            .await;
        assert_eq!(meta["contentType"], "image/jpeg");
        let blob = app
            .get(image["_links"][size]["href"].as_str().unwrap())
            .await;
        assert_eq!(blob.status(), 200, "{media_id} {size}");
        assert_eq!(blob.headers()["content-type"], "image/jpeg");
        let bytes = blob.bytes().await.unwrap();
        assert_eq!(souk::images::blobs::sha256_hex(&bytes), meta["sha256"]);
        image::load_from_memory(&bytes).expect("a whole JPEG");
    }
    // A few pictures' blobs are shared by all 1,800 images, each counting its references.
    let (blobs, references) = app
        .db
        .read(|conn| {
            Box::pin(async move {
                let row = conn
                    .query_one(
                        "SELECT COUNT(*) AS n, CAST(SUM(refs) AS BIGINT) AS refs FROM image_blobs",
                        &[],
                    )
                    .await?;
                Ok::<_, souk::store::DbError>((row.get::<i64>("n")?, row.get::<i64>("refs")?))
            })
        })
        .await
        .unwrap();
    assert!(blobs <= 24, "a few pictures, four sizes each: {blobs}");
    assert_eq!(references, 600 * 3 * 4);
    // One ad read alone embeds the same images.
    let first = &own["_embedded"]["svc:advertisement"][0];
    let alone = app
        .get_json(first["_links"]["self"]["href"].as_str().unwrap(), 200)
        .await;
    assert_eq!(alone["_embedded"], first["_embedded"]);
    // Some ads were dealt with, through the same rules as the API: bids on bidding ads,
    // each beating the one before, and completed sales reviewed by their buyers.
    let (bids, bid_ads, reviews, sellers) = app
        .db
        .read(|conn| {
            Box::pin(async move {
                let row = conn
                    .query_one(
                        "SELECT (SELECT COUNT(*) FROM bids) AS bids, \
                         (SELECT COUNT(DISTINCT item_number) FROM bids) AS bid_ads, \
                         (SELECT COUNT(*) FROM reviews) AS reviews",
                        &[],
                    )
                    .await?;
                let sellers = conn
                    .column::<i64>("SELECT DISTINCT seller_id FROM reviews", &[])
                    .await?;
                Ok::<_, souk::store::DbError>((
                    row.get::<i64>("bids")?,
                    row.get::<i64>("bid_ads")?,
                    row.get::<i64>("reviews")?,
                    sellers,
                ))
            })
        })
        .await
        .unwrap();
    assert!(
        bid_ads > 0 && bids >= bid_ads,
        "{bids} bids on {bid_ads} ads"
    );
    assert!(reviews > 5, "about one ad in 25: {reviews}");
    let mut seen = 0;
    for seller in &sellers {
        let listed = app
            .get_json(&format!("/v1/users/{seller}/reviews"), 200)
            .await;
        let count = listed["numberOfReviews"].as_i64().unwrap();
        seen += count;
        assert!(count > 0);
        let score = listed["averageScore"].as_f64().unwrap();
        assert!((3.0..=5.0).contains(&score), "{listed}");
        let review = &listed["_embedded"]["svc:user-review"][0];
        assert!(review["content"].as_str().unwrap().len() > 10, "{review}");
    }
    assert_eq!(seen, reviews, "every review is listed under its seller");
    // Sellers bought features for some ads: paid orders, and the effect on the ad.
    let promoted = app
        .db
        .read(|conn| {
            Box::pin(async move {
                conn.column::<i64>(
                    "SELECT p.item_number FROM order_products p \
                     JOIN orders o ON o.order_id = p.order_id \
                     WHERE p.kind = 'feature' AND o.status = 'paid'",
                    &[],
                )
                .await
            })
        })
        .await
        .unwrap();
    assert!(promoted.len() > 2, "about one ad in 75: {promoted:?}");
    for number in promoted.iter().take(5) {
        let ad = app
            .get_json(&format!("/v1/advertisements/m{number}"), 200)
            .await;
        let running = ad["activeFeatures"].as_array().unwrap();
        assert_eq!(running.len(), 1, "{}", ad["activeFeatures"]);
    }
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
