//! The flows driven by an independent client: the `oauth2` crate, as a client developer
//! would use it, against Souk over real HTTP.

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, RedirectUrl,
    Scope, TokenResponse, TokenUrl,
};

use crate::both_backends;
use crate::helpers::{TestApp, query_value};

both_backends!(the_oauth2_crate_completes_every_flow);

async fn the_oauth2_crate_completes_every_flow(app: TestApp) {
    app.create_user("jan@souk.test", "password-of-jan").await;
    let registered = app.app_client.clone();
    let client = BasicClient::new(ClientId::new(registered.id.clone()))
        .set_client_secret(ClientSecret::new(registered.secret.clone().unwrap()))
        .set_auth_uri(AuthUrl::new(app.url("/accounts/oauth/authorize")).unwrap())
        .set_token_uri(TokenUrl::new(app.url("/accounts/oauth/token")).unwrap())
        .set_redirect_uri(RedirectUrl::new(registered.redirect_uri.clone()).unwrap());
    let http = oauth2::reqwest::ClientBuilder::new()
        .redirect(oauth2::reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    // Authorization code with PKCE.
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, csrf) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("read".into()))
        .add_scope(Scope::new("write".into()))
        .set_pkce_challenge(challenge)
        .url();
    let landed = app
        .authorize(url.query().unwrap(), "jan@souk.test", "password-of-jan")
        .await;
    assert_eq!(
        query_value(&landed, "state").as_deref(),
        Some(csrf.secret().as_str())
    );
    let code = query_value(&landed, "code").unwrap();
    let token = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .request_async(&http)
        .await
        .expect("code exchange");
    assert_eq!(token.expires_in().unwrap().as_secs(), 86_400);
    let scopes: Vec<String> = token
        .scopes()
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(scopes, ["read", "write"]);
    let me = app.get_with("/v1/me", token.access_token().secret()).await;
    assert_eq!(me.status(), 302);

    // Refresh.
    let refreshed = client
        .exchange_refresh_token(token.refresh_token().unwrap())
        .request_async(&http)
        .await
        .expect("refresh");
    assert_ne!(
        refreshed.refresh_token().unwrap().secret(),
        token.refresh_token().unwrap().secret()
    );
    assert_eq!(
        app.get_with("/v1/me", refreshed.access_token().secret())
            .await
            .status(),
        302
    );
    let reused = client
        .exchange_refresh_token(token.refresh_token().unwrap())
        .request_async(&http)
        .await;
    assert!(reused.is_err(), "a rotated refresh token is refused");

    // Client credentials.
    let machine = client
        .exchange_client_credentials()
        .add_scope(Scope::new("create_account".into()))
        .request_async(&http)
        .await
        .expect("client credentials");
    assert!(machine.refresh_token().is_none());
    assert_eq!(
        app.get_with("/v1/categories", machine.access_token().secret())
            .await
            .status(),
        200
    );
}
