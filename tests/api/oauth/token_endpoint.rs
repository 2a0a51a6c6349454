//! The token endpoint: client authentication, grant types and methods, client credentials,
//! and answers that are never cached.

use souk::accounts::ClientSpec;
use souk::oauth::secret;

use super::{EMAIL, PASSWORD, TOKEN, code_for, exchange};
use crate::both_backends;
use crate::helpers::{Backend, TestApp, TestClient, encode, expect_json, expect_oauth_error};

both_backends!(
    client_authentication,
    grant_type_and_method_errors,
    client_credentials_tokens,
    token_responses_are_never_cached,
    a_client_uses_only_the_grants_it_is_registered_for,
);

/// Sets a known secret on a client (for secrets with special characters).
async fn set_secret(app: &TestApp, client: &TestClient, new_secret: &str) -> TestClient {
    let (id, hash) = (client.id.clone(), secret::hash(new_secret));
    let now = app.clock.now();
    let rotated = app
        .db
        .write(move |conn| {
            Box::pin(async move {
                souk::store::oauth::rotate_client_secret(conn, &id, &hash, now).await
            })
        })
        .await
        .unwrap();
    assert_eq!(rotated, souk::store::oauth::SecretRotation::Rotated);
    TestClient {
        secret: Some(new_secret.to_owned()),
        ..client.clone()
    }
}

fn base64_encode(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
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
        .post(TOKEN)
        .header("authorization", format!("Basic {}", base64_encode(&basic)))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await;
    expect_json(response, 200).await;
    // 13: body parameters.
    let response = app
        .post(TOKEN)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &special.id),
            ("client_secret", special.secret.as_deref().unwrap()),
        ])
        .send()
        .await;
    expect_json(response, 200).await;
    // The form's media type in any letter case, with parameters.
    let response = app
        .post(TOKEN)
        .body(
            "Application/X-WWW-Form-Urlencoded; charset=UTF-8",
            format!(
                "grant_type=client_credentials&client_id={}&client_secret={}",
                encode(&special.id),
                encode(special.secret.as_deref().unwrap())
            ),
        )
        .send()
        .await;
    expect_json(response, 200).await;
    // A compatibility allowance: the parameters in the query string of the POST.
    let response = app
        .post(&format!(
            "{TOKEN}?grant_type=client_credentials&client_id={}&client_secret={}",
            encode(&special.id),
            encode(special.secret.as_deref().unwrap())
        ))
        .header("content-type", "application/json")
        .send()
        .await;
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
    expect_oauth_error(response, 401, "invalid_client").await;
    let response = app
        .post(TOKEN)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &special.id),
            ("client_secret", "wrong"),
        ])
        .send()
        .await;
    assert!(response.headers().get("www-authenticate").is_none());
    expect_oauth_error(response, 401, "invalid_client").await;
    let response = app
        .post(TOKEN)
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await;
    expect_oauth_error(response, 401, "invalid_client").await;
    // 15: both at once.
    let response = app
        .post(TOKEN)
        .basic_auth(&special.id, special.secret.as_deref())
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", special.id.as_str()),
            ("client_secret", special.secret.as_deref().unwrap()),
        ])
        .send()
        .await;
    expect_oauth_error(response, 400, "invalid_request").await;
}

/// Cases 16 and 17.
async fn grant_type_and_method_errors(app: TestApp) {
    let client = &app.app_client;
    expect_oauth_error(app.token_request(client, &[]).await, 400, "invalid_request").await;
    expect_oauth_error(
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
    expect_oauth_error(
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
    expect_oauth_error(
        app.token_request(
            &only_cc,
            &[("grant_type", "refresh_token"), ("refresh_token", "x")],
        )
        .await,
        400,
        "unauthorized_client",
    )
    .await;
    let code = [("grant_type", "authorization_code"), ("code", "x")];
    let refused = app.token_request(&only_cc, &code).await;
    expect_oauth_error(refused, 400, "unauthorized_client").await;
    // 17: GET, and a duplicated parameter.
    let response = app
        .get_anonymous("/accounts/oauth/token?grant_type=client_credentials")
        .await;
    expect_oauth_error(response, 400, "invalid_request").await;
    let response = app
        .post(&format!("{TOKEN}?grant_type=client_credentials"))
        .basic_auth(&client.id, client.secret.as_deref())
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await;
    expect_oauth_error(response, 400, "invalid_request").await;
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
    expect_oauth_error(
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
    expect_oauth_error(response, 400, "invalid_request").await;
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
    // The server's own refusals too: a body past the limit, a refused revocation.
    let too_large = app
        .post(TOKEN)
        .body(
            "application/x-www-form-urlencoded",
            "x".repeat(app.config.max_body_bytes + 1),
        )
        .send()
        .await;
    let refused = app
        .post("/accounts/oauth/revoke")
        .form(&[("token", "x")])
        .send()
        .await;
    // Both RFC 6749 bodies (oauth.md), the server's own refusal naming the API's code.
    let too_large = expect_oauth_error(too_large, 413, "invalid_request").await;
    assert_eq!(too_large["error_description"], "payload-too-large");
    expect_oauth_error(refused, 401, "invalid_client").await;
}

#[tokio::test]
async fn a_token_request_that_times_out_is_an_oauth_error_sqlite() {
    a_token_request_that_times_out_is_an_oauth_error(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_token_request_that_times_out_is_an_oauth_error_postgres() {
    a_token_request_that_times_out_is_an_oauth_error(Backend::Postgres).await;
}

/// A token request whose body never comes in full is answered 408 when the request
/// timeout runs out, with an RFC 6749 body that an OAuth client library reads, never
/// cached.
async fn a_token_request_that_times_out_is_an_oauth_error(backend: Backend) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let test = format!("oauth::token_timeout::{backend:?}");
    let app = TestApp::start_with(backend, &test, &[("SOUK_REQUEST_TIMEOUT_SECS", "1")]).await;
    let address = app.url("").trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST {TOKEN} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n\
         grant_type="
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = String::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_string(&mut answer),
    )
    .await;
    assert!(read.is_ok(), "no answer while the body is held back");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a whole answer");
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 408"), "{head}");
    assert!(head.contains("\r\ncache-control: no-store\r\n"), "{head}");
    assert!(
        head.contains("\r\ncontent-type: application/json\r\n"),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(body).expect("a JSON body");
    assert_eq!(
        body,
        serde_json::json!({"error": "invalid_request", "error_description": "request-timeout"})
    );
}

/// Case 16 for the code's client: a client uses the grants it is registered for and no
/// other, and a public client never gets a token of its own, whatever its registration
/// says.
async fn a_client_uses_only_the_grants_it_is_registered_for(app: TestApp) {
    // A client of the authorization code alone: its code is exchanged, but the refresh
    // token it got is not honoured, nor spent (it still introspects as active).
    app.create_user(EMAIL, PASSWORD).await;
    let only_code = app
        .register_client(ClientSpec {
            name: "Web".into(),
            redirect_uris: vec!["https://web.example/cb".into()],
            grants: vec!["authorization_code".into()],
            ..ClientSpec::default()
        })
        .await;
    let code = code_for(&app, &only_code, "").await;
    let tokens = expect_json(exchange(&app, &only_code, &code, &[]).await, 200).await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let refused = super::refresh(&app, &only_code, refresh, None).await;
    expect_oauth_error(refused, 400, "unauthorized_client").await;
    let refused = app.token_request(&only_code, &[("grant_type", "client_credentials")]);
    expect_oauth_error(refused.await, 400, "unauthorized_client").await;
    let introspected = app
        .post("/accounts/oauth/introspect")
        .basic_auth(&only_code.id, only_code.secret.as_deref())
        .form(&[("token", refresh)])
        .send()
        .await;
    assert_eq!(expect_json(introspected, 200).await["active"], true);

    // A public client registered by hand for client credentials: anyone may send its id.
    let public = app
        .register_client(ClientSpec {
            name: "Mobile".into(),
            redirect_uris: vec!["https://mobile.example/cb".into()],
            scopes: Some("read create_account".into()),
            public: true,
            ..ClientSpec::default()
        })
        .await;
    app.execute(
        "UPDATE clients SET grants = 'authorization_code client_credentials' \
         WHERE client_id = $1",
        vec![souk::store::Value::Text(public.id.clone())],
    )
    .await;
    let response = app
        .post(TOKEN)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", public.id.as_str()),
            ("scope", "create_account"),
        ])
        .send()
        .await;
    expect_oauth_error(response, 400, "unauthorized_client").await;
}
