//! Users: accounts made by clients, confirmation by mail, `me`, the e-mail change.

use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{Backend, TestApp, User, expect_json, field_codes, fields, hidden_field};

both_backends!(
    a_client_creates_an_unconfirmed_account_confirmed_by_mail,
    account_without_password_chooses_one_when_confirming,
    new_accounts_are_validated_all_at_once,
    bodies_must_be_json,
    users_root_profile_and_me,
    change_email_takes_effect_when_confirmed,
    two_address_changes_at_once_leave_one_link,
    idempotency_keys_replay_and_refuse_reuse,
    an_idempotency_key_left_pending_by_a_stopped_replica_is_freed,
    user_brands,
    control_characters_are_refused_in_accounts_and_brands,
);

fn link_in(mail: &str) -> String {
    let start = mail.find("http://").expect("a link");
    mail[start..].split_whitespace().next().unwrap().to_owned()
}

async fn post_user(app: &TestApp, body: Value) -> reqwest::Response {
    app.post("/v1/users")
        .token(&app.token)
        .json(&body)
        .send()
        .await
}

/// Follows a confirmation link: the page, then its form (with a password if asked).
async fn confirm(app: &TestApp, link: &str, password: Option<&str>) -> reqwest::Response {
    let path = link
        .strip_prefix(&app.url(""))
        .expect("a link to the server");
    let page = app.get_anonymous(path).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert_eq!(
        html.contains("name=\"password\""),
        password.is_some(),
        "{html}"
    );
    let token = hidden_field(&html, "token");
    let mut form = vec![("token", token.as_str())];
    if let Some(password) = password {
        form.push(("password", password));
    }
    app.post("/accounts/confirm").form(&form).send().await
}

async fn a_client_creates_an_unconfirmed_account_confirmed_by_mail(app: TestApp) {
    let response = post_user(
        &app,
        json!({"email": "Nieuw@Souk.test", "name": "Nieuwe Gebruiker", "postcode": "1097DN",
               "phoneNumber": "+31 20 123 4567", "password": "a good password"}),
    )
    .await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let user = expect_json(response, 201).await;
    assert_eq!(user["_links"]["self"]["href"], location);
    assert_eq!(user["status"], "unconfirmed");
    assert_eq!(user["email"], "nieuw@souk.test");
    assert!(user["confirmDate"].is_null());
    let id = user["userId"].as_i64().unwrap();
    // An unconfirmed user can sign in and read.
    let (token, _) = app
        .user_token(&app.app_client, "nieuw@souk.test", "a good password", None)
        .await;
    let me = app.get_with("/v1/me", &token).await;
    assert_eq!(me.headers()["location"], format!("/v1/users/{id}"));
    let mails = app.outbox().await;
    assert_eq!(mails.len(), 1);
    assert!(mails[0].starts_with("To: nieuw@souk.test"));
    assert!(
        mails[0].contains("Bevestig je Souk-account"),
        "Dutch for nl-NL"
    );
    let link = link_in(&mails[0]);
    let done = confirm(&app, &link, None).await;
    assert_eq!(done.status(), 200);
    let user = expect_json(app.get_with(&location, &token).await, 200).await;
    assert_eq!(user["status"], "confirmed");
    assert!(user["confirmDate"].as_str().unwrap().ends_with("+00:00"));
    // A link works once.
    let again = app
        .post("/accounts/confirm")
        .form(&[("token", link.split("token=").nth(1).unwrap())])
        .send()
        .await;
    assert_eq!(again.status(), 400);
    // The same address again is a field error.
    let duplicate = post_user(
        &app,
        json!({"email": "nieuw@souk.test", "password": "another one"}),
    )
    .await;
    let body = expect_json(duplicate, 400).await;
    assert_eq!(body["details"][0]["field"], "email");
    assert_eq!(body["details"][0]["code"], "email-in-use");
}

async fn account_without_password_chooses_one_when_confirming(app: TestApp) {
    let response = post_user(&app, json!({"email": "zonder@souk.test", "name": "Zonder"})).await;
    expect_json(response, 201).await;
    let link = link_in(&app.outbox().await[0]);
    let token = link.split("token=").nth(1).unwrap().to_owned();
    let too_long = "x".repeat(201);
    for (refused, why) in [
        (Some("short"), "te kort"),
        (Some(too_long.as_str()), "te lang"),
        (Some(""), "Kies een wachtwoord"),
        (None, "Kies een wachtwoord"),
    ] {
        let mut form = vec![("token", token.as_str())];
        form.extend(refused.map(|password| ("password", password)));
        let answer = app.post("/accounts/confirm").form(&form).send().await;
        assert_eq!(answer.status(), 400);
        let html = answer.text().await.unwrap();
        assert!(html.contains(why), "{html}");
    }
    assert_eq!(
        confirm(&app, &link, Some("chosen password")).await.status(),
        200,
        "a refused password leaves the link as it was"
    );
    app.user_token(&app.app_client, "zonder@souk.test", "chosen password", None)
        .await;
    // A link past its week asks for no password: it can only be refused.
    let response = post_user(&app, json!({"email": "laat@souk.test", "name": "Laat"})).await;
    expect_json(response, 201).await;
    let late = link_in(&app.outbox().await[0]);
    app.clock.advance(8 * 86_400);
    let path = late.strip_prefix(&app.url("")).unwrap();
    let page = app.get_anonymous(path).await.text().await.unwrap();
    assert!(!page.contains("name=\"password\""), "{page}");
}

async fn new_accounts_are_validated_all_at_once(app: TestApp) {
    let response = post_user(
        &app,
        json!({"email": "not-an-address", "name": "x".repeat(31), "postcode": "1234567",
               "phoneNumber": "bel me", "password": "short"}),
    )
    .await;
    let body = expect_json(response, 400).await;
    assert_eq!(
        fields(&body),
        ["email", "password", "name", "postcode", "phoneNumber"]
    );
    let missing = expect_json(post_user(&app, json!({})).await, 400).await;
    assert_eq!(missing["details"][0]["code"], "missing");
    assert!(app.outbox().await.is_empty(), "nothing was created");
}

async fn bodies_must_be_json(app: TestApp) {
    let wrong_type = app
        .post("/v1/users")
        .token(&app.token)
        .body("text/plain", "{}")
        .send()
        .await;
    assert_eq!(
        expect_json(wrong_type, 400).await["code"],
        "incorrect-content-type"
    );
    let broken = app
        .post("/v1/users")
        .token(&app.token)
        .body("application/json", "{\"email\": \"a@b.nl\",\n \"name\": }")
        .send()
        .await;
    let body = expect_json(broken, 400).await;
    assert_eq!(body["code"], "invalid-json");
    assert!(
        body["message"].as_str().unwrap().contains("line 2"),
        "{body}"
    );
    let huge = app
        .post("/v1/users")
        .token(&app.token)
        .body(
            "application/json",
            format!("{{\"name\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)),
        )
        .send()
        .await;
    assert_eq!(expect_json(huge, 413).await["code"], "payload-too-large");
}

async fn users_root_profile_and_me(app: TestApp) {
    let root = app.get_json("/v1/users", 200).await;
    assert_eq!(root["_links"]["item"]["href"], "/v1/users/{userId}");
    assert_eq!(root["_links"]["item"]["templated"], true);
    let User {
        id: jan,
        token: jan_token,
        ..
    } = app.user("jan@souk.test").await;
    let marie_user = app.user("marie@souk.test").await;
    let (marie, marie_token) = (
        marie_user.id,
        app.token_of(&marie_user, Some("write")).await,
    );
    let own = expect_json(
        app.get_with(&format!("/v1/users/{jan}"), &jan_token).await,
        200,
    )
    .await;
    assert_eq!(own["email"], "jan@souk.test");
    let public = expect_json(
        app.get_with(&format!("/v1/users/{jan}"), &marie_token)
            .await,
        200,
    )
    .await;
    assert!(public.get("email").is_none() && public.get("phoneNumber").is_none());
    assert_eq!(public["status"], "confirmed");
    // Only the address and the phone number are private (api.md).
    assert_eq!(public["postcode"], own["postcode"]);
    assert!(public.get("postcode").is_some());
    let by_client = app.get_json(&format!("/v1/users/{jan}"), 200).await;
    assert!(by_client.get("email").is_none());
    // Marie's token lacks `read`: her own private fields stay hidden.
    let own_without_read = expect_json(
        app.get_with(&format!("/v1/users/{marie}"), &marie_token)
            .await,
        200,
    )
    .await;
    assert!(own_without_read.get("email").is_none());
    assert_eq!(
        app.get_with("/v2/me", &jan_token).await.headers()["location"],
        format!("/v2/users/{jan}")
    );
    assert_eq!(
        expect_json(app.get_with("/v1/me", &marie_token).await, 403).await["code"],
        "unauthorized"
    );
    assert_eq!(
        app.get_json("/v1/users/987654", 404).await["code"],
        "user-not-found"
    );
    assert_eq!(
        app.get_json("/v1/users/jan", 400).await["details"][0]["field"],
        "userId"
    );
}

async fn change_email_takes_effect_when_confirmed(app: TestApp) {
    let User { id: jan, token, .. } = app.user("jan@souk.test").await;
    app.create_user("taken@souk.test", "password-of-taken")
        .await;
    let change = |email: &str| {
        app.post(&format!("/v1/users/{jan}/change-email"))
            .token(&token)
            .json(&json!({"newEmail": email}))
            .send()
    };
    let body = expect_json(change("taken@souk.test").await, 400).await;
    assert_eq!(body["details"][0]["code"], "email-in-use");
    let body = expect_json(change("no address").await, 400).await;
    assert_eq!(body["details"][0]["code"], "input-invalid");
    // The address the user has already (in any case) is no one else's, and nothing to do.
    let body = expect_json(change("Jan@Souk.test").await, 400).await;
    assert_eq!(body["details"][0]["code"], "input-invalid");
    assert!(
        body["details"][0]["message"]
            .as_str()
            .unwrap()
            .contains("al je e-mailadres"),
        "{body}"
    );
    assert!(app.outbox().await.is_empty(), "no mail");
    // A mistyped address first, whose mail goes: its link is retired by the next request.
    expect_json(change("jan.typo@souk.test").await, 200).await;
    app.outbox().await;
    let body = expect_json(change("jan.nieuw@souk.test").await, 200).await;
    assert_eq!(
        body["_links"]["self"]["href"],
        format!("/v1/users/{jan}/change-email")
    );
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("bevestigingslink")
    );
    let own = expect_json(app.get_with(&format!("/v1/users/{jan}"), &token).await, 200).await;
    assert_eq!(own["email"], "jan@souk.test", "unchanged until confirmed");
    let mails = app.outbox().await;
    let mail = mails
        .iter()
        .find(|m| m.starts_with("To: jan.nieuw@souk.test"))
        .expect("a mail to the new address");
    assert_eq!(confirm(&app, &link_in(mail), None).await.status(), 200);
    let own = expect_json(app.get_with(&format!("/v1/users/{jan}"), &token).await, 200).await;
    assert_eq!(own["email"], "jan.nieuw@souk.test");
    let typo = mails
        .iter()
        .find(|m| m.starts_with("To: jan.typo@souk.test"))
        .expect("a mail to the mistyped address");
    let link = link_in(typo);
    let retired = link.split("token=").nth(1).unwrap();
    let answer = app
        .post("/accounts/confirm")
        .form(&[("token", retired)])
        .send()
        .await;
    assert_eq!(answer.status(), 400, "an earlier request's link is retired");
    let own = expect_json(app.get_with(&format!("/v1/users/{jan}"), &token).await, 200).await;
    assert_eq!(own["email"], "jan.nieuw@souk.test");

    // An account whose confirmation link went astray: confirming a new address proves it.
    let body = json!({"email": "verkeerd@souk.test", "password": "a good password"});
    let piet = expect_json(post_user(&app, body).await, 201).await["userId"]
        .as_i64()
        .unwrap();
    let (piet_token, _) = app
        .user_token(
            &app.app_client,
            "verkeerd@souk.test",
            "a good password",
            None,
        )
        .await;
    let moved = app
        .post(&format!("/v1/users/{piet}/change-email"))
        .token(&piet_token)
        .json(&json!({"newEmail": "piet@souk.test"}))
        .send()
        .await;
    expect_json(moved, 200).await;
    let mails = app.outbox().await;
    let mail = mails
        .iter()
        .find(|m| m.starts_with("To: piet@souk.test"))
        .expect("a mail to the new address");
    assert_eq!(confirm(&app, &link_in(mail), None).await.status(), 200);
    let own = app
        .get_with(&format!("/v1/users/{piet}"), &piet_token)
        .await;
    let own = expect_json(own, 200).await;
    assert_eq!(
        (&own["email"], &own["status"]),
        (&json!("piet@souk.test"), &json!("confirmed"))
    );
}

/// Two address changes at once (a double submit, a typo corrected at once) leave one link
/// that works: the second retires the first's. On PostgreSQL each once retired before the
/// other committed, so both links stayed live, and a mistyped address could take the
/// account. Ten rounds, since a round may not overlap.
async fn two_address_changes_at_once_leave_one_link(app: TestApp) {
    let User { id: jan, token, .. } = app.user("jan@souk.test").await;
    let change = |email: String| {
        app.post(&format!("/v1/users/{jan}/change-email"))
            .token(&token)
            .json(&json!({ "newEmail": email }))
            .send()
    };
    let live_links = || async {
        app.db
            .read(move |conn| {
                Box::pin(async move {
                    conn.query_one(
                        "SELECT COUNT(*) AS n FROM email_confirmations \
                         WHERE user_id = $1 AND used_at IS NULL",
                        &[souk::store::Value::Int(jan)],
                    )
                    .await?
                    .get::<i64>("n")
                })
            })
            .await
            .unwrap()
    };
    for round in 0..10 {
        let (one, other) = tokio::join!(
            change(format!("jan.{round}@souk.test")),
            change(format!("jan.{round}.typo@souk.test"))
        );
        expect_json(one, 200).await;
        expect_json(other, 200).await;
        assert_eq!(live_links().await, 1, "round {round}");
    }
}

/// Idempotency-Key on POST (shown on account creation, the POST that exists first).
async fn idempotency_keys_replay_and_refuse_reuse(app: TestApp) {
    let post = |key: &'static str, body: Value| {
        app.post("/v1/users")
            .token(&app.token)
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    let body = json!({"email": "once@souk.test", "password": "a good password"});
    let first = post("key-1", body.clone()).await;
    let location = first.headers()["location"].to_str().unwrap().to_owned();
    let first = expect_json(first, 201).await;
    let again = post("key-1", body.clone()).await;
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    assert_eq!(again.headers()["location"].to_str().unwrap(), location);
    assert_eq!(expect_json(again, 201).await, first, "the same answer");
    assert_eq!(app.outbox().await.len(), 1, "the account was created once");
    let other = post(
        "key-1",
        json!({"email": "twice@souk.test", "password": "a good password"}),
    )
    .await;
    assert_eq!(
        expect_json(other, 422).await["code"],
        "idempotency-key-reused"
    );
    // Another caller's key of the same name is another key.
    let user_token = app.user("keyholder@souk.test").await.token;
    let as_user = app
        .post("/v1/users")
        .token(&user_token)
        .header("idempotency-key", "key-1")
        .json(&body)
        .send()
        .await;
    assert_eq!(expect_json(as_user, 403).await["code"], "unauthorized");
    // A failed request keeps no answer: the retry runs again.
    let bad = json!({"email": "bad"});
    assert_eq!(
        expect_json(post("key-2", bad.clone()).await, 400).await["code"],
        "validation-failure"
    );
    assert_eq!(
        expect_json(post("key-2", bad).await, 400).await["code"],
        "validation-failure"
    );
    // A key is 1 to 255 visible ASCII characters: no spaces, nothing empty.
    for bad in ["met spatie", "", &"k".repeat(256)] {
        let refused = app
            .post("/v1/users")
            .token(&app.token)
            .header("idempotency-key", bad)
            .json(&json!({"email": "spatie@souk.test", "password": "a good password"}))
            .send()
            .await;
        assert_eq!(
            expect_json(refused, 400).await["code"],
            "invalid-request",
            "{bad:?}"
        );
    }
    assert_eq!(app.outbox().await.len(), 1, "nothing was created");
    // After 24 hours the key is forgotten and the request runs anew.
    app.clock.advance(86_401);
    let token = app.client_token(&app.app_client, None).await;
    let late = app
        .post("/v1/users")
        .token(&token)
        .header("idempotency-key", "key-1")
        .json(&body)
        .send()
        .await;
    assert_eq!(
        expect_json(late, 400).await["details"][0]["code"],
        "email-in-use"
    );
}

async fn user_brands(app: TestApp) {
    let User {
        id: dealer, token, ..
    } = app.user("dealer@souk.test").await;
    let path = format!("/v2/users/{dealer}/brands");
    let empty = app.get_json(&path, 200).await;
    assert_eq!(empty["brands"], json!([]));
    assert_eq!(empty["_links"]["self"]["href"], path);
    assert!(
        empty["_links"]["describedby"]["href"]
            .as_str()
            .unwrap()
            .ends_with("/docs/resources/brands")
    );
    let set = |body: Value| app.put(&path).token(&token).json(&body).send();
    let body = expect_json(set(json!({"brands": ["Alfa Romeo", " Ford "]})).await, 200).await;
    assert_eq!(body["brands"], json!(["Alfa Romeo", "Ford"]));
    assert_eq!(
        app.get_json(&format!("/v1/users/{dealer}/brands"), 200)
            .await["brands"],
        json!(["Alfa Romeo", "Ford"])
    );
    // Replacements at once: each one whole, the last to commit kept.
    let lists: Vec<Value> = (0..5)
        .map(|n| json!([format!("Merk {n}"), format!("Ander {n}")]))
        .collect();
    let racing = lists.iter().map(|list| {
        let set = &set;
        async move { set(json!({"brands": list})).await.status().as_u16() }
    });
    assert_eq!(futures_util::future::join_all(racing).await, [200; 5]);
    let kept = app.get_json(&path, 200).await["brands"].clone();
    assert!(lists.contains(&kept), "{kept}");
    expect_json(set(json!({"brands": ["Alfa Romeo", "Ford"]})).await, 200).await;
    let refused = expect_json(set(json!({"brands": ["Ford", "FORD", ""]})).await, 400).await;
    assert_eq!(fields(&refused), ["brands[1]", "brands[2]"]);
    let refused = expect_json(set(json!({"brands": "Ford"})).await, 400).await;
    assert_eq!(fields(&refused), ["brands"]);
    assert_eq!(
        app.get_json(&path, 200).await["brands"],
        json!(["Alfa Romeo", "Ford"]),
        "unchanged"
    );
    let user = app.get_json(&format!("/v1/users/{dealer}"), 200).await;
    assert_eq!(
        user["_links"]["svc:user-brands"]["href"],
        format!("/v1/users/{dealer}/brands")
    );
    // A client finds the user's online ads from the user.
    let ads = user["_links"]["svc:user-advertisements"]["href"]
        .as_str()
        .unwrap();
    assert_eq!(ads, format!("/v1/users/{dealer}/advertisements"));
    assert_eq!(app.get_json(ads, 200).await["totalCount"], 0);
    assert_eq!(
        app.get_json("/v2/users/424242/brands", 404).await["code"],
        "user-not-found"
    );
    // Names of 1 to 50 characters, at most 50 of them, the list required.
    let fifty = "x".repeat(50);
    let body = expect_json(set(json!({"brands": [fifty]})).await, 200).await;
    assert_eq!(body["brands"], json!([fifty]));
    let too_long = expect_json(set(json!({"brands": ["Ford", "x".repeat(51)]})).await, 400).await;
    assert_eq!(too_long["details"][0]["field"], "brands[1]");
    assert_eq!(too_long["details"][0]["code"], "input-invalid");
    let many: Vec<String> = (0..51).map(|i| format!("Merk {i}")).collect();
    let too_many = expect_json(set(json!({ "brands": many })).await, 400).await;
    assert_eq!(too_many["details"][0]["field"], "brands");
    assert_eq!(too_many["details"][0]["code"], "too-many");
    // Refused whole: a megabyte of bad brands is one field error, not one each.
    let garbage = vec![""; 200_000];
    let refused = expect_json(set(json!({ "brands": garbage })).await, 400).await;
    assert_eq!(refused["details"].as_array().unwrap().len(), 1, "{refused}");
    assert_eq!(refused["details"][0]["code"], "too-many");
    let missing = expect_json(set(json!({})).await, 400).await;
    assert_eq!(missing["details"][0]["code"], "missing");
    assert_eq!(app.get_json(&path, 200).await["brands"], json!([fifty]));
    // Another user, or a client, may not set them, and nothing changes.
    let other = app.user("ander@souk.test").await.token;
    for token in [other.as_str(), app.token.as_str()] {
        let refused = app
            .put(&path)
            .token(token)
            .json(&json!({"brands": ["Gekaapt"]}))
            .send()
            .await;
        assert_eq!(expect_json(refused, 403).await["code"], "unauthorized");
    }
    assert_eq!(app.get_json(&path, 200).await["brands"], json!([fifty]));
}

/// A request whose work never ends (here: an image import from a server that does not
/// answer) frees its
/// Idempotency-Key when its work is given up, at twice the request timeout (the client had
/// its 408 at the timeout): the retry runs again instead of meeting 409 for a day. While
/// the first request's work runs, the same key is 409.
async fn a_request_that_times_out_frees_its_key(backend: Backend, test: &str) {
    // An image server that accepts connections and never says a word.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let allowed = format!("localhost:{port}");
    let app = TestApp::start_with(
        backend,
        test,
        &[
            ("SOUK_REQUEST_TIMEOUT_SECS", "1"),
            ("SOUK_IMAGE_FETCH_ALLOW", &allowed),
            ("SOUK_IMAGE_FETCH_TIMEOUT_SECS", "30"),
        ],
    )
    .await;
    let (seller, ad) = crate::images::new_ad(&app).await;
    let import = json!({"urls": [format!("http://localhost:{port}/photo.jpg")]});
    let post = || {
        app.post(&format!("{ad}/images"))
            .token(&seller.token)
            .header("idempotency-key", "traag")
            .json(&import)
            .send()
    };
    let keys = || async {
        app.db
            .read(|conn| {
                Box::pin(async move {
                    conn.query_one("SELECT COUNT(*) AS n FROM idempotency_keys", &[])
                        .await?
                        .get::<i64>("n")
                })
            })
            .await
            .unwrap()
    };
    let first = tokio::spawn(post());
    while keys().await == 0 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let meanwhile = post().await;
    assert_eq!(
        expect_json(meanwhile, 409).await["code"],
        "conflicting-state",
        "the first request still runs"
    );
    let first = first.await.unwrap();
    assert_eq!(expect_json(first, 408).await["code"], "request-timeout");
    // The key is freed (by a task of its own, once the work is given up).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while keys().await != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the key stays pending"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The retry runs again: with the server gone, the import now fails at once.
    server.abort();
    let _ = server.await;
    let retry = expect_json(post().await, 400).await;
    assert_eq!(retry["details"][0]["field"], "urls[0]", "{retry}");
    assert_eq!(retry["details"][0]["code"], "not-answering", "{retry}");
}

mod a_request_that_times_out_frees_its_key {
    use crate::helpers::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::a_request_that_times_out_frees_its_key(Backend::Sqlite, module_path!()).await;
    }

    #[tokio::test]
    #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
    async fn postgres() {
        super::a_request_that_times_out_frees_its_key(Backend::Postgres, module_path!()).await;
    }
}

/// A write that ends after the request timeout (its user's row is held by another
/// connection for 1.8 s; the timeout is 1 s) still commits, and its answer is kept for its
/// Idempotency-Key: the retry replays it instead of making a second saved search. (When the
/// key was freed as the request was dropped, the write rolled back on PostgreSQL and the
/// retry was no replay; on SQLite, whose queued write committed, the retry made a second.)
async fn a_write_that_outlasts_the_timeout_keeps_its_answer(backend: Backend, test: &str) {
    let app = TestApp::start_with(backend, test, &[("SOUK_REQUEST_TIMEOUT_SECS", "1")]).await;
    let user = app.user("geduldig@souk.test").await;
    let elsewhere = souk::store::Db::open(&app.database_url, &Default::default())
        .await
        .unwrap();
    let id = user.id;
    let blocker = tokio::spawn(async move {
        elsewhere
            .write(move |conn| {
                Box::pin(async move {
                    conn.execute(
                        "UPDATE users SET name = name WHERE user_id = $1",
                        &[souk::store::Value::Int(id)],
                    )
                    .await?;
                    tokio::time::sleep(std::time::Duration::from_millis(1_800)).await;
                    Ok::<_, souk::store::DbError>(())
                })
            })
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let post = || {
        app.post("/v1/savedsearches")
            .token(&user.token)
            .header("idempotency-key", "geduld")
            .json(&json!({"searchRequest": {"query": "fiets"}}))
            .send()
    };
    let first = post().await;
    assert_eq!(expect_json(first, 408).await["code"], "request-timeout");
    blocker.await.unwrap().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let retry = loop {
        let retry = post().await;
        if retry.status() != 409 {
            break retry;
        }
        assert!(std::time::Instant::now() < deadline, "still running");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(retry.headers()["idempotency-replayed"], "true");
    expect_json(retry, 201).await;
    let listed = expect_json(app.get_with("/v1/savedsearches", &user.token).await, 200).await;
    assert_eq!(listed["totalCount"], 1);
}

/// The write above runs on the other connection's row lock, which SQLite has not (its
/// one writer would hold up the request's claim of the key too).
mod a_write_that_outlasts_the_timeout_keeps_its_answer {
    use crate::helpers::Backend;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
    async fn postgres() {
        super::a_write_that_outlasts_the_timeout_keeps_its_answer(
            Backend::Postgres,
            module_path!(),
        )
        .await;
    }
}

/// A NUL cannot be stored on PostgreSQL (it was a 500 there): names, addresses and brands
/// with control characters are refused, and nothing changes.
async fn control_characters_are_refused_in_accounts_and_brands(app: TestApp) {
    let refused = expect_json(
        post_user(
            &app,
            json!({"email": "nul\u{0}@souk.test", "name": "Jan\u{0}", "password": "a good password"}),
        )
        .await,
        400,
    )
    .await;
    assert_eq!(
        field_codes(&refused),
        [
            ("email".to_owned(), "input-invalid".to_owned()),
            ("name".to_owned(), "input-invalid".to_owned())
        ]
    );
    assert!(app.outbox().await.is_empty(), "nothing was created");
    let User { id: jan, token, .. } = app.user("jan@souk.test").await;
    let changed = app
        .post(&format!("/v1/users/{jan}/change-email"))
        .token(&token)
        .json(&json!({"newEmail": "jan\u{0}@souk.test"}))
        .send()
        .await;
    assert_eq!(
        expect_json(changed, 400).await["details"][0]["code"],
        "input-invalid"
    );
    assert!(app.outbox().await.is_empty(), "no confirmation was mailed");
    let path = format!("/v1/users/{jan}/brands");
    let set = |brands: Value| {
        app.put(&path)
            .token(&token)
            .json(&json!({ "brands": brands }))
            .send()
    };
    expect_json(set(json!(["Ford"])).await, 200).await;
    let refused = expect_json(set(json!(["Alfa\u{0}Romeo", "Fiat\nPunto"])).await, 400).await;
    assert_eq!(fields(&refused), ["brands[0]", "brands[1]"]);
    assert_eq!(app.get_json(&path, 200).await["brands"], json!(["Ford"]));
    // What shows nothing is no name and no brand; at a name's ends it is trimmed away.
    let blank = expect_json(set(json!(["\u{200B}"])).await, 400).await;
    assert_eq!(fields(&blank), ["brands[0]"]);
    let nameless = json!({"email": "leeg@souk.test", "name": "\u{200B}\u{2060}"});
    let blank = expect_json(post_user(&app, nameless).await, 400).await;
    assert_eq!(fields(&blank), ["name"]);
    let padded = json!({"email": "piet@souk.test", "name": " \u{FEFF}Piet\u{200B} "});
    let created = expect_json(post_user(&app, padded).await, 201).await;
    let shown = app
        .get_json(&format!("/v1/users/{}", created["userId"]), 200)
        .await;
    assert_eq!(shown["name"], "Piet");
}

/// A replica that stops between claiming a key and keeping the answer leaves the claim
/// pending. No request's work runs longer than twice the request timeout (30 s here), so
/// after that and a minute more (the replicas' clocks may be that far apart) the claim is
/// taken for abandoned and a retry runs; before, the key is still taken.
async fn an_idempotency_key_left_pending_by_a_stopped_replica_is_freed(app: TestApp) {
    use souk::store::idempotency::{Forget, claim};

    let scope_key = format!("{}/-/left-behind", app.app_client.id);
    let now = app.clock.now();
    app.db
        .write(move |conn| {
            Box::pin(async move {
                let forget = Forget {
                    expired_before: now - 86_400,
                    abandoned_before: now - 60,
                };
                claim(
                    conn,
                    &scope_key,
                    "the stopped replica's request",
                    now,
                    forget,
                )
                .await
            })
        })
        .await
        .unwrap();
    let post = || {
        app.post("/v1/users")
            .token(&app.token)
            .header("idempotency-key", "left-behind")
            .json(&json!({"email": "late@souk.test", "password": "a good password"}))
            .send()
    };
    app.clock.advance(119);
    let early = post().await;
    assert_eq!(
        expect_json(early, 422).await["code"],
        "idempotency-key-reused",
        "the claim still holds the key"
    );
    assert!(app.outbox().await.is_empty(), "nothing ran");
    app.clock.advance(2);
    let late = post().await;
    expect_json(late, 201).await;
    assert_eq!(app.outbox().await.len(), 1, "the retry ran, once");
}
