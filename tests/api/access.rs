//! The access table of api.md §4 for every endpoint that exists: each is tried under `/v1`
//! and `/v2` with no token, a client token, a user token of another user, of the buyer of
//! the ad's transactions and of the owner; a caller who may not act gets the same answer
//! whatever the body holds (authorization comes before the body). A test also checks that
//! every `/v1` operation of the OpenAPI document is in the table, so a new endpoint cannot
//! skip it. Another test tries every operation on an ad that is not online: to anyone but
//! the seller (and the buyer, for their transactions) it does not exist.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::json;

use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json};

both_backends!(
    the_access_table_holds,
    an_ad_that_is_not_online_is_not_found,
    scopes_are_needed,
);

/// What a caller gets: the status, or 2xx/3xx as `OK`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    Status(u16),
}
use Outcome::{Ok as Allowed, Status};

struct Row {
    method: &'static str,
    /// The OpenAPI path (template) the row covers.
    template: &'static str,
    /// The concrete path, with `{me}` for the right user's id, `{ad}` for their ad and
    /// `{tx}` for a transaction of it made for each request (so each caller finds it open).
    path: &'static str,
    /// The body, with `"{me}"` for the owner's id, `"{buyer}"` for a third user's and
    /// `{n}` for a number unique to the request.
    body: Option<serde_json::Value>,
    anonymous: Outcome,
    client: Outcome,
    other_user: Outcome,
    /// The buyer of the ad's transactions.
    buyer: Outcome,
    owner: Outcome,
}

fn rows() -> Vec<Row> {
    let read_all = |template: &'static str, path: &'static str| Row {
        method: "get",
        template,
        path,
        body: None,
        anonymous: Status(401),
        client: Allowed,
        other_user: Allowed,
        buyer: Allowed,
        owner: Allowed,
    };
    vec![
        read_all("/v1/categories", "/v1/categories"),
        read_all("/v1/search", "/v1/search?query=fiets"),
        read_all("/v1/categories/{categoryId}", "/v1/categories/1"),
        read_all(
            "/v1/categories/{l1CategoryId}/{l2CategoryId}",
            "/v1/categories/1/101",
        ),
        read_all(
            "/v1/categories/{l1CategoryId}/{l2CategoryId}/attributes",
            "/v1/categories/1/101/attributes",
        ),
        read_all(
            "/v1/categories/{l1CategoryId}/{l2CategoryId}/fees",
            "/v1/categories/1/101/fees",
        ),
        read_all("/v1/locations", "/v1/locations?postcode=8301AA"),
        read_all("/v1/users", "/v1/users"),
        read_all("/v1/users/{userId}", "/v1/users/{me}"),
        read_all("/v1/users/{userId}/brands", "/v1/users/{me}/brands"),
        read_all(
            "/v1/users/{userId}/advertisements",
            "/v1/users/{me}/advertisements",
        ),
        read_all("/v1/advertisements/{itemId}", "/v1/advertisements/{ad}"),
        Row {
            method: "post",
            template: "/v1/advertisements",
            path: "/v1/advertisements",
            body: Some(ad_body()),
            anonymous: Status(401),
            client: Status(403),
            other_user: Allowed,
            buyer: Allowed,
            owner: Allowed,
        },
        Row {
            method: "get",
            template: "/v1/advertisements",
            path: "/v1/advertisements",
            body: None,
            anonymous: Status(401),
            client: Status(403),
            other_user: Allowed,
            buyer: Allowed,
            owner: Allowed,
        },
        Row {
            method: "put",
            template: "/v1/advertisements/{itemId}",
            path: "/v1/advertisements/{ad}",
            body: Some(ad_body()),
            anonymous: Status(401),
            client: Status(403),
            other_user: Status(403),
            buyer: Status(403),
            owner: Allowed,
        },
        Row {
            method: "patch",
            template: "/v1/advertisements/{itemId}",
            path: "/v1/advertisements/{ad}",
            body: Some(json!([{"op": "replace", "path": "/title", "value": "Gewijzigd"}])),
            anonymous: Status(401),
            client: Status(403),
            other_user: Status(403),
            buyer: Status(403),
            owner: Allowed,
        },
        Row {
            method: "put",
            template: "/v1/users/{userId}/brands",
            path: "/v1/users/{me}/brands",
            body: Some(json!({"brands": ["Ford"]})),
            anonymous: Status(401),
            client: Status(403),
            other_user: Status(403),
            buyer: Status(403),
            owner: Allowed,
        },
        Row {
            method: "get",
            template: "/v1",
            path: "/v1",
            body: None,
            anonymous: Allowed,
            client: Allowed,
            other_user: Allowed,
            buyer: Allowed,
            owner: Allowed,
        },
        Row {
            method: "post",
            template: "/v1/users",
            path: "/v1/users",
            body: Some(json!({"email": "new-{n}@souk.test", "password": "a good password"})),
            anonymous: Status(401),
            client: Allowed,
            other_user: Status(403),
            buyer: Status(403),
            owner: Status(403),
        },
        Row {
            method: "get",
            template: "/v1/me",
            path: "/v1/me",
            body: None,
            anonymous: Status(401),
            client: Status(403),
            other_user: Allowed,
            buyer: Allowed,
            owner: Allowed,
        },
        Row {
            method: "post",
            template: "/v1/users/{userId}/change-email",
            path: "/v1/users/{me}/change-email",
            body: Some(json!({"newEmail": "changed-{n}@souk.test"})),
            anonymous: Status(401),
            client: Status(403),
            other_user: Status(403),
            buyer: Status(403),
            owner: Allowed,
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/transactions",
            path: "/v1/advertisements/{ad}/transactions",
            body: Some(json!({"buyerId": "{buyer}", "amount": 100, "shippingCosts": 0})),
            ..owner_only()
        },
        Row {
            method: "get",
            template: "/v1/advertisements/{itemId}/transactions",
            path: "/v1/advertisements/{ad}/transactions",
            buyer: Allowed,
            ..owner_only()
        },
        Row {
            method: "get",
            template: "/v1/advertisements/{itemId}/transactions/{transactionId}",
            path: "/v1/advertisements/{ad}/transactions/1",
            buyer: Allowed,
            ..owner_only()
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/transactions/{transactionId}/actions/cancel",
            path: "/v1/advertisements/{ad}/transactions/{tx}/actions/cancel",
            body: Some(json!({})),
            buyer: Allowed,
            ..owner_only()
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/transactions/{transactionId}/actions/complete",
            path: "/v1/advertisements/{ad}/transactions/{tx}/actions/complete",
            body: Some(json!({})),
            ..owner_only()
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/bids",
            path: "/v1/advertisements/{bidad}/bids",
            body: Some(json!({"amount": "{next}"})),
            other_user: Allowed,
            buyer: Allowed,
            owner: Status(403),
            ..owner_only()
        },
        read_all(
            "/v1/advertisements/{itemId}/bids",
            "/v1/advertisements/{bidad}/bids",
        ),
        read_all(
            "/v1/advertisements/{itemId}/bids/{bidId}",
            "/v1/advertisements/{bidad}/bids/{bid}",
        ),
        Row {
            method: "delete",
            template: "/v1/advertisements/{itemId}/bids/{bidId}",
            path: "/v1/advertisements/{bidad}/bids/{bid}",
            buyer: Allowed,
            ..owner_only()
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/bids/{bidId}/actions/ask-bidder-question",
            path: "/v1/advertisements/{bidad}/bids/{bid}/actions/ask-bidder-question",
            body: Some(json!({"message": "Kun je zaterdag ophalen?"})),
            ..owner_only()
        },
        // Only the seller renews; a new ad is not in its renewal window yet.
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/renew",
            path: "/v1/advertisements/{ad}/renew",
            body: Some(json!({"pay": true})),
            owner: Status(400),
            ..owner_only()
        },
        read_all(
            "/v1/advertisements/{itemId}/features",
            "/v1/advertisements/{ad}/features",
        ),
        read_all(
            "/v1/advertisements/{itemId}/features/{featureName}",
            "/v1/advertisements/{ad}/features/dagtopper",
        ),
        // Only the seller buys a feature, and only the seller sees what was bought.
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/features/{featureName}/buy-feature",
            path: "/v1/advertisements/{ad}/features/opvalsticker/buy-feature",
            body: Some(json!({"pay": true})),
            ..owner_only()
        },
        Row {
            method: "get",
            template: "/v1/advertisements/{itemId}/purchased-features",
            path: "/v1/advertisements/{ad}/purchased-features",
            ..owner_only()
        },
        // Someone else's order does not exist for them.
        Row {
            method: "get",
            template: "/v1/orders/{orderId}",
            path: "/v1/orders/{order}",
            other_user: Status(404),
            buyer: Status(404),
            ..owner_only()
        },
        Row {
            method: "get",
            template: "/v1/orders/{orderId}/products",
            path: "/v1/orders/{order}/products",
            other_user: Status(404),
            buyer: Status(404),
            ..owner_only()
        },
        Row {
            method: "get",
            template: "/v1/orders/{orderId}/products/{productId}",
            path: "/v1/orders/{order}/products/1",
            other_user: Status(404),
            buyer: Status(404),
            ..owner_only()
        },
        // Only the buyer of a completed sale reviews its seller.
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/transactions/{transactionId}/review",
            path: "/v1/advertisements/{ad}/transactions/{done}/review",
            body: Some(json!({"overallScore": 5, "content": "Prima verkoper"})),
            buyer: Allowed,
            owner: Status(403),
            ..owner_only()
        },
        read_all("/v1/users/{userId}/reviews", "/v1/users/{me}/reviews"),
        read_all(
            "/v1/users/{userId}/reviews/{reviewId}",
            "/v1/users/{me}/reviews/{review}",
        ),
        Row {
            method: "get",
            template: "/v1/advertisements/{itemId}/statistics",
            path: "/v1/advertisements/{ad}/statistics",
            ..owner_only()
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/upcall-confirmations",
            path: "/v1/advertisements/{ad}/upcall-confirmations",
            body: Some(
                json!({"callerPhoneNumber": "0612345678", "calleePhoneNumber": "0201234567",
                              "startTime": "2026-01-01T10:00:00Z", "endTime": "2026-01-01T10:05:00Z"}),
            ),
            anonymous: Status(401),
            client: Allowed,
            other_user: Status(403),
            buyer: Status(403),
            owner: Status(403),
        },
        Row {
            method: "post",
            template: "/v1/savedsearches",
            path: "/v1/savedsearches",
            body: Some(json!({"searchRequest": {"query": "fiets"}})),
            other_user: Allowed,
            buyer: Allowed,
            ..owner_only()
        },
        Row {
            method: "get",
            template: "/v1/savedsearches",
            path: "/v1/savedsearches",
            other_user: Allowed,
            buyer: Allowed,
            ..owner_only()
        },
        // Someone else's saved search does not exist for them.
        Row {
            method: "get",
            template: "/v1/savedsearches/{savedSearchId}",
            path: "/v1/savedsearches/{saved}",
            other_user: Status(404),
            buyer: Status(404),
            ..owner_only()
        },
        Row {
            method: "put",
            template: "/v1/savedsearches/{savedSearchId}",
            path: "/v1/savedsearches/{saved}",
            body: Some(json!({"searchRequest": {"query": "auto"}})),
            other_user: Status(404),
            buyer: Status(404),
            ..owner_only()
        },
        Row {
            method: "delete",
            template: "/v1/savedsearches/{savedSearchId}",
            path: "/v1/savedsearches/{saved}",
            other_user: Status(404),
            buyer: Status(404),
            ..owner_only()
        },
        client_only("post", "/v1/hooks", "/v1/hooks", Some(hook_body())),
        client_only("get", "/v1/hooks", "/v1/hooks", None),
        client_only("get", "/v1/hooks/{hookId}", "/v1/hooks/{hook}", None),
        client_only(
            "put",
            "/v1/hooks/{hookId}",
            "/v1/hooks/{hook}",
            Some(hook_body()),
        ),
        client_only("delete", "/v1/hooks/{hookId}", "/v1/hooks/{hook}", None),
        client_only("get", "/v1/events", "/v1/events", None),
        client_only("get", "/v1/events/{eventId}", "/v1/events/{event}", None),
        // Last: it deletes the ad the rows above use.
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/images",
            path: "/v1/advertisements/{ad}/images",
            // No URL to fetch: refused, but only for its owner.
            body: Some(json!({"urls": []})),
            owner: Status(400),
            ..owner_only()
        },
        read_all(
            "/v1/advertisements/{itemId}/images",
            "/v1/advertisements/{ad}/images",
        ),
        Row {
            method: "put",
            template: "/v1/advertisements/{itemId}/images/order",
            path: "/v1/advertisements/{ad}/images/order",
            // Names none of the ad's images: refused, but only for its owner.
            body: Some(json!({"mediaIds": []})),
            owner: Status(400),
            ..owner_only()
        },
        read_all("/v1/images/{mediaId}", "/v1/images/{img}"),
        read_all(
            "/v1/images/{mediaId}/{size}/blob",
            "/v1/images/{ready}/small/blob",
        ),
        read_all(
            "/v1/images/{mediaId}/{size}/meta",
            "/v1/images/{ready}/large/meta",
        ),
        Row {
            method: "delete",
            template: "/v1/images/{mediaId}",
            path: "/v1/images/{img}",
            ..owner_only()
        },
        Row {
            method: "delete",
            template: "/v1/advertisements/{itemId}",
            path: "/v1/advertisements/{ad}",
            body: None,
            anonymous: Status(401),
            client: Status(403),
            other_user: Status(403),
            buyer: Status(403),
            owner: Allowed,
        },
    ]
}

/// A row only the owner (a user token with the right scope) may use.
fn owner_only() -> Row {
    Row {
        method: "get",
        template: "",
        path: "",
        body: None,
        anonymous: Status(401),
        client: Status(403),
        other_user: Status(403),
        buyer: Status(403),
        owner: Allowed,
    }
}

fn ad_body() -> serde_json::Value {
    json!({"title": "Damesfiets", "description": "Goed onderhouden.", "categoryId": 402,
           "location": {"postcode": "1097DN"}, "priceModel": {"modelType": "fixed", "askingPrice": 5000},
           "condition": "used"})
}

/// The users of the access table: the owner (of `{me}` and `{ad}`), another user and the
/// buyer of the owner's sales, with a user token each.
struct Users {
    owner: User,
    other: User,
    buyer: User,
}

async fn users(app: &TestApp) -> Users {
    Users {
        owner: app.user("owner@souk.test").await,
        other: app.user("other@souk.test").await,
        buyer: app.user("buyer@souk.test").await,
    }
}

/// A request to try: method, path, and the body with its content type.
type Request = (&'static str, String, Option<(&'static str, String)>);

async fn send(
    app: &TestApp,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<(&str, String)>,
) -> reqwest::Response {
    let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
    let mut request = app.request(method, path);
    if let Some(token) = token {
        request = request.token(token);
    }
    if let Some((content_type, text)) = body {
        request = request.body(content_type, text);
    }
    request.send().await
}

/// An online ad of the owner; its item id.
async fn owners_ad(app: &TestApp, users: &Users) -> String {
    let response = app
        .post("/v1/advertisements")
        .token(&users.owner.token)
        .json(&ad_body())
        .send()
        .await;
    expect_json(response, 201).await["itemId"]
        .as_str()
        .expect("the ad was placed")
        .to_owned()
}

/// A bidding ad of the owner; its item id.
async fn owners_bidding_ad(app: &TestApp, users: &Users) -> String {
    let mut body = ad_body();
    body["priceModel"] = json!({"modelType": "bidding", "minimalBid": 1000});
    let response = app
        .post("/v1/advertisements")
        .token(&users.owner.token)
        .json(&body)
        .send()
        .await;
    expect_json(response, 201).await["itemId"]
        .as_str()
        .expect("the ad was placed")
        .to_owned()
}

/// The least amount a new bid on `item` may have now.
async fn next_bid(app: &TestApp, item: &str) -> i64 {
    app.get_json(&format!("/v1/advertisements/{item}/bids"), 200)
        .await["minimumNextBid"]
        .as_i64()
        .expect("the ad takes bids")
}

/// A bid of the buyer on `item`; its bidId.
async fn buyers_bid(app: &TestApp, users: &Users, item: &str) -> i64 {
    let amount = next_bid(app, item).await;
    let response = app
        .post(&format!("/v1/advertisements/{item}/bids"))
        .token(&users.buyer.token)
        .json(&json!({"amount": amount}))
        .send()
        .await;
    expect_json(response, 201).await["bidId"].as_i64().unwrap()
}

/// A sale of `item` from the owner to the buyer; its transactionId.
async fn sale(app: &TestApp, users: &Users, item: &str) -> i64 {
    let response = app
        .post(&format!("/v1/advertisements/{item}/transactions"))
        .token(&users.owner.token)
        .json(&json!({"buyerId": users.buyer.id, "amount": 100, "shippingCosts": 0}))
        .send()
        .await;
    expect_json(response, 201).await["transactionId"]
        .as_i64()
        .unwrap()
}

/// An order of `buyer` with one product for `item` (made in the database: a renewal
/// through the API needs the ad in its last week); its id.
async fn order_of(app: &TestApp, buyer: &User, item: &str) -> i64 {
    use souk::domain::order::{OrderStatus, ProductKind};
    use souk::store::orders::{self, NewProduct};
    let (buyer, number, now) = (buyer.id, item[1..].parse::<i64>().unwrap(), app.clock.now());
    app.db
        .write(move |conn| {
            Box::pin(async move {
                let order = orders::create(conn, buyer, OrderStatus::Paid, now).await?;
                let product = NewProduct {
                    kind: ProductKind::Renewal,
                    feature: None,
                    days: None,
                    item_number: number,
                    description: "Verlenging",
                    price: 295,
                    vat: 51,
                };
                orders::add_product(conn, order, &product).await?;
                Ok::<_, souk::store::DbError>(order)
            })
        })
        .await
        .unwrap()
}

/// A sale of `item` from the owner to the buyer, completed; its transactionId.
async fn completed_sale(app: &TestApp, users: &Users, item: &str) -> i64 {
    let id = sale(app, users, item).await;
    let response = app
        .post(&format!(
            "/v1/advertisements/{item}/transactions/{id}/actions/complete"
        ))
        .token(&users.owner.token)
        .json(&json!({}))
        .send()
        .await;
    expect_json(response, 200).await;
    id
}

/// A row that only a client token with `webhooks` may use (the table's client has every
/// client scope).
fn client_only(
    method: &'static str,
    template: &'static str,
    path: &'static str,
    body: Option<serde_json::Value>,
) -> Row {
    Row {
        method,
        template,
        path,
        body,
        anonymous: Status(401),
        client: Allowed,
        other_user: Status(403),
        buyer: Status(403),
        owner: Status(403),
    }
}

fn hook_body() -> serde_json::Value {
    json!({"url": "https://partner.example/{n}", "events": ["bid.placed"],
           "secret": "sixteen characters or more"})
}

/// A hook of the table's client, written to the database: a request per caller and prefix
/// would pass the ten a client may create.
async fn clients_hook(app: &TestApp) -> i64 {
    let client = app.app_client.id.clone();
    let now = app.clock.now();
    app.db
        .write(move |conn| {
            Box::pin(async move {
                let hook = souk::store::hooks::HookWrite {
                    url: "https://partner.example/table",
                    secret: Some("sixteen characters or more"),
                    active: true,
                    events: &["bid.placed"],
                };
                souk::store::hooks::insert(conn, &client, hook, now).await
            })
        })
        .await
        .expect("hook")
        .id
}

/// The newest event for the table's client (the owner's ad made one).
async fn clients_event(app: &TestApp) -> i64 {
    let events = expect_json(app.get("/v1/events").await, 200).await;
    events["_embedded"]["svc:event"][0]["eventId"]
        .as_i64()
        .expect("an event for the client")
}

/// A saved search of `owner`; its id.
async fn saved_search(app: &TestApp, owner: &User) -> i64 {
    let response = app
        .post("/v1/savedsearches")
        .token(&owner.token)
        .json(&json!({"searchRequest": {"query": "fiets"}}))
        .send()
        .await;
    expect_json(response, 201).await["savedSearchId"]
        .as_i64()
        .unwrap()
}

/// The error code that goes with each status the table expects at `path`.
fn code_of(status: u16, path: &str) -> &'static str {
    match status {
        404 if path.contains("/savedsearches/") => "savedsearch-not-found",
        404 if path.contains("/orders/") => "order-not-found",
        400 if path.ends_with("/renew") => "invalid-expiration",
        400 => "validation-failure",
        415 => "unsupported-media-type",
        401 => "unauthenticated",
        403 => "unauthorized",
        404 => "advertisement-not-found",
        _ => unreachable!("the table expects 401, 403 or 404"),
    }
}

async fn the_access_table_holds(app: TestApp) {
    let users = users(&app).await;
    let item = owners_ad(&app, &users).await;
    sale(&app, &users, &item).await;
    let ready = crate::images::available_image(&app, &users.owner.token, &item).await;
    let bidding = owners_bidding_ad(&app, &users).await;
    let mut n = 0;
    for row in rows() {
        for (who, token, expected) in [
            ("anonymous", None, row.anonymous),
            ("client", Some(app.token.as_str()), row.client),
            (
                "other user",
                Some(users.other.token.as_str()),
                row.other_user,
            ),
            ("buyer", Some(users.buyer.token.as_str()), row.buyer),
            ("owner", Some(users.owner.token.as_str()), row.owner),
        ] {
            for prefix in ["/v1", "/v2"] {
                n += 1;
                let mut path = row
                    .path
                    .replacen("/v1", prefix, 1)
                    .replace("{me}", &users.owner.id.to_string())
                    .replace("{ad}", &item);
                if path.contains("{tx}") {
                    path = path.replace("{tx}", &sale(&app, &users, &item).await.to_string());
                }
                if path.contains("{order}") {
                    path = path.replace(
                        "{order}",
                        &order_of(&app, &users.owner, &item).await.to_string(),
                    );
                }
                if path.contains("{done}") {
                    path = path.replace(
                        "{done}",
                        &completed_sale(&app, &users, &item).await.to_string(),
                    );
                }
                if path.contains("{review}") {
                    let done = completed_sale(&app, &users, &item).await;
                    let review = app
                        .post(&format!(
                            "/v1/advertisements/{item}/transactions/{done}/review"
                        ))
                        .token(&users.buyer.token)
                        .json(&json!({"overallScore": 4, "content": "Goed"}))
                        .send()
                        .await;
                    let review = expect_json(review, 201).await["reviewId"].to_string();
                    path = path.replace("{review}", &review);
                }
                if path.contains("{hook}") {
                    path = path.replace("{hook}", &clients_hook(&app).await.to_string());
                }
                if path.contains("{event}") {
                    path = path.replace("{event}", &clients_event(&app).await.to_string());
                }
                if path.contains("{saved}") {
                    let saved = saved_search(&app, &users.owner).await;
                    path = path.replace("{saved}", &saved.to_string());
                }
                path = path.replace("{ready}", &ready).replace("{bidad}", &bidding);
                if path.contains("{bid}") {
                    let bid = buyers_bid(&app, &users, &bidding).await;
                    path = path.replace("{bid}", &bid.to_string());
                }
                let next = next_bid(&app, &bidding).await;
                if path.contains("{img}") {
                    let image = crate::images::new_image(&app, &users.owner.token, &item).await;
                    path = path.replace("{img}", &image);
                }
                let content_type = if row.method == "patch" {
                    "application/json-patch+json"
                } else {
                    "application/json"
                };
                let body = row.body.as_ref().map(|body| {
                    body.to_string()
                        .replace("{n}", &n.to_string())
                        .replace("\"{me}\"", &users.owner.id.to_string())
                        .replace("\"{buyer}\"", &users.buyer.id.to_string())
                        .replace("\"{next}\"", &next.to_string())
                });
                let response = send(
                    &app,
                    row.method,
                    &path,
                    token,
                    body.clone().map(|b| (content_type, b)),
                )
                .await;
                let status = response.status().as_u16();
                let actual = if status < 400 {
                    Allowed
                } else {
                    Status(status)
                };
                if actual != expected {
                    let text = response.text().await.unwrap_or_default();
                    panic!(
                        "{} {path} as {who}: {actual:?}, not {expected:?}: {text}",
                        row.method
                    );
                }
                let Status(status) = expected else {
                    continue;
                };
                let error = expect_json(response, status).await;
                assert_eq!(
                    error["code"],
                    code_of(status, &path),
                    "{} {path} as {who}",
                    row.method
                );
                // Who may not act learns nothing about the body: not its type, not its shape.
                // (A 400 or 415 is an answer to the body itself.)
                if body.is_some() && matches!(status, 401 | 403 | 404) {
                    for bad in [(content_type, "{\"broken\": "), ("text/plain", "{}")] {
                        let response = send(
                            &app,
                            row.method,
                            &path,
                            token,
                            Some((bad.0, bad.1.to_owned())),
                        )
                        .await;
                        assert_eq!(
                            response.status().as_u16(),
                            status,
                            "{} {path} as {who} with the body {bad:?}",
                            row.method
                        );
                    }
                }
            }
        }
    }
    // Every versioned operation of the document is in the table.
    let document = app.get_json("/openapi.json", 200).await;
    let covered: BTreeSet<(String, String)> = rows()
        .iter()
        .map(|r| (r.method.to_owned(), r.template.to_owned()))
        .collect();
    for (path, item) in document["paths"].as_object().unwrap() {
        if !path.starts_with("/v1/") {
            continue;
        }
        for method in item.as_object().unwrap().keys() {
            assert!(
                covered.contains(&(method.clone(), path.clone())),
                "{method} {path} is missing from the access table"
            );
        }
    }
}

/// Every operation on an ad that is not online (here: paused), by anyone but its seller, is
/// 404 `advertisement-not-found`, as if it did not exist; its buyer still sees and cancels
/// their transactions. Upcalls are for online ads only.
async fn an_ad_that_is_not_online_is_not_found(app: TestApp) {
    let users = users(&app).await;
    let item = owners_ad(&app, &users).await;
    sale(&app, &users, &item).await;
    sale(&app, &users, &item).await;
    let paused = app
        .patch(&format!("/v1/advertisements/{item}"))
        .token(&users.owner.token)
        .json_patch(&json!([{"op": "replace", "path": "/status", "value": "paused"}]))
        .send()
        .await;
    assert_eq!(paused.status(), 200);
    let ad = format!("/v1/advertisements/{item}");
    let sale_body = json!({"buyerId": users.buyer.id, "amount": 1, "shippingCosts": 0}).to_string();
    let call = json!({"callerPhoneNumber": "0612345678", "calleePhoneNumber": "0201234567",
                      "startTime": "2026-01-01T10:00:00Z", "endTime": "2026-01-01T10:05:00Z"})
    .to_string();
    let json = |text: &str| Some(("application/json", text.to_owned()));
    let requests: Vec<Request> = vec![
        ("get", ad.clone(), None),
        ("put", ad.clone(), json(&ad_body().to_string())),
        (
            "patch",
            ad.clone(),
            Some((
                "application/json-patch+json",
                json!([{"op": "replace", "path": "/title", "value": "Gekaapt"}]).to_string(),
            )),
        ),
        ("get", format!("{ad}/statistics"), None),
        ("post", format!("{ad}/transactions"), json(&sale_body)),
        ("get", format!("{ad}/transactions"), None),
        ("get", format!("{ad}/transactions/1"), None),
        (
            "post",
            format!("{ad}/transactions/1/actions/cancel"),
            json("{}"),
        ),
        (
            "post",
            format!("{ad}/transactions/1/actions/complete"),
            json("{}"),
        ),
        (
            "post",
            format!("{ad}/transactions/1/review"),
            json(r#"{"overallScore": 5, "content": "Prima"}"#),
        ),
        ("delete", ad.clone(), None),
    ];
    for (method, path, body) in &requests {
        for prefix in ["/v1", "/v2"] {
            let path = path.replacen("/v1", prefix, 1);
            let response = send(&app, method, &path, Some(&users.other.token), body.clone()).await;
            let error = expect_json(response, 404).await;
            assert_eq!(error["code"], "advertisement-not-found", "{method} {path}");
        }
    }
    // Upcalls are counted on online ads only.
    let upcall = send(
        &app,
        "post",
        &format!("{ad}/upcall-confirmations"),
        Some(&app.token),
        json(&call),
    )
    .await;
    assert_eq!(upcall.status(), 404);
    // The buyer sees their transactions on the paused ad, and cancels one; the ad itself,
    // its statistics and new sales stay the seller's.
    for path in [format!("{ad}/transactions"), format!("{ad}/transactions/1")] {
        let response = send(&app, "get", &path, Some(&users.buyer.token), None).await;
        assert_eq!(response.status(), 200, "{path}");
    }
    let cancelled = send(
        &app,
        "post",
        &format!("{ad}/transactions/2/actions/cancel"),
        Some(&users.buyer.token),
        json("{}"),
    )
    .await;
    assert_eq!(cancelled.status(), 200);
    let response = send(&app, "get", &ad, Some(&users.buyer.token), None).await;
    assert_eq!(response.status(), 404);
    let response = send(
        &app,
        "post",
        &format!("{ad}/transactions"),
        Some(&users.buyer.token),
        json(&sale_body),
    )
    .await;
    assert_eq!(response.status(), 403);
    // Nothing the others tried changed anything.
    let owner = &users.owner.token;
    let statistics = expect_json(app.get_with(&format!("{ad}/statistics"), owner).await, 200).await;
    assert_eq!(statistics["numberOfPhoneClicks"], 0);
    let own = expect_json(app.get_with(&ad, owner).await, 200).await;
    assert_eq!(own["title"], "Damesfiets");
    assert_eq!(own["status"], "paused");
    let listed = expect_json(
        app.get_with(&format!("{ad}/transactions"), owner).await,
        200,
    )
    .await;
    let statuses: Vec<&str> = listed["_embedded"]["svc:advertisement-transaction"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["CANCELLED", "CREATED"]);
}

/// The owner's own token is not enough without the scope: `write` to change (ads, sales,
/// brands), `read` to read what is private (the own list, statistics, sales, `me`).
async fn scopes_are_needed(app: TestApp) {
    let users = users(&app).await;
    let item = owners_ad(&app, &users).await;
    let owner = &users.owner.token;
    let ad = expect_json(
        app.get_with(&format!("/v1/advertisements/{item}"), owner)
            .await,
        200,
    )
    .await;
    sale(&app, &users, &item).await;
    let read_only = app.token_of(&users.owner, Some("read")).await;
    let write_only = app.token_of(&users.owner, Some("write")).await;
    let path = format!("/v1/advertisements/{item}");
    let json = |value: serde_json::Value| Some(("application/json", value.to_string()));
    let needs_write: Vec<Request> = vec![
        ("post", "/v1/advertisements".into(), json(ad_body())),
        ("put", path.clone(), json(ad_body())),
        (
            "patch",
            path.clone(),
            Some((
                "application/json-patch+json",
                json!([{"op": "replace", "path": "/title", "value": "Gewijzigd"}]).to_string(),
            )),
        ),
        ("delete", path.clone(), None),
        (
            "post",
            format!("{path}/transactions"),
            json(json!({"buyerId": users.buyer.id, "amount": 1, "shippingCosts": 0})),
        ),
        (
            "post",
            format!("{path}/transactions/1/actions/complete"),
            json(json!({})),
        ),
        (
            "post",
            format!("{path}/transactions/1/actions/cancel"),
            json(json!({})),
        ),
        (
            "put",
            format!("/v1/users/{}/brands", users.owner.id),
            json(json!({"brands": ["Ford"]})),
        ),
        (
            "post",
            format!("{path}/bids"),
            json(json!({"amount": 5000})),
        ),
        ("delete", format!("{path}/bids/1"), None),
        (
            "post",
            format!("{path}/bids/1/actions/ask-bidder-question"),
            json(json!({"message": "Nog te koop?", "phoneNumber": "0612345678"})),
        ),
        (
            "post",
            "/v1/savedsearches".into(),
            json(json!({"searchRequest": {"query": "fiets"}})),
        ),
        (
            "put",
            "/v1/savedsearches/1".into(),
            json(json!({"searchRequest": {"query": "fiets"}})),
        ),
        ("delete", "/v1/savedsearches/1".into(), None),
        (
            "post",
            format!("{path}/transactions/1/review"),
            json(json!({"overallScore": 5, "content": "Prima"})),
        ),
    ];
    for (method, path, body) in &needs_write {
        let response = send(&app, method, path, Some(&read_only), body.clone()).await;
        assert_eq!(response.status(), 403, "{method} {path} without write");
    }
    let needs_read = [
        "/v1/advertisements".to_owned(),
        format!("{path}/statistics"),
        format!("{path}/transactions"),
        format!("{path}/transactions/1"),
        format!("{path}/purchased-features"),
        "/v1/me".to_owned(),
        "/v1/savedsearches".to_owned(),
        "/v1/savedsearches/1".to_owned(),
    ];
    for path in &needs_read {
        let response = send(&app, "get", path, Some(&write_only), None).await;
        assert_eq!(response.status(), 403, "GET {path} without read");
    }
    let response = send(
        &app,
        "post",
        &format!("{path}/renew"),
        Some(&write_only),
        json(json!({"pay": true})),
    )
    .await;
    assert_eq!(response.status(), 403, "renew without purchase");
    let response = send(
        &app,
        "post",
        &format!("{path}/features/dagtopper/buy-feature"),
        Some(&write_only),
        json(json!({"pay": true})),
    )
    .await;
    assert_eq!(response.status(), 403, "buy-feature without purchase");
    let response = send(
        &app,
        "post",
        &format!("/v1/users/{}/change-email", users.owner.id),
        Some(&write_only),
        json(json!({"newEmail": "ander@souk.test"})),
    )
    .await;
    assert_eq!(response.status(), 403, "change-email without read");
    // Nothing changed: the ad, its one open sale, the brands, the list.
    let read = expect_json(app.get_with(&path, owner).await, 200).await;
    assert_eq!(read, ad);
    let sales = expect_json(
        app.get_with(&format!("{path}/transactions"), owner).await,
        200,
    )
    .await;
    let sales = sales["_embedded"]["svc:advertisement-transaction"]
        .as_array()
        .unwrap();
    assert_eq!(sales.len(), 1);
    assert_eq!(sales[0]["status"], "CREATED");
    let brands = app
        .get_with(&format!("/v1/users/{}/brands", users.owner.id), owner)
        .await;
    assert_eq!(expect_json(brands, 200).await["brands"], json!([]));
    let own = app.get_with("/v1/advertisements", owner).await;
    assert_eq!(expect_json(own, 200).await["totalCount"], 1);
    let saved = app.get_with("/v1/savedsearches", owner).await;
    assert_eq!(expect_json(saved, 200).await["totalCount"], 0);
}
