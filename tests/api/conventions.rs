//! Conventions that hold for every request: errors, request ids, methods, content types.

use reqwest::Method;

use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json, field_codes};

both_backends!(
    unknown_routes_are_not_found,
    wrong_methods_are_405_with_allow,
    get_with_an_empty_json_body_is_fine,
    request_ids_are_unique_and_kept_from_a_proxy,
    roots_link_to_every_top_level_resource,
    links_false_leaves_links_out_of_typed_representations,
    fields_at_fault_are_named,
);

/// Whether a `_links` member is anywhere in `value`.
fn has_links(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => map.contains_key("_links") || map.values().any(has_links),
        serde_json::Value::Array(items) => items.iter().any(has_links),
        _ => false,
    }
}

/// Advertisements are written straight to JSON (not built as a tree): `_links=false` must
/// reach them too, down to the embedded images collection.
async fn links_false_leaves_links_out_of_typed_representations(app: TestApp) {
    let User {
        id: seller, token, ..
    } = app.user("links@souk.test").await;
    let body = serde_json::json!({
        "title": "Damesfiets Gazelle", "description": "Goed onderhouden.", "categoryId": 402,
        "location": {"postcode": "1097DN"}, "condition": "used",
        "priceModel": {"modelType": "fixed", "askingPrice": 15000},
    });
    let response = app
        .post("/v1/advertisements?_links=false")
        .token(&token)
        .json(&body)
        .send()
        .await;
    let created = expect_json(response, 201).await;
    assert!(!has_links(&created), "{created}");
    let item = created["itemId"].as_str().unwrap();
    let with_links = app
        .get_json(&format!("/v1/advertisements/{item}"), 200)
        .await;
    assert!(has_links(&with_links["_embedded"]), "{with_links}");
    for path in [
        format!("/v1/advertisements/{item}?_links=false"),
        format!("/v2/users/{seller}/advertisements?_links=false"),
    ] {
        let read = app.get_json(&path, 200).await;
        assert!(!has_links(&read), "{path}: {read}");
        assert!(read.get("_embedded").is_some(), "{path}: embedded stays");
    }
    let read = app
        .get_json(&format!("/v1/advertisements/{item}?_links=false"), 200)
        .await;
    assert_eq!(read["title"], "Damesfiets Gazelle");
    assert_eq!(read["condition"], "used");
}

async fn unknown_routes_are_not_found(app: TestApp) {
    for path in [
        "/v1/nothing-here",
        "/v3/categories",
        "/",
        "/v1/categories/1/2/3/4",
    ] {
        let response = app
            .request(Method::GET, path)
            .token(&app.token)
            .unrouted()
            .send()
            .await;
        let body = expect_json(response, 404).await;
        assert_eq!(body["code"], "not-found", "{path}");
    }
    let response = app.delete("/nowhere").unrouted().send().await;
    let body = expect_json(response, 404).await;
    assert_eq!(body["code"], "not-found");
}

async fn wrong_methods_are_405_with_allow(app: TestApp) {
    let response = app
        .post("/v1/categories")
        .token(&app.token)
        .body("application/json", "{}")
        .unrouted()
        .send()
        .await;
    let allow = response.headers()["allow"].to_str().unwrap().to_owned();
    assert!(allow.contains("GET"), "{allow}");
    let body = expect_json(response, 405).await;
    assert_eq!(body["code"], "method-not-allowed");
    let response = app
        .delete("/v2/categories/1")
        .token(&app.token)
        .unrouted()
        .send()
        .await;
    assert_eq!(
        expect_json(response, 405).await["code"],
        "method-not-allowed"
    );
}

async fn get_with_an_empty_json_body_is_fine(app: TestApp) {
    let response = app
        .request(Method::GET, "/v1/categories")
        .token(&app.token)
        .header("content-type", "application/json")
        .header("content-length", "0")
        .send()
        .await;
    expect_json(response, 200).await;
}

async fn request_ids_are_unique_and_kept_from_a_proxy(app: TestApp) {
    let a = app.get("/v1").await;
    let b = app.get("/v1").await;
    assert_ne!(a.headers()["x-request-id"], b.headers()["x-request-id"]);
    let response = app
        .request(Method::GET, "/v1/categories/0")
        .token(&app.token)
        .header("x-request-id", "lb-1234-abcd")
        .send()
        .await;
    assert_eq!(response.headers()["x-request-id"], "lb-1234-abcd");
    let body = expect_json(response, 400).await;
    assert_eq!(body["logref"], "lb-1234-abcd");
    // A request id that could forge log lines is replaced.
    let response = app
        .request(Method::GET, "/v1")
        .token(&app.token)
        .header("x-request-id", "evil\" id=1")
        .send()
        .await;
    assert_ne!(response.headers()["x-request-id"], "evil\" id=1");
}

async fn roots_link_to_every_top_level_resource(app: TestApp) {
    for version in ["v1", "v2"] {
        let root = app.get_json(&format!("/{version}"), 200).await;
        let links = &root["_links"];
        assert_eq!(links["self"]["href"], format!("/{version}"));
        for rel in ["advertisements", "categories", "users", "me", "search"] {
            assert_eq!(
                links[format!("svc:{rel}")]["href"],
                format!("/{version}/{rel}")
            );
        }
        assert_eq!(
            links["svc:locations"]["href"],
            format!("/{version}/locations{{?postcode}}")
        );
        assert_eq!(links["svc:locations"]["templated"], true);
        assert!(root["message"].as_str().unwrap().contains("/docs"));
    }
}

/// Well-formed JSON with a member of the wrong type, and a query parameter given twice,
/// are fields at fault (api.md §2): `validation-failure` naming the field.
async fn fields_at_fault_are_named(app: TestApp) {
    let User { id, token, .. } = app.user("fields@souk.test").await;
    let named = |field: &str, code: &str| vec![(field.to_owned(), code.to_owned())];
    let body = serde_json::json!({"email": 5, "name": "Vijf"});
    let response = app.post("/v1/users").token(&app.token).json(&body).send();
    let error = expect_json(response.await, 400).await;
    assert_eq!(field_codes(&error), named("email", "invalid-value"));
    let body = serde_json::json!({"newEmail": ["fields2@souk.test"]});
    let path = format!("/v1/users/{id}/change-email");
    let response = app.post(&path).token(&token).json(&body).send();
    let error = expect_json(response.await, 400).await;
    assert_eq!(field_codes(&error), named("newEmail", "invalid-value"));
    let response = app
        .post(&path)
        .token(&token)
        .json(&serde_json::json!({}))
        .send();
    let error = expect_json(response.await, 400).await;
    assert_eq!(field_codes(&error), named("newEmail", "missing"));
    let listing = format!("/v1/users/{id}/advertisements?limit=5&offset=0&limit=10");
    for (path, field) in [
        ("/v1/locations?postcode=1097DN&postcode=1011AB", "postcode"),
        ("/v1/categories?categoryId=4&categoryId=91", "categoryId"),
        (listing.as_str(), "limit"),
    ] {
        let error = app.get_json(path, 400).await;
        assert_eq!(field_codes(&error), named(field, "duplicate"), "{path}");
    }
}
