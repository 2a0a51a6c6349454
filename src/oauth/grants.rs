//! The rules of the authorization and token endpoints (RFC 6749, 7636, 7009, 7662 and the
//! decisions of oauth.md). Each function runs inside one database write, so that what it
//! decides (a used code, a rotated token, a revoked family) commits together.

use crate::store::oauth::{
    self as store, AccessToken, AuthorizationCode, Client, RefreshState, RefreshToken,
};
use crate::store::{Conn, DbError};

use super::redirect::{Redirect, match_redirect};
use super::scope::{Scope, Scopes};
use super::secret;

/// Lifetime of an access token: 24 hours.
pub const ACCESS_TOKEN_SECONDS: i64 = 86_400;
/// Lifetime of an authorization code.
pub const CODE_SECONDS: i64 = 60;
/// Live refresh tokens kept per user and client; the oldest beyond is discarded.
pub const LIVE_REFRESH_TOKENS: i64 = 20;
/// How long an expired access token or code is kept (for a day a replayed code still
/// revokes what it issued, and introspection still finds the token as inactive).
pub const EXPIRED_KEPT_SECONDS: i64 = 86_400;
/// How long a rotated, discarded or revoked refresh token is kept after it was issued: for
/// that long, presenting a rotated one still revokes its family. Later it is just unknown
/// (`invalid_grant` all the same).
pub const SPENT_REFRESH_KEPT_SECONDS: i64 = 30 * 86_400;

pub const GRANT_AUTHORIZATION_CODE: &str = "authorization_code";
pub const GRANT_REFRESH_TOKEN: &str = "refresh_token";
pub const GRANT_CLIENT_CREDENTIALS: &str = "client_credentials";

/// An error of the token, revocation or introspection endpoint (RFC 6749 §5.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OAuthError {
    InvalidRequest(String),
    /// Failed client authentication; `basic` says whether HTTP Basic was used.
    InvalidClient {
        basic: bool,
    },
    InvalidGrant(String),
    UnauthorizedClient,
    UnsupportedGrantType,
    InvalidScope(String),
}

impl OAuthError {
    pub fn code(&self) -> &'static str {
        match self {
            OAuthError::InvalidRequest(_) => "invalid_request",
            OAuthError::InvalidClient { .. } => "invalid_client",
            OAuthError::InvalidGrant(_) => "invalid_grant",
            OAuthError::UnauthorizedClient => "unauthorized_client",
            OAuthError::UnsupportedGrantType => "unsupported_grant_type",
            OAuthError::InvalidScope(_) => "invalid_scope",
        }
    }

    pub fn description(&self) -> String {
        match self {
            OAuthError::InvalidRequest(why) | OAuthError::InvalidGrant(why) => why.clone(),
            OAuthError::InvalidClient { .. } => "client authentication failed".into(),
            OAuthError::UnauthorizedClient => {
                "the client is not registered for this grant type".into()
            }
            OAuthError::UnsupportedGrantType => "unsupported grant_type".into(),
            OAuthError::InvalidScope(scope) => format!("scope `{scope}` cannot be granted"),
        }
    }
}

fn invalid_grant(why: &str) -> OAuthError {
    OAuthError::InvalidGrant(why.to_owned())
}

/// How a client presented its credentials.
#[derive(Clone, Debug)]
pub struct ClientCredentials {
    pub client_id: String,
    pub secret: Option<String>,
    pub via_basic: bool,
}

/// Authenticates the client of a token, revocation or introspection request. A public
/// client (no secret registered) authenticates by its id alone and must use PKCE.
pub async fn authenticate_client(
    conn: &mut dyn Conn,
    credentials: &ClientCredentials,
) -> Result<Result<Client, OAuthError>, DbError> {
    let failed = OAuthError::InvalidClient {
        basic: credentials.via_basic,
    };
    let Some(client) = store::client(conn, &credentials.client_id).await? else {
        return Ok(Err(failed));
    };
    let ok = match (&client.secret_hash, &credentials.secret) {
        (Some(stored), Some(given)) => secret::matches(given, stored),
        (None, None) => true,
        _ => false,
    };
    Ok(if ok { Ok(client) } else { Err(failed) })
}

/// The parameters of a token request that the grants read.
#[derive(Clone, Debug, Default)]
pub struct TokenRequest {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
}

/// What a successful token request issued (the raw tokens: shown once, never stored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issued {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub scope: Scopes,
    pub expires_in: i64,
}

/// The token endpoint: runs the grant the request names.
pub async fn token(
    conn: &mut dyn Conn,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Result<Issued, OAuthError>, DbError> {
    let grant = match request.grant_type.as_deref() {
        None | Some("") => {
            return Ok(Err(OAuthError::InvalidRequest(
                "grant_type is missing".into(),
            )));
        }
        Some(
            grant @ (GRANT_AUTHORIZATION_CODE | GRANT_REFRESH_TOKEN | GRANT_CLIENT_CREDENTIALS),
        ) => grant,
        Some(_) => return Ok(Err(OAuthError::UnsupportedGrantType)),
    };
    if !client.grants.iter().any(|g| g == grant) {
        return Ok(Err(OAuthError::UnauthorizedClient));
    }
    match grant {
        GRANT_AUTHORIZATION_CODE => exchange_code(conn, client, request, now).await,
        GRANT_REFRESH_TOKEN => refresh(conn, client, request, now).await,
        _ => client_credentials(conn, client, request, now).await,
    }
}

async fn exchange_code(
    conn: &mut dyn Conn,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Result<Issued, OAuthError>, DbError> {
    let Some(raw_code) = request.code.as_deref() else {
        return Ok(Err(OAuthError::InvalidRequest("code is missing".into())));
    };
    let code_hash = secret::hash(raw_code);
    let Some(code) = store::code(conn, &code_hash).await? else {
        return Ok(Err(invalid_grant("unknown authorization code")));
    };
    if code.client_id != client.id {
        return Ok(Err(invalid_grant("unknown authorization code")));
    }
    if !store::use_code(conn, &code_hash, now).await? {
        // A second use: the code may have leaked; nothing issued from it stays valid
        // (RFC 6749 §4.1.2). Everything issued from the code is its family.
        store::revoke_family(conn, &code_hash, now).await?;
        return Ok(Err(invalid_grant(
            "the authorization code was already used",
        )));
    }
    if code.expires_at <= now {
        return Ok(Err(invalid_grant("the authorization code has expired")));
    }
    if request.redirect_uri.as_deref() != Some(code.redirect_uri.as_str()) {
        return Ok(Err(invalid_grant(
            "redirect_uri differs from the authorization request",
        )));
    }
    match (&code.code_challenge, request.code_verifier.as_deref()) {
        (Some(challenge), Some(verifier)) => {
            if !valid_verifier(verifier) || &secret::s256(verifier) != challenge {
                return Ok(Err(invalid_grant("code_verifier does not match")));
            }
        }
        (Some(_), None) => return Ok(Err(invalid_grant("code_verifier is missing"))),
        (None, Some(_)) => {
            return Ok(Err(invalid_grant(
                "code_verifier given, but the authorization request had no code_challenge",
            )));
        }
        (None, None) if client.secret_hash.is_none() => {
            return Ok(Err(invalid_grant("a public client must use PKCE")));
        }
        (None, None) => {}
    }
    let scope = Scopes::from_stored(&code.scope);
    // The family of the tokens from this code is named by the code, so that a replay of
    // the code finds them.
    let issued = issue_user_tokens(conn, client, &code, &code.code_hash, &scope, now).await?;
    store::discard_beyond(conn, code.user_id, &client.id, LIVE_REFRESH_TOKENS).await?;
    Ok(Ok(issued))
}

async fn issue_user_tokens(
    conn: &mut dyn Conn,
    client: &Client,
    code: &AuthorizationCode,
    family: &str,
    scope: &Scopes,
    now: i64,
) -> Result<Issued, DbError> {
    let access = new_access_token(
        conn,
        client,
        Some(code.user_id),
        scope,
        Some(family),
        Some(&code.code_hash),
        now,
    )
    .await?;
    let refresh = secret::new_token();
    store::insert_refresh_token(
        conn,
        &RefreshToken {
            token_hash: secret::hash(&refresh),
            client_id: client.id.clone(),
            user_id: code.user_id,
            scope: scope.to_string(),
            family: family.to_owned(),
            code_hash: Some(code.code_hash.clone()),
            state: RefreshState::Live,
        },
        now,
    )
    .await?;
    Ok(Issued {
        access_token: access,
        refresh_token: Some(refresh),
        scope: scope.clone(),
        expires_in: ACCESS_TOKEN_SECONDS,
    })
}

async fn refresh(
    conn: &mut dyn Conn,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Result<Issued, OAuthError>, DbError> {
    let Some(raw) = request.refresh_token.as_deref() else {
        return Ok(Err(OAuthError::InvalidRequest(
            "refresh_token is missing".into(),
        )));
    };
    let hash = secret::hash(raw);
    let Some(token) = store::refresh_token(conn, &hash).await? else {
        return Ok(Err(invalid_grant("unknown refresh token")));
    };
    if token.client_id != client.id {
        return Ok(Err(invalid_grant("unknown refresh token")));
    }
    match token.state {
        RefreshState::Live => {}
        RefreshState::Rotated => {
            // Reuse of a rotated token: it was stolen or replayed (RFC 9700 §4.14.2).
            store::revoke_family(conn, &token.family, now).await?;
            return Ok(Err(invalid_grant("the refresh token was already used")));
        }
        RefreshState::Discarded | RefreshState::Revoked => {
            return Ok(Err(invalid_grant("the refresh token is no longer valid")));
        }
    }
    let granted = Scopes::from_stored(&token.scope);
    let scope = match request.scope.as_deref().filter(|s| !s.trim().is_empty()) {
        None => granted.clone(),
        Some(text) => match Scopes::parse(text) {
            Ok(asked) if asked.is_subset(&granted) => asked,
            Ok(_) => return Ok(Err(OAuthError::InvalidScope(text.to_owned()))),
            Err(unknown) => return Ok(Err(OAuthError::InvalidScope(unknown))),
        },
    };
    if !store::change_refresh_state(conn, &hash, RefreshState::Live, RefreshState::Rotated).await? {
        return Ok(Err(invalid_grant("the refresh token was already used")));
    }
    let access = new_access_token(
        conn,
        client,
        Some(token.user_id),
        &scope,
        Some(&token.family),
        token.code_hash.as_deref(),
        now,
    )
    .await?;
    let successor = secret::new_token();
    // The successor keeps the scope of the grant, so a narrower access token now does not
    // narrow later refreshes.
    store::insert_refresh_token(
        conn,
        &RefreshToken {
            token_hash: secret::hash(&successor),
            state: RefreshState::Live,
            ..token
        },
        now,
    )
    .await?;
    Ok(Ok(Issued {
        access_token: access,
        refresh_token: Some(successor),
        scope,
        expires_in: ACCESS_TOKEN_SECONDS,
    }))
}

async fn client_credentials(
    conn: &mut dyn Conn,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Result<Issued, OAuthError>, DbError> {
    if let Some(uri) = request.redirect_uri.as_deref()
        && !client.redirect_uris.iter().any(|r| r == uri)
    {
        return Ok(Err(OAuthError::InvalidRequest(
            "redirect_uri is not registered for this client".into(),
        )));
    }
    let scope = match grant_scopes(client, request.scope.as_deref(), |s| !s.is_user_scope()) {
        Ok(scope) => scope,
        Err(error) => return Ok(Err(error)),
    };
    let access = new_access_token(conn, client, None, &scope, None, None, now).await?;
    Ok(Ok(Issued {
        access_token: access,
        refresh_token: None,
        scope,
        expires_in: ACCESS_TOKEN_SECONDS,
    }))
}

/// Stores a new access token (its hash) and returns the raw token.
async fn new_access_token(
    conn: &mut dyn Conn,
    client: &Client,
    user_id: Option<i64>,
    scope: &Scopes,
    family: Option<&str>,
    code_hash: Option<&str>,
    now: i64,
) -> Result<String, DbError> {
    let token = secret::new_token();
    store::insert_access_token(
        conn,
        &AccessToken {
            token_hash: secret::hash(&token),
            client_id: client.id.clone(),
            user_id,
            scope: scope.to_string(),
            family: family.map(str::to_owned),
            code_hash: code_hash.map(str::to_owned),
            issued_at: now,
            expires_at: now + ACCESS_TOKEN_SECONDS,
            revoked_at: None,
        },
    )
    .await?;
    Ok(token)
}

/// The scopes to grant for a request: the asked ones if the client may have them all, else
/// `invalid_scope`; none asked: the client's defaults, or all its allowed scopes of the kind
/// `fits` accepts.
pub fn grant_scopes(
    client: &Client,
    asked: Option<&str>,
    fits: impl Fn(Scope) -> bool + Copy,
) -> Result<Scopes, OAuthError> {
    let allowed = Scopes::from_stored(&client.scopes).filter(fits);
    match asked.filter(|s| !s.trim().is_empty()) {
        Some(text) => match Scopes::parse(text) {
            Ok(scopes) if scopes.is_subset(&allowed) => Ok(scopes),
            Ok(_) => Err(OAuthError::InvalidScope(text.to_owned())),
            Err(unknown) => Err(OAuthError::InvalidScope(unknown)),
        },
        None => {
            let defaults = Scopes::from_stored(&client.default_scopes).filter(fits);
            Ok(if defaults.is_empty() {
                allowed
            } else {
                defaults
            })
        }
    }
}

/// RFC 7636: 43 to 128 characters of `[A-Za-z0-9-._~]`.
fn valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// A validated authorization request, ready for sign-in and consent.
#[derive(Clone, Debug)]
pub struct Authorization {
    pub client: Client,
    pub redirect: Redirect,
    /// The redirect_uri exactly as sent: the token request must repeat it.
    pub redirect_uri: String,
    pub scopes: Scopes,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
}

impl Authorization {
    /// Where to send the browser with a result (`code` or `error`), `state` appended.
    pub fn redirect_with(&self, params: &[(&str, &str)]) -> String {
        let mut all: Vec<(&str, &str)> = params.to_vec();
        if let Some(state) = &self.state {
            all.push(("state", state));
        }
        self.redirect.to_url(&all)
    }
}

/// Why an authorization request failed.
#[derive(Clone, Debug)]
pub enum AuthorizeError {
    /// The client or the redirect_uri cannot be trusted: show an error page, never redirect.
    Page(String),
    /// Tell the client, at its redirect_uri (with `state`).
    Redirect { url: String, error: &'static str },
}

/// Validates the query of `GET /accounts/oauth/authorize` (all pairs, repeated ones kept).
pub async fn validate_authorization(
    conn: &mut dyn Conn,
    pairs: &[(String, String)],
) -> Result<Result<Authorization, AuthorizeError>, DbError> {
    let count = |name: &str| pairs.iter().filter(|(k, _)| k == name).count();
    let value = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let page = |why: &str| Ok(Err(AuthorizeError::Page(why.to_owned())));
    if count("client_id") > 1 || count("redirect_uri") > 1 {
        return page("client_id and redirect_uri may appear only once");
    }
    let Some(client_id) = value("client_id") else {
        return page("client_id is missing");
    };
    let Some(client) = store::client(conn, &client_id).await? else {
        return page("unknown client_id");
    };
    let Some(redirect_uri) = value("redirect_uri") else {
        return page("redirect_uri is missing");
    };
    let Some(redirect) = match_redirect(&redirect_uri, &client.redirect_uris) else {
        return page("redirect_uri is not registered for this client");
    };
    let state = value("state");
    let fail = |error: &'static str| {
        let mut params = vec![("error", error)];
        if let Some(state) = &state {
            params.push(("state", state.as_str()));
        }
        Ok(Err(AuthorizeError::Redirect {
            url: redirect.to_url(&params),
            error,
        }))
    };
    let repeated = [
        "response_type",
        "scope",
        "state",
        "code_challenge",
        "code_challenge_method",
    ]
    .iter()
    .any(|name| count(name) > 1);
    if repeated {
        return fail("invalid_request");
    }
    match value("response_type").as_deref() {
        None | Some("") => return fail("invalid_request"),
        Some("code") => {}
        Some(_) => return fail("unsupported_response_type"),
    }
    if !client.grants.iter().any(|g| g == GRANT_AUTHORIZATION_CODE) {
        return fail("unauthorized_client");
    }
    let Ok(scopes) = grant_scopes(&client, value("scope").as_deref(), Scope::is_user_scope) else {
        return fail("invalid_scope");
    };
    let code_challenge = value("code_challenge");
    match (value("code_challenge_method").as_deref(), &code_challenge) {
        (Some(method), _) if method != "S256" => return fail("invalid_request"),
        (Some(_), None) => return fail("invalid_request"),
        (_, Some(challenge)) if !valid_challenge(challenge) => return fail("invalid_request"),
        (None, Some(_)) => return fail("invalid_request"),
        (_, None) if client.secret_hash.is_none() => return fail("invalid_request"),
        _ => {}
    }
    Ok(Ok(Authorization {
        client,
        redirect,
        redirect_uri,
        scopes,
        state,
        code_challenge,
    }))
}

/// An S256 challenge is the base64url of a SHA-256: 43 characters.
fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Issues an authorization code for a signed-in user who consented; returns the raw code.
pub async fn issue_code(
    conn: &mut dyn Conn,
    authorization: &Authorization,
    user_id: i64,
    now: i64,
) -> Result<String, DbError> {
    let code = secret::new_token();
    store::insert_code(
        conn,
        &AuthorizationCode {
            code_hash: secret::hash(&code),
            client_id: authorization.client.id.clone(),
            user_id,
            redirect_uri: authorization.redirect_uri.clone(),
            scope: authorization.scopes.to_string(),
            code_challenge: authorization.code_challenge.clone(),
            expires_at: now + CODE_SECONDS,
            used_at: None,
        },
    )
    .await?;
    Ok(code)
}

/// RFC 7009: revokes a token of this client (a refresh token with its whole family).
/// Unknown tokens and other clients' tokens are ignored, as the RFC asks.
pub async fn revoke(
    conn: &mut dyn Conn,
    client: &Client,
    token: &str,
    now: i64,
) -> Result<(), DbError> {
    let hash = secret::hash(token);
    if let Some(access) = store::access_token(conn, &hash).await?
        && access.client_id == client.id
    {
        store::revoke_access_token(conn, &hash, now).await?;
    }
    if let Some(refresh) = store::refresh_token(conn, &hash).await?
        && refresh.client_id == client.id
    {
        store::revoke_family(conn, &refresh.family, now).await?;
    }
    Ok(())
}

/// RFC 7662: what a client may learn about one of its tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Introspection {
    pub scope: String,
    pub client_id: String,
    pub user_id: Option<i64>,
    pub token_type: &'static str,
    pub issued_at: Option<i64>,
    pub expires_at: Option<i64>,
}

/// `None` means inactive: unknown, expired, revoked, or another client's.
pub async fn introspect(
    conn: &mut dyn Conn,
    client: &Client,
    token: &str,
    now: i64,
) -> Result<Option<Introspection>, DbError> {
    let hash = secret::hash(token);
    if let Some(access) = store::access_token(conn, &hash).await? {
        let active =
            access.client_id == client.id && access.revoked_at.is_none() && access.expires_at > now;
        return Ok(active.then_some(Introspection {
            scope: access.scope,
            client_id: access.client_id,
            user_id: access.user_id,
            token_type: "access_token",
            issued_at: Some(access.issued_at),
            expires_at: Some(access.expires_at),
        }));
    }
    if let Some(refresh) = store::refresh_token(conn, &hash).await? {
        let active = refresh.client_id == client.id && refresh.state == RefreshState::Live;
        return Ok(active.then_some(Introspection {
            scope: refresh.scope,
            client_id: refresh.client_id,
            user_id: Some(refresh.user_id),
            token_type: "refresh_token",
            issued_at: None,
            expires_at: None,
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifiers_and_challenges() {
        assert!(valid_verifier(&"a".repeat(43)));
        assert!(valid_verifier(&"a".repeat(128)));
        assert!(!valid_verifier(&"a".repeat(42)));
        assert!(!valid_verifier(&"a".repeat(129)));
        assert!(!valid_verifier(&format!("{}+", "a".repeat(43))));
        assert!(valid_challenge(&secret::s256("x")));
        assert!(!valid_challenge("plain-text"));
    }

    fn client(scopes: &str, defaults: &str) -> Client {
        Client {
            id: "c".into(),
            name: "c".into(),
            secret_hash: None,
            redirect_uris: vec![],
            scopes: scopes.into(),
            default_scopes: defaults.into(),
            grants: vec![],
        }
    }

    #[test]
    fn scope_defaults_and_limits() {
        let c = client("read write create_account", "");
        assert_eq!(
            grant_scopes(&c, None, Scope::is_user_scope)
                .unwrap()
                .to_string(),
            "read write"
        );
        assert_eq!(
            grant_scopes(&c, None, |s| !s.is_user_scope())
                .unwrap()
                .to_string(),
            "create_account"
        );
        assert_eq!(
            grant_scopes(&client("read write", "read"), None, Scope::is_user_scope)
                .unwrap()
                .to_string(),
            "read"
        );
        assert!(grant_scopes(&c, Some("purchase"), Scope::is_user_scope).is_err());
        assert!(grant_scopes(&c, Some("create_account"), Scope::is_user_scope).is_err());
        assert!(grant_scopes(&c, Some("bogus"), Scope::is_user_scope).is_err());
    }
}
