//! Reviews on both backends: the buyer of a completed transaction reviews its seller once;
//! anyone with a token reads a seller's reviews and their averages.

use serde_json::{Value, json};
use souk::accounts::UserSpec;

use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json, field_codes, location, pairs};

both_backends!(
    reviews_as_documented,
    only_the_buyer_of_a_completed_sale_reviews_and_once,
    bad_reviews_are_field_errors_and_store_nothing,
    a_deleted_ad_keeps_its_sales_and_their_review,
    averages_and_pages_over_every_review,
    a_review_shows_its_writers_name_as_it_is_now_and_the_rest_as_it_was,
    a_reviewer_without_a_known_place_has_an_empty_place,
);

/// An ad of `seller` with `sales` transactions to `buyer`, each completed; its path.
async fn completed_sales(app: &TestApp, seller: &User, buyer: &User, sales: usize) -> String {
    let body = json!({"title": "Eikenhouten tafel", "description": "Massief eiken.", "categoryId": 403,
                      "location": {"postcode": "9000"}, "priceModel": {"modelType": "fixed", "askingPrice": 20000},
                      "condition": "used"});
    let ad = post(app, &seller.token, "/v1/advertisements", body).await;
    let path = expect_json(ad, 201).await["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    for n in 1..=sales {
        let sale = json!({"buyerId": buyer.id, "amount": 15000, "shippingCosts": 0});
        expect_json(
            post(app, &seller.token, &format!("{path}/transactions"), sale).await,
            201,
        )
        .await;
        let complete = format!("{path}/transactions/{n}/actions/complete");
        expect_json(post(app, &seller.token, &complete, json!({})).await, 200).await;
    }
    path
}

async fn post(app: &TestApp, token: &str, path: &str, body: Value) -> reqwest::Response {
    app.post(path).token(token).json(&body).send().await
}

async fn review(app: &TestApp, token: &str, sale: &str, body: Value) -> reqwest::Response {
    post(app, token, &format!("{sale}/review"), body).await
}

fn good_review() -> Value {
    json!({"overallScore": 4, "content": "Snel geleverd,\nprecies zoals beschreven.",
           "subScores": [{"key": "delivery", "score": 5}, {"key": "communication", "score": 3}]})
}

/// A confirmed user with a name and maybe a postcode, signed in.
async fn named_user(app: &TestApp, email: &str, name: &str, postcode: Option<&str>) -> User {
    app.user_with(UserSpec {
        email: email.into(),
        name: Some(name.into()),
        postcode: postcode.map(str::to_owned),
        ..UserSpec::default()
    })
    .await
}

async fn reviews_as_documented(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = named_user(&app, "koper@souk.test", "Jan uit Gent", Some("9000")).await;
    let ad = completed_sales(&app, &seller, &buyer, 1).await;
    let answer = review(
        &app,
        &buyer.token,
        &format!("{ad}/transactions/1"),
        good_review(),
    )
    .await;
    let address = location(&answer);
    let written = expect_json(answer, 201).await;
    let list = format!("/v1/users/{}/reviews", seller.id);
    assert_eq!(address, format!("{list}/{}", written["reviewId"]));
    assert_eq!(written["_links"]["self"]["href"], address);
    assert_eq!(written["_links"]["svc:user-reviews"]["href"], list);
    assert_eq!(written["name"], "Jan uit Gent");
    assert_eq!(written["place"], "Gent");
    assert_eq!(written["reason"], "Eikenhouten tafel");
    assert_eq!(written["overallScore"], 4);
    assert_eq!(
        written["content"],
        "Snel geleverd,\nprecies zoals beschreven."
    );
    assert_eq!(
        written["subScores"],
        json!([
            {"key": "communication", "description": "Communicatie", "score": 3},
            {"key": "delivery", "description": "Levering", "score": 5},
        ])
    );
    assert!(written["date"].as_str().unwrap().ends_with("+00:00"));
    // Read back with a client token, as one review and in the list; the user links to it.
    let one = expect_json(app.get_with(&address, &app.token).await, 200).await;
    assert_eq!(one, written);
    let listed = expect_json(app.get_with(&list, &app.token).await, 200).await;
    assert_eq!(listed["_embedded"]["svc:user-review"], json!([written]));
    assert_eq!(listed["numberOfReviews"], 1);
    assert_eq!(listed["totalCount"], 1);
    assert_eq!(listed["averageScore"], 4.0);
    assert_eq!(
        listed["averageSubScores"],
        json!([
            {"key": "communication", "description": "Communicatie", "score": 3.0},
            {"key": "accuracy", "description": "Zoals beschreven", "score": 0.0},
            {"key": "delivery", "description": "Levering", "score": 5.0},
        ])
    );
    let user = expect_json(
        app.get_with(&format!("/v1/users/{}", seller.id), &app.token)
            .await,
        200,
    )
    .await;
    assert_eq!(user["_links"]["svc:user-reviews"]["href"], list);
    // A seller without reviews, and ones that do not exist.
    let none = expect_json(
        app.get_with(&format!("/v2/users/{}/reviews", buyer.id), &buyer.token)
            .await,
        200,
    )
    .await;
    assert_eq!(none["numberOfReviews"], 0);
    assert_eq!(none["averageScore"], 0.0);
    assert_eq!(none["_embedded"]["svc:user-review"], json!([]));
    let missing = app.get_with("/v1/users/999999/reviews", &app.token).await;
    assert_eq!(expect_json(missing, 404).await["code"], "user-not-found");
    let missing = app.get_with(&format!("{list}/999999"), &app.token).await;
    assert_eq!(expect_json(missing, 404).await["code"], "review-not-found");
    // A review is found under its seller only.
    let elsewhere = format!("/v1/users/{}/reviews/{}", buyer.id, written["reviewId"]);
    let missing = app.get_with(&elsewhere, &app.token).await;
    assert_eq!(expect_json(missing, 404).await["code"], "review-not-found");
}

async fn only_the_buyer_of_a_completed_sale_reviews_and_once(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let outsider = app.user("ander@souk.test").await;
    let ad = completed_sales(&app, &seller, &buyer, 1).await;
    let sale = format!("{ad}/transactions/1");
    // A created sale, and a cancelled one.
    for (n, finish) in [(2, None), (3, Some("cancel"))] {
        let body = json!({"buyerId": buyer.id, "amount": 100, "shippingCosts": 0});
        expect_json(
            post(&app, &seller.token, &format!("{ad}/transactions"), body).await,
            201,
        )
        .await;
        if let Some(action) = finish {
            let path = format!("{ad}/transactions/{n}/actions/{action}");
            expect_json(post(&app, &buyer.token, &path, json!({})).await, 200).await;
        }
        let early = review(
            &app,
            &buyer.token,
            &format!("{ad}/transactions/{n}"),
            good_review(),
        )
        .await;
        assert_eq!(expect_json(early, 409).await["code"], "conflicting-state");
    }
    // Not the seller, not someone else, not a client, not without `write`.
    let read_only = app.token_of(&buyer, Some("read")).await;
    for (token, status) in [
        (&seller.token, 403),
        (&outsider.token, 403),
        (&app.token, 403),
        (&read_only, 403),
    ] {
        let refused = review(&app, token, &sale, good_review()).await;
        assert_eq!(refused.status(), status);
    }
    let unknown = review(
        &app,
        &buyer.token,
        &format!("{ad}/transactions/9"),
        good_review(),
    )
    .await;
    assert_eq!(
        expect_json(unknown, 403).await["code"],
        "unauthorized",
        "the buyer of another sale learns nothing of whether this one exists"
    );
    let unknown = review(
        &app,
        &buyer.token,
        "/v1/advertisements/m999999/transactions/1",
        good_review(),
    )
    .await;
    assert_eq!(
        expect_json(unknown, 404).await["code"],
        "advertisement-not-found"
    );
    let list = format!("/v1/users/{}/reviews", seller.id);
    let listed = expect_json(app.get_with(&list, &app.token).await, 200).await;
    assert_eq!(listed["numberOfReviews"], 0, "no refusal stored anything");
    // Two at once: one is kept, the other is told the sale has its review.
    let (first, second) = tokio::join!(
        review(&app, &buyer.token, &sale, good_review()),
        review(&app, &buyer.token, &sale, good_review()),
    );
    let mut statuses = [first.status().as_u16(), second.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [201, 409]);
    let again = review(&app, &buyer.token, &sale, good_review()).await;
    assert_eq!(expect_json(again, 409).await["code"], "conflicting-state");
    let listed = expect_json(app.get_with(&list, &app.token).await, 200).await;
    assert_eq!(listed["numberOfReviews"], 1);
}

async fn bad_reviews_are_field_errors_and_store_nothing(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let ad = completed_sales(&app, &seller, &buyer, 1).await;
    let sale = format!("{ad}/transactions/1");
    let cases = [
        (
            json!({}),
            vec![("overallScore", "missing"), ("content", "missing")],
        ),
        (
            json!({"overallScore": 6, "content": "", "subScores": [{"key": "geur", "score": 1}]}),
            vec![
                ("overallScore", "invalid-value"),
                ("content", "invalid-length"),
                ("subScores[0].key", "invalid-value"),
            ],
        ),
        (
            json!({"overallScore": "5", "content": "a\u{0}b",
                   "subScores": [{"key": "delivery", "score": 0}, {"key": "delivery", "score": 2}]}),
            vec![
                ("overallScore", "invalid-value"),
                ("content", "control-characters"),
                ("subScores[0].score", "invalid-value"),
                ("subScores[1].key", "duplicate"),
            ],
        ),
        (
            json!({"overallScore": 3, "content": "x".repeat(1001), "subScores": "goed"}),
            vec![
                ("content", "invalid-length"),
                ("subScores", "invalid-value"),
            ],
        ),
    ];
    for (body, expected) in cases {
        let refused = expect_json(review(&app, &buyer.token, &sale, body.clone()).await, 400).await;
        assert_eq!(field_codes(&refused), pairs(&expected), "{body}");
    }
    let broken = app
        .post(&format!("{sale}/review"))
        .token(&buyer.token)
        .body("application/json", "{\"overallScore\": ")
        .send()
        .await;
    assert_eq!(expect_json(broken, 400).await["code"], "invalid-json");
    let list = format!("/v1/users/{}/reviews", seller.id);
    let listed = expect_json(app.get_with(&list, &app.token).await, 200).await;
    assert_eq!(listed["numberOfReviews"], 0);
    // The sale can still be reviewed: the refusals took nothing.
    expect_json(review(&app, &buyer.token, &sale, good_review()).await, 201).await;
}

async fn averages_and_pages_over_every_review(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let ad = completed_sales(&app, &seller, &buyer, 3).await;
    let bodies = [
        json!({"overallScore": 5, "content": "Top", "subScores": [{"key": "communication", "score": 5}]}),
        json!({"overallScore": 4, "content": "Goed", "subScores": [{"key": "communication", "score": 2}, {"key": "accuracy", "score": 4}]}),
        json!({"overallScore": 4, "content": "Prima"}),
    ];
    let mut ids = Vec::new();
    for (n, body) in bodies.into_iter().enumerate() {
        let sale = format!("{ad}/transactions/{}", n + 1);
        let written = expect_json(review(&app, &buyer.token, &sale, body).await, 201).await;
        ids.push(written["reviewId"].as_i64().unwrap());
    }
    let list = format!("/v1/users/{}/reviews", seller.id);
    let first = expect_json(
        app.get_with(&format!("{list}?limit=2"), &app.token).await,
        200,
    )
    .await;
    assert_eq!(first["numberOfReviews"], 3);
    assert_eq!(
        first["averageScore"], 4.3,
        "(5 + 4 + 4) / 3 with one decimal"
    );
    let averages: Vec<f64> = first["averageSubScores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["score"].as_f64().unwrap())
        .collect();
    assert_eq!(averages, [3.5, 4.0, 0.0], "over the reviews that gave one");
    let page_ids = |page: &Value| -> Vec<i64> {
        page["_embedded"]["svc:user-review"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["reviewId"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(page_ids(&first), [ids[2], ids[1]], "newest first");
    let next = first["_links"]["next"]["href"].as_str().unwrap().to_owned();
    let second = expect_json(app.get_with(&next, &app.token).await, 200).await;
    assert_eq!(page_ids(&second), [ids[0]]);
    assert_eq!(
        second["averageScore"], 4.3,
        "the averages are over every review"
    );
    let bad = app.get_with(&format!("{list}?limit=101"), &app.token).await;
    let bad = expect_json(bad, 400).await;
    assert_eq!(bad["code"], "pagination-invalid");
}

/// "Sold, then delete the listing": the buyer still reads and reviews the sale, and an
/// outsider still learns nothing of it; the deleted ad makes no new sales.
async fn a_deleted_ad_keeps_its_sales_and_their_review(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let outsider = app.user("ander@souk.test").await;
    let ad = completed_sales(&app, &seller, &buyer, 1).await;
    let deleted = app.delete(&ad).token(&seller.token).send().await;
    assert_eq!(deleted.status(), 204);
    assert_eq!(app.get(&ad).await.status(), 404);

    let sale = format!("{ad}/transactions/1");
    let read = expect_json(app.get_with(&sale, &buyer.token).await, 200).await;
    assert_eq!(read["status"], "COMPLETED");
    expect_json(review(&app, &buyer.token, &sale, good_review()).await, 201).await;
    let reviews = app
        .get_json(&format!("/v1/users/{}/reviews", seller.id), 200)
        .await;
    assert_eq!(reviews["totalCount"], 1);
    for path in [sale.clone(), format!("{ad}/transactions")] {
        let hidden = app.get_with(&path, &outsider.token).await;
        assert_eq!(
            expect_json(hidden, 404).await["code"],
            "advertisement-not-found",
            "{path}"
        );
    }
    let sale = json!({"buyerId": buyer.id, "amount": 100, "shippingCosts": 0});
    let refused = post(&app, &seller.token, &format!("{ad}/transactions"), sale).await;
    assert_eq!(
        expect_json(refused, 404).await["code"],
        "advertisement-not-found"
    );
}

/// A review shows its writer's `name` as it is now (read from the user at every read), but
/// its `reason` (the ad's title) and `place` (the town of the writer's postcode) as they
/// were when it was written: a later title, name or postcode changes the name alone.
async fn a_review_shows_its_writers_name_as_it_is_now_and_the_rest_as_it_was(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = named_user(&app, "koper@souk.test", "Jan uit Gent", Some("9000")).await;
    let ad = completed_sales(&app, &seller, &buyer, 1).await;
    let sale = format!("{ad}/transactions/1");
    let written = expect_json(review(&app, &buyer.token, &sale, good_review()).await, 201).await;
    assert_eq!(
        (&written["name"], &written["place"], &written["reason"]),
        (
            &json!("Jan uit Gent"),
            &json!("Gent"),
            &json!("Eikenhouten tafel")
        )
    );
    // The seller retitles the ad; the reviewer moves to Brussels under another name (the
    // API changes neither a name nor a postcode: SQL stands in for the way it will).
    let title = "Eikenhouten tafel met zes stoelen";
    let patch = json!([{"op": "replace", "path": "/title", "value": title}]);
    let retitled = app
        .patch(&ad)
        .token(&seller.token)
        .json_patch(&patch)
        .send()
        .await;
    assert_eq!(expect_json(retitled, 200).await["title"], title);
    app.execute(
        "UPDATE users SET name = $2, postcode = $3 WHERE user_id = $1",
        souk::params![buyer.id, "Jan uit Brussel", "1000"].to_vec(),
    )
    .await;
    let user = app.get_json(&format!("/v1/users/{}", buyer.id), 200).await;
    assert_eq!(
        (&user["name"], &user["postcode"]),
        (&json!("Jan uit Brussel"), &json!("1000"))
    );
    let list = format!("/v1/users/{}/reviews", seller.id);
    let one = app
        .get_json(&format!("{list}/{}", written["reviewId"]), 200)
        .await;
    let listed = app.get_json(&list, 200).await;
    for shown in [&one, &listed["_embedded"]["svc:user-review"][0]] {
        assert_eq!(shown["reviewId"], written["reviewId"]);
        assert_eq!(shown["name"], "Jan uit Brussel", "the name as it is now");
        assert_eq!(
            shown["place"], "Gent",
            "the town of the postcode when it was written, not Bruxelles"
        );
        assert_eq!(
            shown["reason"], "Eikenhouten tafel",
            "the title when it was written"
        );
    }
}

/// A reviewer whose town Souk does not know, having no postcode or one that the locations
/// table lacks, is shown with an empty `place` (not null, not a guess), under their name.
async fn a_reviewer_without_a_known_place_has_an_empty_place(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    for (email, name, postcode) in [
        ("zonder@souk.test", "Els zonder postcode", None),
        ("onbekend@souk.test", "Piet van nergens", Some("1000AA")),
    ] {
        let buyer = named_user(&app, email, name, postcode).await;
        let ad = completed_sales(&app, &seller, &buyer, 1).await;
        let sale = format!("{ad}/transactions/1");
        let written =
            expect_json(review(&app, &buyer.token, &sale, good_review()).await, 201).await;
        assert_eq!(written["place"], "", "postcode {postcode:?}");
        assert_eq!(written["name"], name);
        let address = format!("/v1/users/{}/reviews/{}", seller.id, written["reviewId"]);
        assert_eq!(app.get_json(&address, 200).await, written);
    }
}
