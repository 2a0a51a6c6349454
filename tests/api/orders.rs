//! Renewal and orders on both backends: the window and the grace period, the order a
//! renewal makes (paid at once in the sandbox, waiting for `souk orders pay` in
//! production), VAT, and who sees an order.

use serde_json::{Value, json};

use crate::ads::{created, path_of};
use crate::both_backends;
use crate::helpers::{Backend, TestApp, User, expect_json, field_codes, location, pairs};

both_backends!(
    a_renewal_in_its_window_is_an_order_paid_at_once,
    an_expired_ad_comes_back_within_its_grace_period,
    renewal_is_refused_as_documented_and_changes_nothing,
    only_the_buyer_sees_an_order,
    the_insertion_fee_is_charged_when_an_ad_first_goes_online,
    renewals_at_once_charge_one_period,
    the_grace_period_ends_thirty_days_after_the_close_to_the_second,
);

const DAY: i64 = 86_400;

/// A room to let (category 1903: insertion fee 295 cents, 28 running days); its path.
async fn room(app: &TestApp, seller: &User) -> String {
    let body = json!({"title": "Kamer in Gent", "description": "Gemeubelde studentenkamer.",
                      "categoryId": 1903, "surface": 14, "location": {"postcode": "9000"},
                      "priceModel": {"modelType": "fixed", "askingPrice": 45000}});
    path_of(&created(app, &seller.token, &body).await)
}

async fn renew(app: &TestApp, token: &str, ad: &str, body: Value) -> reqwest::Response {
    app.post(&format!("{ad}/renew"))
        .token(token)
        .json(&body)
        .send()
        .await
}

async fn close_date(app: &TestApp, ad: &str, token: &str) -> (String, String) {
    let read = expect_json(app.get_with(ad, token).await, 200).await;
    (
        read["closeDate"].as_str().unwrap().to_owned(),
        read["status"].as_str().unwrap().to_owned(),
    )
}

/// Moves the clock; tokens live a day, so the app's and `users`' are issued again.
async fn advance(app: &mut TestApp, seconds: i64, users: &mut [&mut User]) {
    app.clock.advance(seconds);
    app.token = app.client_token(&app.app_client, None).await;
    for user in users.iter_mut() {
        user.token = app.token_of(user, None).await;
    }
}

/// The item number of the ad at `path` (`/v1/advertisements/m12` is 12).
fn item_number(path: &str) -> i64 {
    path.rsplit("/m").next().unwrap().parse().unwrap()
}

fn timestamp(seconds: i64) -> String {
    souk::domain::time::format_timestamp(seconds)
}

fn parse(text: &str) -> i64 {
    souk::domain::time::parse_timestamp(text).unwrap()
}

/// A double click without an `Idempotency-Key`, eight times over: the owner's renewals take
/// turns, so the first moves `closeDate` out of the window and the others are refused,
/// instead of each reading the old date and charging for a period of its own.
async fn renewals_at_once_charge_one_period(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller).await;
    let close = parse(&close_date(&app, &ad, &seller.token).await.0);
    let by = close - app.clock.now() - 3 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    let at_once = (0..8).map(|_| {
        let (app, token, ad) = (&app, &seller.token, &ad);
        async move {
            renew(app, token, ad, json!({"pay": true}))
                .await
                .status()
                .as_u16()
        }
    });
    let mut statuses = futures_util::future::join_all(at_once).await;
    statuses.sort();
    assert_eq!(statuses, [201, 400, 400, 400, 400, 400, 400, 400]);
    let (renewed, _) = close_date(&app, &ad, &seller.token).await;
    assert_eq!(renewed, timestamp(close + 28 * DAY), "one period");
}

async fn a_renewal_in_its_window_is_an_order_paid_at_once(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller).await;
    let (close, _) = close_date(&app, &ad, &seller.token).await;
    let close = parse(&close);
    // Into the last week: renewPossible, and a renewal costs the insertion fee.
    let by = close - app.clock.now() - 3 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    let read = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(read["renewPossible"], true);
    let answer = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    let address = location(&answer);
    assert_eq!(answer.headers()["content-location"], address.as_str());
    let order = expect_json(answer, 201).await;
    assert_eq!(address, format!("/v1/orders/{}", order["orderId"]));
    assert_eq!(order["_links"]["self"]["href"], address);
    assert_eq!(order["status"], "paid", "the sandbox pays at once");
    assert_eq!(order["price"], 295);
    assert_eq!(order["vat"], 51, "21% included in 295 cents");
    assert!(order["paidDate"].is_string());
    let products = order["_embedded"]["svc:order-products"].as_array().unwrap();
    assert_eq!(products.len(), 1);
    assert_eq!(products[0]["productId"], 1);
    assert_eq!(products[0]["type"], "renewal");
    assert_eq!(products[0]["price"], 295);
    assert_eq!(products[0]["vat"], 51);
    assert!(
        products[0]["description"]
            .as_str()
            .unwrap()
            .contains("Kamer in Gent"),
        "{}",
        products[0]
    );
    assert_eq!(
        products[0]["_links"]["svc:advertisement"]["href"],
        ad.as_str()
    );
    // The ad runs 28 more days from its old closeDate.
    let (renewed, status) = close_date(&app, &ad, &seller.token).await;
    assert_eq!(renewed, timestamp(close + 28 * DAY));
    assert_eq!(status, "online");
    // The order and its products, read back by their buyer.
    let read = expect_json(app.get_with(&address, &seller.token).await, 200).await;
    assert_eq!(read, order);
    let listed = expect_json(
        app.get_with(&format!("{address}/products"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(listed["_embedded"]["svc:order-products"], json!(products));
    let one = expect_json(
        app.get_with(&format!("{address}/products/1"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(one, products[0]);
    let missing = app
        .get_with(&format!("{address}/products/2"), &seller.token)
        .await;
    assert_eq!(expect_json(missing, 404).await["code"], "order-not-found");
    // Out of the window again: the next renewal waits for the next last week.
    let again = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    assert_eq!(expect_json(again, 400).await["code"], "invalid-expiration");
}

async fn an_expired_ad_comes_back_within_its_grace_period(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller).await;
    // Paused, it expires all the same; renewed, it comes back online too, also before the
    // minute's sweep has stored it `expired` (it used to stay paused then).
    let paused = room(&app, &seller).await;
    let pause = crate::ads::status(&app, &seller.token, &paused, "paused").await;
    expect_json(pause, 200).await;
    let (close, _) = close_date(&app, &ad, &seller.token).await;
    let close = parse(&close);
    // Ten days after its closeDate it is expired, and may still be renewed.
    let by = close - app.clock.now() + 10 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    let token = seller.token.clone();
    let (_, status) = close_date(&app, &ad, &token).await;
    assert_eq!(status, "expired");
    // The clock follows the system's seconds: the renewal happened between these two.
    let before = app.clock.now();
    let order = expect_json(renew(&app, &token, &ad, json!({"pay": true})).await, 201).await;
    let after = app.clock.now();
    assert_eq!(order["status"], "paid");
    let (renewed, status) = close_date(&app, &ad, &token).await;
    assert_eq!(status, "online");
    let renewed = parse(&renewed);
    assert!(
        (before + 28 * DAY..=after + 28 * DAY).contains(&renewed),
        "a whole period from now: {} not within {} ..= {}",
        timestamp(renewed),
        timestamp(before + 28 * DAY),
        timestamp(after + 28 * DAY),
    );
    assert_eq!(close_date(&app, &paused, &token).await.1, "expired");
    let order = expect_json(
        renew(&app, &token, &paused, json!({"pay": true})).await,
        201,
    )
    .await;
    assert_eq!(order["status"], "paid");
    assert_eq!(close_date(&app, &paused, &token).await.1, "online");
    let found = app.get_json("/v1/search?query=kamer", 200).await;
    assert_eq!(found["totalCount"], 2, "online again, so found again");
    // Past the grace period there is no way back.
    let other = room(&app, &seller).await;
    let (close, _) = close_date(&app, &other, &token).await;
    let by = parse(&close) - app.clock.now() + 31 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    let token = seller.token.clone();
    let read = expect_json(app.get_with(&other, &token).await, 200).await;
    assert_eq!(read["renewPossible"], false);
    let late = renew(&app, &token, &other, json!({"pay": true})).await;
    assert_eq!(expect_json(late, 400).await["code"], "invalid-expiration");
}

/// Renews `ad` when its `closeDate` lies `ago` seconds back, to the second: at the start of
/// a second the close date is set `ago` seconds before it (in the database: the clock
/// follows the system's seconds, so moving it cannot aim at one), and the renewal is sent.
/// Tried again while the second ran out before the answer came, as the moment the server
/// judged the renewal at is then unknown. The answer, and that moment.
async fn renew_closed_ago(
    app: &TestApp,
    seller: &User,
    ad: &str,
    ago: i64,
) -> (reqwest::Response, i64) {
    let number = item_number(ad);
    for _ in 0..10 {
        let into_second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let to_next = u64::from(1_000_000_000 - into_second) + 2_000_000;
        tokio::time::sleep(std::time::Duration::from_nanos(to_next)).await;
        let now = app.clock.now();
        app.execute(
            "UPDATE advertisements SET close_date = $1 WHERE item_number = $2",
            souk::params![now - ago, number].to_vec(),
        )
        .await;
        let answer = renew(app, &seller.token, ad, json!({"pay": true})).await;
        if app.clock.now() == now {
            return (answer, now);
        }
    }
    panic!("no renewal of {ad} was answered within the second it began in");
}

/// The grace period's edges (docs/API.md "Orders": renewable for 30 days after
/// `closeDate`): an ad renewed exactly 30 days after its close comes back online for a
/// whole period from that moment; one renewed a second later is 400 `invalid-expiration`,
/// and keeps its date and state.
async fn the_grace_period_ends_thirty_days_after_the_close_to_the_second(app: TestApp) {
    let seller = app.user("verhuurder@souk.test").await;
    let on_the_edge = room(&app, &seller).await;
    let (answer, at) = renew_closed_ago(&app, &seller, &on_the_edge, 30 * DAY).await;
    let order = expect_json(answer, 201).await;
    assert_eq!(order["status"], "paid");
    assert_eq!(
        close_date(&app, &on_the_edge, &seller.token).await,
        (timestamp(at + 28 * DAY), "online".to_owned()),
        "28 days from the renewal"
    );

    let too_late = room(&app, &seller).await;
    let (answer, at) = renew_closed_ago(&app, &seller, &too_late, 30 * DAY + 1).await;
    assert_eq!(expect_json(answer, 400).await["code"], "invalid-expiration");
    assert_eq!(
        close_date(&app, &too_late, &seller.token).await,
        (timestamp(at - 30 * DAY - 1), "expired".to_owned()),
        "a refused renewal changes nothing"
    );
    let read = expect_json(app.get_with(&too_late, &seller.token).await, 200).await;
    assert_eq!(read["renewPossible"], false);
}

async fn renewal_is_refused_as_documented_and_changes_nothing(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let mut other = app.user("ander@souk.test").await;
    let ad = room(&app, &seller).await;
    let others = room(&app, &other).await;
    let (close, _) = close_date(&app, &ad, &seller.token).await;
    let by = parse(&close) - app.clock.now() - DAY;
    advance(&mut app, by, &mut [&mut seller, &mut other]).await;
    let before = close_date(&app, &ad, &seller.token).await;
    // Only a user token with `purchase`, only the seller.
    let without_purchase = app.token_of(&seller, Some("read write")).await;
    for token in [&without_purchase, &app.token, &other.token] {
        let refused = renew(&app, token, &ad, json!({"pay": true})).await;
        assert_eq!(expect_json(refused, 403).await["code"], "unauthorized");
    }
    let refused = expect_json(
        renew(&app, &seller.token, &ad, json!({"pay": false})).await,
        400,
    )
    .await;
    assert_eq!(field_codes(&refused), pairs(&[("pay", "must-pay")]));
    let unknown = renew(
        &app,
        &seller.token,
        &ad,
        json!({"pay": true, "orderId": 999}),
    )
    .await;
    assert_eq!(expect_json(unknown, 400).await["code"], "unknown-order");
    let missing = renew(
        &app,
        &seller.token,
        "/v1/advertisements/m999999",
        json!({"pay": true}),
    )
    .await;
    assert_eq!(
        expect_json(missing, 404).await["code"],
        "advertisement-not-found"
    );
    assert_eq!(close_date(&app, &ad, &seller.token).await, before);
    // A paid order takes no more products; another user's order is unknown.
    let paid = expect_json(
        renew(&app, &seller.token, &ad, json!({"pay": true})).await,
        201,
    )
    .await;
    let body = json!({"pay": true, "orderId": paid["orderId"]});
    let refused = renew(&app, &other.token, &others, body).await;
    assert_eq!(expect_json(refused, 400).await["code"], "unknown-order");
}

async fn only_the_buyer_sees_an_order(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let mut other = app.user("ander@souk.test").await;
    let ad = room(&app, &seller).await;
    let (close, _) = close_date(&app, &ad, &seller.token).await;
    let by = parse(&close) - app.clock.now() - DAY;
    advance(&mut app, by, &mut [&mut seller, &mut other]).await;
    let order = expect_json(
        renew(&app, &seller.token, &ad, json!({"pay": true})).await,
        201,
    )
    .await;
    let path = format!("/v1/orders/{}", order["orderId"]);
    for path in [
        path.clone(),
        format!("{path}/products"),
        format!("{path}/products/1"),
    ] {
        let hidden = app.get_with(&path, &other.token).await;
        assert_eq!(
            expect_json(hidden, 404).await["code"],
            "order-not-found",
            "{path}"
        );
        let client = app.get_with(&path, &app.token).await;
        assert_eq!(
            expect_json(client, 403).await["code"],
            "unauthorized",
            "{path}"
        );
        expect_json(app.get_with(&path, &seller.token).await, 200).await;
    }
    let unknown = app.get_with("/v1/orders/999999", &seller.token).await;
    assert_eq!(expect_json(unknown, 404).await["code"], "order-not-found");
}

/// The operator's confirmation (`souk orders pay`) of a payment of `seller`'s order `id`
/// for its whole price.
pub async fn confirm_payment(app: &TestApp, seller: &User, id: &str) -> std::process::Output {
    let order = app
        .get_with(&format!("/v1/orders/{id}"), &seller.token)
        .await;
    let price = expect_json(order, 200).await["price"].to_string();
    app.souk(&["orders", "pay", id, "--amount", &price])
}

/// In production, pays the insertion order that the new ad `ad` waits for with the
/// operator's command; the ad is online then.
pub async fn pay_insertion(app: &TestApp, seller: &User, ad: &str) {
    let waiting = expect_json(app.get_with(ad, &seller.token).await, 200).await;
    let order = waiting["_links"]["svc:order"]["href"].as_str().unwrap();
    let id = order.rsplit('/').next().unwrap();
    let paid = confirm_payment(app, seller, id).await;
    assert!(
        paid.status.success(),
        "{}",
        String::from_utf8_lossy(&paid.stderr)
    );
    let (_, status) = close_date(app, ad, &seller.token).await;
    assert_eq!(status, "online");
    // The client the seller signed in to hears of it.
    let events = app.get_json("/v1/events", 200).await;
    let newest = &events["_embedded"]["svc:event"][0];
    assert_eq!(newest["eventType"], "advertisement.updated", "{newest}");
    assert_eq!(
        newest["eventData"]["itemId"],
        ad.rsplit('/').next().unwrap()
    );
    assert_eq!(newest["eventData"]["previousStatus"], "draft");
    assert_eq!(newest["eventData"]["status"], "online");
}

/// The insertion orders of ad `item` (its `m` number) as `(status, price)`.
async fn insertion_orders(app: &TestApp, item: &str) -> Vec<(String, i64)> {
    let number: i64 = item.rsplit('/').next().unwrap()[1..].parse().unwrap();
    app.db
        .read(move |conn| {
            Box::pin(async move {
                let rows = conn
                    .query(
                        "SELECT o.status, p.price FROM order_products p \
                         JOIN orders o ON o.order_id = p.order_id \
                         WHERE p.item_number = $1 AND p.kind = 'insertion'",
                        &[souk::store::Value::Int(number)],
                    )
                    .await?;
                rows.iter()
                    .map(|row| Ok((row.get::<String>("status")?, row.get::<i64>("price")?)))
                    .collect::<Result<Vec<_>, souk::store::DbError>>()
            })
        })
        .await
        .unwrap()
}

/// Sandbox: an ad placed online in a category with an insertion fee is charged it in an
/// order paid at once; a draft is charged when it is published, once; no fee, no order.
async fn the_insertion_fee_is_charged_when_an_ad_first_goes_online(app: TestApp) {
    let seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller).await;
    let read = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(read["status"], "online");
    assert!(read.get("awaitingPayment").is_none());
    assert!(read["_links"].get("svc:order").is_none());
    // Placing it is the one event: the fee paid with it is not another.
    let events = app.get_json("/v1/events", 200).await;
    assert_eq!(events["totalCount"], 1, "{events}");
    let placed = &events["_embedded"]["svc:event"][0];
    assert_eq!(placed["eventType"], "advertisement.created");
    assert_eq!(placed["eventData"]["status"], "online");
    assert_eq!(
        insertion_orders(&app, &ad).await,
        [("paid".to_owned(), 295)]
    );

    let draft = json!({"title": "Kamer in Leuven", "description": "Nog even wachten.",
                       "categoryId": 1903, "surface": 12, "location": {"postcode": "3000"},
                       "priceModel": {"modelType": "fixed", "askingPrice": 42000},
                       "status": "draft"});
    let created = app
        .post("/v1/advertisements")
        .token(&seller.token)
        .json(&draft)
        .send()
        .await;
    let draft = expect_json(created, 201).await["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(insertion_orders(&app, &draft).await, []);
    let status = |value: &str| json!([{"op": "replace", "path": "/status", "value": value}]);
    let published = app
        .patch(&draft)
        .token(&seller.token)
        .json_patch(&status("online"))
        .send()
        .await;
    let published = expect_json(published, 200).await;
    assert_eq!(published["status"], "online");
    assert!(published["startDate"].is_string());
    assert_eq!(
        insertion_orders(&app, &draft).await,
        [("paid".to_owned(), 295)]
    );
    // Paused and back online: no second fee.
    for value in ["paused", "online"] {
        let changed = app
            .patch(&draft)
            .token(&seller.token)
            .json_patch(&status(value))
            .send()
            .await;
        expect_json(changed, 200).await;
    }
    assert_eq!(insertion_orders(&app, &draft).await.len(), 1);

    // A car costs nothing to place: no order.
    let car = json!({"title": "Audi A3", "description": "Nette auto.", "categoryId": 101,
                     "fuel": "petrol", "location": {"postcode": "9000"},
                     "priceModel": {"modelType": "fixed", "askingPrice": 950000}});
    let created = app
        .post("/v1/advertisements")
        .token(&seller.token)
        .json(&car)
        .send()
        .await;
    let car = expect_json(created, 201).await["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(insertion_orders(&app, &car).await, []);
}

/// Production: a new ad in a category with an insertion fee is a draft that waits for its
/// order; it cannot be published around it; the payment publishes it.
async fn production_ads_wait_for_their_insertion_fee(backend: Backend, test: &str) {
    let app = TestApp::start_with(backend, test, &[("SOUK_ENVIRONMENT", "production")]).await;
    let seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller).await;
    let waiting = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(waiting["status"], "draft");
    assert_eq!(waiting["awaitingPayment"], true);
    assert!(waiting["startDate"].is_null());
    let order_path = waiting["_links"]["svc:order"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    let order = expect_json(app.get_with(&order_path, &seller.token).await, 200).await;
    assert_eq!(order["status"], "payment required");
    let product = &order["_embedded"]["svc:order-products"][0];
    assert_eq!(
        (&product["type"], &product["price"], &product["vat"]),
        (&json!("insertion"), &json!(295), &json!(51))
    );
    // Not online, not in search, and no way around the payment.
    assert_eq!(app.get(&ad).await.status(), 404);
    let patch = json!([{"op": "replace", "path": "/status", "value": "online"}]);
    let refused = app
        .patch(&ad)
        .token(&seller.token)
        .json_patch(&patch)
        .send()
        .await;
    let refused = expect_json(refused, 409).await;
    assert_eq!(refused["code"], "conflicting-state");
    assert_eq!(
        insertion_orders(&app, &ad).await,
        [("payment required".to_owned(), 295)]
    );
    // Nor into another category: the order charges this one's fee, and its payment
    // publishes the ad.
    let car = json!({"title": "Audi A3", "description": "Nette auto.", "categoryId": 101,
                     "fuel": "petrol", "location": {"postcode": "9000"},
                     "priceModel": {"modelType": "fixed", "askingPrice": 950000}});
    let moved = app.put(&ad).token(&seller.token).json(&car).send().await;
    let moved = expect_json(moved, 409).await;
    assert_eq!(moved["code"], "conflicting-state");
    let order_id = order_path.rsplit('/').next().unwrap();
    assert!(
        moved["message"].as_str().unwrap().contains(order_id),
        "{moved}"
    );
    let still = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(still["categoryId"], 1903);
    let retitled = json!([{"op": "replace", "path": "/title", "value": "Kamer in Gent-centrum"}]);
    let retitled = app
        .patch(&ad)
        .token(&seller.token)
        .json_patch(&retitled)
        .send()
        .await;
    assert_eq!(
        expect_json(retitled, 200).await["status"],
        "draft",
        "its other members may change"
    );
    // Other users never see the waiting draft's order.
    let other = app.user("ander@souk.test").await;
    assert_eq!(app.get_with(&order_path, &other.token).await.status(), 404);

    let now = app.clock.now();
    pay_insertion(&app, &seller, &ad).await;
    let online = expect_json(app.get(&ad).await, 200).await;
    // Published when paid (the command's clock is the machine's), for 28 days.
    let start = parse(online["startDate"].as_str().unwrap());
    assert!(start >= now, "{start} {now}");
    assert_eq!(online["closeDate"], timestamp(start + 28 * DAY));
    assert!(online.get("awaitingPayment").is_none());
    assert_eq!(
        insertion_orders(&app, &ad).await,
        [("paid".to_owned(), 295)]
    );

    // A waiting draft that an operator rejects, and whose order is paid meanwhile: the
    // payment is not lost, and the restore brings the ad online, where it was paid to go.
    let rejected = room(&app, &seller).await;
    let item =
        souk::domain::advertisement::ItemId::parse(rejected.rsplit('/').next().unwrap()).unwrap();
    souk::moderation::reject(&app.db, item, "Dubbel", app.clock.now())
        .await
        .unwrap();
    let waiting = expect_json(app.get_with(&rejected, &seller.token).await, 200).await;
    let order_path = waiting["_links"]["svc:order"]["href"].as_str().unwrap();
    let paid = confirm_payment(&app, &seller, order_path.rsplit('/').next().unwrap()).await;
    assert!(
        paid.status.success(),
        "{}",
        String::from_utf8_lossy(&paid.stderr)
    );
    let still = expect_json(app.get_with(&rejected, &seller.token).await, 200).await;
    assert_eq!(
        still["status"], "rejected",
        "a payment does not undo a rejection"
    );
    let restored = souk::moderation::restore(&app.db, item, app.clock.now())
        .await
        .unwrap();
    assert_eq!(restored.as_str(), "online");
    let online = expect_json(app.get(&rejected).await, 200).await;
    assert!(online.get("awaitingPayment").is_none(), "{online}");
    assert!(online["startDate"].is_string() && online["closeDate"].is_string());
}

mod production_ads_wait_for_their_insertion_fee {
    use crate::helpers::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::production_ads_wait_for_their_insertion_fee(Backend::Sqlite, module_path!()).await;
    }

    #[tokio::test]
    #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
    async fn postgres() {
        super::production_ads_wait_for_their_insertion_fee(Backend::Postgres, module_path!()).await;
    }
}

/// In production a renewal waits for its payment: the order is `payment required` and the
/// ad keeps its date until the operator confirms the payment; then both change together.
async fn production_waits_for_the_payment(backend: Backend, test: &str) {
    let mut app = TestApp::start_with(backend, test, &[("SOUK_ENVIRONMENT", "production")]).await;
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller).await;
    pay_insertion(&app, &seller, &ad).await;
    let (close, _) = close_date(&app, &ad, &seller.token).await;
    let close = parse(&close);
    let order = expect_json(
        renew(&app, &seller.token, &ad, json!({"pay": true})).await,
        400,
    )
    .await;
    assert_eq!(order["code"], "invalid-expiration", "not yet in its window");
    let by = close - app.clock.now() - 2 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    let order = expect_json(
        renew(&app, &seller.token, &ad, json!({"pay": true})).await,
        201,
    )
    .await;
    assert_eq!(order["status"], "payment required");
    assert!(order.get("paidDate").is_none());
    assert_eq!(
        close_date(&app, &ad, &seller.token).await.0,
        timestamp(close)
    );
    let id = order["orderId"].to_string();
    // A second renewal while the first waits for its payment (a double click): refused,
    // where it used to make a second order and, once both were paid, a second period.
    let twice = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    let twice = expect_json(twice, 409).await;
    assert_eq!(twice["code"], "conflicting-state");
    assert!(twice["message"].as_str().unwrap().contains(&id), "{twice}");
    // The operator shortens the category's running days before the payment comes: the
    // renewal runs for the 28 days it was bought for.
    app.execute(
        "UPDATE categories SET running_days = 7 WHERE category_id = 1903",
        vec![],
    )
    .await;
    let paid = confirm_payment(&app, &seller, &id).await;
    assert!(
        paid.status.success(),
        "{}",
        String::from_utf8_lossy(&paid.stderr)
    );
    let printed: Value = serde_json::from_slice(&paid.stdout).unwrap();
    assert_eq!(printed["status"], "paid");
    let read = expect_json(
        app.get_with(&format!("/v1/orders/{id}"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(read["status"], "paid");
    assert_eq!(
        close_date(&app, &ad, &seller.token).await.0,
        timestamp(close + 28 * DAY)
    );
    // Renewed: out of its window now.
    let after = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    assert_eq!(expect_json(after, 400).await["code"], "invalid-expiration");
    // Paid once: a second confirmation is refused and changes nothing.
    let again = confirm_payment(&app, &seller, &id).await;
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not waiting for a payment"));
    assert_eq!(
        close_date(&app, &ad, &seller.token).await.0,
        timestamp(close + 28 * DAY)
    );
    let missing = app.souk(&["orders", "pay", "999999", "--amount", "0"]);
    assert!(!missing.status.success());
    // A renewal in a category without fee costs 0: nothing to wait for, it is paid at
    // once (it used to wait for a payment that no one would ever confirm).
    let bike = crate::ads::created(&app, &seller.token, &crate::ads::minimal("Fiets")).await;
    let bike = bike["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let (close, _) = close_date(&app, &bike, &seller.token).await;
    let close = parse(&close);
    let by = close - app.clock.now() - 2 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    // A renewal of price 0 that an earlier release left waiting blocks nothing.
    let (buyer, number, now) = (seller.id, item_number(&bike), app.clock.now());
    app.db
        .write(move |conn| {
            Box::pin(async move {
                use souk::domain::order::{OrderStatus, ProductKind};
                use souk::store::orders::{NewProduct, add_product, create};
                let order = create(conn, buyer, OrderStatus::PaymentRequired, now).await?;
                let product = NewProduct {
                    kind: ProductKind::Renewal,
                    feature: None,
                    days: None,
                    item_number: number,
                    description: "Verlenging (vorige versie)",
                    price: 0,
                    vat: 0,
                };
                add_product(conn, order, &product).await
            })
        })
        .await
        .unwrap();
    let order = renew(&app, &seller.token, &bike, json!({"pay": true})).await;
    let order = expect_json(order, 201).await;
    assert_eq!(
        (&order["status"], &order["price"]),
        (&json!("paid"), &json!(0))
    );
    let close = close + 28 * DAY;
    assert_eq!(
        close_date(&app, &bike, &seller.token).await.0,
        timestamp(close)
    );

    // A renewal of price 0 added to an order that has something to pay waits for that
    // payment as any renewal does: a second one meanwhile is refused. (They used to pass,
    // and once the order was paid each added a period.) The room expired meanwhile; its
    // renewal in the grace period costs its category's fee.
    let by = close - app.clock.now() - 2 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    let priced = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    let priced = expect_json(priced, 201).await;
    assert!(priced["price"].as_i64().unwrap() > 0, "{priced}");
    let into = json!({"pay": true, "orderId": priced["orderId"]});
    let first = renew(&app, &seller.token, &bike, into.clone()).await;
    assert_eq!(expect_json(first, 201).await["status"], "payment required");
    let second = renew(&app, &seller.token, &bike, into).await;
    assert_eq!(expect_json(second, 409).await["code"], "conflicting-state");
    let paid = confirm_payment(&app, &seller, &priced["orderId"].to_string()).await;
    assert!(paid.status.success());
    assert_eq!(
        close_date(&app, &bike, &seller.token).await.0,
        timestamp(close + 28 * DAY),
        "one period"
    );
}

mod production_waits_for_the_payment {
    use crate::helpers::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::production_waits_for_the_payment(Backend::Sqlite, module_path!()).await;
    }

    #[tokio::test]
    #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
    async fn postgres() {
        super::production_waits_for_the_payment(Backend::Postgres, module_path!()).await;
    }
}

/// In production an order whose payment does not come is refused by the operator (`souk
/// orders refuse`): nothing it bought takes effect, the draft that waited for it is free to
/// be published again (a new order), and a renewal of the ad may be bought again. Before,
/// such an order held the draft, and every later renewal of the ad, for good.
async fn production_refused_orders_free_what_waited(backend: Backend, test: &str) {
    let mut app = TestApp::start_with(backend, test, &[("SOUK_ENVIRONMENT", "production")]).await;
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller).await;
    let waiting = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    let order_path = waiting["_links"]["svc:order"]["href"].as_str().unwrap();
    let first = order_path.rsplit('/').next().unwrap().to_owned();
    let refused = app.souk(&["orders", "refuse", &first]);
    assert!(
        refused.status.success(),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let printed: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(printed["status"], "refused");
    let read = app
        .get_with(&format!("/v1/orders/{first}"), &seller.token)
        .await;
    assert_eq!(expect_json(read, 200).await["status"], "refused");
    let draft = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(draft["status"], "draft");
    assert!(draft.get("awaitingPayment").is_none(), "{draft}");
    assert!(draft["_links"].get("svc:order").is_none(), "{draft}");
    // Refused once: neither refused nor paid again.
    let again = app.souk(&["orders", "refuse", &first]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not waiting for a payment"));
    assert!(
        !confirm_payment(&app, &seller, &first)
            .await
            .status
            .success()
    );
    assert_eq!(
        insertion_orders(&app, &ad).await,
        [("refused".to_owned(), 295)]
    );

    // Published again: a new order, which its payment settles.
    let patch = json!([{"op": "replace", "path": "/status", "value": "online"}]);
    let published = app
        .patch(&ad)
        .token(&seller.token)
        .json_patch(&patch)
        .send()
        .await;
    assert_eq!(expect_json(published, 200).await["awaitingPayment"], true);
    pay_insertion(&app, &seller, &ad).await;
    let mut orders = insertion_orders(&app, &ad).await;
    orders.sort();
    assert_eq!(
        orders,
        [("paid".to_owned(), 295), ("refused".to_owned(), 295)]
    );

    // A renewal whose payment does not come no longer holds the next one.
    let (close, _) = close_date(&app, &ad, &seller.token).await;
    let close = parse(&close);
    let by = close - app.clock.now() - 2 * DAY;
    advance(&mut app, by, &mut [&mut seller]).await;
    let renewal = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    let renewal = expect_json(renewal, 201).await["orderId"].to_string();
    let held = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    assert_eq!(expect_json(held, 409).await["code"], "conflicting-state");
    assert!(app.souk(&["orders", "refuse", &renewal]).status.success());
    assert_eq!(
        close_date(&app, &ad, &seller.token).await.0,
        timestamp(close),
        "a refused renewal changes nothing"
    );
    let next = renew(&app, &seller.token, &ad, json!({"pay": true})).await;
    assert_eq!(expect_json(next, 201).await["status"], "payment required");
}

mod production_refused_orders_free_what_waited {
    use crate::helpers::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::production_refused_orders_free_what_waited(Backend::Sqlite, module_path!()).await;
    }

    #[tokio::test]
    #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
    async fn postgres() {
        super::production_refused_orders_free_what_waited(Backend::Postgres, module_path!()).await;
    }
}
