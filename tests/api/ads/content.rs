//! What an ad may hold: every content rule with its field error, malformed bodies, the
//! first status, control characters, and who may publish.

use serde_json::{Value, json};

use super::{car, create, created, json_patch, minimal, own_count, put};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json, field_codes};

both_backends!(
    problems_come_back_together,
    every_content_rule_has_its_field_error,
    malformed_bodies_are_refused_and_change_nothing,
    new_ads_start_online_or_as_drafts,
    control_characters_are_refused_where_text_is_stored,
    unconfirmed_users_cannot_publish,
);

async fn problems_come_back_together(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let body = json!({"title": "x", "categoryId": 402, "location": {"postcode": "nope"},
                      "priceModel": {"modelType": "bidding"}, "condition": "kapot", "frameSize": 99, "kleur": "rood"});
    let error = expect_json(create(&app, &seller.token, &body).await, 400).await;
    assert_eq!(error["code"], "validation-failure");
    let found = field_codes(&error);
    for expected in [
        ("title", "too-short"),
        ("description", "missing"),
        ("location.postcode", "invalid-postcode"),
        ("priceModel.minimalBid", "missing"),
        ("condition", "unknown-option"),
        ("frameSize", "out-of-range"),
        ("kleur", "unknown-attribute"),
    ] {
        assert!(
            found.contains(&(expected.0.to_owned(), expected.1.to_owned())),
            "{expected:?} in {found:?}"
        );
    }
    // A status that cannot be asked for hides none of the others, on a new ad and on a
    // change.
    let mut paused = minimal("x");
    paused["status"] = json!("paused");
    let error = expect_json(create(&app, &seller.token, &paused).await, 400).await;
    let both = [
        ("status".to_owned(), "invalid-value".to_owned()),
        ("title".to_owned(), "too-short".to_owned()),
    ];
    assert_eq!(field_codes(&error), both);
    let ad = created(&app, &seller.token, &minimal("Fiets")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let mut bogus = minimal("x");
    bogus["status"] = json!("bogus");
    let error = expect_json(put(&app, &seller.token, &path, &bogus).await, 400).await;
    assert_eq!(field_codes(&error), both);
    let deleted = app.delete(&path).token(&seller.token).send().await;
    assert_eq!(deleted.status(), 204);
    let mut closed = minimal("Kaartjes");
    closed["categoryId"] = json!(2401);
    let error = expect_json(create(&app, &seller.token, &closed).await, 400).await;
    assert_eq!(error["details"][0]["code"], "category-closed");
    let mut l1 = minimal("Op L1");
    l1["categoryId"] = json!(4);
    assert_eq!(
        expect_json(create(&app, &seller.token, &l1).await, 400).await["details"][0]["code"],
        "not-a-leaf"
    );
    let mut negative = minimal("Negatief");
    negative["priceModel"]["askingPrice"] = json!(-5);
    assert_eq!(
        expect_json(create(&app, &seller.token, &negative).await, 400).await["details"][0]["code"],
        "negative"
    );
    let own = expect_json(app.get_with("/v1/advertisements", &seller.token).await, 200).await;
    assert_eq!(own["totalCount"], 0, "nothing was stored");
    for malformed in ["12", "m", "m0012", "m-5", "M12", "m12x"] {
        let error = app
            .get_json(&format!("/v1/advertisements/{malformed}"), 400)
            .await;
        assert_eq!(error["code"], "validation-failure");
        assert_eq!(
            field_codes(&error),
            [("itemId".to_owned(), "invalid-item-id".to_owned())],
            "{malformed}"
        );
    }
    // Not UTF-8 once percent-decoded: the field's error, never a server error, on the
    // routes of other resources too.
    for (path, field) in [
        ("/v1/advertisements/%FF", "itemId"),
        ("/v1/advertisements/m1/bids/%C3%28", "bidId"),
        ("/v1/categories/%FF", "categoryId"),
        ("/v1/categories/1/%FF/attributes", "l2CategoryId"),
        ("/v1/images/%FF", "mediaId"),
        ("/v1/images/x/%C3%28/meta", "size"),
    ] {
        let error = app.get_json(path, 400).await;
        assert_eq!(error["code"], "validation-failure");
        assert_eq!(
            field_codes(&error),
            [(field.to_owned(), "invalid-encoding".to_owned())],
            "{path}"
        );
    }
    assert_eq!(
        app.get_json("/v1/advertisements/m999999", 404).await["code"],
        "advertisement-not-found"
    );
}

/// Each rule of an ad's content, broken alone, gives its field error (and stores nothing);
/// the bounds themselves are accepted.
async fn every_content_rule_has_its_field_error(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let with = |base: Value, changes: &[(&str, Value)]| {
        let mut body = base;
        for (key, value) in changes {
            if value.is_null() {
                body.as_object_mut().unwrap().remove(*key);
            } else {
                body[*key] = value.clone();
            }
        }
        body
    };
    let bike = minimal("Fiets");
    let in_404 = with(minimal("Fiets"), &[("categoryId", json!(404))]);
    let long = |n: usize| json!("x".repeat(n));
    let refused: Vec<(Value, (&str, &str))> = vec![
        (
            with(bike.clone(), &[("condition", Value::Null)]),
            ("condition", "missing"),
        ),
        (
            with(bike.clone(), &[("frameSize", json!("groot"))]),
            ("frameSize", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("frameSize", json!(53.5))]),
            ("frameSize", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("frameSize", json!(29))]),
            ("frameSize", "out-of-range"),
        ),
        (
            with(in_404.clone(), &[("weight", json!("zwaar"))]),
            ("weight", "invalid-value"),
        ),
        (
            with(car("Golf"), &[("model", json!(42))]),
            ("model", "invalid-value"),
        ),
        (
            with(car("Golf"), &[("model", long(101))]),
            ("model", "too-long"),
        ),
        (
            with(car("Golf"), &[("fuel", json!("steam"))]),
            ("fuel", "unknown-option"),
        ),
        (
            with(
                bike.clone(),
                &[("attributes", json!([{"key": "condition", "value": "new"}]))],
            ),
            ("attributes[0]", "duplicate"),
        ),
        (
            with(
                bike.clone(),
                &[("attributes", json!([{"key": "condition"}]))],
            ),
            ("attributes[0]", "invalid-value"),
        ),
        (
            with(
                bike.clone(),
                &[(
                    "priceModel",
                    json!({"modelType": "fixed", "askingPrice": 1_000_000_001}),
                )],
            ),
            ("priceModel.askingPrice", "too-large"),
        ),
        (
            with(
                bike.clone(),
                &[(
                    "priceModel",
                    json!({"modelType": "fixed", "askingPrice": 12.5}),
                )],
            ),
            ("priceModel.askingPrice", "invalid-value"),
        ),
        (
            with(
                bike.clone(),
                &[(
                    "priceModel",
                    json!({"modelType": "fixed", "askingPrice": 100, "minimalBid": 50}),
                )],
            ),
            ("priceModel.minimalBid", "not-allowed"),
        ),
        (
            with(
                bike.clone(),
                &[("priceModel", json!({"modelType": "free"}))],
            ),
            ("priceModel.modelType", "unknown-model-type"),
        ),
        (
            with(bike.clone(), &[("priceModel", Value::Null)]),
            ("priceModel", "missing"),
        ),
        (
            with(bike.clone(), &[("priceModel", json!("fixed"))]),
            ("priceModel", "invalid-value"),
        ),
        (
            with(
                bike.clone(),
                &[("priceModel", json!({"modelType": 5, "askingPrice": 100}))],
            ),
            ("priceModel.modelType", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("location", json!("1097DN"))]),
            ("location", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("categoryId", json!(9999))]),
            ("categoryId", "unknown-category"),
        ),
        (
            with(bike.clone(), &[("categoryId", json!("fietsen"))]),
            ("categoryId", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("description", json!(""))]),
            ("description", "too-short"),
        ),
        (
            with(bike.clone(), &[("description", json!("   "))]),
            ("description", "too-short"),
        ),
        (
            with(bike.clone(), &[("description", long(4001))]),
            ("description", "too-long"),
        ),
        (
            with(bike.clone(), &[("description", json!(12))]),
            ("description", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("title", long(61))]),
            ("title", "too-long"),
        ),
        (
            with(bike.clone(), &[("title", Value::Null)]),
            ("title", "missing"),
        ),
        (
            with(bike.clone(), &[("location", json!({"postcode": "0123AB"}))]),
            ("location.postcode", "invalid-postcode"),
        ),
        (
            with(bike.clone(), &[("locale", json!("de-DE"))]),
            ("locale", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("reserved", json!("ja"))]),
            ("reserved", "invalid-value"),
        ),
        (
            with(bike.clone(), &[("showOnMap", json!(1))]),
            ("showOnMap", "invalid-value"),
        ),
    ];
    for (body, expected) in &refused {
        let error = expect_json(create(&app, &seller.token, body).await, 400).await;
        assert_eq!(error["code"], "validation-failure");
        assert_eq!(
            field_codes(&error),
            [(expected.0.to_owned(), expected.1.to_owned())],
            "{body}"
        );
    }
    let above = with(
        bike.clone(),
        &[(
            "priceModel",
            json!({"modelType": "bidding", "minimalBid": 600, "askingPrice": 500}),
        )],
    );
    let error = expect_json(create(&app, &seller.token, &above).await, 400).await;
    assert_eq!(error["details"][0]["code"], "above-asking-price");
    assert_eq!(
        error["details"][0]["fields"],
        json!(["priceModel.minimalBid", "priceModel.askingPrice"])
    );
    assert_eq!(
        own_count(&app, &seller.token).await,
        0,
        "nothing was stored"
    );
    // The bounds themselves are fine, and so are numeric strings where numbers go.
    let accepted = [
        with(
            bike.clone(),
            &[("title", long(60)), ("description", long(4000))],
        ),
        with(
            bike.clone(),
            &[("title", json!("ab")), ("frameSize", json!("70"))],
        ),
        with(
            bike.clone(),
            &[(
                "priceModel",
                json!({"modelType": "fixed", "askingPrice": "1000000000"}),
            )],
        ),
        with(in_404, &[("weight", json!("12.5"))]),
        with(car("Golf"), &[("model", long(100))]),
        with(
            bike,
            &[
                ("priceModel", json!({"modelType": "to be discussed"})),
                ("reserved", json!(true)),
            ],
        ),
    ];
    for body in &accepted {
        expect_json(create(&app, &seller.token, body).await, 201).await;
    }
    assert_eq!(own_count(&app, &seller.token).await, accepted.len() as i64);
}

/// A body of another type or malformed JSON is refused on POST, PUT and PATCH, and a
/// refused change changes nothing.
async fn malformed_bodies_are_refused_and_change_nothing(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let raw = |method: reqwest::Method, path: &str, content_type: &str, body: &str| {
        app.request(method, path)
            .token(&seller.token)
            .body(content_type, body)
            .send()
    };
    let wrong_type = raw(
        reqwest::Method::POST,
        "/v1/advertisements",
        "text/plain",
        &minimal("Fiets").to_string(),
    );
    assert_eq!(
        expect_json(wrong_type.await, 400).await["code"],
        "incorrect-content-type"
    );
    for broken in ["{\"title\": ", "[1, 2]", "\"fiets\""] {
        let response = raw(
            reqwest::Method::POST,
            "/v1/advertisements",
            "application/json",
            broken,
        );
        assert_eq!(
            expect_json(response.await, 400).await["code"],
            "invalid-json",
            "{broken}"
        );
    }
    assert_eq!(own_count(&app, &seller.token).await, 0);
    let response = create(&app, &seller.token, &minimal("Fiets")).await;
    let tag = response.headers()["etag"].clone();
    let ad = expect_json(response, 201).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    for (method, content_type, body, code) in [
        (
            reqwest::Method::PUT,
            "text/plain",
            minimal("Ander").to_string(),
            "incorrect-content-type",
        ),
        (
            reqwest::Method::PUT,
            "application/json",
            "{\"title\": ".to_owned(),
            "invalid-json",
        ),
        (
            reqwest::Method::PATCH,
            "application/json-patch+json",
            "[{\"op\": ".to_owned(),
            "invalid-json",
        ),
        (
            reqwest::Method::PATCH,
            "application/json-patch+json",
            "{\"title\": \"Ander\"}".to_owned(),
            "invalid-json",
        ),
        (
            reqwest::Method::PATCH,
            "application/json-patch+json",
            "[{\"op\": \"replace\", \"value\": 1}]".to_owned(),
            "invalid-json",
        ),
        (
            reqwest::Method::PATCH,
            "application/json",
            json!([{"op": "replace", "path": "/title", "value": "Ander"}]).to_string(),
            "incorrect-content-type",
        ),
    ] {
        let response = raw(method.clone(), &path, content_type, &body).await;
        assert_eq!(
            expect_json(response, 400).await["code"],
            code,
            "{method} {content_type} {body}"
        );
    }
    // A megabyte of attributes is refused whole, with one field error, listed or flat.
    let mut listed = minimal("Ander");
    listed["attributes"] = json!(vec![0; 300_000]);
    let mut flat = minimal("Ander");
    for i in 0..201 {
        flat[format!("kenmerk{i}")] = json!(i);
    }
    for body in [listed, flat] {
        let refused = expect_json(put(&app, &seller.token, &path, &body).await, 400).await;
        assert_eq!(
            field_codes(&refused),
            [("attributes".to_owned(), "too-many".to_owned())]
        );
    }
    // Within that, every problem is a field error, and the answer lists the first 100.
    let mut unknown = minimal("Ander");
    for i in 0..150 {
        unknown[format!("kenmerk{i}")] = json!(i);
    }
    let refused = expect_json(put(&app, &seller.token, &path, &unknown).await, 400).await;
    let details = refused["details"].as_array().unwrap();
    assert_eq!(details.len(), 100);
    assert!(
        details.iter().all(|d| d["code"] == "unknown-attribute"),
        "{refused}"
    );
    let read = app.get_with(&path, &seller.token).await;
    assert_eq!(read.headers()["etag"], tag, "nothing changed");
    assert_eq!(expect_json(read, 200).await, ad);
}

/// A new ad is online without `status`, a draft with `"status": "draft"`; any other
/// state is refused (and nothing is stored).
async fn new_ads_start_online_or_as_drafts(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    for status in ["paused", "closed", "expired", "deleted", "rejected", "sold"] {
        let mut body = minimal("Fiets");
        body["status"] = json!(status);
        let error = expect_json(create(&app, &seller.token, &body).await, 400).await;
        assert_eq!(
            field_codes(&error),
            [("status".to_owned(), "invalid-value".to_owned())],
            "{status}"
        );
    }
    assert_eq!(own_count(&app, &seller.token).await, 0);
    let mut online = minimal("Fiets");
    online["status"] = json!("online");
    assert_eq!(
        created(&app, &seller.token, &online).await["status"],
        "online"
    );
    assert_eq!(
        created(&app, &seller.token, &minimal("Fiets")).await["status"],
        "online"
    );
}

/// A NUL cannot be stored on PostgreSQL (it was a 500 there) and other control characters
/// break listings: the title and attribute texts are one line, a description may hold
/// line breaks and tabs but no other control character.
async fn control_characters_are_refused_where_text_is_stored(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    // A NUL in both; Unicode's line separator in a title, and a right-to-left override,
    // which makes a description show another price than it says.
    for (title, description) in [
        ("Fiets\u{0}", "Goed\u{0}onderhouden"),
        ("Fiets\u{2028}met mand", "Prijs \u{202e}05 \u{20ac}"),
    ] {
        let mut body = minimal(title);
        body["description"] = json!(description);
        let error = expect_json(create(&app, &seller.token, &body).await, 400).await;
        assert_eq!(
            field_codes(&error),
            [
                ("title".to_owned(), "invalid-value".to_owned()),
                ("description".to_owned(), "invalid-value".to_owned())
            ],
            "{title:?}"
        );
    }
    let mut escape = minimal("Fiets");
    escape["description"] = json!("Rood\u{1b}[31m");
    let error = expect_json(create(&app, &seller.token, &escape).await, 400).await;
    assert_eq!(error["details"][0]["field"], "description");
    let car = json!({"title": "Golf", "description": "Een auto.", "categoryId": 101,
                     "location": {"postcode": "1000"},
                     "priceModel": {"modelType": "fixed", "askingPrice": 500000},
                     "fuel": "petrol", "model": "Golf\u{0}GTI"});
    let error = expect_json(create(&app, &seller.token, &car).await, 400).await;
    assert_eq!(
        field_codes(&error),
        [("model".to_owned(), "invalid-value".to_owned())]
    );
    let own = expect_json(app.get_with("/v1/advertisements", &seller.token).await, 200).await;
    assert_eq!(own["totalCount"], 0, "nothing was stored");
    // Line breaks and tabs lay a description out.
    let mut laid_out = minimal("Fiets met mand");
    laid_out["description"] = json!("Regel één\r\nRegel\ttwee");
    let ad = created(&app, &seller.token, &laid_out).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(read["description"], "Regel één\r\nRegel\ttwee");
    // A change that brings one in is refused too, and changes nothing.
    let mut back = read.clone();
    back["description"] = json!("Nu met\u{0}");
    let error = expect_json(put(&app, &seller.token, &path, &back).await, 400).await;
    assert_eq!(error["details"][0]["field"], "description");
    let patched = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Fiets\u{7}"}]),
        None,
    )
    .await;
    assert_eq!(
        expect_json(patched, 400).await["details"][0]["field"],
        "title"
    );
    assert_eq!(
        expect_json(app.get_with(&path, &seller.token).await, 200).await,
        read
    );
}

async fn unconfirmed_users_cannot_publish(app: TestApp) {
    let token = app.unconfirmed_user_token("nieuw@souk.test").await;
    let error = expect_json(create(&app, &token, &minimal("Te vroeg")).await, 403).await;
    assert_eq!(error["code"], "user-not-confirmed");
    // Whatever the body: who may not publish learns nothing about it.
    let broken = app
        .post("/v1/advertisements")
        .token(&token)
        .body("application/json", "{\"title\": ")
        .send()
        .await;
    assert_eq!(expect_json(broken, 403).await["code"], "user-not-confirmed");
    assert_eq!(own_count(&app, &token).await, 0);
}
