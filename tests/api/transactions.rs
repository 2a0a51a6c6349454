//! Transactions, upcall confirmations and statistics, on both backends.

use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json, field_codes, fields, pairs};

both_backends!(
    view_counts_are_written_in_bulk_and_add_up,
    transactions_as_the_original_had_them,
    transactions_are_validated_and_guarded,
    concurrent_sales_are_numbered_in_turn,
    the_counter_migration_continues_the_numbering,
    upcall_confirmations,
    every_upcall_field_is_checked,
    a_retried_upcall_counts_once,
    idempotency_keys_on_ads_sales_and_actions,
    idempotency_keys_are_forgotten_after_a_day,
    statistics_count_what_happens,
    statistics_are_read_without_writing,
    a_buyer_with_a_large_id_lists_their_sales,
);

async fn ad_of(app: &TestApp, seller: &User) -> String {
    let body = json!({"title": "Herenfiets", "description": "Stevige fiets.", "categoryId": 403,
                      "location": {"postcode": "9000"}, "priceModel": {"modelType": "fixed", "askingPrice": 20000},
                      "condition": "used"});
    let response = post(app, &seller.token, "/v1/advertisements", body).await;
    expect_json(response, 201).await["itemId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn post(app: &TestApp, token: &str, path: &str, body: Value) -> reqwest::Response {
    app.post(path).token(token).json(&body).send().await
}

async fn transactions_as_the_original_had_them(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let path = format!("/v2/advertisements/{item}/transactions");
    let first = post(
        &app,
        &seller.token,
        &path,
        json!({"buyerId": buyer.id, "amount": 18000, "shippingCosts": 0}),
    )
    .await;
    let location = first.headers()["location"].to_str().unwrap().to_owned();
    let first = expect_json(first, 201).await;
    assert_eq!(first["transactionId"], 1);
    assert_eq!(first["status"], "CREATED");
    assert_eq!(location, format!("{path}/1"));
    assert_eq!(first["_links"]["self"]["href"], location);
    let second = expect_json(
        post(
            &app,
            &seller.token,
            &path,
            json!({"buyerId": buyer.id, "amount": 100, "shippingCosts": 695}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(second["transactionId"], 2, "numbered within the ad");
    let listed = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    let ids: Vec<i64> = listed["_embedded"]["svc:advertisement-transaction"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["transactionId"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2, 1], "newest first");
    assert_eq!(listed["_links"]["self"]["href"], path);
    assert!(listed["_links"]["curies"].is_array());
    let v1 = expect_json(
        app.get_with(
            &format!("/v1/advertisements/{item}/transactions/1"),
            &buyer.token,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        v1["_links"]["self"]["href"],
        format!("/v1/advertisements/{item}/transactions/1")
    );
    assert_eq!(v1["amount"], 18000);
    let missing = expect_json(app.get_with(&format!("{path}/9"), &seller.token).await, 404).await;
    assert_eq!(missing["code"], "transaction-not-found");
    // The buyer cancels one, the seller completes the other; a finished one stays finished.
    let cancelled = expect_json(
        post(
            &app,
            &buyer.token,
            &format!("{path}/2/actions/cancel"),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(cancelled["status"], "CANCELLED");
    let refused = expect_json(
        post(
            &app,
            &buyer.token,
            &format!("{path}/1/actions/complete"),
            json!({}),
        )
        .await,
        403,
    )
    .await;
    assert_eq!(refused["code"], "unauthorized");
    assert_eq!(
        expect_json(
            post(
                &app,
                &seller.token,
                &format!("{path}/1/actions/complete"),
                json!({})
            )
            .await,
            200
        )
        .await["status"],
        "COMPLETED"
    );
    let again = expect_json(
        post(
            &app,
            &seller.token,
            &format!("{path}/1/actions/cancel"),
            json!({}),
        )
        .await,
        409,
    )
    .await;
    assert_eq!(again["code"], "conflicting-state");
}

async fn transactions_are_validated_and_guarded(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let stranger = app.user("vreemde@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let path = format!("/v2/advertisements/{item}/transactions");
    let bad = expect_json(
        post(
            &app,
            &seller.token,
            &path,
            json!({"buyerId": 424242, "amount": -1, "shippingCosts": 1.5}),
        )
        .await,
        400,
    )
    .await;
    assert_eq!(
        field_codes(&bad),
        pairs(&[
            ("buyerId", "unknown-user"),
            ("amount", "invalid-value"),
            ("shippingCosts", "invalid-value")
        ])
    );
    let missing = expect_json(post(&app, &seller.token, &path, json!({})).await, 400).await;
    assert_eq!(
        field_codes(&missing),
        pairs(&[
            ("buyerId", "missing"),
            ("amount", "missing"),
            ("shippingCosts", "missing")
        ])
    );
    // A buyerId that is not a positive integer is no user id at all; amounts are integer
    // cents from 0 to 1,000,000,000, as JSON numbers.
    for (buyer_id, amount, expected) in [
        (json!("5"), json!(100), ("buyerId", "invalid-value")),
        (json!("x"), json!(100), ("buyerId", "invalid-value")),
        (json!(2.5), json!(100), ("buyerId", "invalid-value")),
        (json!(-3), json!(100), ("buyerId", "invalid-value")),
        (
            json!(buyer.id),
            json!(1_000_000_001),
            ("amount", "invalid-value"),
        ),
        (json!(buyer.id), json!("100"), ("amount", "invalid-value")),
    ] {
        let refused = expect_json(
            post(
                &app,
                &seller.token,
                &path,
                json!({"buyerId": buyer_id, "amount": amount, "shippingCosts": 0}),
            )
            .await,
            400,
        )
        .await;
        assert_eq!(
            field_codes(&refused),
            pairs(&[expected]),
            "{buyer_id} {amount}"
        );
    }
    let to_oneself = expect_json(
        post(
            &app,
            &seller.token,
            &path,
            json!({"buyerId": seller.id, "amount": 100, "shippingCosts": 0}),
        )
        .await,
        400,
    )
    .await;
    assert_eq!(
        field_codes(&to_oneself),
        pairs(&[("buyerId", "buyer-is-seller")])
    );
    assert_eq!(
        expect_json(app.get_with(&path, &seller.token).await, 200).await["_embedded"]["svc:advertisement-transaction"],
        json!([]),
        "nothing was recorded"
    );
    let not_seller = post(
        &app,
        &buyer.token,
        &path,
        json!({"buyerId": buyer.id, "amount": 1, "shippingCosts": 0}),
    )
    .await;
    assert_eq!(expect_json(not_seller, 403).await["code"], "unauthorized");
    let largest = expect_json(
        post(
            &app,
            &seller.token,
            &path,
            json!({"buyerId": buyer.id, "amount": 1_000_000_000, "shippingCosts": 0}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(largest["amount"], 1_000_000_000);
    // A buyer sees their own transactions only.
    expect_json(
        post(
            &app,
            &seller.token,
            &path,
            json!({"buyerId": stranger.id, "amount": 5, "shippingCosts": 0}),
        )
        .await,
        201,
    )
    .await;
    let ids = |list: &Value| -> Vec<i64> {
        list["_embedded"]["svc:advertisement-transaction"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["transactionId"].as_i64().unwrap())
            .collect()
    };
    let mine = expect_json(app.get_with(&path, &buyer.token).await, 200).await;
    assert_eq!(ids(&mine), [1]);
    let theirs = expect_json(app.get_with(&path, &stranger.token).await, 200).await;
    assert_eq!(ids(&theirs), [2]);
    let all = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(ids(&all), [2, 1]);
    expect_json(app.get_with(&format!("{path}/2"), &buyer.token).await, 403).await;
    let outsider = app.user("buitenstaander@souk.test").await;
    // Whether a sale exists is the seller's to know: to anyone else a transaction that is
    // not theirs is 403 whether it exists or not (404 for the one that did not told how
    // many the ad had).
    for (token, id) in [
        (&buyer.token, 9),
        (&outsider.token, 1),
        (&outsider.token, 9),
    ] {
        let answer = app.get_with(&format!("{path}/{id}"), token).await;
        assert_eq!(expect_json(answer, 403).await["code"], "unauthorized");
    }
    expect_json(app.get_with(&path, &outsider.token).await, 403).await;
    expect_json(app.get(&path).await, 403).await;
    let gone = expect_json(
        post(
            &app,
            &seller.token,
            "/v2/advertisements/m424242/transactions",
            json!({"buyerId": buyer.id, "amount": 1, "shippingCosts": 0}),
        )
        .await,
        404,
    )
    .await;
    assert_eq!(gone["code"], "advertisement-not-found");
    // A deleted ad keeps its sales for their parties, and makes no new ones.
    let deleted = app
        .delete(&format!("/v1/advertisements/{item}"))
        .token(&seller.token)
        .send()
        .await;
    assert_eq!(deleted.status(), 204);
    for (token, request) in [
        (&seller.token, format!("{path}/1")),
        (&seller.token, path.clone()),
        (&buyer.token, path.clone()),
    ] {
        expect_json(app.get_with(&request, token).await, 200).await;
    }
    let after = post(
        &app,
        &seller.token,
        &path,
        json!({"buyerId": buyer.id, "amount": 1, "shippingCosts": 0}),
    )
    .await;
    assert_eq!(
        expect_json(after, 404).await["code"],
        "advertisement-not-found"
    );
}

async fn sale(app: &TestApp, seller: &User, item: &str, buyer: i64) -> reqwest::Response {
    post(
        app,
        &seller.token,
        &format!("/v2/advertisements/{item}/transactions"),
        json!({"buyerId": buyer, "amount": 100, "shippingCosts": 0}),
    )
    .await
}

/// Sales recorded at the same moment on one ad each get their own number (on PostgreSQL
/// two of them took the same MAX + 1 and the second was a 500); each ad counts from 1.
async fn concurrent_sales_are_numbered_in_turn(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let other_item = ad_of(&app, &seller).await;
    let mut running = tokio::task::JoinSet::new();
    for _ in 0..12 {
        let request = app
            .post(&format!("/v2/advertisements/{item}/transactions"))
            .token(&seller.token)
            .json(&json!({"buyerId": buyer.id, "amount": 100, "shippingCosts": 0}))
            .send();
        running.spawn(request);
    }
    let mut ids = Vec::new();
    while let Some(done) = running.join_next().await {
        let body = expect_json(done.unwrap(), 201).await;
        ids.push(body["transactionId"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (1..=12).collect::<Vec<i64>>());
    let first = expect_json(sale(&app, &seller, &other_item, buyer.id).await, 201).await;
    assert_eq!(first["transactionId"], 1, "numbered within its own ad");
    let next = expect_json(sale(&app, &seller, &item, buyer.id).await, 201).await;
    assert_eq!(next["transactionId"], 13);
}

/// Migration 0010 gives every ad a counter starting after its last transaction, so the
/// numbering of a database that had sales before goes on where it was.
async fn the_counter_migration_continues_the_numbering(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let untouched = ad_of(&app, &seller).await;
    for _ in 0..2 {
        expect_json(sale(&app, &seller, &item, buyer.id).await, 201).await;
    }
    // Back to the schema before 0010 (the same SQL on both backends), then forward again.
    app.db
        .write(|conn| {
            Box::pin(async move {
                conn.execute_batch(
                    "ALTER TABLE advertisements DROP COLUMN transaction_count; \
                 DELETE FROM schema_migrations WHERE version = 10;",
                )
                .await
            })
        })
        .await
        .unwrap();
    assert_eq!(souk::store::migrations::run(&app.db).await.unwrap(), 1);
    let third = expect_json(sale(&app, &seller, &item, buyer.id).await, 201).await;
    assert_eq!(third["transactionId"], 3);
    let first = expect_json(sale(&app, &seller, &untouched, buyer.id).await, 201).await;
    assert_eq!(first["transactionId"], 1);
    // During a rolling upgrade a replica of the release before numbers with MAX + 1 and
    // leaves the counter as it is; the next number steps over its sale.
    let number: i64 = item[1..].parse().unwrap();
    let (buyer_id, now) = (buyer.id, app.clock.now());
    app.execute(
        "INSERT INTO advertisement_transactions (item_number, transaction_id, \
         buyer_id, amount, shipping_costs, status, created_at, updated_at) \
         VALUES ($1, 4, $2, 100, 0, 'CREATED', $3, $3)",
        souk::params![number, buyer_id, now].to_vec(),
    )
    .await;
    let fifth = expect_json(sale(&app, &seller, &item, buyer.id).await, 201).await;
    assert_eq!(fifth["transactionId"], 5);
}

async fn upcall_confirmations(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let path = format!("/v2/advertisements/{item}/upcall-confirmations");
    let call = json!({"callerPhoneNumber": "+31 6 1234 5678", "calleePhoneNumber": "(020) 555-0100",
                      "startTime": "2026-11-22T10:00:00+01:00", "endTime": "2026-11-22T09:05:00Z"});
    let done = post(&app, &app.token, &path, call.clone()).await;
    assert_eq!(done.status(), 201);
    assert!(done.bytes().await.unwrap().is_empty(), "no body");
    let wrong = json!({"callerPhoneNumber": "call me", "calleePhoneNumber": "12",
                       "startTime": "yesterday", "endTime": "2026-11-22T09:05:00Z"});
    let refused = expect_json(post(&app, &app.token, &path, wrong).await, 400).await;
    assert_eq!(
        fields(&refused),
        ["callerPhoneNumber", "calleePhoneNumber", "startTime"]
    );
    let backwards = json!({"callerPhoneNumber": "0612345678", "calleePhoneNumber": "0201234567",
                           "startTime": "2026-11-22T10:00:00Z", "endTime": "2026-11-22T09:59:59Z"});
    let refused = expect_json(post(&app, &app.token, &path, backwards).await, 400).await;
    assert_eq!(
        refused["details"][0]["fields"],
        json!(["startTime", "endTime"])
    );
    expect_json(post(&app, &app.token, &path, json!({})).await, 400).await;
    assert_eq!(
        expect_json(post(&app, &seller.token, &path, call.clone()).await, 403).await["code"],
        "unauthorized"
    );
    let plain = app
        .client_token(&app.app_client, Some("create_account"))
        .await;
    assert_eq!(
        expect_json(post(&app, &plain, &path, call.clone()).await, 403).await["code"],
        "unauthorized"
    );
    let gone = expect_json(
        post(
            &app,
            &app.token,
            "/v1/advertisements/m424242/upcall-confirmations",
            call,
        )
        .await,
        404,
    )
    .await;
    assert_eq!(gone["code"], "advertisement-not-found");
    let stats = expect_json(
        app.get_with(
            &format!("/v1/advertisements/{item}/statistics"),
            &seller.token,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        stats["numberOfPhoneClicks"], 1,
        "only the accepted call counts"
    );
}

/// Each upcall field alone: required, a string, the phone numbers plausible (6 to 20
/// digits, at most 32 characters), times ISO 8601 with an offset, the end not before the
/// start (equal is fine). Refused calls are not counted.
async fn every_upcall_field_is_checked(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let path = format!("/v1/advertisements/{item}/upcall-confirmations");
    let call = json!({"callerPhoneNumber": "0612345678", "calleePhoneNumber": "0201234567",
                      "startTime": "2026-11-22T10:00:00+01:00", "endTime": "2026-11-22T10:05:00+01:00"});
    let with = |key: &str, value: Value| {
        let mut body = call.clone();
        if value.is_null() {
            body.as_object_mut().unwrap().remove(key);
        } else {
            body[key] = value;
        }
        body
    };
    let mut refused = Vec::new();
    for key in [
        "callerPhoneNumber",
        "calleePhoneNumber",
        "startTime",
        "endTime",
    ] {
        refused.push((with(key, Value::Null), (key, "missing")));
        refused.push((with(key, json!(612345678)), (key, "invalid-value")));
    }
    for phone in [
        "12345",
        "123456789012345678901",
        "+31 (0)6 - 12 34 56 78 .  . . .  .",
        "06-1234abcd",
    ] {
        refused.push((
            with("callerPhoneNumber", json!(phone)),
            ("callerPhoneNumber", "invalid-phone-number"),
        ));
    }
    // The last: year 0 as written, but before it in UTC (no date the API could write).
    for time in [
        "2026-11-22T10:00:00",
        "2026-11-22",
        "22-11-2026 10:00",
        "0000-01-01T00:00:00+01:00",
    ] {
        refused.push((
            with("startTime", json!(time)),
            ("startTime", "invalid-timestamp"),
        ));
    }
    for (body, (field, code)) in &refused {
        let error = expect_json(post(&app, &app.token, &path, body.clone()).await, 400).await;
        assert_eq!(field_codes(&error), pairs(&[(field, code)]), "{body}");
    }
    assert_eq!(phone_clicks(&app, &seller, &item).await, 0, "none counted");
    for body in [
        with("callerPhoneNumber", json!("123456")),
        with("callerPhoneNumber", json!("12345678901234567890")),
        with("calleePhoneNumber", json!("+32 (0)2 555.01.00")),
        with("endTime", json!("2026-11-22T09:00:00Z")),
    ] {
        let accepted = post(&app, &app.token, &path, body.clone()).await;
        assert_eq!(accepted.status(), 201, "{body}");
    }
    assert_eq!(phone_clicks(&app, &seller, &item).await, 4);
}

async fn post_with_key(
    app: &TestApp,
    token: &str,
    path: &str,
    key: &str,
    body: Value,
) -> reqwest::Response {
    app.post(path)
        .token(token)
        .header("idempotency-key", key)
        .json(&body)
        .send()
        .await
}

/// The hourly upkeep forgets keys older than a day, and only those: the key can then
/// serve another request.
async fn idempotency_keys_are_forgotten_after_a_day(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = |title: &str| {
        json!({"title": title, "description": "Stevige fiets.", "categoryId": 403,
               "location": {"postcode": "9000"}, "condition": "used",
               "priceModel": {"modelType": "fixed", "askingPrice": 20000}})
    };
    let first = post_with_key(&app, &seller.token, "/v1/advertisements", "k", ad("Een")).await;
    expect_json(first, 201).await;
    let now = app.clock.now();
    let young = souk::app::forget_idempotency_keys(&app.db, now)
        .await
        .unwrap();
    assert_eq!(young, 0, "a key of today stays");
    let day_later = now + souk::http::IDEMPOTENCY_KEEP_SECONDS + 1;
    let old = souk::app::forget_idempotency_keys(&app.db, day_later)
        .await
        .unwrap();
    assert_eq!(old, 1);
    let other = post_with_key(&app, &seller.token, "/v1/advertisements", "k", ad("Twee")).await;
    assert_eq!(expect_json(other, 201).await["title"], "Twee");
}

/// `Idempotency-Key` on the other POSTs: placing an ad, recording a sale, the actions. A
/// retry replays the first answer and does nothing again; a failed request keeps nothing.
async fn idempotency_keys_on_ads_sales_and_actions(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("koper@souk.test").await;
    let ad = json!({"title": "Herenfiets", "description": "Stevige fiets.", "categoryId": 403,
                    "location": {"postcode": "9000"}, "priceModel": {"modelType": "fixed", "askingPrice": 20000},
                    "condition": "used"});
    let first = post_with_key(
        &app,
        &seller.token,
        "/v1/advertisements",
        "ad-1",
        ad.clone(),
    )
    .await;
    let (location, tag) = (
        first.headers()["location"].clone(),
        first.headers()["etag"].clone(),
    );
    let first = expect_json(first, 201).await;
    let again = post_with_key(
        &app,
        &seller.token,
        "/v1/advertisements",
        "ad-1",
        ad.clone(),
    )
    .await;
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    assert_eq!(again.headers()["location"], location);
    assert_eq!(again.headers()["etag"], tag);
    assert_eq!(expect_json(again, 201).await, first);
    let own = expect_json(app.get_with("/v1/advertisements", &seller.token).await, 200).await;
    assert_eq!(own["totalCount"], 1, "placed once");
    let mut other = ad.clone();
    other["title"] = json!("Damesfiets");
    let reused = post_with_key(&app, &seller.token, "/v1/advertisements", "ad-1", other).await;
    assert_eq!(
        expect_json(reused, 422).await["code"],
        "idempotency-key-reused"
    );
    let item = first["itemId"].as_str().unwrap();
    let path = format!("/v2/advertisements/{item}/transactions");
    let sale = json!({"buyerId": buyer.id, "amount": 100, "shippingCosts": 0});
    for _ in 0..2 {
        let response = post_with_key(&app, &seller.token, &path, "sale-1", sale.clone()).await;
        assert_eq!(expect_json(response, 201).await["transactionId"], 1);
    }
    let listed = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(
        listed["_embedded"]["svc:advertisement-transaction"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "recorded once"
    );
    let cancel = format!("{path}/1/actions/cancel");
    let done = expect_json(
        post_with_key(&app, &buyer.token, &cancel, "stop-1", json!({})).await,
        200,
    )
    .await;
    let replayed = post_with_key(&app, &buyer.token, &cancel, "stop-1", json!({})).await;
    assert_eq!(replayed.headers()["idempotency-replayed"], "true");
    assert_eq!(
        expect_json(replayed, 200).await,
        done,
        "not a 409: the first answer"
    );
    // A refused action keeps nothing: its retry runs (and is refused) again.
    let complete = format!("{path}/1/actions/complete");
    for _ in 0..2 {
        let refused = post_with_key(&app, &seller.token, &complete, "finish-1", json!({})).await;
        assert!(refused.headers().get("idempotency-replayed").is_none());
        assert_eq!(expect_json(refused, 409).await["code"], "conflicting-state");
    }
}

async fn phone_clicks(app: &TestApp, seller: &User, item: &str) -> i64 {
    expect_json(
        app.get_with(
            &format!("/v1/advertisements/{item}/statistics"),
            &seller.token,
        )
        .await,
        200,
    )
    .await["numberOfPhoneClicks"]
        .as_i64()
        .unwrap()
}

/// An upcall answers 201 without a body; a retry with the same Idempotency-Key replays
/// that 201 and the call counts once.
async fn a_retried_upcall_counts_once(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let path = format!("/v2/advertisements/{item}/upcall-confirmations");
    let call = json!({"callerPhoneNumber": "0612345678", "calleePhoneNumber": "0201234567",
                      "startTime": "2026-11-22T10:00:00+01:00", "endTime": "2026-11-22T10:05:00+01:00"});
    let send = |body: Value| post_with_key(&app, &app.token, &path, "gesprek-1", body);
    let first = send(call.clone()).await;
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("idempotency-replayed").is_none());
    let again = send(call.clone()).await;
    assert_eq!(again.status(), 201);
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    assert!(again.bytes().await.unwrap().is_empty(), "no body");
    assert_eq!(phone_clicks(&app, &seller, &item).await, 1, "counted once");
    let mut other = call.clone();
    other["endTime"] = json!("2026-11-22T10:06:00+01:00");
    assert_eq!(
        expect_json(send(other).await, 422).await["code"],
        "idempotency-key-reused"
    );
    assert_eq!(phone_clicks(&app, &seller, &item).await, 1);
}

async fn statistics_count_what_happens(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let ad = format!("/v1/advertisements/{item}");
    for _ in 0..3 {
        expect_json(app.get_with(&ad, &other.token).await, 200).await;
    }
    expect_json(app.get(&ad).await, 200).await;
    expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    let stats = expect_json(
        app.get_with(&format!("{ad}/statistics"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(stats["numberOfViews"], 4, "views by others than the seller");
    for key in [
        "numberOfAsqs",
        "numberOfBids",
        "numberOfUrlClicks",
        "numberOfPhoneClicks",
        "numberOfFavoriteClicks",
    ] {
        assert_eq!(stats[key], 0, "{key}");
    }
    assert_eq!(
        expect_json(
            app.get_with(&format!("{ad}/statistics"), &other.token)
                .await,
            403
        )
        .await["code"],
        "unauthorized"
    );
    expect_json(app.get(&format!("{ad}/statistics")).await, 403).await;
}

/// Views are counted in memory; reading statistics adds this replica's pending views and
/// writes nothing, so a caller who may not read them cannot make the server write either.
async fn statistics_are_read_without_writing(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let number: i64 = item[1..].parse().unwrap();
    let ad = format!("/v1/advertisements/{item}");
    for _ in 0..3 {
        expect_json(app.get_with(&ad, &other.token).await, 200).await;
    }
    let stored_views = || async {
        app.db
            .read(move |conn| {
                Box::pin(async move {
                    conn.query_opt(
                        "SELECT views FROM advertisement_statistics WHERE item_number = $1",
                        souk::params![number],
                    )
                    .await?
                    .map(|row| row.get::<i64>("views"))
                    .transpose()
                })
            })
            .await
            .unwrap()
    };
    assert_eq!(
        expect_json(
            app.get_with(&format!("{ad}/statistics"), &other.token)
                .await,
            403
        )
        .await["code"],
        "unauthorized"
    );
    assert_eq!(stored_views().await, None, "a refused read wrote nothing");
    let stats = expect_json(
        app.get_with(&format!("{ad}/statistics"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(stats["numberOfViews"], 3, "the pending views count");
    assert_eq!(stored_views().await, None, "reading wrote nothing");
}

/// A flush of views writes tens of thousands of ads' counts a few hundred per statement;
/// 1,234 ads take every statement size (2 x 500, 4 x 50, 6 x 5, 4 x 1), and a second flush
/// adds to the first.
async fn view_counts_are_written_in_bulk_and_add_up(app: TestApp) {
    use souk::statistics::ViewCounter;
    use souk::store::transactions;

    let seller = app.create_user("bulk@souk.test", "password-of-bulk").await;
    app.seed_ads(seller, 1234).await;
    let views = ViewCounter::default();
    let expected = |item: i64| item % 3 + 1;
    for round in 1..=2 {
        for item in 1..=1234 {
            for _ in 0..expected(item) {
                views.record(item);
            }
        }
        views.flush(&app.db).await.unwrap();
        assert_eq!(views.pending(7), 0, "written and forgotten");
        let written = app
            .db
            .read(|conn| {
                Box::pin(async move {
                    let mut all = Vec::new();
                    for item in 1..=1234 {
                        all.push(transactions::statistics(conn, item).await?.views);
                    }
                    Ok::<_, souk::store::DbError>(all)
                })
            })
            .await
            .unwrap();
        for (index, count) in written.iter().enumerate() {
            let item = index as i64 + 1;
            assert_eq!(*count, round * expected(item), "ad {item}, round {round}");
        }
    }
    // An ad named twice in one call is added up, not refused.
    let after = app
        .db
        .write(|conn| {
            Box::pin(async move {
                transactions::count(
                    conn,
                    transactions::Counter::Views,
                    &[(5, 10), (6, 1), (5, 20)],
                )
                .await?;
                transactions::statistics(conn, 5).await
            })
        })
        .await
        .unwrap();
    assert_eq!(after.views, 2 * expected(5) + 30);
}

/// A user id past 2^31 (ids come from a sequence that may get there): the buyer lists
/// their sales of an ad. On PostgreSQL the list bound the id as a 32-bit integer, and
/// answered 500.
async fn a_buyer_with_a_large_id_lists_their_sales(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let item = ad_of(&app, &seller).await;
    let id = app.create_user("groot@souk.test", "a good password").await;
    let large = 3_000_000_000_i64;
    app.db
        .write(move |conn| {
            Box::pin(async move {
                conn.execute(
                    "UPDATE users SET user_id = $2 WHERE user_id = $1",
                    &[souk::store::Value::Int(id), souk::store::Value::Int(large)],
                )
                .await
            })
        })
        .await
        .unwrap();
    let (token, _) = app
        .user_token(&app.app_client, "groot@souk.test", "a good password", None)
        .await;
    let path = format!("/v2/advertisements/{item}/transactions");
    let sold = post(
        &app,
        &seller.token,
        &path,
        json!({"buyerId": large, "amount": 18000, "shippingCosts": 0}),
    )
    .await;
    expect_json(sold, 201).await;
    let listed = expect_json(app.get_with(&path, &token).await, 200).await;
    let buyers: Vec<i64> = listed["_embedded"]["svc:advertisement-transaction"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["buyerId"].as_i64().unwrap())
        .collect();
    assert_eq!(buyers, [large]);
}
