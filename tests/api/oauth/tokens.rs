//! Tokens at rest and in use: nothing raw is stored, bearer tokens on the resource API,
//! revocation (here and elsewhere), introspection and the metadata.

use reqwest::Method;
use souk::oauth::secret;

use super::{EMAIL, PASSWORD, authorize_query, code_for, exchange};
use crate::both_backends;
use crate::helpers::{TestApp, TestClient, expect_json, expect_oauth_error, session_cookie};

both_backends!(
    no_raw_secret_is_stored,
    bearer_tokens_on_the_resource_api,
    revocation_elsewhere_takes_effect_within_five_seconds,
    revocation_introspection_and_metadata,
    revocation_and_introspection_take_no_query,
);

/// Case 29: a dump of every table holds no raw token, code, secret or password.
async fn no_raw_secret_is_stored(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let code = code_for(&app, &client, "").await;
    let body = expect_json(exchange(&app, &client, &code, &[]).await, 200).await;
    let mut raw = vec![
        code,
        body["access_token"].as_str().unwrap().to_owned(),
        body["refresh_token"].as_str().unwrap().to_owned(),
        client.secret.clone().unwrap(),
        app.token.clone(),
        PASSWORD.to_owned(),
    ];
    let login = app.authorize_page(&authorize_query(&client, "")).await;
    raw.push(
        session_cookie(&login)
            .trim_start_matches("souk_session=")
            .to_owned(),
    );
    let tables = [
        "users",
        "clients",
        "authorization_codes",
        "access_tokens",
        "refresh_tokens",
        "consents",
        "browser_sessions",
        "login_failures",
        "email_confirmations",
    ];
    let dump = app
        .db
        .read(move |conn| {
            Box::pin(async move {
                let mut text = String::new();
                for table in tables {
                    for row in conn.query(&format!("SELECT * FROM {table}"), &[]).await? {
                        text.push_str(&format!("{row:?}\n"));
                    }
                }
                Ok::<_, souk::store::DbError>(text)
            })
        })
        .await
        .unwrap();
    assert!(
        dump.contains(&secret::hash(&raw[1])),
        "the hashes are there"
    );
    for secret in raw {
        assert!(!dump.contains(&secret), "a raw secret is stored: {secret}");
    }
}

/// Case 30.
async fn bearer_tokens_on_the_resource_api(app: TestApp) {
    let token = app.token.clone();
    expect_json(app.get_with("/v1/categories", &token).await, 200).await;
    expect_json(
        app.get_anonymous(&format!("/v1/categories?access_token={token}"))
            .await,
        200,
    )
    .await;
    for scheme in ["bearer", "BEARER", "BeArEr"] {
        let response = app
            .request(Method::GET, "/v1/categories")
            .header("authorization", format!("{scheme} {token}"))
            .send()
            .await;
        assert_eq!(response.status(), 200, "{scheme}");
    }
    let both = app
        .get_with(&format!("/v1/categories?access_token={token}"), &token)
        .await;
    assert_eq!(expect_json(both, 400).await["code"], "invalid-request");
    let missing = app.get_anonymous("/v1/categories").await;
    assert_eq!(
        missing.headers()["www-authenticate"],
        "Bearer realm=\"souk\", error=\"invalid_token\"",
        "oauth.md: a missing token is invalid_token too"
    );
    assert_eq!(expect_json(missing, 401).await["code"], "unauthenticated");
    // Another scheme, or the scheme without a token, is a missing token too.
    for authorization in ["Basic eA==", "Bearer ", "Bearer"] {
        let malformed = app
            .request(Method::GET, "/v1/categories")
            .header("authorization", authorization)
            .send()
            .await;
        assert_eq!(
            malformed.headers()["www-authenticate"],
            "Bearer realm=\"souk\", error=\"invalid_token\"",
            "{authorization}"
        );
        expect_json(malformed, 401).await;
    }
    let unknown = app.get_with("/v1/categories", "not-a-token").await;
    assert!(
        unknown.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("error=\"invalid_token\"")
    );
    expect_json(unknown, 401).await;
    // Roots and docs need no token.
    expect_json(app.get_anonymous("/v1").await, 200).await;
    assert_eq!(app.get_anonymous("/docs").await.status(), 200);
    // Expired: the clock past 24 hours.
    app.clock.advance(86_400);
    let expired = app.get_with("/v1/categories", &token).await;
    assert!(
        expired.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );
    expect_json(expired, 401).await;
}

/// A revocation by another replica (here: straight in the database) takes effect within
/// the cache bound; a revocation through this replica at once.
async fn revocation_elsewhere_takes_effect_within_five_seconds(app: TestApp) {
    let token = app.client_token(&app.app_client, None).await;
    expect_json(app.get_with("/v1/categories", &token).await, 200).await;
    let hash = secret::hash(&token);
    let now = app.clock.now();
    app.db
        .write(move |conn| {
            Box::pin(async move { souk::store::oauth::revoke_access_token(conn, &hash, now).await })
        })
        .await
        .unwrap();
    // Refusals that revoke nothing here leave this replica's lookups be (they emptied
    // them, so a stream of garbage grants sent every request to the database): the
    // revocation elsewhere still waits for the lookup to age.
    let client = app.app_client.clone();
    let garbage = app
        .token_request(
            &client,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", "garbage"),
            ],
        )
        .await;
    expect_oauth_error(garbage, 400, "invalid_grant").await;
    // An unknown token, and this one, revoked already: nothing left to revoke.
    for token in ["unknown", token.as_str()] {
        expect_json(revoke(&app, &client, token).await, 200).await;
    }
    expect_json(app.get_with("/v1/categories", &token).await, 200).await;
    app.clock.advance(souk::access::CACHE_SECONDS);
    expect_json(app.get_with("/v1/categories", &token).await, 401).await;
}

/// `client` revokes `token` at the revocation endpoint (RFC 7009).
async fn revoke(app: &TestApp, client: &TestClient, token: &str) -> reqwest::Response {
    app.post("/accounts/oauth/revoke")
        .basic_auth(&client.id, client.secret.as_deref())
        .form(&[("token", token)])
        .send()
        .await
}

async fn revocation_introspection_and_metadata(app: TestApp) {
    let client = app.app_client.clone();
    let token = app.client_token(&client, None).await;
    let introspect = |token: String| {
        let app = &app;
        let client = client.clone();
        async move {
            let response = app
                .post("/accounts/oauth/introspect")
                .basic_auth(&client.id, client.secret.as_deref())
                .form(&[("token", token)])
                .send()
                .await;
            expect_json(response, 200).await
        }
    };
    let active = introspect(token.clone()).await;
    assert_eq!(active["active"], true);
    assert_eq!(active["client_id"], client.id);
    assert_eq!(active["scope"], "create_account confirm_upcall webhooks");
    assert_eq!(active["token_type"], "bearer", "RFC 6749 §5.1's type");
    expect_json(app.get_with("/v1/categories", &token).await, 200).await;
    expect_json(revoke(&app, &client, &token).await, 200).await;
    expect_json(app.get_with("/v1/categories", &token).await, 401).await;
    assert_eq!(introspect(token).await["active"], false);
    // Case 30: a user's token revoked at the endpoint is refused as `invalid_token`, and
    // its refresh token with it when that one is revoked (the family goes).
    app.create_user(EMAIL, PASSWORD).await;
    let (access, refresh) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    assert_eq!(app.get_with("/v1/me", &access).await.status(), 302);
    let live = introspect(refresh.clone()).await;
    assert_eq!(live["active"], true);
    assert!(
        live.get("token_type").is_none(),
        "a refresh token has no §5.1 type"
    );
    expect_json(revoke(&app, &client, &refresh).await, 200).await;
    let refused = app.get_with("/v1/me", &access).await;
    assert_eq!(
        refused.headers()["www-authenticate"],
        "Bearer realm=\"souk\", error=\"invalid_token\""
    );
    expect_json(refused, 401).await;
    assert_eq!(introspect("unknown".into()).await["active"], false);
    let metadata = expect_json(
        app.get_anonymous("/.well-known/oauth-authorization-server")
            .await,
        200,
    )
    .await;
    assert_eq!(metadata["token_endpoint"], app.url("/accounts/oauth/token"));
    assert_eq!(metadata["code_challenge_methods_supported"][0], "S256");
}

/// Revocation and introspection take their parameters in a form body (RFC 7009, 7662): a
/// query is refused, and the token in it is left as it was. (Only the token endpoint reads
/// a query, for clients of the original.)
async fn revocation_and_introspection_take_no_query(app: TestApp) {
    let client = app.app_client.clone();
    let token = app.client_token(&client, None).await;
    for path in ["/accounts/oauth/revoke", "/accounts/oauth/introspect"] {
        let response = app
            .post(&format!("{path}?token={token}"))
            .basic_auth(&client.id, client.secret.as_deref())
            .form(&[("unused", "")])
            .send()
            .await;
        let refused = expect_oauth_error(response, 400, "invalid_request").await;
        assert!(
            refused["error_description"]
                .as_str()
                .unwrap()
                .contains("form body"),
            "{refused}"
        );
    }
    expect_json(app.get_with("/v1/categories", &token).await, 200).await;
    expect_json(revoke(&app, &client, &token).await, 200).await;
    expect_json(app.get_with("/v1/categories", &token).await, 401).await;
}
