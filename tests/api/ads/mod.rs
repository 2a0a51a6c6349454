//! Advertisements: what a client of the original does, validation, access, ETags, lists
//! and the lifecycle, on both backends. The helpers here place and change ads; each file
//! holds one topic.

mod categories;
mod changes;
mod content;
mod lifecycle;
mod lists;
mod original;
mod seeded;

use serde_json::{Value, json};

use crate::helpers::{TestApp, User, expect_json};

/// Damesfietsen (4/402): `condition` is mandatory, `frameSize` a NUMBER of 30 to 70 cm.
pub fn minimal(title: &str) -> Value {
    json!({
        "title": title,
        "description": "Een mooie fiets, weinig gebruikt.",
        "categoryId": 402,
        "location": {"postcode": "1097DN"},
        "priceModel": {"modelType": "fixed", "askingPrice": 15000},
        "condition": "used",
    })
}

/// A car (Personenauto's, 1/101): `fuel` is mandatory, `model` a STRING, 56 days running.
pub fn car(title: &str) -> Value {
    json!({
        "title": title,
        "description": "Een nette auto.",
        "categoryId": 101,
        "location": {"postcode": "1000"},
        "priceModel": {"modelType": "fixed", "askingPrice": 500000},
        "fuel": "petrol",
    })
}

/// The path of an ad's answer (its `self` link).
pub fn path_of(ad: &Value) -> String {
    ad["_links"]["self"]["href"].as_str().unwrap().to_owned()
}

pub async fn create(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    app.post("/v1/advertisements")
        .token(token)
        .json(body)
        .send()
        .await
}

pub async fn created(app: &TestApp, token: &str, body: &Value) -> Value {
    expect_json(create(app, token, body).await, 201).await
}

pub async fn json_patch(
    app: &TestApp,
    token: &str,
    path: &str,
    patch: Value,
    if_match: Option<&str>,
) -> reqwest::Response {
    let mut request = app.patch(path).token(token).json_patch(&patch);
    if let Some(tag) = if_match {
        request = request.header("if-match", tag);
    }
    request.send().await
}

pub async fn status(app: &TestApp, token: &str, path: &str, to: &str) -> reqwest::Response {
    json_patch(
        app,
        token,
        path,
        json!([{"op": "replace", "path": "/status", "value": to}]),
        None,
    )
    .await
}

pub async fn put(app: &TestApp, token: &str, path: &str, body: &Value) -> reqwest::Response {
    app.put(path).token(token).json(body).send().await
}

pub async fn delete(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    app.delete(path).token(token).send().await
}

pub async fn own_count(app: &TestApp, token: &str) -> i64 {
    expect_json(app.get_with("/v1/advertisements", token).await, 200).await["totalCount"]
        .as_i64()
        .unwrap()
}

/// A new ad of `seller` in state `state` (not deleted); its path.
pub async fn ad_in(app: &TestApp, seller: &User, state: &str) -> String {
    let mut body = minimal(&format!("In staat {state}"));
    if state == "draft" {
        body["status"] = json!("draft");
    }
    let ad = created(app, &seller.token, &body).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let item = souk::domain::advertisement::ItemId::parse(ad["itemId"].as_str().unwrap()).unwrap();
    match state {
        "paused" | "closed" => {
            expect_json(status(app, &seller.token, &path, state).await, 200).await;
        }
        "expired" => {
            let past = app.clock.now() - 1;
            app.execute(
                "UPDATE advertisements SET close_date = $1 WHERE item_number = $2",
                souk::params![past, item.number()].to_vec(),
            )
            .await;
        }
        "rejected" => souk::moderation::reject(&app.db, item, "Verboden", app.clock.now())
            .await
            .unwrap(),
        _ => {}
    }
    let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(read["status"], state);
    path
}
