//! What a client of the original does, unchanged; every change answers with what a read
//! then finds.

use serde_json::{Value, json};

use super::{create, created, json_patch, minimal, put};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json};

both_backends!(
    a_client_of_the_original_works_unchanged,
    changes_answer_with_what_a_read_finds,
    reserving_and_unreserving_as_the_original_did,
);

/// `reserved` and `priceModel.modelType == "reserved"` never disagree: reserving overrides
/// the price model, the original's clients unreserve by PATCHing a price model (their exact
/// sequence), PUT and POST follow the same rule, and `reserved: false` alone is refused.
async fn reserving_and_unreserving_as_the_original_did(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Gereserveerde fiets")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let agree = |ad: &Value| {
        assert_eq!(
            ad["reserved"] == json!(true),
            ad["priceModel"]["modelType"] == "reserved",
            "{ad}"
        );
    };
    let reserve = json!([{"op": "replace", "path": "/reserved", "value": true}]);
    let reserved = expect_json(
        json_patch(&app, &seller.token, &path, reserve, None).await,
        200,
    )
    .await;
    assert_eq!(reserved["reserved"], true);
    assert_eq!(reserved["priceModel"], json!({"modelType": "reserved"}));
    // The client's exact unreserve sequence.
    let unreserve = json!([
        {"op": "replace", "path": "/priceModel/modelType", "value": "fixed"},
        {"op": "add", "path": "/priceModel/askingPrice", "value": 1400}
    ]);
    let unreserved = expect_json(
        json_patch(&app, &seller.token, &path, unreserve, None).await,
        200,
    )
    .await;
    assert_eq!(unreserved["reserved"], false);
    assert_eq!(
        unreserved["priceModel"],
        json!({"modelType": "fixed", "askingPrice": 1400})
    );
    assert_eq!(
        expect_json(app.get_with(&path, &seller.token).await, 200).await,
        unreserved,
        "a read finds the same"
    );
    // PUT: `reserved: true` with the old model reserves; sending a read-back reserved ad
    // with another model unreserves.
    let mut body = unreserved.clone();
    body["reserved"] = json!(true);
    let put_reserved = expect_json(put(&app, &seller.token, &path, &body).await, 200).await;
    agree(&put_reserved);
    assert_eq!(put_reserved["reserved"], true);
    let mut body = put_reserved.clone();
    body["priceModel"] = json!({"modelType": "bidding", "minimalBid": 500});
    let put_bidding = expect_json(put(&app, &seller.token, &path, &body).await, 200).await;
    agree(&put_bidding);
    assert_eq!(put_bidding["reserved"], false);
    // A price model of type `reserved` reserves, whatever `reserved` said.
    let by_model =
        json!([{"op": "replace", "path": "/priceModel", "value": {"modelType": "reserved"}}]);
    let by_model = expect_json(
        json_patch(&app, &seller.token, &path, by_model, None).await,
        200,
    )
    .await;
    assert_eq!(by_model["reserved"], true);
    // `reserved: false` alone: refused, nothing changed.
    let alone = json!([{"op": "replace", "path": "/reserved", "value": false}]);
    let refused = expect_json(
        json_patch(&app, &seller.token, &path, alone, None).await,
        400,
    )
    .await;
    assert_eq!(refused["details"][0]["code"], "price-model-needed");
    assert_eq!(
        refused["details"][0]["fields"],
        json!(["reserved", "priceModel.modelType"])
    );
    assert_eq!(
        expect_json(app.get_with(&path, &seller.token).await, 200).await,
        by_model
    );
    // POST: either member makes a reserved ad.
    let mut body = minimal("Meteen gereserveerd");
    body["reserved"] = json!(true);
    let posted = created(&app, &seller.token, &body).await;
    assert_eq!(posted["priceModel"], json!({"modelType": "reserved"}));
    agree(&posted);
    let mut body = minimal("Model gereserveerd");
    body["priceModel"] = json!({"modelType": "reserved"});
    let posted = created(&app, &seller.token, &body).await;
    assert_eq!(posted["reserved"], true);
    let mut body = minimal("Niet gereserveerd");
    body["reserved"] = json!(false);
    agree(&created(&app, &seller.token, &body).await);
}

async fn a_client_of_the_original_works_unchanged(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
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
    let put = put(&app, &seller.token, &location, &back).await;
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
        .post(&transactions)
        .token(&seller.token)
        .json(&json!({"buyerId": buyer, "amount": 15000, "shippingCosts": 0}))
        .send()
        .await;
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

/// PUT and PATCH answer with the ad as a read finds it right after, `ETag` included: after
/// a new title, a move to another category, a pause, publishing a draft, and on an ad with
/// images (seeded: nothing else makes images yet).
async fn changes_answer_with_what_a_read_finds(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
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

    app.seed_ads(seller.id, 1).await;
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
