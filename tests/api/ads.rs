//! Advertisements: what a client of the original does, validation, access, ETags and the
//! lifecycle, on both backends.

use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{TestApp, expect_json, field_codes};

both_backends!(
    a_client_of_the_original_works_unchanged,
    changes_answer_with_what_a_read_finds,
    problems_come_back_together,
    every_content_rule_has_its_field_error,
    malformed_bodies_are_refused_and_change_nothing,
    new_ads_start_online_or_as_drafts,
    the_sellers_list_pages_by_30,
    close_date_follows_the_categorys_running_days,
    only_the_seller_changes_an_ad,
    unconfirmed_users_cannot_publish,
    etags_guard_changes,
    the_lifecycle_is_enforced,
    the_sellers_transitions_and_no_others,
    operators_restore_to_where_the_ad_was,
    a_users_list_shows_online_ads_only,
    ads_expire_on_time,
    the_sellers_list_and_a_users_online_ads,
    offsets_out_of_range_are_refused,
    control_characters_are_refused_where_text_is_stored,
    ads_outlive_a_closed_category_and_changed_definitions,
    not_updateable_attributes_keep_their_value,
    the_sellers_view_needs_read,
    operators_reject_and_restore,
    the_expiry_sweep_writes_down_what_reads_show,
    the_upkeep_expires_ads_by_itself,
    seeded_ads_are_valid,
);

/// Damesfietsen (4/402): `condition` is mandatory, `frameSize` a NUMBER of 30 to 70 cm.
fn minimal(title: &str) -> Value {
    json!({
        "title": title,
        "description": "Een mooie fiets, weinig gebruikt.",
        "categoryId": 402,
        "location": {"postcode": "1097DN"},
        "priceModel": {"modelType": "fixed", "askingPrice": 15000},
        "condition": "used",
    })
}

struct Seller {
    id: i64,
    token: String,
}

async fn seller(app: &TestApp, email: &str) -> Seller {
    let id = app.create_user(email, "password-of-seller").await;
    let (token, _) = app
        .user_token(&app.app_client, email, "password-of-seller", None)
        .await;
    Seller { id, token }
}

async fn create(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(app.url("/v1/advertisements"))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn created(app: &TestApp, token: &str, body: &Value) -> Value {
    expect_json(create(app, token, body).await, 201).await
}

async fn json_patch(
    app: &TestApp,
    token: &str,
    path: &str,
    patch: Value,
    if_match: Option<&str>,
) -> reqwest::Response {
    let mut request = app
        .client
        .patch(app.url(path))
        .bearer_auth(token)
        .header("content-type", "application/json-patch+json")
        .body(patch.to_string());
    if let Some(tag) = if_match {
        request = request.header("if-match", tag);
    }
    request.send().await.unwrap()
}

async fn a_client_of_the_original_works_unchanged(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let response = create(&app, &seller.token, &minimal("Damesfiets Gazelle")).await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let created_tag = response.headers()["etag"].clone();
    let ad = expect_json(response, 201).await;
    // The answer to the POST is what a read finds, ETag and all (it is not read back).
    let read_back = app.get_with(&location, &seller.token).await;
    assert_eq!(read_back.headers()["etag"], created_tag);
    assert_eq!(expect_json(read_back, 200).await, ad);
    let mut draft_body = minimal("Herenfiets");
    draft_body["status"] = json!("draft");
    draft_body["frameSize"] = json!(53);
    draft_body["priceModel"] = json!({"modelType": "bidding", "minimalBid": 5000});
    let draft = created(&app, &seller.token, &draft_body).await;
    assert_eq!(draft["status"], "draft");
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap();
    assert_eq!(
        expect_json(app.get_with(draft_path, &seller.token).await, 200).await,
        draft
    );
    let item = ad["itemId"].as_str().unwrap().to_owned();
    assert!(item.starts_with('m') && item[1..].chars().all(|c| c.is_ascii_digit()));
    assert_eq!(location, format!("/v1/advertisements/{item}"));
    assert_eq!(ad["_links"]["self"]["href"], location);
    assert_eq!(ad["status"], "online");
    assert_eq!(
        ad["priceModel"],
        json!({"modelType": "fixed", "askingPrice": 15000})
    );
    assert_eq!(ad["condition"], "used", "attributes are flat members");
    assert_eq!(
        ad["location"],
        json!({"postcode": "1097DN", "cityName": "Amsterdam"})
    );
    let profile = app.get_json(&format!("/v1/users/{}", seller.id), 200).await;
    assert_eq!(
        ad["seller"],
        json!({"sellerId": seller.id, "sellerName": profile["name"], "phoneNumber": null,
               "acceptPaypal": false, "showEmail": false})
    );
    assert_eq!(ad["_links"]["svc:category"]["href"], "/v1/categories/4/402");
    assert_eq!(
        ad["_links"]["svc:seller"]["href"],
        format!("/v1/users/{}", seller.id)
    );
    for (rel, tail) in [
        ("svc:advertisement-features", "/features"),
        (
            "svc:advertisement-purchased-features",
            "/purchased-features",
        ),
        ("svc:advertisement-images", "/images"),
        ("svc:advertisement-statistics", "/statistics"),
        ("svc:bids", "/bids"),
        ("svc:advertisement-transactions", "/transactions"),
        ("svc:advertisement-renew", "/renew"),
    ] {
        assert_eq!(
            ad["_links"][rel]["href"],
            format!("{location}{tail}"),
            "{rel}"
        );
    }
    assert_eq!(
        ad["_links"]["svc:advertisement-website-link"],
        json!({"href": app.url(&format!("/a/{}", ad["itemId"].as_str().unwrap())), "type": "text/html"})
    );
    assert_eq!(
        ad["_links"]["describedby"]["href"],
        app.url("/docs/resources/advertisement")
    );
    assert_eq!(ad["_links"]["curies"][0]["name"], "svc");
    assert_eq!(
        ad["_embedded"]["svc:advertisement-images"]["_links"]["self"]["href"],
        format!("{location}/images")
    );
    assert!(
        ad["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"]
            .is_array()
    );
    assert!(ad["startDate"].as_str().unwrap().ends_with("+00:00"));
    // PATCH the title with a JSON Patch; 200 with the full representation.
    let patched = json_patch(
        &app,
        &seller.token,
        &location,
        json!([{"op": "replace", "path": "/title", "value": "Damesfiets Gazelle Orange"}]),
        None,
    )
    .await;
    let patched = expect_json(patched, 200).await;
    assert_eq!(patched["title"], "Damesfiets Gazelle Orange");
    // Read it back, as the seller and as anyone.
    let read = expect_json(app.get_with(&location, &seller.token).await, 200).await;
    assert_eq!(read["title"], "Damesfiets Gazelle Orange");
    let public = app
        .get_json(&format!("/v2/advertisements/{item}"), 200)
        .await;
    assert_eq!(
        public["_links"]["self"]["href"],
        format!("/v2/advertisements/{item}")
    );
    // `replace` of an absent member acts as `add`; the list form of attributes works too.
    let added = json_patch(
        &app,
        &seller.token,
        &location,
        json!([{"op": "replace", "path": "/frameSize", "value": "53"}]),
        None,
    )
    .await;
    assert_eq!(expect_json(added, 200).await["frameSize"], 53);
    let mut listed = minimal("Fiets met lijst");
    listed.as_object_mut().unwrap().remove("condition");
    listed["attributes"] = json!([{"key": "condition", "value": "new"}]);
    assert_eq!(
        created(&app, &seller.token, &listed).await["condition"],
        "new"
    );
    // PUT accepts what was read, read-only fields included.
    let mut back = read.clone();
    back["description"] = json!("Nieuwe beschrijving.");
    let put = app
        .client
        .put(app.url(&location))
        .bearer_auth(&seller.token)
        .json(&back)
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_json(put, 200).await["description"],
        "Nieuwe beschrijving."
    );
    // List the ad's transactions (under /v2, as the original documented them): none yet,
    // then the one the seller records.
    let transactions = format!("/v2/advertisements/{item}/transactions");
    let none = expect_json(app.get_with(&transactions, &seller.token).await, 200).await;
    assert_eq!(none["_links"]["self"]["href"], transactions);
    assert!(none["_links"]["curies"].is_array());
    assert_eq!(
        none["_embedded"]["svc:advertisement-transaction"],
        json!([])
    );
    let buyer = app
        .create_user("koper@souk.test", "password-of-buyer")
        .await;
    let sale = app
        .client
        .post(app.url(&transactions))
        .bearer_auth(&seller.token)
        .json(&json!({"buyerId": buyer, "amount": 15000, "shippingCosts": 0}))
        .send()
        .await
        .unwrap();
    expect_json(sale, 201).await;
    let listed = expect_json(app.get_with(&transactions, &seller.token).await, 200).await;
    let listed = listed["_embedded"]["svc:advertisement-transaction"]
        .as_array()
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["transactionId"], 1);
    assert_eq!(listed[0]["buyerId"], buyer);
    assert_eq!(listed[0]["status"], "CREATED");
    assert_eq!(
        listed[0]["_links"]["self"]["href"],
        format!("{transactions}/1")
    );
}

async fn problems_come_back_together(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
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
    assert_eq!(
        app.get_json("/v1/advertisements/m999999", 404).await["code"],
        "advertisement-not-found"
    );
}

/// A car (Personenauto's, 1/101): `fuel` is mandatory, `model` a STRING, 56 days running.
fn car(title: &str) -> Value {
    json!({
        "title": title,
        "description": "Een nette auto.",
        "categoryId": 101,
        "location": {"postcode": "1000"},
        "priceModel": {"modelType": "fixed", "askingPrice": 500000},
        "fuel": "petrol",
    })
}

async fn own_count(app: &TestApp, token: &str) -> i64 {
    expect_json(app.get_with("/v1/advertisements", token).await, 200).await["totalCount"]
        .as_i64()
        .unwrap()
}

/// Each rule of an ad's content, broken alone, gives its field error (and stores nothing);
/// the bounds themselves are accepted.
async fn every_content_rule_has_its_field_error(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
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
    let seller = seller(&app, "verkoper@souk.test").await;
    let raw = |method: reqwest::Method, path: &str, content_type: &str, body: &str| {
        app.client
            .request(method, app.url(path))
            .bearer_auth(&seller.token)
            .header("content-type", content_type)
            .body(body.to_owned())
            .send()
    };
    let wrong_type = raw(
        reqwest::Method::POST,
        "/v1/advertisements",
        "text/plain",
        &minimal("Fiets").to_string(),
    );
    assert_eq!(
        expect_json(wrong_type.await.unwrap(), 400).await["code"],
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
            expect_json(response.await.unwrap(), 400).await["code"],
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
        let response = raw(method.clone(), &path, content_type, &body)
            .await
            .unwrap();
        assert_eq!(
            expect_json(response, 400).await["code"],
            code,
            "{method} {content_type} {body}"
        );
    }
    let read = app.get_with(&path, &seller.token).await;
    assert_eq!(read.headers()["etag"], tag, "nothing changed");
    assert_eq!(expect_json(read, 200).await, ad);
}

/// A new ad is online without `status`, a draft with `"status": "draft"`; any other
/// state is refused (and nothing is stored).
async fn new_ads_start_online_or_as_drafts(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
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

/// `GET /v1/advertisements` pages by 30 unless `limit` says otherwise.
async fn the_sellers_list_pages_by_30(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
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

/// `closeDate` is `startDate` plus the category's `runningDays`: 56 for cars, 28 for
/// bicycles; a draft gets its dates when it is published.
async fn close_date_follows_the_categorys_running_days(app: TestApp) {
    use souk::domain::time::parse_timestamp;
    let seller = seller(&app, "verkoper@souk.test").await;
    let running = |ad: &Value| {
        let start = parse_timestamp(ad["startDate"].as_str().unwrap()).unwrap();
        let close = parse_timestamp(ad["closeDate"].as_str().unwrap()).unwrap();
        (start, (close - start) / 86_400)
    };
    let fees = app.get_json("/v1/categories/1/101/fees", 200).await;
    assert_eq!(fees["runningDays"], 56);
    let car_ad = created(&app, &seller.token, &car("Golf")).await;
    assert_eq!(running(&car_ad), (app.clock.now(), 56));
    let bike = created(&app, &seller.token, &minimal("Fiets")).await;
    assert_eq!(running(&bike).1, 28);
    let mut draft = car("Polo");
    draft["status"] = json!("draft");
    let draft = created(&app, &seller.token, &draft).await;
    assert!(draft["startDate"].is_null() && draft["closeDate"].is_null());
    app.clock.advance(3 * 86_400);
    let (token, _) = app
        .user_token(
            &app.app_client,
            "verkoper@souk.test",
            "password-of-seller",
            None,
        )
        .await;
    let published = status(
        &app,
        &token,
        draft["_links"]["self"]["href"].as_str().unwrap(),
        "online",
    )
    .await;
    let published = expect_json(published, 200).await;
    assert_eq!(running(&published), (app.clock.now(), 56));
}

async fn only_the_seller_changes_an_ad(app: TestApp) {
    let owner = seller(&app, "eigenaar@souk.test").await;
    let other = seller(&app, "ander@souk.test").await;
    let ad = created(&app, &owner.token, &minimal("Van de eigenaar")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    expect_json(app.get_with(&path, &other.token).await, 200).await;
    expect_json(app.get(&path).await, 200).await;
    for token in [other.token.as_str(), app.token.as_str()] {
        let put = app
            .client
            .put(app.url(&path))
            .bearer_auth(token)
            .json(&minimal("Gekaapt"))
            .send()
            .await
            .unwrap();
        assert_eq!(expect_json(put, 403).await["code"], "unauthorized");
        let patch = json_patch(
            &app,
            token,
            &path,
            json!([{"op": "replace", "path": "/title", "value": "Gekaapt"}]),
            None,
        )
        .await;
        assert_eq!(expect_json(patch, 403).await["code"], "unauthorized");
        let delete = app
            .client
            .delete(app.url(&path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(expect_json(delete, 403).await["code"], "unauthorized");
    }
    assert_eq!(
        expect_json(
            create(&app, &app.token, &minimal("Door een client")).await,
            403
        )
        .await["code"],
        "unauthorized"
    );
    assert_eq!(
        expect_json(app.get("/v1/advertisements").await, 403).await["code"],
        "unauthorized"
    );
    assert_eq!(app.get_json(&path, 200).await["title"], "Van de eigenaar");
    // A draft is the seller's alone.
    let mut draft = minimal("Nog niet klaar");
    draft["status"] = json!("draft");
    let draft = created(&app, &owner.token, &draft).await;
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap();
    assert_eq!(draft["status"], "draft");
    assert!(draft["startDate"].is_null());
    expect_json(app.get_with(draft_path, &owner.token).await, 200).await;
    expect_json(app.get_with(draft_path, &other.token).await, 404).await;
    let put = app
        .client
        .put(app.url(draft_path))
        .bearer_auth(&other.token)
        .json(&minimal("x y"))
        .send()
        .await
        .unwrap();
    expect_json(put, 404).await;
}

async fn unconfirmed_users_cannot_publish(app: TestApp) {
    let response = app
        .client
        .post(app.url("/v1/users"))
        .bearer_auth(&app.token)
        .json(&json!({"email": "nieuw@souk.test", "password": "a good password"}))
        .send()
        .await
        .unwrap();
    expect_json(response, 201).await;
    let (token, _) = app
        .user_token(&app.app_client, "nieuw@souk.test", "a good password", None)
        .await;
    let error = expect_json(create(&app, &token, &minimal("Te vroeg")).await, 403).await;
    assert_eq!(error["code"], "user-not-confirmed");
    // Whatever the body: who may not publish learns nothing about it.
    let broken = app
        .client
        .post(app.url("/v1/advertisements"))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body("{\"title\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(expect_json(broken, 403).await["code"], "user-not-confirmed");
    assert_eq!(own_count(&app, &token).await, 0);
}

async fn etags_guard_changes(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let first = create(&app, &seller.token, &minimal("Met ETag")).await;
    let tag = first.headers()["etag"].to_str().unwrap().to_owned();
    let path = expect_json(first, 201).await["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = app.get_with(&path, &seller.token).await;
    assert_eq!(read.headers()["etag"].to_str().unwrap(), tag);
    let cached = app
        .client
        .get(app.url(&path))
        .bearer_auth(&seller.token)
        .header("if-none-match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(cached.status(), 304);
    // If-None-Match compares weakly: the weak form of the tag matches too.
    let weakly = app
        .client
        .get(app.url(&path))
        .bearer_auth(&seller.token)
        .header("if-none-match", format!("W/{tag}"))
        .send()
        .await
        .unwrap();
    assert_eq!(weakly.status(), 304);
    // If-Match compares strongly: a weak tag never matches, and nothing changes.
    let weak = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Zwak"}]),
        Some(&format!("W/{tag}")),
    )
    .await;
    assert_eq!(expect_json(weak, 412).await["code"], "precondition-failed");
    let unchanged = app.get_with(&path, &seller.token).await;
    assert_eq!(unchanged.headers()["etag"].to_str().unwrap(), tag);
    assert_eq!(expect_json(unchanged, 200).await["title"], "Met ETag");
    let changed = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Eerste wijziging"}]),
        Some(&tag),
    )
    .await;
    let new_tag = changed.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(new_tag, tag);
    expect_json(changed, 200).await;
    let stale = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Tweede wijziging"}]),
        Some(&tag),
    )
    .await;
    assert_eq!(expect_json(stale, 412).await["code"], "precondition-failed");
    let put = app
        .client
        .put(app.url(&path))
        .bearer_auth(&seller.token)
        .header("if-match", &tag)
        .json(&minimal("Derde"))
        .send()
        .await
        .unwrap();
    expect_json(put, 412).await;
    let delete = app
        .client
        .delete(app.url(&path))
        .bearer_auth(&seller.token)
        .header("if-match", &tag)
        .send()
        .await
        .unwrap();
    expect_json(delete, 412).await;
    assert_eq!(app.get_json(&path, 200).await["title"], "Eerste wijziging");
    // A PUT answers with the new ETag, the one a read then gives, and a matching If-Match
    // lets it through.
    let mut body = minimal("Vierde");
    body["frameSize"] = json!(50);
    let put = app
        .client
        .put(app.url(&path))
        .bearer_auth(&seller.token)
        .header("if-match", &new_tag)
        .json(&body)
        .send()
        .await
        .unwrap();
    let put_tag = put.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(put_tag, new_tag);
    assert_eq!(expect_json(put, 200).await["title"], "Vierde");
    let read = app.get_with(&path, &seller.token).await;
    assert_eq!(read.headers()["etag"].to_str().unwrap(), put_tag);
    let wrong_type = app
        .client
        .patch(app.url(&path))
        .bearer_auth(&seller.token)
        .json(&json!([{"op": "replace", "path": "/title", "value": "x"}]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_json(wrong_type, 400).await["code"],
        "incorrect-content-type"
    );
    let failed = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "remove", "path": "/nothing"}]),
        None,
    )
    .await;
    assert_eq!(
        expect_json(failed, 400).await["details"][0]["code"],
        "patch-failed"
    );
}

async fn status(app: &TestApp, token: &str, path: &str, to: &str) -> reqwest::Response {
    json_patch(
        app,
        token,
        path,
        json!([{"op": "replace", "path": "/status", "value": to}]),
        None,
    )
    .await
}

async fn the_lifecycle_is_enforced(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let mut draft = minimal("Levenscyclus");
    draft["status"] = json!("draft");
    let ad = created(&app, &seller.token, &draft).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let online = expect_json(status(&app, &seller.token, &path, "online").await, 200).await;
    assert_eq!(online["status"], "online");
    assert!(
        online["startDate"].is_string() && online["closeDate"].is_string(),
        "publishing sets the dates"
    );
    let paused = expect_json(status(&app, &seller.token, &path, "paused").await, 200).await;
    assert_eq!(paused["status"], "paused");
    assert_eq!(
        app.get_json(&path, 404).await["code"],
        "advertisement-not-found",
        "paused ads are the seller's"
    );
    expect_json(status(&app, &seller.token, &path, "online").await, 200).await;
    expect_json(status(&app, &seller.token, &path, "closed").await, 200).await;
    let back = expect_json(status(&app, &seller.token, &path, "online").await, 409).await;
    assert_eq!(back["code"], "conflicting-state");
    expect_json(status(&app, &seller.token, &path, "expired").await, 409).await;
    let bogus = expect_json(status(&app, &seller.token, &path, "sold").await, 400).await;
    assert_eq!(bogus["details"][0]["field"], "status");
    let delete = app
        .client
        .delete(app.url(&path))
        .bearer_auth(&seller.token)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 204);
    let again = app
        .client
        .delete(app.url(&path))
        .bearer_auth(&seller.token)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 204, "DELETE is idempotent");
    expect_json(app.get_with(&path, &seller.token).await, 404).await;
    expect_json(status(&app, &seller.token, &path, "online").await, 404).await;
}

const STATES: [&str; 7] = [
    "draft", "online", "paused", "expired", "closed", "deleted", "rejected",
];

/// docs/LIFECYCLE.md: what a seller may do; sending the current state is no change.
fn seller_may(from: &str, to: &str) -> bool {
    from == to
        || matches!(
            (from, to),
            ("draft", "online")
                | ("online", "paused")
                | ("paused", "online")
                | ("online" | "paused", "closed")
                | (_, "deleted")
        )
}

/// A new ad of `seller` in state `state` (not deleted); its path.
async fn ad_in(app: &TestApp, seller: &Seller, state: &str) -> String {
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
            app.db
                .write(move |conn| {
                    Box::pin(async move {
                        conn.execute(
                            "UPDATE advertisements SET close_date = $1 WHERE item_number = $2",
                            souk::params![past, item.number()],
                        )
                        .await
                    })
                })
                .await
                .unwrap();
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

/// Every change of state a seller may ask for (PATCH `status`) against docs/LIFECYCLE.md:
/// the allowed ones land, every other is 409 `conflicting-state` and changes nothing.
async fn the_sellers_transitions_and_no_others(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    for from in STATES.iter().filter(|s| **s != "deleted") {
        for to in STATES {
            let path = ad_in(&app, &seller, from).await;
            let response = status(&app, &seller.token, &path, to).await;
            if seller_may(from, to) {
                assert_eq!(
                    expect_json(response, 200).await["status"],
                    to,
                    "{from} -> {to}"
                );
                let read = app.get_with(&path, &seller.token).await;
                if to == "deleted" {
                    assert_eq!(read.status(), 404, "{from} -> deleted: gone");
                } else {
                    assert_eq!(expect_json(read, 200).await["status"], to);
                }
            } else {
                let refused = expect_json(response, 409).await;
                assert_eq!(refused["code"], "conflicting-state", "{from} -> {to}");
                let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
                assert_eq!(read["status"], *from, "{from} -> {to} changed nothing");
            }
        }
    }
}

/// An operator restores a rejected ad to online if it has running time left, to expired if
/// not, to draft if it was never published; closed, expired and deleted ads cannot be
/// rejected; a reason is text without NUL.
async fn operators_restore_to_where_the_ad_was(app: TestApp) {
    use souk::domain::advertisement::{AdStatus, ItemId};
    use souk::moderation::{ModerationError, reject, restore};
    let seller = seller(&app, "verkoper@souk.test").await;
    let item = |path: &str| ItemId::parse(path.rsplit('/').next().unwrap()).unwrap();
    let now = app.clock.now();
    let draft = ad_in(&app, &seller, "draft").await;
    reject(&app.db, item(&draft), "Namaak", now).await.unwrap();
    assert_eq!(
        restore(&app.db, item(&draft), now).await.unwrap(),
        AdStatus::Draft
    );
    let read = expect_json(app.get_with(&draft, &seller.token).await, 200).await;
    assert_eq!(read["status"], "draft");
    assert!(read["startDate"].is_null());
    let online = ad_in(&app, &seller, "online").await;
    reject(&app.db, item(&online), "Namaak", now).await.unwrap();
    let later = now + 29 * 86_400;
    assert_eq!(
        restore(&app.db, item(&online), later).await.unwrap(),
        AdStatus::Expired
    );
    app.clock.advance(29 * 86_400);
    let (token, _) = app
        .user_token(
            &app.app_client,
            "verkoper@souk.test",
            "password-of-seller",
            None,
        )
        .await;
    let read = expect_json(app.get_with(&online, &token).await, 200).await;
    assert_eq!(read["status"], "expired");
    assert!(read.get("rejectionReason").is_none());
    let now = app.clock.now();
    let seller = Seller {
        id: seller.id,
        token,
    };
    for state in ["closed", "expired", "deleted"] {
        let path = if state == "deleted" {
            let path = ad_in(&app, &seller, "online").await;
            let deleted = app
                .client
                .delete(app.url(&path))
                .bearer_auth(&seller.token)
                .send()
                .await
                .unwrap();
            assert_eq!(deleted.status(), 204);
            path
        } else {
            ad_in(&app, &seller, state).await
        };
        let refused = reject(&app.db, item(&path), "Te laat", now).await;
        assert!(
            matches!(refused, Err(ModerationError::NotAllowed(..))),
            "{state}: {refused:?}"
        );
        let stored = app
            .db
            .read(move |conn| {
                Box::pin(async move { souk::store::ads::get(conn, item(&path).number()).await })
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.rejection_reason, None, "{state}");
    }
    let open = ad_in(&app, &seller, "online").await;
    for reason in ["Namaak\u{0}", "Rood\u{1b}[31m", " "] {
        let refused = reject(&app.db, item(&open), reason, now).await;
        assert!(
            matches!(refused, Err(ModerationError::BadReason)),
            "{reason:?}"
        );
    }
    reject(
        &app.db,
        item(&open),
        "Verboden product.\nZie de regels.",
        now,
    )
    .await
    .unwrap();
    let read = expect_json(app.get_with(&open, &seller.token).await, 200).await;
    assert_eq!(read["rejectionReason"], "Verboden product.\nZie de regels.");
}

/// A user's public list holds their online ads only: no drafts, paused, closed, expired or
/// rejected ones; `limit` at most 100.
async fn a_users_list_shows_online_ads_only(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
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

async fn ads_expire_on_time(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Loopt af")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    assert_eq!(ad["renewPossible"], false);
    // Damesfietsen run 28 days; in the last week renewal becomes possible.
    // Tokens live a day: each step gets a fresh one.
    app.clock.advance(22 * 86_400);
    let token = app.client_token(&app.app_client, None).await;
    assert_eq!(
        expect_json(app.get_with(&path, &token).await, 200).await["renewPossible"],
        true
    );
    app.clock.advance(6 * 86_400);
    let token = app.client_token(&app.app_client, None).await;
    expect_json(app.get_with(&path, &token).await, 404).await;
    let (seller_token, _) = app
        .user_token(
            &app.app_client,
            "verkoper@souk.test",
            "password-of-seller",
            None,
        )
        .await;
    let expired = expect_json(app.get_with(&path, &seller_token).await, 200).await;
    assert_eq!(expired["status"], "expired");
    assert_eq!(expired["renewPossible"], true);
    let listed = expect_json(
        app.get_with("/v1/advertisements?status=expired", &seller_token)
            .await,
        200,
    )
    .await;
    assert_eq!(listed["totalCount"], 1);
    let online = expect_json(
        app.get_with(&format!("/v1/users/{}/advertisements", seller.id), &token)
            .await,
        200,
    )
    .await;
    assert_eq!(online["totalCount"], 0);
}

async fn the_sellers_list_and_a_users_online_ads(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let mut paths = Vec::new();
    for i in 0..5 {
        let ad = created(&app, &seller.token, &minimal(&format!("Fiets {i}"))).await;
        paths.push(ad["_links"]["self"]["href"].as_str().unwrap().to_owned());
    }
    expect_json(status(&app, &seller.token, &paths[0], "paused").await, 200).await;
    let delete = app
        .client
        .delete(app.url(&paths[1]))
        .bearer_auth(&seller.token)
        .send()
        .await
        .unwrap();
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
    let seller = seller(&app, "verkoper@souk.test").await;
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

async fn put(app: &TestApp, token: &str, path: &str, body: &Value) -> reqwest::Response {
    app.client
        .put(app.url(path))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// A NUL cannot be stored on PostgreSQL (it was a 500 there) and other control characters
/// break listings: the title and attribute texts are one line, a description may hold
/// line breaks and tabs but no other control character.
async fn control_characters_are_refused_where_text_is_stored(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let mut nul = minimal("Fiets\u{0}");
    nul["description"] = json!("Goed\u{0}onderhouden");
    let error = expect_json(create(&app, &seller.token, &nul).await, 400).await;
    assert_eq!(
        field_codes(&error),
        [
            ("title".to_owned(), "invalid-value".to_owned()),
            ("description".to_owned(), "invalid-value".to_owned())
        ]
    );
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

/// Changes a category as an operator's import would.
async fn change_category(
    app: &TestApp,
    id: i64,
    change: impl FnOnce(&mut souk::domain::category::Category) + Send + 'static,
) {
    let now = app.clock.now();
    app.db
        .write(move |conn| {
            Box::pin(async move {
                let mut category = souk::store::categories::get(conn, id)
                    .await?
                    .expect("category");
                change(&mut category);
                souk::store::categories::import(conn, &[category], false, now).await
            })
        })
        .await
        .unwrap();
}

fn definition<'a>(
    category: &'a mut souk::domain::category::Category,
    key: &str,
) -> &'a mut souk::domain::category::AttributeDefinition {
    let leaf = category.leaf.as_mut().expect("a leaf");
    leaf.attributes
        .iter_mut()
        .find(|d| d.key == key)
        .expect("the attribute")
}

/// A category that closes, or whose attribute definitions change, after an ad was placed
/// does not freeze the ad: the seller still edits, pauses, closes and deletes it. What a
/// change brings in meets today's definitions; new ads, publishing a draft and moving an ad
/// into a closed category are refused.
async fn ads_outlive_a_closed_category_and_changed_definitions(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let mut body = minimal("Gazelle");
    body["brand"] = json!("gazelle");
    body["frameSize"] = json!(53);
    let ad = created(&app, &seller.token, &body).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let mut draft = minimal("Nog een concept");
    draft["status"] = json!("draft");
    let draft = created(&app, &seller.token, &draft).await;
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap().to_owned();
    // Damesfietsen close; `gazelle` is no longer an option, frames stop at 50 cm, and a
    // new mandatory attribute appears.
    change_category(&app, 402, |category| {
        category.status = souk::domain::category::CategoryStatus::Closed;
        definition(category, "brand")
            .options
            .retain(|o| o.key != "gazelle");
        definition(category, "frameSize").max_value = Some(50.0);
        let mut wheels = definition(category, "frameSize").clone();
        wheels.key = "wheelSize".into();
        wheels.mandatory = true;
        category.leaf.as_mut().unwrap().attributes.push(wheels);
    })
    .await;
    let edited = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Gazelle, nu goedkoper"}]),
        None,
    )
    .await;
    let edited = expect_json(edited, 200).await;
    assert_eq!(edited["title"], "Gazelle, nu goedkoper");
    assert_eq!(edited["brand"], "gazelle", "kept as it was placed");
    assert_eq!(edited["frameSize"], 53);
    let mut back = edited.clone();
    back["description"] = json!("Nieuwe beschrijving.");
    expect_json(put(&app, &seller.token, &path, &back).await, 200).await;
    for to in ["paused", "online"] {
        assert_eq!(
            expect_json(status(&app, &seller.token, &path, to).await, 200).await["status"],
            to
        );
    }
    // What a change brings in meets today's definitions.
    let bigger = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/frameSize", "value": 55}]),
        None,
    )
    .await;
    assert_eq!(
        field_codes(&expect_json(bigger, 400).await),
        [("frameSize".to_owned(), "out-of-range".to_owned())]
    );
    // New ads, publishing a draft and moving an ad into the closed category are refused.
    let error = expect_json(create(&app, &seller.token, &minimal("Te laat")).await, 400).await;
    assert!(field_codes(&error).contains(&("categoryId".to_owned(), "category-closed".to_owned())));
    let published = expect_json(
        status(&app, &seller.token, &draft_path, "online").await,
        400,
    )
    .await;
    assert_eq!(
        field_codes(&published),
        [("categoryId".to_owned(), "category-closed".to_owned())]
    );
    let still = expect_json(app.get_with(&draft_path, &seller.token).await, 200).await;
    assert_eq!(still["status"], "draft");
    let renamed = json_patch(
        &app,
        &seller.token,
        &draft_path,
        json!([{"op": "replace", "path": "/title", "value": "Concept, bijgewerkt"}]),
        None,
    )
    .await;
    assert_eq!(
        expect_json(renamed, 200).await["title"],
        "Concept, bijgewerkt"
    );
    let mut elsewhere = minimal("Elders");
    elsewhere["categoryId"] = json!(403);
    let other = created(&app, &seller.token, &elsewhere).await;
    let other_path = other["_links"]["self"]["href"].as_str().unwrap();
    let moved = json_patch(
        &app,
        &seller.token,
        other_path,
        json!([{"op": "replace", "path": "/categoryId", "value": 402}]),
        None,
    )
    .await;
    assert!(
        field_codes(&expect_json(moved, 400).await)
            .contains(&("categoryId".to_owned(), "category-closed".to_owned()))
    );
    assert_eq!(
        expect_json(app.get_with(other_path, &seller.token).await, 200).await["categoryId"],
        403
    );
    // Closing and deleting work as ever.
    expect_json(status(&app, &seller.token, &path, "closed").await, 200).await;
    let deleted = app
        .client
        .delete(app.url(&path))
        .bearer_auth(&seller.token)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
}

/// An attribute that is not `updateable` keeps the value it has: a change, or taking it out
/// (which would let a later change add another value), is `not-updateable`. One the ad
/// never had may be set once. One that is not `writable` cannot be given at all.
async fn not_updateable_attributes_keep_their_value(app: TestApp) {
    change_category(&app, 404, |category| {
        definition(category, "brand").updateable = false;
        definition(category, "weight").writable = false;
    })
    .await;
    let seller = seller(&app, "verkoper@souk.test").await;
    let mut body = minimal("Transportfiets");
    body["categoryId"] = json!(404);
    body["brand"] = json!("gazelle");
    let ad = created(&app, &seller.token, &body).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let mut without = ad.clone();
    without.as_object_mut().unwrap().remove("brand");
    let removed = expect_json(put(&app, &seller.token, &path, &without).await, 400).await;
    assert_eq!(
        field_codes(&removed),
        [("brand".to_owned(), "not-updateable".to_owned())]
    );
    for patch in [
        json!([{"op": "remove", "path": "/brand"}]),
        json!([{"op": "replace", "path": "/brand", "value": "sparta"}]),
        json!([{"op": "replace", "path": "/brand", "value": ""}]),
    ] {
        let refused = json_patch(&app, &seller.token, &path, patch.clone(), None).await;
        assert_eq!(
            field_codes(&expect_json(refused, 400).await),
            [("brand".to_owned(), "not-updateable".to_owned())],
            "{patch}"
        );
    }
    assert_eq!(
        expect_json(app.get_with(&path, &seller.token).await, 200).await,
        ad,
        "nothing changed"
    );
    // Sending the value back as it is, in another form, is no change.
    let mut same = ad.clone();
    same.as_object_mut().unwrap().remove("brand");
    same["attributes"] = json!([{"key": "brand", "value": "gazelle"}]);
    expect_json(put(&app, &seller.token, &path, &same).await, 200).await;
    let mut plain = minimal("Zonder merk");
    plain["categoryId"] = json!(404);
    let plain = created(&app, &seller.token, &plain).await;
    let plain_path = plain["_links"]["self"]["href"].as_str().unwrap();
    let set = json_patch(
        &app,
        &seller.token,
        plain_path,
        json!([{"op": "add", "path": "/brand", "value": "sparta"}]),
        None,
    )
    .await;
    assert_eq!(expect_json(set, 200).await["brand"], "sparta");
    let again = json_patch(
        &app,
        &seller.token,
        plain_path,
        json!([{"op": "replace", "path": "/brand", "value": "giant"}]),
        None,
    )
    .await;
    expect_json(again, 400).await;
    let mut weighed = minimal("Gewogen");
    weighed["categoryId"] = json!(404);
    weighed["weight"] = json!(18.5);
    let error = expect_json(create(&app, &seller.token, &weighed).await, 400).await;
    assert_eq!(
        field_codes(&error),
        [("weight".to_owned(), "not-writable".to_owned())]
    );
}

/// What only the seller sees (drafts and other states, the rejection reason) needs a token
/// with `read`, like every private field; with `write` alone the seller sees what anyone
/// sees. Its own reads are no views.
async fn the_sellers_view_needs_read(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let (write_only, _) = app
        .user_token(
            &app.app_client,
            "verkoper@souk.test",
            "password-of-seller",
            Some("write"),
        )
        .await;
    let mut draft = minimal("Concept");
    draft["status"] = json!("draft");
    let draft = created(&app, &write_only, &draft).await;
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap();
    expect_json(app.get_with(draft_path, &seller.token).await, 200).await;
    assert_eq!(
        expect_json(app.get_with(draft_path, &write_only).await, 404).await["code"],
        "advertisement-not-found"
    );
    let online = created(&app, &write_only, &minimal("Online")).await;
    let path = online["_links"]["self"]["href"].as_str().unwrap();
    expect_json(app.get_with(path, &write_only).await, 200).await;
    let stats = expect_json(
        app.get_with(&format!("{path}/statistics"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(stats["numberOfViews"], 0, "the seller's reads are no views");
}

fn souk(app: &TestApp, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_souk"))
        .args(args)
        .env("SOUK_DATABASE_URL", &app.database_url)
        .env("SOUK_DATA_DIR", app.config.data_dir.as_os_str())
        .env("RUST_LOG", "warn")
        .output()
        .expect("run souk")
}

async fn operators_reject_and_restore(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Twijfelachtig")).await;
    let item = ad["itemId"].as_str().unwrap().to_owned();
    let path = format!("/v1/advertisements/{item}");
    let output = souk(
        &app,
        &["ads", "reject", &item, "--reason", "Verboden product"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(seen["status"], "rejected");
    assert_eq!(
        seen["rejectionReason"], "Verboden product",
        "the seller sees the reason"
    );
    assert_eq!(
        app.get_json(&path, 404).await["code"],
        "advertisement-not-found"
    );
    let back = expect_json(status(&app, &seller.token, &path, "online").await, 409).await;
    assert_eq!(
        back["code"], "conflicting-state",
        "only an operator restores"
    );
    // Rejecting again replaces the reason.
    let twice = souk(&app, &["ads", "reject", &item, "--reason", "Namaak"]);
    assert!(twice.status.success());
    let seen = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(seen["rejectionReason"], "Namaak");
    let empty = souk(&app, &["ads", "reject", &item, "--reason", " "]);
    assert!(String::from_utf8_lossy(&empty.stderr).contains("reason"));
    let output = souk(&app, &["ads", "restore", &item]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("online"));
    let public = app.get_json(&path, 200).await;
    assert_eq!(public["status"], "online");
    assert!(public.get("rejectionReason").is_none());
    assert!(!souk(&app, &["ads", "restore", "m424242"]).status.success());
}

async fn the_expiry_sweep_writes_down_what_reads_show(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Verloopt")).await;
    let number: i64 = ad["itemId"].as_str().unwrap()[1..].parse().unwrap();
    let later = app.clock.now() + 29 * 86_400;
    let expired = app
        .db
        .write(move |conn| Box::pin(async move { souk::store::ads::expire_due(conn, later).await }))
        .await
        .unwrap();
    assert_eq!(expired, 1);
    let stored = app
        .db
        .read(move |conn| Box::pin(async move { souk::store::ads::get(conn, number).await }))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status.as_str(), "expired");
    assert_eq!(stored.version, 2, "the ETag changes with it");
}

/// The upkeep `serve` starts (every minute there) writes expiry down without anyone
/// asking; here it runs every few milliseconds.
async fn the_upkeep_expires_ads_by_itself(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Verloopt vanzelf")).await;
    let number: i64 = ad["itemId"].as_str().unwrap()[1..].parse().unwrap();
    let stored_status = || async {
        app.db
            .read(move |conn| Box::pin(async move { souk::store::ads::get(conn, number).await }))
            .await
            .unwrap()
            .unwrap()
            .status
            .as_str()
    };
    let state =
        souk::state::AppState::new(app.config.clone(), app.db.clone(), app.clock.clone()).unwrap();
    let upkeep = tokio::spawn(souk::app::sweep_periodically(
        state,
        std::time::Duration::from_millis(10),
    ));
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(stored_status().await, "online", "not due yet");
    app.clock.advance(28 * 86_400);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while stored_status().await != "expired" {
        assert!(
            std::time::Instant::now() < deadline,
            "the upkeep did not run"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    upkeep.abort();
}

/// `souk seed` makes ads that pass the API's own checks.
async fn seeded_ads_are_valid(app: TestApp) {
    let output = souk(&app, &["seed", "--ads", "600", "--users", "7"]);
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
        let put = app
            .client
            .put(app.url(path))
            .bearer_auth(&token)
            .json(ad)
            .send()
            .await
            .unwrap();
        let answer = expect_json(put, 200).await;
        assert_eq!(answer["_embedded"], ad["_embedded"], "images stay");
    }
}

/// PUT and PATCH answer with the ad as a read finds it right after, `ETag` included: after
/// a new title, a move to another category, a pause, publishing a draft, and on an ad with
/// images (seeded: nothing else makes images yet).
async fn changes_answer_with_what_a_read_finds(app: TestApp) {
    let seller = seller(&app, "verkoper@souk.test").await;
    let same_as_read = |response: reqwest::Response, path: String| {
        let app = &app;
        let token = seller.token.clone();
        async move {
            let tag = response.headers()["etag"].clone();
            let answer = expect_json(response, 200).await;
            let read = app.get_with(&path, &token).await;
            assert_eq!(read.headers()["etag"], tag, "{path}");
            assert_eq!(expect_json(read, 200).await, answer, "{path}");
            answer
        }
    };
    let ad = created(&app, &seller.token, &minimal("Damesfiets")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let patch = |operations: Value| json_patch(&app, &seller.token, &path, operations, None);
    let titled = patch(json!([{"op": "replace", "path": "/title", "value": "Herenfiets"}])).await;
    same_as_read(titled, path.clone()).await;
    let moved = patch(json!([{"op": "replace", "path": "/categoryId", "value": 403}])).await;
    let moved = same_as_read(moved, path.clone()).await;
    assert_eq!(
        moved["_links"]["svc:category"]["href"],
        "/v1/categories/4/403"
    );
    let mut paused = moved.clone();
    paused["status"] = json!("paused");
    let paused = same_as_read(put(&app, &seller.token, &path, &paused).await, path.clone()).await;
    assert_eq!(paused["status"], "paused");

    let mut draft = minimal("Kinderfiets");
    draft["status"] = json!("draft");
    let draft = created(&app, &seller.token, &draft).await;
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let published = json_patch(
        &app,
        &seller.token,
        &draft_path,
        json!([{"op": "replace", "path": "/status", "value": "online"}]),
        None,
    )
    .await;
    let published = same_as_read(published, draft_path).await;
    assert!(published["startDate"].is_string() && published["closeDate"].is_string());

    let leaves = souk::seed::open_leaves(&app.db).await.unwrap();
    souk::seed::seed_ads(&app.db, &leaves, &[seller.id], 1, app.clock.now())
        .await
        .unwrap();
    let own = expect_json(
        app.get_with("/v1/advertisements?limit=1", &seller.token)
            .await,
        200,
    )
    .await;
    let seeded_path = own["_embedded"]["svc:advertisement"][0]["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    let renamed = json_patch(
        &app,
        &seller.token,
        &seeded_path,
        json!([{"op": "replace", "path": "/title", "value": "Nieuwe titel"}]),
        None,
    )
    .await;
    let renamed = same_as_read(renamed, seeded_path).await;
    let images =
        &renamed["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"];
    assert_eq!(images.as_array().unwrap().len(), 3, "the images stay");
}
