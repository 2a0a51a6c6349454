//! Authorization codes: single use, bound to their client and redirect URI, one winner of
//! concurrent exchanges, garbage refused, and PKCE.

use souk::accounts::ClientSpec;
use souk::oauth::secret;

use super::{
    EMAIL, PASSWORD, TOKEN, authorize_query, code_for, exchange, one_wins_and_the_family_is_revoked,
};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json, expect_oauth_error, location, query_value};

both_backends!(
    codes_are_single_use_and_bound,
    concurrent_code_exchange_has_one_winner,
    garbage_codes_and_refresh_tokens_are_invalid_grant,
    pkce,
);

/// Cases 18, 20, 21, 22.
async fn codes_are_single_use_and_bound(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    // 18: a second use fails and revokes what the first issued.
    let code = code_for(&app, &client, "").await;
    let first = expect_json(exchange(&app, &client, &code, &[]).await, 200).await;
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(app.get_with("/v1/me", access).await.status(), 302);
    expect_oauth_error(
        exchange(&app, &client, &code, &[]).await,
        400,
        "invalid_grant",
    )
    .await;
    assert_eq!(
        app.get_with("/v1/me", access).await.status(),
        401,
        "revoked after reuse"
    );
    let refreshed = app
        .token_request(
            &client,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", first["refresh_token"].as_str().unwrap()),
            ],
        )
        .await;
    expect_oauth_error(refreshed, 400, "invalid_grant").await;
    // 20: an expired code.
    let code = code_for(&app, &client, "").await;
    app.clock.advance(61);
    expect_oauth_error(
        exchange(&app, &client, &code, &[]).await,
        400,
        "invalid_grant",
    )
    .await;
    // 21: client A's code with client B's credentials.
    let other = app
        .register_client(ClientSpec {
            name: "Other".into(),
            redirect_uris: vec![client.redirect_uri.clone()],
            ..ClientSpec::default()
        })
        .await;
    let code = code_for(&app, &client, "").await;
    expect_oauth_error(
        exchange(&app, &other, &code, &[]).await,
        400,
        "invalid_grant",
    )
    .await;
    // 22: redirect_uri missing, or different from step 1.
    let response = app
        .token_request(
            &client,
            &[("grant_type", "authorization_code"), ("code", &code)],
        )
        .await;
    expect_oauth_error(response, 400, "invalid_grant").await;
    let code = code_for(&app, &client, "").await;
    let response = app
        .token_request(
            &client,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "https://client.test/cb?x=1"),
            ],
        )
        .await;
    expect_oauth_error(response, 400, "invalid_grant").await;
}

/// Case 19.
async fn concurrent_code_exchange_has_one_winner(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let code = code_for(&app, &client, "").await;
    let answers = tokio::join!(
        exchange(&app, &client, &code, &[]),
        exchange(&app, &client, &code, &[])
    );
    // The second use is a replay (case 18): what the first one got stops working too.
    one_wins_and_the_family_is_revoked(&app, &client, answers).await;
}

/// Case 23.
async fn garbage_codes_and_refresh_tokens_are_invalid_grant(app: TestApp) {
    let client = &app.app_client;
    let huge = "A".repeat(100_000);
    for value in [
        "",
        "garbage",
        "\u{0}\u{1}'; DROP TABLE users; --",
        huge.as_str(),
    ] {
        let response = app
            .token_request(
                client,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", value),
                    ("redirect_uri", &client.redirect_uri),
                ],
            )
            .await;
        expect_oauth_error(response, 400, "invalid_grant").await;
        let response = app
            .token_request(
                client,
                &[("grant_type", "refresh_token"), ("refresh_token", value)],
            )
            .await;
        expect_oauth_error(response, 400, "invalid_grant").await;
    }
}

/// Case 24.
async fn pkce(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let verifier = "v".repeat(64);
    let challenge = secret::s256(&verifier);
    let with_challenge = format!("&code_challenge={challenge}&code_challenge_method=S256");
    let code = code_for(&app, &client, &with_challenge).await;
    expect_json(
        exchange(&app, &client, &code, &[("code_verifier", &verifier)]).await,
        200,
    )
    .await;
    for bad in [
        None,
        Some("w".repeat(64)),
        Some("v".repeat(42)),
        Some("v".repeat(129)),
    ] {
        let code = code_for(&app, &client, &with_challenge).await;
        let extra: Vec<(&str, &str)> = bad
            .as_deref()
            .map(|v| vec![("code_verifier", v)])
            .unwrap_or_default();
        expect_oauth_error(
            exchange(&app, &client, &code, &extra).await,
            400,
            "invalid_grant",
        )
        .await;
    }
    // A verifier whose challenge matches but that breaks RFC 7636 §4.1 (43 to 128
    // characters of [A-Za-z0-9-._~]): refused although its challenge matches.
    for bad in [
        "v".repeat(42),
        "v".repeat(129),
        format!("{}+", "v".repeat(42)),
    ] {
        let challenge = secret::s256(&bad);
        let with_challenge = format!("&code_challenge={challenge}&code_challenge_method=S256");
        let code = code_for(&app, &client, &with_challenge).await;
        expect_oauth_error(
            exchange(&app, &client, &code, &[("code_verifier", &bad)]).await,
            400,
            "invalid_grant",
        )
        .await;
    }
    // A verifier without a challenge: downgrade protection.
    let code = code_for(&app, &client, "").await;
    expect_oauth_error(
        exchange(&app, &client, &code, &[("code_verifier", &verifier)]).await,
        400,
        "invalid_grant",
    )
    .await;
    // Method plain is refused at the authorization endpoint.
    let response = app
        .authorize_page(&authorize_query(
            &client,
            &format!("&code_challenge={verifier}&code_challenge_method=plain"),
        ))
        .await;
    assert_eq!(
        query_value(&location(&response), "error").as_deref(),
        Some("invalid_request")
    );
    // A public client must use PKCE, and then needs no secret (one sent empty is none:
    // RFC 6749 §3.1 counts an empty parameter as omitted).
    let public = app
        .register_client(ClientSpec {
            name: "Mobile".into(),
            redirect_uris: vec!["https://mobile.test/cb".into()],
            public: true,
            ..ClientSpec::default()
        })
        .await;
    let response = app.authorize_page(&authorize_query(&public, "")).await;
    assert_eq!(
        query_value(&location(&response), "error").as_deref(),
        Some("invalid_request")
    );
    let code = code_for(&app, &public, &with_challenge).await;
    let response = app
        .post(TOKEN)
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &public.redirect_uri),
            ("client_id", &public.id),
            ("client_secret", ""),
            ("code_verifier", &verifier),
        ])
        .send()
        .await;
    expect_json(response, 200).await;
    // Nor is an empty password in Basic, the other way to send the same.
    let code = code_for(&app, &public, &with_challenge).await;
    let response = app
        .post(TOKEN)
        .basic_auth(&public.id, Some(""))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &public.redirect_uri),
            ("code_verifier", &verifier),
        ])
        .send()
        .await;
    expect_json(response, 200).await;
}
