//! Webhooks: a client's hooks (`/v1/hooks`), the events written for it (`/v1/events`), and
//! their deliveries to a receiver the test runs, signed and tried again until taken; on
//! both backends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use parking_lot::Mutex;
use reqwest::Method;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use souk::accounts::ClientSpec;

use crate::both_backends;
use crate::helpers::{Backend, TestApp, TestClient, expect_json, field_codes, location, pairs};

both_backends!(
    hooks_belong_to_their_client,
    hooks_need_a_client_token_with_the_webhooks_scope,
    bad_hooks_are_refused_and_change_nothing,
    events_are_for_the_clients_the_user_granted,
    each_change_records_its_event,
    a_review_is_for_the_clients_of_its_seller_and_of_its_writer,
    events_are_forgotten_after_thirty_days_in_batches,
    a_deleted_client_makes_no_hook,
);

const SECRET: &str = "a secret of the partner, 32 chars";

fn hook_body(url: &str, events: &[&str]) -> Value {
    json!({"url": url, "events": events, "secret": SECRET})
}

/// A client registered with the `webhooks` scope, and a client-credentials token of it.
async fn partner(app: &TestApp, name: &str) -> (TestClient, String) {
    let client = app
        .register_client(ClientSpec {
            name: name.into(),
            redirect_uris: vec!["https://partner.test/cb".into()],
            scopes: Some("read write webhooks".into()),
            ..ClientSpec::default()
        })
        .await;
    let token = app.client_token(&client, Some("webhooks")).await;
    (client, token)
}

async fn create_hook(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    app.post("/v1/hooks").token(token).json(body).send().await
}

async fn events_of(app: &TestApp, token: &str) -> Vec<Value> {
    let list = expect_json(app.get_with("/v1/events", token).await, 200).await;
    list["_embedded"]["svc:event"].as_array().unwrap().clone()
}

fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["eventType"].as_str().unwrap())
        .collect()
}

async fn hooks_belong_to_their_client(app: TestApp) {
    let created = create_hook(
        &app,
        &app.token,
        &json!({"url": "https://partner.example/hooks",
                "events": ["bid.placed", "advertisement.deleted", "advertisement.updated"],
                "secret": SECRET, "active": false}),
    )
    .await;
    let path = location(&created);
    let hook = expect_json(created, 201).await;
    let id = hook["hookId"].as_i64().unwrap();
    assert_eq!(path, format!("/v1/hooks/{id}"));
    assert_eq!(hook["url"], "https://partner.example/hooks");
    // In one fixed order (not the alphabet's), whatever the order sent.
    let in_order = json!([
        "advertisement.updated",
        "advertisement.deleted",
        "bid.placed"
    ]);
    assert_eq!(hook["events"], in_order);
    assert_eq!(hook["active"], false);
    assert!(
        hook.get("secret").is_none(),
        "the secret is never shown: {hook}"
    );

    let list = expect_json(app.get("/v1/hooks").await, 200).await;
    assert_eq!(list["totalCount"], 1);
    assert_eq!(list["_embedded"]["svc:hook"][0]["hookId"], id);
    assert_eq!(list["_embedded"]["svc:hook"][0]["events"], in_order);
    let read = expect_json(app.get(&format!("/v1/hooks/{id}")).await, 200).await;
    assert_eq!(read["events"], in_order);

    let replaced = app
        .put(&format!("/v1/hooks/{id}"))
        .token(&app.token)
        .json(&hook_body(
            "https://partner.example/v2",
            &["transaction.updated"],
        ))
        .send()
        .await;
    let replaced = expect_json(replaced, 200).await;
    assert_eq!(replaced["url"], "https://partner.example/v2");
    assert_eq!(replaced["events"], json!(["transaction.updated"]));
    assert_eq!(replaced["active"], true, "active unless it says otherwise");
    let read = expect_json(app.get(&format!("/v1/hooks/{id}")).await, 200).await;
    assert_eq!(read["events"], replaced["events"]);

    // To another client, the hook does not exist.
    let (_, other) = partner(&app, "Other partner").await;
    let hook_path = format!("/v1/hooks/{id}");
    for method in [Method::GET, Method::PUT, Method::DELETE] {
        let response = app
            .request(method.clone(), &hook_path)
            .token(&other)
            .json(&hook_body("https://other.example/", &["bid.placed"]))
            .send()
            .await;
        let error = expect_json(response, 404).await;
        assert_eq!(error["code"], "hook-not-found", "{method}");
    }
    let theirs = expect_json(app.get_with("/v1/hooks", &other).await, 200).await;
    assert_eq!(theirs["totalCount"], 0);

    let deleted = app.delete(&hook_path).token(&app.token).send().await;
    assert_eq!(deleted.status(), 204);
    let gone = expect_json(app.get(&hook_path).await, 404).await;
    assert_eq!(gone["code"], "hook-not-found");

    // At most ten per client.
    for n in 0..10 {
        let url = format!("https://partner.example/{n}");
        let response = create_hook(&app, &app.token, &hook_body(&url, &["bid.placed"])).await;
        expect_json(response, 201).await;
    }
    let eleventh = create_hook(
        &app,
        &app.token,
        &hook_body("https://partner.example/x", &["bid.placed"]),
    )
    .await;
    let error = expect_json(eleventh, 400).await;
    assert_eq!(field_codes(&error), pairs(&[("url", "too-many")]));
}

async fn hooks_need_a_client_token_with_the_webhooks_scope(app: TestApp) {
    let body = hook_body("https://partner.example/hooks", &["bid.placed"]);
    let user = app.user("seller@example.com").await;
    let without = app
        .client_token(&app.app_client, Some("confirm_upcall"))
        .await;
    for token in [user.token.as_str(), without.as_str()] {
        let created = expect_json(create_hook(&app, token, &body).await, 403).await;
        assert_eq!(created["code"], "unauthorized");
        for path in ["/v1/hooks", "/v1/events"] {
            let read = expect_json(app.get_with(path, token).await, 403).await;
            assert_eq!(read["code"], "unauthorized", "{path}");
        }
    }
    let anonymous = app.post("/v1/hooks").json(&body).send().await;
    assert_eq!(anonymous.status(), 401);
    let listed = expect_json(app.get("/v1/hooks").await, 200).await;
    assert_eq!(listed["totalCount"], 0, "nothing was created");
}

async fn bad_hooks_are_refused_and_change_nothing(app: TestApp) {
    let refused = create_hook(
        &app,
        &app.token,
        &json!({"url": "ftp://partner.example/", "events": ["advertisement.created", "ad.sold"],
                "secret": "too short", "active": "yes"}),
    )
    .await;
    let error = expect_json(refused, 400).await;
    assert_eq!(
        field_codes(&error),
        pairs(&[
            ("url", "invalid-url"),
            ("events[1]", "unknown-event"),
            ("secret", "invalid-secret"),
            ("active", "invalid-value"),
        ])
    );
    assert!(
        !error.to_string().contains("too short"),
        "a secret is not echoed: {error}"
    );
    let missing = expect_json(create_hook(&app, &app.token, &json!({})).await, 400).await;
    assert_eq!(
        field_codes(&missing),
        pairs(&[
            ("url", "missing"),
            ("events", "missing"),
            ("secret", "missing")
        ])
    );
    let listed = expect_json(app.get("/v1/hooks").await, 200).await;
    assert_eq!(listed["totalCount"], 0);

    // A replacement that fails leaves the hook as it was.
    let created = create_hook(
        &app,
        &app.token,
        &hook_body("https://partner.example/", &["bid.placed"]),
    )
    .await;
    let id = expect_json(created, 201).await["hookId"].as_i64().unwrap();
    let bad = app
        .put(&format!("/v1/hooks/{id}"))
        .token(&app.token)
        .json(&json!({"url": "https://partner.example/new", "events": [], "secret": SECRET}))
        .send()
        .await;
    expect_json(bad, 400).await;
    let read = expect_json(app.get(&format!("/v1/hooks/{id}")).await, 200).await;
    assert_eq!(read["url"], "https://partner.example/");
    assert_eq!(read["events"], json!(["bid.placed"]));
}

async fn events_are_for_the_clients_the_user_granted(app: TestApp) {
    // The seller signs in to the partner's app only: the partner hears of their ads, the
    // test app (to which they granted nothing) does not.
    let (partner_client, partner_token) = partner(&app, "Partner").await;
    let password = "password of the seller";
    let seller_id = app.create_user("seller@example.com", password).await;
    let (seller_token, seller_refresh) = app
        .user_token(&partner_client, "seller@example.com", password, None)
        .await;
    let ad = crate::ads::created(&app, &seller_token, &crate::ads::minimal("Racefiets")).await;
    let item = ad["itemId"].as_str().unwrap();

    let events = events_of(&app, &partner_token).await;
    assert_eq!(types(&events), ["advertisement.created"]);
    let event = &events[0];
    assert_eq!(event["eventData"]["itemId"], item);
    assert_eq!(event["eventData"]["sellerId"], seller_id);
    assert_eq!(event["eventData"]["status"], "online");
    let embedded = &event["_embedded"]["svc:advertisement"];
    assert_eq!(embedded["title"], "Racefiets");
    assert_eq!(
        embedded["_links"]["self"]["href"],
        format!("/v1/advertisements/{item}")
    );
    let id = event["eventId"].as_i64().unwrap();
    let one = expect_json(
        app.get_with(&format!("/v1/events/{id}"), &partner_token)
            .await,
        200,
    )
    .await;
    assert_eq!(&one, event);

    assert!(events_of(&app, &app.token).await.is_empty());
    let hidden = expect_json(app.get(&format!("/v1/events/{id}")).await, 404).await;
    assert_eq!(hidden["code"], "event-not-found");

    // Once the grant is revoked (its refresh token, and with it the family's access
    // tokens), the partner hears of nothing more.
    let revoked = app
        .request(Method::POST, "/accounts/oauth/revoke")
        .basic_auth(&partner_client.id, partner_client.secret.as_deref())
        .form(&[("token", seller_refresh.as_str())])
        .send()
        .await;
    assert_eq!(revoked.status(), 200);
    let path = format!("/v1/advertisements/{item}");
    let (other_token, _) = app
        .user_token(&app.app_client, "seller@example.com", password, None)
        .await;
    let patched = crate::ads::json_patch(
        &app,
        &other_token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Snelle racefiets"}]),
        None,
    )
    .await;
    assert_eq!(patched.status(), 200);
    assert_eq!(types(&events_of(&app, &partner_token).await).len(), 1);
    assert_eq!(
        types(&events_of(&app, &app.token).await),
        ["advertisement.updated"]
    );
}

async fn each_change_records_its_event(app: TestApp) {
    let seller = app.user("seller@example.com").await;
    let bidder = app.user("bidder@example.com").await;
    let body = json!({"title": "Oude racefiets", "description": "Klassieker uit 1982.",
                      "categoryId": 403, "location": {"postcode": "9000"},
                      "priceModel": {"modelType": "bidding", "minimalBid": 1000},
                      "condition": "used"});
    let ad = crate::ads::created(&app, &seller.token, &body).await;
    let item = ad["itemId"].as_str().unwrap().to_owned();
    let bid = app
        .post(&format!("/v1/advertisements/{item}/bids"))
        .token(&bidder.token)
        .json(&json!({"amount": 1500}))
        .send()
        .await;
    let bid_id = expect_json(bid, 201).await["bidId"].as_i64().unwrap();
    // A change that fails records nothing.
    let refused = app
        .post(&format!("/v1/advertisements/{item}/bids"))
        .token(&bidder.token)
        .json(&json!({"amount": 1501}))
        .send()
        .await;
    expect_json(refused, 400).await;
    assert_eq!(types(&events_of(&app, &app.token).await).len(), 2);
    let withdrawn = app
        .delete(&format!("/v1/advertisements/{item}/bids/{bid_id}"))
        .token(&bidder.token)
        .send()
        .await;
    assert_eq!(withdrawn.status(), 200);
    let sale_id = completed_sale(&app, &seller.token, &item, bidder.id).await;
    let review = app
        .post(&format!(
            "/v1/advertisements/{item}/transactions/{sale_id}/review"
        ))
        .token(&bidder.token)
        .json(&json!({"overallScore": 4, "content": "Precies zoals beschreven."}))
        .send()
        .await;
    let review_id = expect_json(review, 201).await["reviewId"].as_i64().unwrap();
    let call = app
        .post(&format!("/v1/advertisements/{item}/upcall-confirmations"))
        .token(&app.token)
        .json(&json!({"callerPhoneNumber": "0612345678", "calleePhoneNumber": "0687654321",
                      "startTime": "2026-01-01T10:00:00+01:00", "endTime": "2026-01-01T10:05:00+01:00"}))
        .send()
        .await;
    assert_eq!(call.status(), 201);
    let deleted =
        crate::ads::delete(&app, &seller.token, &format!("/v1/advertisements/{item}")).await;
    assert_eq!(deleted.status(), 204);

    let events = events_of(&app, &app.token).await;
    assert_eq!(
        types(&events),
        [
            "advertisement.deleted",
            "upcall.confirmed",
            "review.created",
            "transaction.updated",
            "transaction.created",
            "bid.withdrawn",
            "bid.placed",
            "advertisement.created",
        ],
        "newest first, one each although seller and bidder both granted the app"
    );
    assert_eq!(events[0]["eventData"]["previousStatus"], "online");
    assert_eq!(events[1]["eventData"]["clientId"], app.app_client.id);
    let reviewed = &events[2];
    assert_eq!(reviewed["eventData"]["reviewerId"], bidder.id);
    assert_eq!(reviewed["eventData"]["overallScore"], 4);
    assert_eq!(
        reviewed["_embedded"]["svc:user-review"]["_links"]["self"]["href"],
        format!("/v1/users/{}/reviews/{review_id}", seller.id)
    );
    assert_eq!(events[3]["eventData"]["status"], "COMPLETED");
    assert_eq!(
        events[4]["_embedded"]["svc:advertisement-transaction"]["amount"],
        1500
    );
    let placed = &events[6];
    assert_eq!(placed["eventData"]["bidderId"], bidder.id);
    assert_eq!(placed["_embedded"]["svc:bid"]["bidder"]["id"], bidder.id);
    assert_eq!(
        placed["_embedded"]["svc:bid"]["_links"]["self"]["href"],
        format!("/v1/advertisements/{item}/bids/{bid_id}")
    );

    assert_eq!(events.len(), 8);
}

/// Records a sale of ad `item` to `buyer` (for 15 euros) and completes it; its id.
async fn completed_sale(app: &TestApp, seller_token: &str, item: &str, buyer: i64) -> i64 {
    let sale = app
        .post(&format!("/v1/advertisements/{item}/transactions"))
        .token(seller_token)
        .json(&json!({"buyerId": buyer, "amount": 1500, "shippingCosts": 0}))
        .send()
        .await;
    let sale_id = expect_json(sale, 201).await["transactionId"]
        .as_i64()
        .unwrap();
    let completed = app
        .post(&format!(
            "/v1/advertisements/{item}/transactions/{sale_id}/actions/complete"
        ))
        .token(seller_token)
        .send()
        .await;
    assert_eq!(completed.status(), 200);
    sale_id
}

/// The seller granted only the test app, the reviewing buyer only the partner: each hears
/// of the review, through the one user that granted it.
async fn a_review_is_for_the_clients_of_its_seller_and_of_its_writer(app: TestApp) {
    let seller = app.user("seller@example.com").await;
    let (partner_client, partner_token) = partner(&app, "Partner").await;
    let password = "password of the buyer";
    let buyer_id = app.create_user("buyer@example.com", password).await;
    let (buyer_token, _) = app
        .user_token(&partner_client, "buyer@example.com", password, None)
        .await;
    let ad = crate::ads::created(&app, &seller.token, &crate::ads::minimal("Racefiets")).await;
    let item = ad["itemId"].as_str().unwrap();
    let sale_id = completed_sale(&app, &seller.token, item, buyer_id).await;
    let review = app
        .post(&format!(
            "/v1/advertisements/{item}/transactions/{sale_id}/review"
        ))
        .token(&buyer_token)
        .json(&json!({"overallScore": 5, "content": "Prima verkoper."}))
        .send()
        .await;
    expect_json(review, 201).await;

    let for_seller = events_of(&app, &app.token).await;
    assert_eq!(types(&for_seller)[0], "review.created");
    let for_buyer = events_of(&app, &partner_token).await;
    assert_eq!(
        types(&for_buyer),
        [
            "review.created",
            "transaction.updated",
            "transaction.created"
        ],
        "the buyer's client hears of the sale and the review, not of the ad"
    );
    assert_eq!(for_buyer[0]["eventData"]["reviewerId"], buyer_id);
    assert_eq!(for_buyer[0]["eventData"]["sellerId"], seller.id);
}

/// What the test's receiver got: each delivery's headers and body.
type Received = Arc<Mutex<Vec<(HeaderMap, Vec<u8>)>>>;

/// A receiver of deliveries on loopback: answers each with the next of `answers`, then 204.
async fn receiver(answers: Vec<StatusCode>) -> (String, Received) {
    let received: Received = Arc::default();
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let kept = received.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let kept = kept.clone();
            let answers = answers.clone();
            async move {
                kept.lock().push((headers, body.to_vec()));
                answers.lock().next().unwrap_or(StatusCode::NO_CONTENT)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{address}/hook"), received)
}

/// Waits up to 10 s for the receiver to have got `count` deliveries.
async fn wait_for(received: &Received, count: usize) {
    for _ in 0..100 {
        if received.lock().len() >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{count} deliveries expected within 10 s, got {}",
        received.lock().len()
    );
}

async fn waiting_deliveries(app: &TestApp) -> i64 {
    app.db
        .read(|conn| Box::pin(souk::store::hooks::DELIVERIES.waiting(conn)))
        .await
        .unwrap()
        .count
}

/// Waits up to 10 s for the one delivery to have failed `attempts` times and to be due
/// again later: the clock may be moved on then.
async fn set_for_later(app: &TestApp, attempts: i64) {
    for _ in 0..100 {
        let rows = app
            .db
            .read(|conn| {
                Box::pin(async move {
                    let rows = conn
                        .query("SELECT attempts, due_at FROM hook_deliveries", &[])
                        .await?;
                    rows.into_iter()
                        .map(|mut row| Ok((row.take::<i64>()?, row.take::<i64>()?)))
                        .collect::<Result<Vec<_>, souk::store::DbError>>()
                })
            })
            .await
            .unwrap();
        // Due within a minute: set for its next attempt (30 s, then 60 s), no longer under
        // the 2-minute lease of the attempt in flight.
        let now = app.clock.now();
        if let [(taken, due)] = rows[..]
            && taken == attempts
            && due > now
            && due <= now + 60
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the delivery was not set for later after attempt {attempts}");
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name}"))
        .to_str()
        .unwrap()
}

macro_rules! with_receiver_allowed {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                super::$name(allowing_loopback(Backend::Sqlite, module_path!()).await).await;
            }

            #[tokio::test]
            #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
            async fn postgres() {
                super::$name(allowing_loopback(Backend::Postgres, module_path!()).await).await;
            }
        }
    )+};
}

/// Souk with the test's receivers on loopback allowed.
async fn allowing_loopback(backend: Backend, test: &str) -> TestApp {
    TestApp::start_with(
        backend,
        test,
        &[
            ("SOUK_WEBHOOK_ALLOW", "127.0.0.0/8"),
            ("SOUK_WEBHOOK_TIMEOUT_SECS", "5"),
        ],
    )
    .await
}

with_receiver_allowed!(
    a_delivery_is_signed_and_tried_again_until_taken,
    a_delivery_failing_for_three_days_is_given_up,
    only_active_hooks_that_want_the_event_get_it,
    a_hook_changed_while_a_delivery_waits_gets_it_no_more,
    receivers_that_hold_their_deliveries_leave_senders_to_the_others,
    a_receiver_found_down_rests_until_its_delivery_is_tried_again,
);

async fn a_delivery_is_signed_and_tried_again_until_taken(app: TestApp) {
    let (url, received) =
        receiver(vec![StatusCode::INTERNAL_SERVER_ERROR, StatusCode::FOUND]).await;
    let created = create_hook(
        &app,
        &app.token,
        &hook_body(&url, &["advertisement.created"]),
    )
    .await;
    let hook = expect_json(created, 201).await;
    // A client may PUT back what it read, which has no secret: the hook keeps its own, as
    // the signature below shows.
    let path = format!("/v1/hooks/{}", hook["hookId"]);
    let read = expect_json(app.get(&path).await, 200).await;
    let sent_back = app.put(&path).token(&app.token).json(&read).send().await;
    assert_eq!(expect_json(sent_back, 200).await["events"], read["events"]);
    let seller = app.user("seller@example.com").await;
    let ad = crate::ads::created(&app, &seller.token, &crate::ads::minimal("Racefiets")).await;

    wait_for(&received, 1).await;
    let (headers, body) = received.lock()[0].clone();
    let expected = souk::usecase::deliveries::signature(SECRET, &body);
    assert_eq!(header(&headers, "x-souk-signature"), expected);
    assert_eq!(header(&headers, "x-souk-event"), "advertisement.created");
    assert_eq!(header(&headers, "content-type"), "application/json");
    let event: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(event["eventType"], "advertisement.created");
    assert_eq!(event["eventData"]["itemId"], ad["itemId"]);
    let read = expect_json(
        app.get(&format!("/v1/events/{}", event["eventId"])).await,
        200,
    )
    .await;
    assert_eq!(read, event, "a delivery is the event as /v1/events has it");

    // A 500, then a redirect: each is tried again, 30 s and then 60 s later.
    set_for_later(&app, 1).await;
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("\nsouk_webhook_deliveries_waiting 1\n"),
        "the queue's depth in the metrics: {metrics}"
    );
    assert!(
        metrics.contains("\nsouk_webhook_deliveries_lag_seconds 0\n"),
        "a delivery waiting to be tried again is not late: {metrics}"
    );
    // The hook's owner sees what waits, and why.
    let waiting = expect_json(app.get(&path).await, 200).await["deliveries"].clone();
    assert_eq!(waiting["waiting"], 1, "{waiting}");
    assert_eq!(waiting["oldestWaitingDate"], event["created"], "{waiting}");
    assert_eq!(
        waiting["lastFailure"]["reason"], "error-status 500",
        "{waiting}"
    );
    let listed = expect_json(app.get("/v1/hooks").await, 200).await;
    assert_eq!(listed["_embedded"]["svc:hook"][0]["deliveries"], waiting);
    app.clock.advance(31);
    wait_for(&received, 2).await;
    set_for_later(&app, 2).await;
    app.clock.advance(61);
    wait_for(&received, 3).await;
    let attempts = received.lock().clone();
    let deliveries: Vec<&str> = attempts
        .iter()
        .map(|(headers, attempt)| {
            assert_eq!(*attempt, body, "the same body each time");
            header(headers, "x-souk-delivery")
        })
        .collect();
    assert!(
        deliveries.iter().all(|d| *d == deliveries[0]),
        "one delivery, three attempts: {deliveries:?}"
    );
    for _ in 0..50 {
        if waiting_deliveries(&app).await == 0 {
            let metrics = app.get("/metrics").await.text().await.unwrap();
            assert!(metrics.contains("\nsouk_webhook_deliveries_waiting 0\n"));
            let hook = expect_json(app.get(&path).await, 200).await;
            assert_eq!(hook["deliveries"], json!({"waiting": 0}), "all taken");
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("a delivery that was taken is still queued");
}

async fn a_delivery_failing_for_three_days_is_given_up(app: TestApp) {
    let failing = StatusCode::SERVICE_UNAVAILABLE;
    let (url, received) = receiver(vec![failing; 3]).await;
    let body = hook_body(&url, &["advertisement.created"]);
    expect_json(create_hook(&app, &app.token, &body).await, 201).await;
    let seller = app.user("seller@example.com").await;
    crate::ads::created(&app, &seller.token, &crate::ads::minimal("Racefiets")).await;
    wait_for(&received, 1).await;
    set_for_later(&app, 1).await;

    // Its next attempt, three days after it was queued, fails too: it is given up.
    app.clock.advance(3 * 86_400);
    wait_for(&received, 2).await;
    for _ in 0..50 {
        if waiting_deliveries(&app).await == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("a delivery failing for three days is still queued");
}

async fn only_active_hooks_that_want_the_event_get_it(app: TestApp) {
    let (url, received) = receiver(Vec::new()).await;
    let wants_bids = create_hook(&app, &app.token, &hook_body(&url, &["bid.placed"])).await;
    expect_json(wants_bids, 201).await;
    let inactive = json!({"url": url, "events": ["advertisement.created"], "secret": SECRET,
                          "active": false});
    expect_json(create_hook(&app, &app.token, &inactive).await, 201).await;
    let seller = app.user("seller@example.com").await;
    crate::ads::created(&app, &seller.token, &crate::ads::minimal("Racefiets")).await;
    // Queued in the ad's own transaction, or not at all.
    assert_eq!(waiting_deliveries(&app).await, 0);
    assert_eq!(
        types(&events_of(&app, &app.token).await),
        ["advertisement.created"],
        "the event is written all the same"
    );

    // Without the allow-list, loopback is not reached: the delivery waits to be tried again.
    let local = TestApp::start(app.backend, "webhooks_loopback_refused").await;
    let (url, refused) = receiver(Vec::new()).await;
    let hook = hook_body(&url, &["advertisement.created"]);
    expect_json(create_hook(&local, &local.token, &hook).await, 201).await;
    let seller = local.user("seller@example.com").await;
    crate::ads::created(&local, &seller.token, &crate::ads::minimal("Racefiets")).await;
    let mut attempts = 0;
    for _ in 0..100 {
        attempts = local
            .db
            .read(|conn| {
                Box::pin(async move {
                    conn.column::<i64>("SELECT attempts FROM hook_deliveries", &[])
                        .await
                })
            })
            .await
            .unwrap()
            .first()
            .copied()
            .unwrap_or(0);
        if attempts > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(attempts, 1, "one attempt, refused, kept for later");
    assert!(
        refused.lock().is_empty(),
        "loopback is not reached unless allowed"
    );
    assert!(received.lock().is_empty());
}

/// A delivery waiting to be tried again is not sent to a hook that no longer wants its type,
/// nor to one made inactive, even once it is made active again.
async fn a_hook_changed_while_a_delivery_waits_gets_it_no_more(app: TestApp) {
    let failing = StatusCode::INTERNAL_SERVER_ERROR;
    let (url, received) = receiver(vec![failing; 2]).await;
    let body = hook_body(&url, &["advertisement.created"]);
    let created = create_hook(&app, &app.token, &body).await;
    let path = format!("/v1/hooks/{}", expect_json(created, 201).await["hookId"]);
    let replace = |body: Value| {
        let request = app.put(&path).token(&app.token).json(&body);
        async move { expect_json(request.send().await, 200).await }
    };
    let seller = app.user("seller@example.com").await;
    crate::ads::created(&app, &seller.token, &crate::ads::minimal("Racefiets")).await;
    wait_for(&received, 1).await;
    set_for_later(&app, 1).await;
    // The hook now wants bids only: the ad's delivery, when it falls due, is dropped.
    replace(hook_body(&url, &["bid.placed"])).await;
    app.clock.advance(31);
    let mut waiting = 1;
    for _ in 0..100 {
        waiting = waiting_deliveries(&app).await;
        if waiting == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        waiting, 0,
        "the delivery of a type no longer wanted is dropped"
    );
    assert_eq!(received.lock().len(), 1);

    replace(hook_body(&url, &["advertisement.created"])).await;
    crate::ads::created(&app, &seller.token, &crate::ads::minimal("Stadsfiets")).await;
    wait_for(&received, 2).await;
    set_for_later(&app, 1).await;
    // Made inactive, it gets nothing more; made active again, not what it waited for.
    let mut inactive = hook_body(&url, &["advertisement.created"]);
    inactive["active"] = json!(false);
    replace(inactive).await;
    assert_eq!(waiting_deliveries(&app).await, 0, "dropped with the change");
    replace(hook_body(&url, &["advertisement.created"])).await;
    app.clock.advance(31);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        received.lock().len(),
        2,
        "nothing sent after the hook was inactive"
    );
}

/// A receiver that holds every delivery until `release` is closed; `held` counts those it
/// holds at the moment.
async fn holding_receiver() -> (String, Arc<AtomicUsize>, Arc<Semaphore>) {
    let (held, release) = (Arc::new(AtomicUsize::new(0)), Arc::new(Semaphore::new(0)));
    let (counted, waited) = (held.clone(), release.clone());
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let (counted, waited) = (counted.clone(), waited.clone());
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                // Closed: every waiter, and every later one, goes on at once.
                let _ = waited.acquire().await;
                counted.fetch_sub(1, Ordering::SeqCst);
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{address}/hook"), held, release)
}

/// Receivers that take the connection and do not answer hold each sender they get for the
/// whole timeout; each gets `SENDERS_PER_HOOK` of a replica's senders and no more, so three
/// of them at once still leave senders to another hook, whose deliveries go out meanwhile.
/// (Before, one hook held three of four senders and a second the last one.)
async fn receivers_that_hold_their_deliveries_leave_senders_to_the_others(app: TestApp) {
    use souk::usecase::deliveries::SENDERS_PER_HOOK;
    let name = "webhooks_holding_receiver";
    let settings = [
        ("SOUK_WEBHOOK_ALLOW", "127.0.0.0/8"),
        ("SOUK_WEBHOOK_TIMEOUT_SECS", "60"),
    ];
    let app = TestApp::start_with(app.backend, name, &settings).await;
    let mut slow = Vec::new();
    for _ in 0..3 {
        let (url, held, release) = holding_receiver().await;
        let body = hook_body(&url, &["advertisement.created"]);
        expect_json(create_hook(&app, &app.token, &body).await, 201).await;
        slow.push((held, release));
    }
    let seller = app.user("seller@example.com").await;
    for title in ["Racefiets", "Stadsfiets", "Bakfiets"] {
        crate::ads::created(&app, &seller.token, &crate::ads::minimal(title)).await;
    }
    let held = || -> Vec<usize> {
        slow.iter()
            .map(|(held, _)| held.load(Ordering::SeqCst))
            .collect()
    };
    let full = vec![SENDERS_PER_HOOK; 3];
    for _ in 0..100 {
        if held() == full {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(held(), full, "each slow hook holds its share");
    let (url, received) = receiver(Vec::new()).await;
    let body = hook_body(&url, &["advertisement.created"]);
    expect_json(create_hook(&app, &app.token, &body).await, 201).await;
    let tandem = crate::ads::created(&app, &seller.token, &crate::ads::minimal("Tandem")).await;
    wait_for(&received, 1).await;
    let event: Value = serde_json::from_slice(&received.lock()[0].1).unwrap();
    assert_eq!(event["eventData"]["itemId"], tandem["itemId"]);
    assert_eq!(held(), full, "no slow hook got more");
    for (_, release) in &slow {
        release.close();
    }
}

/// A receiver that takes each connection and never answers; counts the requests it got.
async fn silent_receiver() -> (String, Arc<AtomicUsize>) {
    let got = Arc::new(AtomicUsize::new(0));
    let counted = got.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<StatusCode>()
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{address}/hook"), got)
}

/// Once a receiver has not answered in time, its hook's other deliveries wait with the one
/// that failed, until that one is due again, instead of each holding a sender for the whole
/// timeout to find the receiver still down. (Before, the third delivery was sent as soon as
/// a sender was free.)
async fn a_receiver_found_down_rests_until_its_delivery_is_tried_again(app: TestApp) {
    let name = "webhooks_receiver_down";
    let settings = [
        ("SOUK_WEBHOOK_ALLOW", "127.0.0.0/8"),
        ("SOUK_WEBHOOK_TIMEOUT_SECS", "1"),
    ];
    let app = TestApp::start_with(app.backend, name, &settings).await;
    let (url, got) = silent_receiver().await;
    let body = hook_body(&url, &["advertisement.created"]);
    expect_json(create_hook(&app, &app.token, &body).await, 201).await;
    let seller = app.user("seller@example.com").await;
    for title in ["Racefiets", "Stadsfiets", "Bakfiets"] {
        crate::ads::created(&app, &seller.token, &crate::ads::minimal(title)).await;
    }
    let db = &app.db;
    let count = |sql: &'static str| async move {
        db.read(move |conn| Box::pin(conn.column::<i64>(sql, &[])))
            .await
            .unwrap()[0]
    };
    let timed_out = "SELECT COUNT(*) FROM hook_deliveries WHERE last_error = 'too-slow'";
    let untried = "SELECT COUNT(*) FROM hook_deliveries WHERE attempts = 0";
    // The hook's share of senders takes one or two deliveries, which time out.
    for _ in 0..100 {
        if count(timed_out).await > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(count(timed_out).await > 0, "a delivery timed out");
    // Senders look each second: what was not tried yet, due all along, is passed over.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        count(untried).await > 0,
        "the resting hook gets nothing more"
    );
    assert!(got.load(Ordering::SeqCst) < 3, "the receiver saw no third");
    assert_eq!(waiting_deliveries(&app).await, 3);
    // When the failed deliveries are due again, the rest is over: what waited goes first.
    app.clock.advance(31);
    for _ in 0..100 {
        if count(untried).await == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(count(untried).await, 0, "tried after the rest");
}

/// The hourly upkeep forgets events older than 30 days, in writes of a batch each: a
/// backlog of thousands all goes, the younger stay.
async fn events_are_forgotten_after_thirty_days_in_batches(app: TestApp) {
    let seller = app.user("seller@example.com").await;
    crate::ads::created(&app, &seller.token, &crate::ads::minimal("Racefiets")).await;
    let now = app.clock.now();
    let old = now - souk::usecase::events::KEEP_SECS - 1;
    app.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) \
         INSERT INTO events (event_type, event_data, resource_rel, resource_path, resource, \
                             created_at) \
         SELECT 'advertisement.created', '{}', 'svc:advertisement', '/advertisements/m1', \
                '{}', CAST($1 AS BIGINT) FROM n",
        vec![souk::store::Value::Int(old)],
    )
    .await;
    // One write forgets a batch at most...
    let before = now - souk::usecase::events::KEEP_SECS;
    let batch = souk::usecase::events::FORGET_BATCH;
    let first = app
        .db
        .write(move |conn| Box::pin(souk::store::events::forget_before(conn, before, batch)))
        .await
        .unwrap();
    assert_eq!(first, 1000);
    // ... and the upkeep goes on until none is left.
    let gone = souk::usecase::events::forget_old(&app.db, now)
        .await
        .unwrap();
    assert_eq!(gone, 1500);
    assert_eq!(
        types(&events_of(&app, &app.token).await),
        ["advertisement.created"],
        "the young event stays"
    );
    let left = app
        .db
        .read(|conn| Box::pin(conn.column::<i64>("SELECT COUNT(*) FROM events", &[])))
        .await
        .unwrap();
    assert_eq!(left, [1]);
}

/// A client deleted (`souk client delete`, here its row) while its token's lookup is still
/// kept by a server makes no hook: 401 `invalid_token`, as a revoked token, not a 500 for
/// the hook that names no client.
async fn a_deleted_client_makes_no_hook(app: TestApp) {
    let (client, token) = partner(&app, "Weg").await;
    expect_json(app.get_with("/v1/hooks", &token).await, 200).await;
    app.execute(
        "DELETE FROM clients WHERE client_id = $1",
        vec![souk::store::Value::Text(client.id.clone())],
    )
    .await;
    let body = hook_body("https://partner.example/hook", &["advertisement.created"]);
    let refused = create_hook(&app, &token, &body).await;
    assert_eq!(
        refused.headers()["www-authenticate"],
        "Bearer realm=\"souk\", error=\"invalid_token\""
    );
    assert_eq!(expect_json(refused, 401).await["code"], "unauthenticated");
    assert_eq!(app.count_rows("hooks").await, 0);
}
