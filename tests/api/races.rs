//! Requests that race: the same write sent several times at once, where a row lock, an
//! `ON CONFLICT` or a unique violation mapped to its documented answer must decide (the same
//! address signed up twice, the last hook places, one new address confirmed by two users,
//! one Idempotency-Key retried). Each test sends its requests together and checks every
//! answer and the rows left; PostgreSQL, where the requests really run side by side, is
//! where a regression would show.

use futures_util::future::join_all;
use serde_json::{Value, json};

use souk::accounts::ClientSpec;

use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json, field_codes, pairs};

both_backends!(
    one_address_signed_up_at_once_makes_one_account,
    hooks_created_at_once_stop_at_ten,
    one_new_address_confirmed_by_two_users_at_once_goes_to_one,
    one_idempotency_key_sent_at_once_counts_one_upcall,
);

/// Eight sign-ups with one address at once (`POST /v1/users`): an address belongs to one
/// account, and a taken one is the field error `email-in-use` on `email` (400). One account
/// is made and mailed, the seven others are refused, and none is a 500 (on PostgreSQL they
/// wait on the unique index, then violate it).
async fn one_address_signed_up_at_once_makes_one_account(app: TestApp) {
    // Without a password: no hashing spaces the requests out, they meet at the insert.
    let body = json!({"email": "race@souk.test", "name": "Snelle Jelle"});
    let racing = (0..8).map(|_| {
        let (app, body) = (&app, &body);
        async move {
            let answer = app
                .post("/v1/users")
                .token(&app.token)
                .json(body)
                .send()
                .await;
            match answer.status().as_u16() {
                201 => {
                    let user = expect_json(answer, 201).await;
                    assert_eq!(user["email"], "race@souk.test");
                    (201, Vec::new())
                }
                _ => (400, field_codes(&expect_json(answer, 400).await)),
            }
        }
    });
    let mut answers = join_all(racing).await;
    answers.sort();
    let mut expected = vec![(201, Vec::new())];
    expected.extend(vec![(400, pairs(&[("email", "email-in-use")])); 7]);
    assert_eq!(answers, expected);
    assert_eq!(app.count_rows("users").await, 1);
    let mails = app.outbox().await;
    assert_eq!(mails.len(), 1, "one confirmation mail: {mails:?}");
    assert!(mails[0].starts_with("To: race@souk.test"), "{}", mails[0]);
}

const SECRET: &str = "a secret of the partner, 32 chars";

fn hook_body(url: &str) -> Value {
    json!({"url": url, "events": ["bid.placed"], "secret": SECRET})
}

async fn create_hook(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    app.post("/v1/hooks").token(token).json(body).send().await
}

/// Five hooks created at once by a client that has nine: at most 10 hooks per client
/// (`too-many` on `url`, 400). Concurrent creations wait on the client's row, so each counts
/// the others' hooks: one is made, four are refused, and the client has ten.
async fn hooks_created_at_once_stop_at_ten(app: TestApp) {
    let client = app
        .register_client(ClientSpec {
            name: "Partner".into(),
            redirect_uris: vec!["https://partner.test/cb".into()],
            scopes: Some("read write webhooks".into()),
            ..ClientSpec::default()
        })
        .await;
    let token = app.client_token(&client, Some("webhooks")).await;
    for n in 0..9 {
        let body = hook_body(&format!("https://partner.example/{n}"));
        expect_json(create_hook(&app, &token, &body).await, 201).await;
    }
    let bodies: Vec<Value> = (0..5)
        .map(|n| hook_body(&format!("https://partner.example/race/{n}")))
        .collect();
    let racing = bodies.iter().map(|body| {
        let (app, token) = (&app, &token);
        async move {
            let answer = create_hook(app, token, body).await;
            match answer.status().as_u16() {
                201 => {
                    expect_json(answer, 201).await;
                    (201, Vec::new())
                }
                _ => (400, field_codes(&expect_json(answer, 400).await)),
            }
        }
    });
    let mut answers = join_all(racing).await;
    answers.sort();
    let mut expected = vec![(201, Vec::new())];
    expected.extend(vec![(400, pairs(&[("url", "too-many")])); 4]);
    assert_eq!(answers, expected);
    let listed = expect_json(app.get_with("/v1/hooks", &token).await, 200).await;
    assert_eq!(listed["totalCount"], 10, "{listed}");
    assert_eq!(listed["maximum"], 10, "{listed}");
    assert_eq!(app.count_rows("hooks").await, 10);
    assert_eq!(
        app.count_rows("hook_events").await,
        10,
        "no refused hook left events"
    );
}

/// The token of the confirmation link in a mail.
fn token_in(mail: &str) -> String {
    let start = mail.find("token=").expect("a link") + "token=".len();
    mail[start..].split_whitespace().next().unwrap().to_owned()
}

/// The tokens of the confirmation links mailed to `email` so far, oldest first.
async fn tokens_mailed_to(app: &TestApp, email: &str) -> Vec<String> {
    let to = format!("To: {email}\n");
    app.outbox()
        .await
        .iter()
        .filter(|mail| mail.starts_with(&to))
        .map(|mail| token_in(mail))
        .collect()
}

async fn change_email(app: &TestApp, user: &User, email: &str) {
    let asked = app
        .post(&format!("/v1/users/{}/change-email", user.id))
        .token(&user.token)
        .json(&json!({"newEmail": email}))
        .send()
        .await;
    expect_json(asked, 200).await;
}

async fn confirm(app: &TestApp, token: &str) -> reqwest::Response {
    app.post("/accounts/confirm")
        .form(&[("token", token)])
        .send()
        .await
}

async fn email_of(app: &TestApp, user: &User) -> String {
    let own = app
        .get_with(&format!("/v1/users/{}", user.id), &user.token)
        .await;
    expect_json(own, 200).await["email"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Two users confirm one new address at once: the address goes to one of them, and for the
/// other "another account took the address meanwhile" (the confirmation page's 409), not a
/// 500; nothing of the loser changes and its link stays usable, so it works once the
/// winner has moved on to yet another address.
async fn one_new_address_confirmed_by_two_users_at_once_goes_to_one(app: TestApp) {
    let anna = app.user("anna@souk.test").await;
    let bram = app.user("bram@souk.test").await;
    change_email(&app, &anna, "gedeeld@souk.test").await;
    change_email(&app, &bram, "gedeeld@souk.test").await;
    let tokens = tokens_mailed_to(&app, "gedeeld@souk.test").await;
    assert_eq!(tokens.len(), 2, "a link for each of them");
    let racing = tokens.iter().map(|token| {
        let app = &app;
        async move {
            let answer = confirm(app, token).await;
            let status = answer.status().as_u16();
            (status, answer.text().await.unwrap())
        }
    });
    let answers = join_all(racing).await;
    let mut statuses: Vec<u16> = answers.iter().map(|(status, _)| *status).collect();
    statuses.sort();
    assert_eq!(statuses, [200, 409], "{answers:?}");
    let (loser_at, (_, refusal)) = answers
        .iter()
        .enumerate()
        .find(|(_, (status, _))| *status == 409)
        .unwrap();
    assert!(
        refusal.contains("door een ander account in gebruik genomen"),
        "{refusal}"
    );
    let (of_anna, of_bram) = (email_of(&app, &anna).await, email_of(&app, &bram).await);
    let (winner, loser) = match (of_anna.as_str(), of_bram.as_str()) {
        ("gedeeld@souk.test", "bram@souk.test") => (&anna, &bram),
        ("anna@souk.test", "gedeeld@souk.test") => (&bram, &anna),
        other => panic!("one of them has the address, the other keeps theirs: {other:?}"),
    };
    // The winner moves on; the loser's link, whose use was undone, now takes the address.
    change_email(&app, winner, "verhuisd@souk.test").await;
    let moved = tokens_mailed_to(&app, "verhuisd@souk.test").await;
    assert_eq!(moved.len(), 1);
    assert_eq!(confirm(&app, &moved[0]).await.status(), 200);
    assert_eq!(email_of(&app, winner).await, "verhuisd@souk.test");
    assert_eq!(confirm(&app, &tokens[loser_at]).await.status(), 200);
    assert_eq!(email_of(&app, loser).await, "gedeeld@souk.test");
    assert_eq!(app.count_rows("users").await, 2);
}

async fn phone_clicks(app: &TestApp, seller: &User, item: &str) -> i64 {
    let path = format!("/v1/advertisements/{item}/statistics");
    let stats = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    stats["numberOfPhoneClicks"].as_i64().unwrap()
}

/// How an upcall confirmation sent with an Idempotency-Key was answered: `201` (it ran),
/// `201 replayed` (the first one's answer, replayed) or `409 conflicting-state` (the first
/// one was still running).
async fn send_upcall(app: &TestApp, path: &str, call: &Value) -> &'static str {
    let answer = app
        .post(path)
        .token(&app.token)
        .header("idempotency-key", "gesprek-1")
        .json(call)
        .send()
        .await;
    match answer.status().as_u16() {
        201 => {
            let replayed = answer
                .headers()
                .get("idempotency-replayed")
                .is_some_and(|v| v == "true");
            assert!(answer.bytes().await.unwrap().is_empty(), "no body");
            if replayed { "201 replayed" } else { "201" }
        }
        _ => {
            let error = expect_json(answer, 409).await;
            assert_eq!(error["code"], "conflicting-state", "{error}");
            "409 conflicting-state"
        }
    }
}

/// One upcall confirmation sent five times at once under one Idempotency-Key: the same key
/// with the same request runs once; the others get its 201 replayed (`Idempotency-Replayed:
/// true`) or, while it runs, 409 `conflicting-state`. The call counts one phone click.
async fn one_idempotency_key_sent_at_once_counts_one_upcall(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = crate::ads::created(&app, &seller.token, &crate::ads::minimal("Herenfiets")).await;
    let item = ad["itemId"].as_str().unwrap();
    let path = format!("/v2/advertisements/{item}/upcall-confirmations");
    let call = json!({"callerPhoneNumber": "0612345678", "calleePhoneNumber": "0201234567",
                      "startTime": "2026-11-22T10:00:00+01:00",
                      "endTime": "2026-11-22T10:05:00+01:00"});
    let racing = (0..5).map(|_| send_upcall(&app, &path, &call));
    let answers = join_all(racing).await;
    let ran = answers.iter().filter(|answer| **answer == "201").count();
    assert_eq!(ran, 1, "the request ran once: {answers:?}");
    for answer in &answers {
        assert!(
            ["201", "201 replayed", "409 conflicting-state"].contains(answer),
            "{answers:?}"
        );
    }
    // Once all are answered the first one's answer is kept: a retry replays it.
    assert_eq!(send_upcall(&app, &path, &call).await, "201 replayed");
    assert_eq!(phone_clicks(&app, &seller, item).await, 1, "counted once");
}
