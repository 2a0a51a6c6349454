//! The authorization server: every negative case of oauth.md (numbered as there), on both
//! backends.

use serde_json::Value;
use souk::accounts::ClientSpec;
use souk::oauth::secret;

use crate::both_backends;
use crate::helpers::{
    TestApp, TestClient, encode, expect_json, hidden_field, location, query_value, session_cookie,
};

const EMAIL: &str = "jan@souk.test";
const PASSWORD: &str = "password-of-jan";

both_backends!(
    authorize_refuses_untrusted_clients_and_redirects_on_a_page,
    authorize_redirects_errors_with_state_and_extras,
    authorize_defaults_scopes_and_honours_denial,
    consent_needs_csrf_and_session,
    sign_in_is_throttled_with_one_message,
    pages_carry_no_store_and_anti_framing,
    client_authentication,
    grant_type_and_method_errors,
    codes_are_single_use_and_bound,
    concurrent_code_exchange_has_one_winner,
    garbage_codes_and_refresh_tokens_are_invalid_grant,
    pkce,
    refresh_rotation_and_scope,
    twenty_live_refresh_tokens_per_user_and_client,
    refresh_reuse_revokes_the_family,
    client_credentials_tokens,
    token_responses_are_never_cached,
    no_raw_secret_is_stored,
    bearer_tokens_on_the_resource_api,
    revocation_elsewhere_takes_effect_within_five_seconds,
    revocation_introspection_and_metadata,
    spent_tokens_are_forgotten,
    control_characters_are_unknown_not_errors,
);

fn authorize_query(client: &TestClient, extra: &str) -> String {
    format!(
        "response_type=code&client_id={}&redirect_uri={}{extra}",
        client.id,
        encode(&client.redirect_uri)
    )
}

async fn raw_authorize(app: &TestApp, query: &str) -> reqwest::Response {
    app.client
        .get(app.url(&format!("/accounts/oauth/authorize?{query}")))
        .send()
        .await
        .unwrap()
}

/// Cases 1, 2, 4, 8: no redirect to an untrusted address.
async fn authorize_refuses_untrusted_clients_and_redirects_on_a_page(app: TestApp) {
    let tenant = app
        .register_client(ClientSpec {
            name: "Tenant app".into(),
            redirect_uris: vec!["https://tenant.test/cb?tenant=a".into()],
            ..ClientSpec::default()
        })
        .await;
    let id = &app.app_client.id;
    let cases = [
        // 1: unknown client
        "response_type=code&client_id=nobody&redirect_uri=https%3A%2F%2Fclient.test%2Fcb"
            .to_owned(),
        // 2: unregistered and near misses
        format!("response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fevil.test%2Fcb"),
        format!("response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb%2F"),
        format!("response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2FCb"),
        format!(
            "response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%3A444%2Fcb"
        ),
        format!("response_type=code&client_id={id}&redirect_uri=http%3A%2F%2Fclient.test%2Fcb"),
        format!(
            "response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb%23frag"
        ),
        format!(
            "response_type=code&client_id={}&redirect_uri={}",
            tenant.id,
            encode("https://tenant.test/cb?tenant=b")
        ),
        // 4: a code parameter inside the redirect_uri
        format!(
            "response_type=code&client_id={id}&redirect_uri={}",
            encode("https://client.test/cb?code=x")
        ),
        // 8: repeated client_id or redirect_uri
        format!(
            "response_type=code&client_id={id}&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb"
        ),
        format!(
            "response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb&redirect_uri=https%3A%2F%2Fclient.test%2Fcb"
        ),
        // no redirect_uri at all
        format!("response_type=code&client_id={id}"),
    ];
    for query in cases {
        let response = raw_authorize(&app, &query).await;
        assert_eq!(response.status(), 400, "{query}");
        assert!(response.headers().get("location").is_none(), "{query}");
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
    }
    // 8: an unknown parameter is ignored.
    let response = raw_authorize(&app, &authorize_query(&app.app_client, "&colour=blue")).await;
    assert_eq!(response.status(), 200);
}

/// Cases 3, 5, 6, 7: errors go back to the client with `state` and the extra parameters.
async fn authorize_redirects_errors_with_state_and_extras(app: TestApp) {
    let id = &app.app_client.id;
    let with_extras = encode("https://client.test/cb?lang=nl&ref=a%26b");
    let state = format!("{}{}", "x".repeat(480), "ä &=+/?#%20\"'<>");
    let encoded_state = encode(&state);
    let cases = [
        (
            format!("client_id={id}&redirect_uri={with_extras}&state={encoded_state}"),
            "invalid_request",
        ),
        (
            format!(
                "response_type=token&client_id={id}&redirect_uri={with_extras}&state={encoded_state}"
            ),
            "unsupported_response_type",
        ),
        (
            format!(
                "response_type=code&scope=read+admin&client_id={id}&redirect_uri={with_extras}&state={encoded_state}"
            ),
            "invalid_scope",
        ),
        (
            format!("response_type=code&state=a&state=b&client_id={id}&redirect_uri={with_extras}"),
            "invalid_request",
        ),
        (
            format!(
                "response_type=code&code_challenge_method=plain&code_challenge={}&client_id={id}&redirect_uri={with_extras}&state={encoded_state}",
                "a".repeat(43)
            ),
            "invalid_request",
        ),
    ];
    for (query, error) in cases {
        let response = raw_authorize(&app, &query).await;
        assert_eq!(response.status(), 302, "{query}");
        let to = location(&response);
        assert!(
            to.starts_with("https://client.test/cb?lang=nl&ref=a%26b&"),
            "{to}"
        );
        assert_eq!(query_value(&to, "error").as_deref(), Some(error), "{to}");
        if query.contains("state=a&state=b") {
            continue;
        }
        assert_eq!(
            query_value(&to, "state").as_deref(),
            Some(state.as_str()),
            "state byte for byte"
        );
    }
    // 3 and 7 on success: the extras and the state come back with the code.
    app.create_user(EMAIL, PASSWORD).await;
    let landed = app
        .authorize(
            &format!(
                "response_type=code&client_id={id}&redirect_uri={with_extras}&state={encoded_state}"
            ),
            EMAIL,
            PASSWORD,
        )
        .await;
    assert!(
        landed.starts_with("https://client.test/cb?lang=nl&ref=a%26b&code="),
        "{landed}"
    );
    assert_eq!(
        query_value(&landed, "state").as_deref(),
        Some(state.as_str())
    );
    assert_eq!(query_value(&landed, "ref").as_deref(), Some("a&b"));
}

/// Cases 6 and 9, and the consent memory.
async fn authorize_defaults_scopes_and_honours_denial(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let narrow = app
        .register_client(ClientSpec {
            name: "Narrow".into(),
            redirect_uris: vec!["https://narrow.test/cb".into()],
            scopes: Some("read write purchase".into()),
            default_scopes: Some("read".into()),
            ..ClientSpec::default()
        })
        .await;
    let landed = app
        .authorize(&authorize_query(&narrow, "&state=s1"), EMAIL, PASSWORD)
        .await;
    let code = query_value(&landed, "code").unwrap();
    let body = expect_json(
        app.token_request(
            &narrow,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &narrow.redirect_uri),
            ],
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        body["scope"], "read",
        "no scope asked: the client's defaults"
    );
    // A second authorization of the same scopes skips the consent page.
    let query = authorize_query(&narrow, "&state=s2");
    let login = raw_authorize(&app, &query).await;
    let cookie = session_cookie(&login);
    let csrf = hidden_field(&login.text().await.unwrap(), "csrf_token");
    let response = app
        .client
        .post(app.url(&format!("/accounts/oauth/authorize?{query}")))
        .header("cookie", cookie)
        .form(&[
            ("username", EMAIL),
            ("password", PASSWORD),
            ("csrf_token", &csrf),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 302, "consent remembered");
    assert!(query_value(&location(&response), "code").is_some());
    // 9: the user denies.
    let wide = authorize_query(&narrow, "&scope=read+write&state=deny%20me");
    let login = raw_authorize(&app, &wide).await;
    let cookie = session_cookie(&login);
    let csrf = hidden_field(&login.text().await.unwrap(), "csrf_token");
    let consent = app
        .client
        .post(app.url(&format!("/accounts/oauth/authorize?{wide}")))
        .header("cookie", cookie)
        .form(&[
            ("username", EMAIL),
            ("password", PASSWORD),
            ("csrf_token", &csrf),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(consent.status(), 200, "wider scopes ask for consent again");
    let cookie = session_cookie(&consent);
    let page = consent.text().await.unwrap();
    assert!(page.contains("Narrow"), "the consent page names the client");
    let csrf = hidden_field(&page, "csrf_token");
    let denied = app
        .client
        .post(app.url(&format!("/accounts/oauth/authorize?{wide}")))
        .header("cookie", cookie)
        .form(&[("decision", "deny"), ("csrf_token", &csrf)])
        .send()
        .await
        .unwrap();
    let to = location(&denied);
    assert_eq!(query_value(&to, "error").as_deref(), Some("access_denied"));
    assert_eq!(query_value(&to, "state").as_deref(), Some("deny me"));
    assert!(query_value(&to, "code").is_none());
}

/// Case 10.
async fn consent_needs_csrf_and_session(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let query = authorize_query(&app.app_client, "");
    let page = format!("/accounts/oauth/authorize?{query}");
    let login = raw_authorize(&app, &query).await;
    let cookie = session_cookie(&login);
    let csrf = hidden_field(&login.text().await.unwrap(), "csrf_token");
    let consent = app
        .client
        .post(app.url(&page))
        .header("cookie", &cookie)
        .form(&[
            ("username", EMAIL),
            ("password", PASSWORD),
            ("csrf_token", &csrf),
        ])
        .send()
        .await
        .unwrap();
    let signed_in = session_cookie(&consent);
    let csrf = hidden_field(&consent.text().await.unwrap(), "csrf_token");
    let attempts = [
        (Some(signed_in.as_str()), None),
        (Some(signed_in.as_str()), Some("forged")),
        (None, Some(csrf.as_str())),
        // The session from before the sign-in is no longer the signed-in one.
        (Some(cookie.as_str()), Some(csrf.as_str())),
    ];
    for (cookie, csrf) in attempts {
        let mut request = app.client.post(app.url(&page));
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        let mut form = vec![("decision", "allow")];
        if let Some(csrf) = csrf {
            form.push(("csrf_token", csrf));
        }
        let response = request.form(&form).send().await.unwrap();
        assert_eq!(response.status(), 403, "{cookie:?} {csrf:?}");
        assert!(response.headers().get("location").is_none());
    }
}

/// Case 11.
async fn sign_in_is_throttled_with_one_message(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let query = authorize_query(&app.app_client, "");
    let page = format!("/accounts/oauth/authorize?{query}");
    let attempt = |email: &'static str, password: &'static str| {
        let app = &app;
        let query = query.clone();
        let page = page.clone();
        async move {
            let login = raw_authorize(app, &query).await;
            let cookie = session_cookie(&login);
            let csrf = hidden_field(&login.text().await.unwrap(), "csrf_token");
            app.client
                .post(app.url(&page))
                .header("cookie", cookie)
                .form(&[
                    ("username", email),
                    ("password", password),
                    ("csrf_token", &csrf),
                ])
                .send()
                .await
                .unwrap()
        }
    };
    let unknown = attempt("nobody@souk.test", "whatever-1").await;
    assert_eq!(unknown.status(), 200);
    let unknown_page = unknown.text().await.unwrap();
    let wrong = attempt(EMAIL, "wrong-password").await;
    let wrong_page = wrong.text().await.unwrap();
    let message = |page: &str| {
        page.split("role=\"alert\">")
            .nth(1)
            .unwrap()
            .split('<')
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        message(&unknown_page),
        message(&wrong_page),
        "the same message"
    );
    for _ in 0..4 {
        attempt(EMAIL, "wrong-password").await;
    }
    let locked = attempt(EMAIL, PASSWORD).await;
    assert_eq!(locked.status(), 429, "locked even with the right password");
    assert!(locked.headers().get("retry-after").is_some());
    // The lock lifts after the window.
    app.clock.advance(16 * 60);
    let later = attempt(EMAIL, PASSWORD).await;
    assert_eq!(later.status(), 200, "consent page after the window");
}

/// Case 12.
async fn pages_carry_no_store_and_anti_framing(app: TestApp) {
    let responses = [
        raw_authorize(&app, &authorize_query(&app.app_client, "")).await,
        raw_authorize(&app, "client_id=nobody").await,
    ];
    for response in responses {
        let headers = response.headers();
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(headers["x-frame-options"], "DENY");
        assert!(
            headers["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("frame-ancestors 'none'")
        );
    }
}

/// Sets a known secret on a client (for secrets with special characters).
async fn set_secret(app: &TestApp, client: &TestClient, new_secret: &str) -> TestClient {
    let (id, hash) = (client.id.clone(), secret::hash(new_secret));
    app.db
        .write(move |conn| {
            Box::pin(async move { souk::store::oauth::set_client_secret(conn, &id, &hash).await })
        })
        .await
        .unwrap();
    TestClient {
        secret: Some(new_secret.to_owned()),
        ..client.clone()
    }
}

async fn oauth_error(response: reqwest::Response, status: u16, error: &str) -> Value {
    assert_eq!(response.status(), status);
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["pragma"], "no-cache");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], error, "{body}");
    let codes = [
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "invalid_scope",
    ];
    assert!(
        codes.contains(&body["error"].as_str().unwrap()),
        "only RFC 6749 §5.2 codes"
    );
    body
}

/// Cases 13, 14, 15.
async fn client_authentication(app: TestApp) {
    let special = set_secret(&app, &app.app_client, "s3:cr+t%é x").await;
    // 13: Basic, with the credentials form-urlencoded before base64 (RFC 6749 §2.3.1).
    let basic = format!(
        "{}:{}",
        encode(&special.id),
        encode(special.secret.as_deref().unwrap())
    );
    let response = app
        .client
        .post(app.url("/accounts/oauth/token"))
        .header("authorization", format!("Basic {}", base64_encode(&basic)))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    expect_json(response, 200).await;
    // 13: body parameters.
    let response = app
        .client
        .post(app.url("/accounts/oauth/token"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &special.id),
            ("client_secret", special.secret.as_deref().unwrap()),
        ])
        .send()
        .await
        .unwrap();
    expect_json(response, 200).await;
    // A compatibility allowance: the parameters in the query string of the POST.
    let response = app
        .client
        .post(app.url(&format!(
            "/accounts/oauth/token?grant_type=client_credentials&client_id={}&client_secret={}",
            encode(&special.id),
            encode(special.secret.as_deref().unwrap())
        )))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    expect_json(response, 200).await;
    // 14: wrong secret, by Basic and by body.
    let wrong = TestClient {
        secret: Some("wrong".into()),
        ..special.clone()
    };
    let response = app
        .token_request(&wrong, &[("grant_type", "client_credentials")])
        .await;
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Basic")
    );
    oauth_error(response, 401, "invalid_client").await;
    let response = app
        .client
        .post(app.url("/accounts/oauth/token"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &special.id),
            ("client_secret", "wrong"),
        ])
        .send()
        .await
        .unwrap();
    assert!(response.headers().get("www-authenticate").is_none());
    oauth_error(response, 401, "invalid_client").await;
    let response = app
        .client
        .post(app.url("/accounts/oauth/token"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    oauth_error(response, 401, "invalid_client").await;
    // 15: both at once.
    let response = app
        .client
        .post(app.url("/accounts/oauth/token"))
        .basic_auth(&special.id, special.secret.as_deref())
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", special.id.as_str()),
            ("client_secret", special.secret.as_deref().unwrap()),
        ])
        .send()
        .await
        .unwrap();
    oauth_error(response, 400, "invalid_request").await;
}

fn base64_encode(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// Cases 16 and 17.
async fn grant_type_and_method_errors(app: TestApp) {
    let client = &app.app_client;
    oauth_error(app.token_request(client, &[]).await, 400, "invalid_request").await;
    oauth_error(
        app.token_request(
            client,
            &[
                ("grant_type", "password"),
                ("username", "a"),
                ("password", "b"),
            ],
        )
        .await,
        400,
        "unsupported_grant_type",
    )
    .await;
    oauth_error(
        app.token_request(client, &[("grant_type", "urn:made:up")])
            .await,
        400,
        "unsupported_grant_type",
    )
    .await;
    let only_cc = app
        .register_client(ClientSpec {
            name: "Machine".into(),
            grants: vec!["client_credentials".into()],
            ..ClientSpec::default()
        })
        .await;
    oauth_error(
        app.token_request(
            &only_cc,
            &[("grant_type", "refresh_token"), ("refresh_token", "x")],
        )
        .await,
        400,
        "unauthorized_client",
    )
    .await;
    // 17: GET, and a duplicated parameter.
    let response = app
        .get_anonymous("/accounts/oauth/token?grant_type=client_credentials")
        .await;
    oauth_error(response, 400, "invalid_request").await;
    let response = app
        .client
        .post(app.url("/accounts/oauth/token?grant_type=client_credentials"))
        .basic_auth(&client.id, client.secret.as_deref())
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    oauth_error(response, 400, "invalid_request").await;
}

async fn code_for(app: &TestApp, client: &TestClient, extra: &str) -> String {
    let landed = app
        .authorize(&authorize_query(client, extra), EMAIL, PASSWORD)
        .await;
    query_value(&landed, "code").unwrap()
}

async fn exchange(
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

/// Cases 18, 20, 21, 22.
async fn codes_are_single_use_and_bound(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    // 18: a second use fails and revokes what the first issued.
    let code = code_for(&app, &client, "").await;
    let first = expect_json(exchange(&app, &client, &code, &[]).await, 200).await;
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(app.get_with("/v1/me", access).await.status(), 302);
    oauth_error(
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
    oauth_error(refreshed, 400, "invalid_grant").await;
    // 20: an expired code.
    let code = code_for(&app, &client, "").await;
    app.clock.advance(61);
    oauth_error(
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
    oauth_error(
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
    oauth_error(response, 400, "invalid_grant").await;
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
    oauth_error(response, 400, "invalid_grant").await;
}

/// Case 19.
async fn concurrent_code_exchange_has_one_winner(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let code = code_for(&app, &client, "").await;
    let (a, b) = tokio::join!(
        exchange(&app, &client, &code, &[]),
        exchange(&app, &client, &code, &[])
    );
    let mut statuses = [a.status().as_u16(), b.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [200, 400]);
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
        oauth_error(response, 400, "invalid_grant").await;
        let response = app
            .token_request(
                client,
                &[("grant_type", "refresh_token"), ("refresh_token", value)],
            )
            .await;
        oauth_error(response, 400, "invalid_grant").await;
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
        oauth_error(
            exchange(&app, &client, &code, &extra).await,
            400,
            "invalid_grant",
        )
        .await;
    }
    // A verifier without a challenge: downgrade protection.
    let code = code_for(&app, &client, "").await;
    oauth_error(
        exchange(&app, &client, &code, &[("code_verifier", &verifier)]).await,
        400,
        "invalid_grant",
    )
    .await;
    // Method plain is refused at the authorization endpoint.
    let response = raw_authorize(
        &app,
        &authorize_query(
            &client,
            &format!("&code_challenge={verifier}&code_challenge_method=plain"),
        ),
    )
    .await;
    assert_eq!(
        query_value(&location(&response), "error").as_deref(),
        Some("invalid_request")
    );
    // A public client must use PKCE, and then needs no secret.
    let public = app
        .register_client(ClientSpec {
            name: "Mobile".into(),
            redirect_uris: vec!["https://mobile.test/cb".into()],
            public: true,
            ..ClientSpec::default()
        })
        .await;
    let response = raw_authorize(&app, &authorize_query(&public, "")).await;
    assert_eq!(
        query_value(&location(&response), "error").as_deref(),
        Some("invalid_request")
    );
    let code = code_for(&app, &public, &with_challenge).await;
    let response = app
        .client
        .post(app.url("/accounts/oauth/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &public.redirect_uri),
            ("client_id", &public.id),
            ("code_verifier", &verifier),
        ])
        .send()
        .await
        .unwrap();
    expect_json(response, 200).await;
}

async fn refresh(
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

/// Case 25 (but the 20-token rule, below).
async fn refresh_rotation_and_scope(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let (_, first) = app
        .user_token(&client, EMAIL, PASSWORD, Some("read write"))
        .await;
    let body = expect_json(refresh(&app, &client, &first, None).await, 200).await;
    let second = body["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    assert_eq!(body["scope"], "read write");
    // Narrower is fine and does not narrow the next refresh; wider is invalid_scope.
    let body = expect_json(refresh(&app, &client, &second, Some("read")).await, 200).await;
    assert_eq!(body["scope"], "read");
    let third = body["refresh_token"].as_str().unwrap().to_owned();
    oauth_error(
        refresh(&app, &client, &third, Some("read write purchase")).await,
        400,
        "invalid_scope",
    )
    .await;
    let body = expect_json(refresh(&app, &client, &third, None).await, 200).await;
    assert_eq!(body["scope"], "read write");
    // Another client's refresh token.
    let other = app
        .register_client(ClientSpec {
            name: "Other".into(),
            redirect_uris: vec!["https://other.test/cb".into()],
            ..ClientSpec::default()
        })
        .await;
    let fourth = body["refresh_token"].as_str().unwrap();
    oauth_error(
        refresh(&app, &other, fourth, None).await,
        400,
        "invalid_grant",
    )
    .await;
    expect_json(refresh(&app, &client, fourth, None).await, 200).await;
}

/// Case 25: 21 logins of one user at one client.
async fn twenty_live_refresh_tokens_per_user_and_client(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let mut tokens = Vec::new();
    for _ in 0..21 {
        tokens.push(app.user_token(&client, EMAIL, PASSWORD, None).await.1);
    }
    oauth_error(
        refresh(&app, &client, &tokens[0], None).await,
        400,
        "invalid_grant",
    )
    .await;
    for token in &tokens[1..] {
        expect_json(refresh(&app, &client, token, None).await, 200).await;
    }
}

/// Case 26.
async fn refresh_reuse_revokes_the_family(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let (_, first) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    let body = expect_json(refresh(&app, &client, &first, None).await, 200).await;
    let (access, second) = (
        body["access_token"].as_str().unwrap().to_owned(),
        body["refresh_token"].as_str().unwrap().to_owned(),
    );
    // An unrelated login of the same user stays valid.
    let (other_access, other_refresh) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    oauth_error(
        refresh(&app, &client, &first, None).await,
        400,
        "invalid_grant",
    )
    .await;
    oauth_error(
        refresh(&app, &client, &second, None).await,
        400,
        "invalid_grant",
    )
    .await;
    assert_eq!(app.get_with("/v1/me", &access).await.status(), 401);
    assert_eq!(app.get_with("/v1/me", &other_access).await.status(), 302);
    expect_json(refresh(&app, &client, &other_refresh, None).await, 200).await;
}

/// Case 27.
async fn client_credentials_tokens(app: TestApp) {
    let body = expect_json(
        app.token_request(&app.app_client, &[("grant_type", "client_credentials")])
            .await,
        200,
    )
    .await;
    assert!(body.get("refresh_token").is_none());
    assert_eq!(body["scope"], "create_account confirm_upcall webhooks");
    let token = body["access_token"].as_str().unwrap();
    let me = expect_json(app.get_with("/v1/me", token).await, 403).await;
    assert_eq!(me["code"], "unauthorized");
    expect_json(app.get_with("/v1/categories", token).await, 200).await;
    let plain = app
        .register_client(ClientSpec {
            name: "Plain".into(),
            scopes: Some("read create_account".into()),
            ..ClientSpec::default()
        })
        .await;
    oauth_error(
        app.token_request(
            &plain,
            &[
                ("grant_type", "client_credentials"),
                ("scope", "confirm_upcall"),
            ],
        )
        .await,
        400,
        "invalid_scope",
    )
    .await;
    let body = expect_json(
        app.token_request(&plain, &[("grant_type", "client_credentials")])
            .await,
        200,
    )
    .await;
    assert_eq!(body["scope"], "create_account");
    let response = app
        .token_request(
            &plain,
            &[
                ("grant_type", "client_credentials"),
                ("redirect_uri", "https://nowhere.test/"),
            ],
        )
        .await;
    oauth_error(response, 400, "invalid_request").await;
}

/// Case 28.
async fn token_responses_are_never_cached(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let code = code_for(&app, &client, "").await;
    let responses = [
        exchange(&app, &client, &code, &[]).await,
        app.token_request(&client, &[("grant_type", "client_credentials")])
            .await,
    ];
    for response in responses {
        assert_eq!(response.headers()["cache-control"], "no-store");
        assert_eq!(response.headers()["pragma"], "no-cache");
        let body = expect_json(response, 200).await;
        assert_eq!(body["token_type"], "bearer");
        assert_eq!(body["expires_in"], 86_400);
        assert!(body["access_token"].as_str().unwrap().len() >= 43);
    }
}

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
    let login = raw_authorize(&app, &authorize_query(&client, "")).await;
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
            .client
            .get(app.url("/v1/categories"))
            .header("authorization", format!("{scheme} {token}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{scheme}");
    }
    let both = app
        .get_with(&format!("/v1/categories?access_token={token}"), &token)
        .await;
    assert_eq!(expect_json(both, 400).await["code"], "invalid-request");
    let missing = app.get_anonymous("/v1/categories").await;
    assert_eq!(
        missing.headers()["www-authenticate"],
        "Bearer realm=\"souk\""
    );
    assert_eq!(expect_json(missing, 401).await["code"], "unauthenticated");
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
    app.clock.advance(souk::access::CACHE_SECONDS);
    expect_json(app.get_with("/v1/categories", &token).await, 401).await;
}

async fn revocation_introspection_and_metadata(app: TestApp) {
    let client = app.app_client.clone();
    let token = app.client_token(&client, None).await;
    let introspect = |token: String| {
        let app = &app;
        let client = client.clone();
        async move {
            let response = app
                .client
                .post(app.url("/accounts/oauth/introspect"))
                .basic_auth(&client.id, client.secret.as_deref())
                .form(&[("token", token)])
                .send()
                .await
                .unwrap();
            expect_json(response, 200).await
        }
    };
    let active = introspect(token.clone()).await;
    assert_eq!(active["active"], true);
    assert_eq!(active["client_id"], client.id);
    assert_eq!(active["scope"], "create_account confirm_upcall webhooks");
    expect_json(app.get_with("/v1/categories", &token).await, 200).await;
    let response = app
        .client
        .post(app.url("/accounts/oauth/revoke"))
        .basic_auth(&client.id, client.secret.as_deref())
        .form(&[("token", &token)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    expect_json(app.get_with("/v1/categories", &token).await, 401).await;
    assert_eq!(introspect(token).await["active"], false);
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

/// The hourly upkeep deletes what nothing needs: access tokens and codes a day after they
/// expired, spent refresh tokens 30 days after they were issued; live ones stay and work.
async fn spent_tokens_are_forgotten(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let (_, first) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    let body = expect_json(refresh(&app, &client, &first, None).await, 200).await;
    let live = body["refresh_token"].as_str().unwrap().to_owned();
    let count = |table: &'static str| {
        let db = app.db.clone();
        async move {
            db.read(move |conn| {
                Box::pin(async move {
                    conn.query_one(&format!("SELECT COUNT(*) AS n FROM {table}"), &[])
                        .await?
                        .get::<i64>("n")
                })
            })
            .await
            .unwrap()
        }
    };
    let (access, codes, refresh_tokens) = (
        count("access_tokens").await,
        count("authorization_codes").await,
        count("refresh_tokens").await,
    );
    assert!(access >= 2 && codes >= 1 && refresh_tokens == 2);
    // Nothing is due yet.
    assert_eq!(
        souk::app::forget_spent_tokens(&app.db, app.clock.now())
            .await
            .unwrap(),
        0
    );
    // A day after the access tokens expired: they and the code go, the refresh tokens stay.
    app.clock.advance(2 * 86_400 + 1);
    let gone = souk::app::forget_spent_tokens(&app.db, app.clock.now())
        .await
        .unwrap();
    assert_eq!(gone as i64, access + codes);
    assert_eq!(count("refresh_tokens").await, 2);
    // 30 days after it was issued, the rotated token goes; the live one stays and works.
    app.clock.advance(29 * 86_400);
    assert_eq!(
        souk::app::forget_spent_tokens(&app.db, app.clock.now())
            .await
            .unwrap(),
        1
    );
    assert_eq!(count("refresh_tokens").await, 1);
    let reused = refresh(&app, &client, &first, None).await;
    assert_eq!(reused.status(), 400);
    let reused: Value = reused.json().await.unwrap();
    assert_eq!(
        reused["error"], "invalid_grant",
        "unknown now, refused all the same"
    );
    expect_json(refresh(&app, &client, &live, None).await, 200).await;
}

/// PostgreSQL cannot take a NUL in a query: a client id or a sign-in address holding one is
/// simply unknown (never a 500), on both backends.
async fn control_characters_are_unknown_not_errors(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let page = raw_authorize(
        &app,
        &format!(
            "response_type=code&client_id={}&redirect_uri={}",
            encode("a\0b"),
            encode(&app.app_client.redirect_uri)
        ),
    )
    .await;
    assert_eq!(page.status(), 400);
    assert!(page.headers().get("location").is_none());
    let response = app
        .client
        .post(app.url("/accounts/oauth/token"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", "a\0b"),
            ("client_secret", "x"),
        ])
        .send()
        .await
        .unwrap();
    oauth_error(response, 401, "invalid_client").await;
    let query = authorize_query(&app.app_client, "");
    let signed_in = app.sign_in(&query, "jan\0@souk.test", PASSWORD).await;
    assert_eq!(signed_in.status(), 200);
    assert!(
        signed_in
            .text()
            .await
            .unwrap()
            .contains("Onjuist e-mailadres of wachtwoord.")
    );
}
