//! The seller's own list and a user's online ads: paging, filters and offsets.

use serde_json::json;

use super::{ad_in, created, delete, minimal, status};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json, field_codes};

both_backends!(
    the_sellers_list_pages_by_30,
    a_users_list_shows_online_ads_only,
    the_sellers_list_and_a_users_online_ads,
    offsets_out_of_range_are_refused,
);

/// `GET /v1/advertisements` pages by 30 unless `limit` says otherwise.
async fn the_sellers_list_pages_by_30(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    for i in 0..31 {
        created(&app, &seller.token, &minimal(&format!("Fiets {i}"))).await;
    }
    let first = expect_json(app.get_with("/v1/advertisements", &seller.token).await, 200).await;
    assert_eq!(first["limit"], 30);
    assert_eq!(first["offset"], 0);
    assert_eq!(first["totalCount"], 31);
    assert_eq!(
        first["_embedded"]["svc:advertisement"]
            .as_array()
            .unwrap()
            .len(),
        30
    );
    let next = first["_links"]["next"]["href"].as_str().unwrap();
    assert_eq!(next, "/v1/advertisements?offset=30&limit=30");
    let second = expect_json(app.get_with(next, &seller.token).await, 200).await;
    let last: Vec<&str> = second["_embedded"]["svc:advertisement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(last, ["Fiets 0"], "the oldest comes last");
    assert!(second["_links"].get("next").is_none());
}

/// A user's public list holds their online ads only: no drafts, paused, closed, expired or
/// rejected ones; `limit` at most 100.
async fn a_users_list_shows_online_ads_only(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let online = ad_in(&app, &seller, "online").await;
    for state in ["draft", "paused", "expired", "closed", "rejected"] {
        ad_in(&app, &seller, state).await;
    }
    let public = app
        .get_json(&format!("/v1/users/{}/advertisements", seller.id), 200)
        .await;
    assert_eq!(public["totalCount"], 1);
    let listed: Vec<&str> = public["_embedded"]["svc:advertisement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["_links"]["self"]["href"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [online.as_str()]);
    assert!(
        public["_embedded"]["svc:advertisement"][0]
            .get("rejectionReason")
            .is_none()
    );
    let own = expect_json(app.get_with("/v1/advertisements", &seller.token).await, 200).await;
    assert_eq!(own["totalCount"], 6, "the seller's own list has them all");
    for limit in ["101", "0", "x"] {
        let refused = app
            .get_json(
                &format!("/v1/users/{}/advertisements?limit={limit}", seller.id),
                400,
            )
            .await;
        assert_eq!(refused["code"], "pagination-invalid");
        assert_eq!(refused["details"][0]["field"], "limit", "{limit}");
    }
}

async fn the_sellers_list_and_a_users_online_ads(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let mut paths = Vec::new();
    for i in 0..5 {
        let ad = created(&app, &seller.token, &minimal(&format!("Fiets {i}"))).await;
        paths.push(ad["_links"]["self"]["href"].as_str().unwrap().to_owned());
    }
    expect_json(status(&app, &seller.token, &paths[0], "paused").await, 200).await;
    let delete = delete(&app, &seller.token, &paths[1]).await;
    assert_eq!(delete.status(), 204);
    let own = expect_json(
        app.get_with("/v1/advertisements?limit=2", &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(own["totalCount"], 4, "deleted ads are not listed");
    assert_eq!(own["limit"], 2);
    let titles: Vec<&str> = own["_embedded"]["svc:advertisement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Fiets 4", "Fiets 3"], "newest first");
    assert_eq!(
        own["_links"]["next"]["href"],
        "/v1/advertisements?offset=2&limit=2"
    );
    let paused = expect_json(
        app.get_with("/v1/advertisements?status=paused,draft", &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(paused["totalCount"], 1);
    // A filtered list's pages keep the filter.
    let online = expect_json(
        app.get_with("/v1/advertisements?status=online&limit=1", &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(online["totalCount"], 3);
    assert_eq!(
        online["_links"]["next"]["href"],
        "/v1/advertisements?status=online&offset=1&limit=1"
    );
    assert_eq!(
        online["_links"]["last"]["href"],
        "/v1/advertisements?status=online&offset=2&limit=1"
    );
    let both = expect_json(
        app.get_with(
            "/v1/advertisements?status=paused,draft&limit=1",
            &seller.token,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        both["_links"]["first"]["href"],
        "/v1/advertisements?status=paused%2Cdraft&offset=0&limit=1"
    );
    // Deleted ads are in no list, not even on request.
    for filter in ["sold", "deleted", "online,deleted"] {
        let refused = expect_json(
            app.get_with(
                &format!("/v1/advertisements?status={filter}"),
                &seller.token,
            )
            .await,
            400,
        )
        .await;
        assert_eq!(
            field_codes(&refused),
            [("status".to_owned(), "invalid-value".to_owned())],
            "{filter}"
        );
    }
    let bad = expect_json(
        app.get_with("/v1/advertisements?limit=101", &seller.token)
            .await,
        400,
    )
    .await;
    assert_eq!(bad["code"], "pagination-invalid");
    assert_eq!(bad["details"][0]["field"], "limit");
    let public = app
        .get_json(&format!("/v1/users/{}/advertisements", seller.id), 200)
        .await;
    assert_eq!(public["totalCount"], 3, "online ads only");
    assert_eq!(public["limit"], 100);
    let page = app
        .get_json(
            &format!("/v1/users/{}/advertisements?limit=2&offset=2", seller.id),
            200,
        )
        .await;
    assert_eq!(
        page["_embedded"]["svc:advertisement"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let odd = app
        .get_json(
            &format!("/v1/users/{}/advertisements?limit=2&offset=3", seller.id),
            400,
        )
        .await;
    assert_eq!(odd["code"], "pagination-invalid");
    assert_eq!(odd["details"][0]["field"], "offset");
    assert_eq!(
        app.get_json("/v1/users/424242/advertisements", 404).await["code"],
        "user-not-found"
    );
}

/// Any `offset` that is not an integer from 0 to 2^63-1 is 400 `pagination-invalid` naming
/// it, on both lists (never a 500 or a wrong page); the largest is an empty page.
async fn offsets_out_of_range_are_refused(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    created(&app, &seller.token, &minimal("Eén fiets")).await;
    let public = format!("/v1/users/{}/advertisements", seller.id);
    for (path, offset) in [
        ("/v1/advertisements", "18446744073709551615"),
        ("/v1/advertisements", "9223372036854775808"),
        ("/v1/advertisements", "-1"),
        ("/v1/advertisements", "1.5"),
        (public.as_str(), "18446744073709551600"),
        (public.as_str(), "-100"),
    ] {
        let refused = expect_json(
            app.get_with(&format!("{path}?offset={offset}"), &seller.token)
                .await,
            400,
        )
        .await;
        assert_eq!(refused["code"], "pagination-invalid", "{path} {offset}");
        assert_eq!(refused["details"][0]["field"], "offset", "{path} {offset}");
    }
    let last = expect_json(
        app.get_with(
            "/v1/advertisements?offset=9223372036854775807",
            &seller.token,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(last["_embedded"]["svc:advertisement"], json!([]));
    assert_eq!(last["totalCount"], 1);
    assert_eq!(last["offset"], 9223372036854775807_i64);
    let far = expect_json(
        app.get_with(
            &format!("{public}?limit=100&offset=9223372036854775800"),
            &seller.token,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(far["_embedded"]["svc:advertisement"], json!([]));
}
