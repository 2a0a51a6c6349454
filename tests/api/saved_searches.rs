//! Saved searches on both backends: save, read, run, replace and delete; the owner rule;
//! every bad `searchRequest` a field error that stores nothing; the limit per user.

use serde_json::{Value, json};

use crate::ads::{car, created};
use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json, field_codes, pairs};

both_backends!(
    a_saved_search_is_kept_run_changed_and_deleted,
    only_the_owner_knows_a_saved_search,
    bad_saved_searches_are_field_errors_and_store_nothing,
    a_user_keeps_at_most_a_hundred,
    a_deleted_saved_search_id_is_never_given_again,
);

async fn save(app: &TestApp, token: &str, body: Value) -> reqwest::Response {
    app.post("/v1/savedsearches")
        .token(token)
        .json(&body)
        .send()
        .await
}

/// The titles a saved search's `search` link finds.
async fn titles_found(app: &TestApp, saved: &Value) -> Vec<String> {
    let search = saved["_links"]["svc:search"]["href"].as_str().unwrap();
    let answer = app.get_json(search, 200).await;
    answer["_embedded"]["svc:search-result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

/// The ids of the saved searches in a list answer (a page of them).
fn ids_in(list: &Value) -> Vec<i64> {
    list["_embedded"]["svc:saved-search"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|s| s["savedSearchId"].as_i64().unwrap())
        .collect()
}

/// The ids of the user's saved searches, as listed.
async fn listed(app: &TestApp, user: &User) -> Vec<i64> {
    let list = expect_json(app.get_with("/v1/savedsearches", &user.token).await, 200).await;
    let ids = ids_in(&list);
    assert_eq!(list["totalCount"], ids.len());
    ids
}

async fn a_saved_search_is_kept_run_changed_and_deleted(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    created(&app, &seller.token, &car("Audi A4")).await;
    let mut diesel = car("Audi A6");
    diesel["fuel"] = json!("diesel");
    created(&app, &seller.token, &diesel).await;

    let request = json!({"query": "audi", "categoryId": 101,
                         "filters": {"fuel": ["diesel"], "price": {"from": 1000, "to": 1000000}}});
    let response = save(
        &app,
        &buyer.token,
        json!({"searchRequest": request, "alert": "daily"}),
    )
    .await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let saved = expect_json(response, 201).await;
    let id = saved["savedSearchId"].as_i64().unwrap();
    assert_eq!(location, format!("/v1/savedsearches/{id}"));
    assert_eq!(saved["_links"]["self"]["href"], location);
    assert_eq!(saved["userId"], buyer.id);
    assert_eq!(saved["searchRequest"], request, "read back as sent");
    assert_eq!(saved["alert"], "daily");
    // A member sent as null is absent (the OpenAPI document says so too).
    let with_nulls = json!({"query": "audi", "sellerId": null, "withImages": null,
                            "filters": {"price": {"from": null}, "postCode": null}});
    let sparse = save(&app, &buyer.token, json!({"searchRequest": with_nulls})).await;
    let sparse = expect_json(sparse, 201).await;
    assert_eq!(sparse["searchRequest"], json!({"query": "audi"}));
    let sparse_id = sparse["savedSearchId"].as_i64().unwrap();
    let gone = app
        .delete(&format!("/v1/savedsearches/{sparse_id}"))
        .token(&buyer.token)
        .send()
        .await;
    assert_eq!(gone.status(), 204);
    assert_eq!(
        saved["_links"]["svc:owner"]["href"],
        format!("/v1/users/{}", buyer.id)
    );
    assert_eq!(titles_found(&app, &saved).await, ["Audi A6"]);

    let read = expect_json(app.get_with(&location, &buyer.token).await, 200).await;
    assert_eq!(read, saved);
    let without_alert = save(&app, &buyer.token, json!({"searchRequest": {}})).await;
    let everything = expect_json(without_alert, 201).await;
    assert_eq!(everything["alert"], "none", "the default");
    assert_eq!(everything["searchRequest"], json!({}));
    assert_eq!(
        titles_found(&app, &everything).await,
        ["Audi A6", "Audi A4"]
    );
    let newest = everything["savedSearchId"].as_i64().unwrap();
    assert_eq!(listed(&app, &buyer).await, [newest, id], "newest first");

    let near = json!({"filters": {"postCode": "1000", "distance": 20000}});
    let nearby = save(&app, &buyer.token, json!({"searchRequest": near})).await;
    let nearby = expect_json(nearby, 201).await;
    assert_eq!(nearby["searchRequest"], near);
    let link = nearby["_links"]["svc:search"]["href"].as_str().unwrap();
    assert!(
        link.contains("postCode=1000") && link.contains("distance=20000"),
        "{link}"
    );
    assert_eq!(
        titles_found(&app, &nearby).await,
        ["Audi A6", "Audi A4"],
        "the cars are in 1000"
    );
    let nearby_id = nearby["savedSearchId"].as_i64().unwrap();
    assert_eq!(listed(&app, &buyer).await, [nearby_id, newest, id]);

    let petrol = json!({"categoryId": 101, "filters": {"fuel": ["petrol"]}});
    let replaced = app
        .put(&location)
        .token(&buyer.token)
        .json(&json!({"searchRequest": petrol}))
        .send()
        .await;
    let replaced = expect_json(replaced, 200).await;
    assert_eq!(replaced["savedSearchId"], id);
    assert_eq!(replaced["searchRequest"], petrol);
    assert_eq!(replaced["alert"], "none", "a replacement sets every member");
    assert_eq!(titles_found(&app, &replaced).await, ["Audi A4"]);

    let deleted = app.delete(&location).token(&buyer.token).send().await;
    assert_eq!(deleted.status(), 204);
    let gone = expect_json(app.get_with(&location, &buyer.token).await, 404).await;
    assert_eq!(gone["code"], "savedsearch-not-found");
    let again = app.delete(&location).token(&buyer.token).send().await;
    assert_eq!(again.status(), 404);
    assert_eq!(listed(&app, &buyer).await, [nearby_id, newest]);
}

async fn only_the_owner_knows_a_saved_search(app: TestApp) {
    let owner = app.user("eigenaar@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let saved = expect_json(
        save(
            &app,
            &owner.token,
            json!({"searchRequest": {"query": "fiets"}}),
        )
        .await,
        201,
    )
    .await;
    let path = saved["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let body = json!({"searchRequest": {"query": "auto"}});

    let read = expect_json(app.get_with(&path, &other.token).await, 404).await;
    assert_eq!(read["code"], "savedsearch-not-found");
    let put = app.put(&path).token(&other.token).json(&body).send().await;
    assert_eq!(expect_json(put, 404).await["code"], "savedsearch-not-found");
    let delete = app.delete(&path).token(&other.token).send().await;
    assert_eq!(
        expect_json(delete, 404).await["code"],
        "savedsearch-not-found"
    );
    assert!(listed(&app, &other).await.is_empty());
    let unknown = app.get_with("/v1/savedsearches/999999", &owner.token).await;
    assert_eq!(
        expect_json(unknown, 404).await["code"],
        "savedsearch-not-found"
    );

    // A client token acts for no user; a token without `write` may only read.
    let client = save(&app, &app.token, body.clone()).await;
    assert_eq!(expect_json(client, 403).await["code"], "unauthorized");
    let read_only = app.token_of(&owner, Some("read")).await;
    let refused = save(&app, &read_only, body.clone()).await;
    assert_eq!(refused.status(), 403);
    let removal = app.delete(&path).token(&read_only).send().await;
    assert_eq!(removal.status(), 403);
    let still = expect_json(app.get_with(&path, &read_only).await, 200).await;
    assert_eq!(
        still["searchRequest"],
        json!({"query": "fiets"}),
        "unchanged"
    );
}

async fn bad_saved_searches_are_field_errors_and_store_nothing(app: TestApp) {
    let user = app.user("fout@souk.test").await;
    let refused = |body: Value| {
        let app = &app;
        let token = user.token.clone();
        async move { expect_json(save(app, &token, body).await, 400).await }
    };
    let missing = refused(json!({"alert": "weekly"})).await;
    assert_eq!(
        field_codes(&missing),
        pairs(&[("alert", "invalid-value"), ("searchRequest", "missing")])
    );
    let null_alert = refused(json!({"searchRequest": {}, "alert": null})).await;
    assert_eq!(
        field_codes(&null_alert),
        pairs(&[("alert", "invalid-value")])
    );
    let shapes = refused(json!({"searchRequest": {
        "query": 7, "categoryId": "101", "sortBy": "price",
        "filters": {"price": {"from": 500, "to": 100, "step": 5}, "fuel": "diesel"}}}))
    .await;
    assert_eq!(
        field_codes(&shapes),
        pairs(&[
            ("searchRequest.categoryId", "invalid-value"),
            ("searchRequest.filters.fuel", "invalid-value"),
            ("searchRequest.filters.price.step", "unknown-parameter"),
            ("searchRequest.query", "invalid-value"),
            ("searchRequest.sortBy", "unknown-parameter"),
            // The range the rest holds, on both its fields (no one `field`).
            ("", "invalid-range"),
        ])
    );
    assert_eq!(
        shapes["details"][5]["fields"],
        json!([
            "searchRequest.filters.price.from",
            "searchRequest.filters.price.to"
        ])
    );
    let reversed =
        refused(json!({"searchRequest": {"filters": {"price": {"from": 500, "to": 100}}}})).await;
    assert_eq!(
        reversed["details"][0]["fields"],
        json!([
            "searchRequest.filters.price.from",
            "searchRequest.filters.price.to"
        ])
    );
    let stored = refused(json!({"searchRequest": {"categoryId": 999,
                                                  "filters": {"colour": ["red"]}}}))
    .await;
    assert_eq!(
        field_codes(&stored),
        pairs(&[
            ("searchRequest.categoryId", "unknown-category"),
            ("searchRequest.filters.colour", "unknown-parameter"),
        ])
    );
    // With a member of the wrong kind beside them, the database's findings still come.
    let with_more = refused(json!({"alert": "weekly",
                                   "searchRequest": {"categoryId": 999, "withImages": "ja",
                                                     "filters": {"colour": ["red"]}}}))
    .await;
    assert_eq!(
        field_codes(&with_more),
        pairs(&[
            ("alert", "invalid-value"),
            ("searchRequest.withImages", "invalid-value"),
            ("searchRequest.categoryId", "unknown-category"),
            ("searchRequest.filters.colour", "unknown-parameter"),
        ])
    );
    // A category that could not be read judges no filter: each would be called unknown.
    let unread = refused(json!({"searchRequest": {"categoryId": "402",
                                                  "filters": {"fuel": ["diesel"]}}}))
    .await;
    assert_eq!(
        field_codes(&unread),
        pairs(&[("searchRequest.categoryId", "invalid-value")])
    );
    let not_of_category = refused(json!({"searchRequest": {"categoryId": 402,
                                                           "filters": {"fuel": ["diesel"]}}}))
    .await;
    assert_eq!(
        field_codes(&not_of_category),
        pairs(&[("searchRequest.filters.fuel", "unknown-parameter")])
    );
    let far =
        refused(json!({"searchRequest": {"filters": {"postCode": "9999", "distance": 1000}}}))
            .await;
    assert_eq!(
        field_codes(&far),
        pairs(&[("searchRequest.filters.postCode", "unknown-postcode")])
    );
    let not_json = app
        .post("/v1/savedsearches")
        .token(&user.token)
        .body("application/json", "{\"searchRequest\":")
        .send()
        .await;
    assert_eq!(expect_json(not_json, 400).await["code"], "invalid-json");
    assert!(listed(&app, &user).await.is_empty(), "nothing stored");

    let saved = expect_json(
        save(
            &app,
            &user.token,
            json!({"searchRequest": {"query": "fiets"}}),
        )
        .await,
        201,
    )
    .await;
    let path = saved["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let bad_put = app
        .put(&path)
        .token(&user.token)
        .json(&json!({"searchRequest": {"categoryId": 999}}))
        .send()
        .await;
    expect_json(bad_put, 400).await;
    let kept = expect_json(app.get_with(&path, &user.token).await, 200).await;
    assert_eq!(kept, saved, "a refused replacement changes nothing");
}

async fn a_user_keeps_at_most_a_hundred(app: TestApp) {
    let user = app.user("verzamelaar@souk.test").await;
    for n in 0..90 {
        let body = json!({"searchRequest": {"query": format!("fiets{n}")}});
        expect_json(save(&app, &user.token, body).await, 201).await;
    }
    // Twenty at once for the last ten places: exactly ten are kept.
    let racing = (90..110).map(|n| {
        let body = json!({"searchRequest": {"query": format!("fiets{n}")}});
        let (app, token) = (&app, &user.token);
        async move { save(app, token, body).await.status().as_u16() }
    });
    let mut statuses = futures_util::future::join_all(racing).await;
    statuses.sort();
    assert_eq!(statuses, [[201; 10], [400; 10]].concat());
    let over = save(&app, &user.token, json!({"searchRequest": {}})).await;
    let over = expect_json(over, 400).await;
    assert_eq!(field_codes(&over), pairs(&[("searchRequest", "too-many")]));
    let all = listed(&app, &user).await;
    assert_eq!(all.len(), 100);

    // Pages of them, as every collection has; without `offset` and `limit` the list is whole.
    let page = expect_json(
        app.get_with("/v1/savedsearches?offset=90&limit=20", &user.token)
            .await,
        200,
    )
    .await;
    assert_eq!(ids_in(&page), all[90..]);
    assert_eq!(
        (&page["totalCount"], &page["offset"], &page["limit"]),
        (&json!(100), &json!(90), &json!(20))
    );
    assert!(page["_links"]["prev"].is_object() && page["_links"]["next"].is_null());
    for bad in ["limit=0", "limit=101", "offset=-1", "offset=x"] {
        let refused = app
            .get_with(&format!("/v1/savedsearches?{bad}"), &user.token)
            .await;
        assert_eq!(
            expect_json(refused, 400).await["code"],
            "pagination-invalid",
            "{bad}"
        );
    }
    let other = app.user("ander@souk.test").await;
    expect_json(
        save(&app, &other.token, json!({"searchRequest": {}})).await,
        201,
    )
    .await;
}

/// A client that deletes its newest saved search and saves another, then sends the first
/// `DELETE` again (a retry, a second device), deletes nothing: the new search has an id of
/// its own. On SQLite the id was the deleted one's, and the stale `DELETE` removed it.
async fn a_deleted_saved_search_id_is_never_given_again(app: TestApp) {
    let user = app.user("zoeker@souk.test").await;
    let first = save(
        &app,
        &user.token,
        json!({"searchRequest": {"query": "fiets"}}),
    )
    .await;
    let first = expect_json(first, 201).await;
    let first_path = first["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let deleted = app.delete(&first_path).token(&user.token).send().await;
    assert_eq!(deleted.status(), 204);

    let second = save(
        &app,
        &user.token,
        json!({"searchRequest": {"query": "boot"}}),
    )
    .await;
    let second = expect_json(second, 201).await;
    assert_ne!(second["savedSearchId"], first["savedSearchId"]);

    let stale = app.delete(&first_path).token(&user.token).send().await;
    assert_eq!(
        expect_json(stale, 404).await["code"],
        "savedsearch-not-found"
    );
    let kept = second["savedSearchId"].as_i64().unwrap();
    assert_eq!(listed(&app, &user).await, [kept]);
}
