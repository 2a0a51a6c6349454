//! The access table of api.md §4 for every endpoint that exists: each is tried with no
//! token, a client token, a user token of another user and the right token. A test also
//! checks that every `/v1` operation of the OpenAPI document is in the table, so a new
//! endpoint cannot skip it.

use std::collections::BTreeSet;

use serde_json::json;

use crate::both_backends;
use crate::helpers::TestApp;

both_backends!(the_access_table_holds);

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
    /// The concrete path, with `{me}` for the right user's id and `{ad}` for their ad.
    path: &'static str,
    /// The body, with `"{me}"` for the owner's id, `"{buyer}"` for a third user's and
    /// `{n}` for a number unique to the request.
    body: Option<serde_json::Value>,
    anonymous: Outcome,
    client: Outcome,
    other_user: Outcome,
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
        owner: Allowed,
    };
    vec![
        read_all("/v1/categories", "/v1/categories"),
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
            ..owner_only()
        },
        Row {
            method: "get",
            template: "/v1/advertisements/{itemId}/transactions/{transactionId}",
            path: "/v1/advertisements/{ad}/transactions/1",
            ..owner_only()
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/transactions/{transactionId}/actions/cancel",
            path: "/v1/advertisements/{ad}/transactions/1/actions/cancel",
            body: Some(json!({})),
            ..owner_only()
        },
        Row {
            method: "post",
            template: "/v1/advertisements/{itemId}/transactions/{transactionId}/actions/complete",
            path: "/v1/advertisements/{ad}/transactions/2/actions/complete",
            body: Some(json!({})),
            ..owner_only()
        },
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
            owner: Status(403),
        },
        // Last: it deletes the ad the rows above use.
        Row {
            method: "delete",
            template: "/v1/advertisements/{itemId}",
            path: "/v1/advertisements/{ad}",
            body: None,
            anonymous: Status(401),
            client: Status(403),
            other_user: Status(403),
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
        owner: Allowed,
    }
}

fn ad_body() -> serde_json::Value {
    json!({"title": "Damesfiets", "description": "Goed onderhouden.", "categoryId": 402,
           "location": {"postcode": "1097DN"}, "priceModel": {"modelType": "fixed", "askingPrice": 5000},
           "condition": "used"})
}

async fn the_access_table_holds(app: TestApp) {
    let owner = app
        .create_user("owner@souk.test", "password-of-owner")
        .await;
    app.create_user("other@souk.test", "password-of-other")
        .await;
    // The buyer of the ad's transactions: neither the owner nor the other user.
    let buyer = app
        .create_user("buyer@souk.test", "password-of-buyer")
        .await;
    let (owner_token, _) = app
        .user_token(
            &app.app_client,
            "owner@souk.test",
            "password-of-owner",
            None,
        )
        .await;
    let (other_token, _) = app
        .user_token(
            &app.app_client,
            "other@souk.test",
            "password-of-other",
            None,
        )
        .await;
    let ad = app
        .client
        .post(app.url("/v1/advertisements"))
        .bearer_auth(&owner_token)
        .json(&ad_body())
        .send()
        .await
        .unwrap();
    let ad: serde_json::Value = ad.json().await.unwrap();
    let item = ad["itemId"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        let sale = app
            .client
            .post(app.url(&format!("/v1/advertisements/{item}/transactions")))
            .bearer_auth(&owner_token)
            .json(&json!({"buyerId": buyer, "amount": 100, "shippingCosts": 0}))
            .send()
            .await
            .unwrap();
        assert_eq!(sale.status(), 201);
    }
    let mut n = 0;
    for row in rows() {
        let path = row
            .path
            .replace("{me}", &owner.to_string())
            .replace("{ad}", &item);
        for (who, token, expected) in [
            ("anonymous", None, row.anonymous),
            ("client", Some(app.token.as_str()), row.client),
            ("other user", Some(other_token.as_str()), row.other_user),
            ("owner", Some(owner_token.as_str()), row.owner),
        ] {
            n += 1;
            let mut request = match row.method {
                "get" => app.client.get(app.url(&path)),
                "put" => app.client.put(app.url(&path)),
                "patch" => app.client.patch(app.url(&path)),
                "delete" => app.client.delete(app.url(&path)),
                _ => app.client.post(app.url(&path)),
            };
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(body) = &row.body {
                let text = body
                    .to_string()
                    .replace("{n}", &n.to_string())
                    .replace("\"{me}\"", &owner.to_string())
                    .replace("\"{buyer}\"", &buyer.to_string());
                let content_type = if row.method == "patch" {
                    "application/json-patch+json"
                } else {
                    "application/json"
                };
                request = request.header("content-type", content_type).body(text);
            }
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let actual = if status < 400 {
                Allowed
            } else {
                Status(status)
            };
            let text = response.text().await.unwrap_or_default();
            assert_eq!(
                actual, expected,
                "{} {} as {who}: {text}",
                row.method, row.path
            );
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
