//! The authorization server: every negative case of oauth.md (numbered as there), on both
//! backends. The helpers here authorize, exchange and refresh; each file holds one topic.

mod authorize;
mod codes;
mod refresh;
mod token_endpoint;
mod tokens;

use crate::helpers::{TestApp, TestClient, encode, expect_json, expect_oauth_error, query_value};

pub const TOKEN: &str = "/accounts/oauth/token";

pub const EMAIL: &str = "jan@souk.test";
pub const PASSWORD: &str = "password-of-jan";

pub fn authorize_query(client: &TestClient, extra: &str) -> String {
    format!(
        "response_type=code&client_id={}&redirect_uri={}{extra}",
        client.id,
        encode(&client.redirect_uri)
    )
}

pub async fn code_for(app: &TestApp, client: &TestClient, extra: &str) -> String {
    let landed = app
        .authorize(&authorize_query(client, extra), EMAIL, PASSWORD)
        .await;
    query_value(&landed, "code").unwrap()
}

pub async fn exchange(
    app: &TestApp,
    client: &TestClient,
    code: &str,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut params = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", client.redirect_uri.as_str()),
    ];
    params.extend_from_slice(extra);
    app.token_request(client, &params).await
}

pub async fn refresh(
    app: &TestApp,
    client: &TestClient,
    token: &str,
    scope: Option<&str>,
) -> reqwest::Response {
    let mut params = vec![("grant_type", "refresh_token"), ("refresh_token", token)];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    app.token_request(client, &params).await
}

/// Two token requests with one grant (a code, a refresh token), sent at once: one wins, the
/// other is a reuse (400 `invalid_grant`), which revokes the family, so the winner's tokens
/// stop working too (cases 18 and 26).
pub async fn one_wins_and_the_family_is_revoked(
    app: &TestApp,
    client: &TestClient,
    (a, b): (reqwest::Response, reqwest::Response),
) {
    let (winner, loser) = if a.status() == 200 { (a, b) } else { (b, a) };
    let winner = expect_json(winner, 200).await;
    expect_oauth_error(loser, 400, "invalid_grant").await;
    let access = winner["access_token"].as_str().unwrap();
    let status = app.get_with("/v1/me", access).await.status();
    assert_eq!(status, 401, "the winner's access token");
    let successor = winner["refresh_token"].as_str().unwrap();
    expect_oauth_error(
        refresh(app, client, successor, None).await,
        400,
        "invalid_grant",
    )
    .await;
}
