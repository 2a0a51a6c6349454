//! The rules of the token endpoint (RFC 6749, 7636, 7009, 7662 and the decisions of
//! oauth.md), as decisions over the stored records: each says what to do, and the use case
//! `usecase::authorization` does it in one transaction (a used code, a rotated token, a
//! revoked family commit together).

use super::records::{AccessToken, AuthorizationCode, Client, RefreshState, RefreshToken};
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
/// How long a spent refresh token (rotated, discarded, revoked) is kept after it was
/// spent: for that long, presenting a rotated one still revokes its family. Later it is
/// just unknown (`invalid_grant` all the same).
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

/// Authenticates the client of a token, revocation or introspection request, given the
/// client its id names (if any). A public client (no secret registered) authenticates by
/// its id alone and must use PKCE.
pub fn authenticate(
    client: Option<Client>,
    credentials: &ClientCredentials,
) -> Result<Client, OAuthError> {
    let failed = OAuthError::InvalidClient {
        basic: credentials.via_basic,
    };
    let client = client.ok_or(failed.clone())?;
    let ok = match (&client.secret_hash, &credentials.secret) {
        (Some(stored), Some(given)) => secret::matches(given, stored),
        (None, None) => true,
        _ => false,
    };
    if ok { Ok(client) } else { Err(failed) }
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

/// The grants of the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    AuthorizationCode,
    RefreshToken,
    ClientCredentials,
}

/// The grant a token request names, if the client is registered for it.
pub fn grant_of(client: &Client, request: &TokenRequest) -> Result<Grant, OAuthError> {
    let (name, grant) = match request.grant_type.as_deref() {
        None | Some("") => {
            return Err(OAuthError::InvalidRequest("grant_type is missing".into()));
        }
        Some(GRANT_AUTHORIZATION_CODE) => (GRANT_AUTHORIZATION_CODE, Grant::AuthorizationCode),
        Some(GRANT_REFRESH_TOKEN) => (GRANT_REFRESH_TOKEN, Grant::RefreshToken),
        Some(GRANT_CLIENT_CREDENTIALS) => (GRANT_CLIENT_CREDENTIALS, Grant::ClientCredentials),
        Some(_) => return Err(OAuthError::UnsupportedGrantType),
    };
    // A public client has no secret, so anyone may present its id: it gets no token of
    // its own, whatever its registration says (`souk client create` refuses to register
    // one so; a row changed by hand does not get past this).
    let public_client_credentials =
        matches!(grant, Grant::ClientCredentials) && client.secret_hash.is_none();
    if client.grants.iter().any(|g| g == name) && !public_client_credentials {
        Ok(grant)
    } else {
        Err(OAuthError::UnauthorizedClient)
    }
}

/// What an authorization code presented to the token endpoint leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodeDecision {
    /// Refuse, change nothing (an unknown code, or another client's).
    Refuse(OAuthError),
    /// Used before: the code may have leaked, so nothing issued from it stays valid
    /// (RFC 6749 §4.1.2): revoke its family and refuse.
    Replay,
    /// The code is spent now, whatever follows: then issue tokens with these scopes (in
    /// the family the code names), or refuse with the error.
    Spend(Result<Scopes, OAuthError>),
}

/// The decision on `code`, the stored code a token request names.
pub fn decide_code(
    code: &AuthorizationCode,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> CodeDecision {
    if code.client_id != client.id {
        return CodeDecision::Refuse(unknown_code());
    }
    if code.used_at.is_some() {
        return CodeDecision::Replay;
    }
    CodeDecision::Spend(check_exchange(code, client, request, now))
}

fn check_exchange(
    code: &AuthorizationCode,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Scopes, OAuthError> {
    if code.expires_at <= now {
        return Err(invalid_grant("the authorization code has expired"));
    }
    if request.redirect_uri.as_deref() != Some(code.redirect_uri.as_str()) {
        return Err(invalid_grant(
            "redirect_uri differs from the authorization request",
        ));
    }
    check_pkce(
        code.code_challenge.as_deref(),
        request.code_verifier.as_deref(),
        client.secret_hash.is_none(),
    )?;
    Ok(Scopes::from_stored(&code.scope))
}

/// RFC 7636: the verifier must match the challenge of the authorization request; a public
/// client must have sent one.
pub fn check_pkce(
    challenge: Option<&str>,
    verifier: Option<&str>,
    public_client: bool,
) -> Result<(), OAuthError> {
    match (challenge, verifier) {
        (Some(challenge), Some(verifier)) => {
            if valid_verifier(verifier) && secret::s256(verifier) == challenge {
                Ok(())
            } else {
                Err(invalid_grant("code_verifier does not match"))
            }
        }
        (Some(_), None) => Err(invalid_grant("code_verifier is missing")),
        (None, Some(_)) => Err(invalid_grant(
            "code_verifier given, but the authorization request had no code_challenge",
        )),
        (None, None) if public_client => Err(invalid_grant("a public client must use PKCE")),
        (None, None) => Ok(()),
    }
}

/// The error of a code that is unknown, or another client's.
pub fn unknown_code() -> OAuthError {
    invalid_grant("unknown authorization code")
}

/// The error of a code presented twice (or by two exchanges at once).
pub fn code_used_twice() -> OAuthError {
    invalid_grant("the authorization code was already used")
}

/// What a refresh token presented to the token endpoint leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefreshDecision {
    /// Refuse, change nothing.
    Refuse(OAuthError),
    /// A rotated token presented again: it was stolen or replayed (RFC 9700 §4.14.2):
    /// revoke its family and refuse.
    Reuse,
    /// Mark the token rotated and issue an access token with these scopes and a successor
    /// (which keeps the grant's scope, so a narrower access token now does not narrow
    /// later refreshes).
    Rotate(Scopes),
}

/// The decision on `token`, the stored refresh token a request names.
pub fn decide_refresh(
    token: &RefreshToken,
    client: &Client,
    request: &TokenRequest,
) -> RefreshDecision {
    if token.client_id != client.id {
        return RefreshDecision::Refuse(unknown_refresh_token());
    }
    match token.state {
        RefreshState::Live => {}
        RefreshState::Rotated => return RefreshDecision::Reuse,
        RefreshState::Discarded | RefreshState::Revoked => {
            return RefreshDecision::Refuse(invalid_grant("the refresh token is no longer valid"));
        }
    }
    let granted = Scopes::from_stored(&token.scope);
    match request.scope.as_deref().filter(|s| !s.trim().is_empty()) {
        None => RefreshDecision::Rotate(granted),
        Some(text) => match Scopes::parse(text) {
            Ok(asked) if asked.is_subset(&granted) => RefreshDecision::Rotate(asked),
            Ok(_) => RefreshDecision::Refuse(OAuthError::InvalidScope(text.to_owned())),
            Err(unknown) => RefreshDecision::Refuse(OAuthError::InvalidScope(unknown)),
        },
    }
}

/// The error of a refresh token that is unknown, or another client's.
pub fn unknown_refresh_token() -> OAuthError {
    invalid_grant("unknown refresh token")
}

/// The error of a refresh token presented again after it was rotated.
pub fn refresh_used_twice() -> OAuthError {
    invalid_grant("the refresh token was already used")
}

/// The scopes of a client credentials grant: the client's own scopes (never a user's).
pub fn client_credentials_scopes(
    client: &Client,
    request: &TokenRequest,
) -> Result<Scopes, OAuthError> {
    if let Some(uri) = request.redirect_uri.as_deref()
        && !client.redirect_uris.iter().any(|r| r == uri)
    {
        return Err(OAuthError::InvalidRequest(
            "redirect_uri is not registered for this client".into(),
        ));
    }
    grant_scopes(client, request.scope.as_deref(), |s| !s.is_user_scope())
}

/// A new access token: the raw token (shown once) and the record that keeps its hash. A
/// user's token belongs to the refresh family of `grant` (a replayed code or refresh token
/// revokes it with the family); a client's own token (`None`) to none.
pub fn new_access_token(
    client: &Client,
    grant: Option<&RefreshToken>,
    scope: &Scopes,
    now: i64,
) -> (String, AccessToken) {
    let raw = secret::new_token();
    let record = AccessToken {
        token_hash: secret::hash(&raw),
        client_id: client.id.clone(),
        user_id: grant.map(|g| g.user_id),
        scope: scope.to_string(),
        family: grant.map(|g| g.family.clone()),
        code_hash: grant.and_then(|g| g.code_hash.clone()),
        issued_at: now,
        expires_at: now + ACCESS_TOKEN_SECONDS,
        revoked_at: None,
    };
    (raw, record)
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

/// RFC 7662: what a client may learn about one of its tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Introspection {
    pub scope: String,
    pub client_id: String,
    pub user_id: Option<i64>,
    /// RFC 7662's `token_type`: the type RFC 6749 §5.1 gives an access token (`bearer`);
    /// none for a refresh token, which has no such type.
    pub token_type: Option<&'static str>,
    pub issued_at: Option<i64>,
    pub expires_at: Option<i64>,
}

/// An access token as introspection shows it to `client`; `None` means inactive
/// (expired, revoked, or another client's).
pub fn introspect_access(token: AccessToken, client: &Client, now: i64) -> Option<Introspection> {
    let active =
        token.client_id == client.id && token.revoked_at.is_none() && token.expires_at > now;
    active.then_some(Introspection {
        scope: token.scope,
        client_id: token.client_id,
        user_id: token.user_id,
        token_type: Some("bearer"),
        issued_at: Some(token.issued_at),
        expires_at: Some(token.expires_at),
    })
}

/// A refresh token as introspection shows it to `client`; `None` means inactive.
pub fn introspect_refresh(token: RefreshToken, client: &Client) -> Option<Introspection> {
    let active = token.client_id == client.id && token.state == RefreshState::Live;
    active.then_some(Introspection {
        scope: token.scope,
        client_id: token.client_id,
        user_id: Some(token.user_id),
        token_type: None,
        issued_at: None,
        expires_at: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::authorize::valid_challenge;

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

    fn confidential() -> Client {
        Client {
            secret_hash: Some(secret::hash("s3cret")),
            redirect_uris: vec!["https://app.example/cb".into()],
            grants: vec![GRANT_AUTHORIZATION_CODE.into(), GRANT_REFRESH_TOKEN.into()],
            ..client("read write purchase", "")
        }
    }

    fn code() -> AuthorizationCode {
        AuthorizationCode {
            code_hash: "h".into(),
            client_id: "c".into(),
            user_id: 7,
            redirect_uri: "https://app.example/cb".into(),
            scope: "read write".into(),
            code_challenge: None,
            expires_at: 1_060,
            used_at: None,
        }
    }

    fn exchange() -> TokenRequest {
        TokenRequest {
            grant_type: Some(GRANT_AUTHORIZATION_CODE.into()),
            code: Some("raw".into()),
            redirect_uri: Some("https://app.example/cb".into()),
            ..TokenRequest::default()
        }
    }

    #[test]
    fn a_fresh_code_is_spent_on_tokens_of_its_scope() {
        let decision = decide_code(&code(), &confidential(), &exchange(), 1_000);
        let CodeDecision::Spend(Ok(scope)) = decision else {
            panic!("{decision:?}");
        };
        assert_eq!(scope.to_string(), "read write");
    }

    #[test]
    fn a_replayed_code_revokes_its_family() {
        let used = AuthorizationCode {
            used_at: Some(1_001),
            ..code()
        };
        // A replay counts before anything else, even after expiry.
        assert_eq!(
            decide_code(&used, &confidential(), &exchange(), 5_000),
            CodeDecision::Replay
        );
    }

    #[test]
    fn another_clients_code_is_unknown_and_stays_unspent() {
        let other = Client {
            id: "other".into(),
            ..confidential()
        };
        assert_eq!(
            decide_code(&code(), &other, &exchange(), 1_000),
            CodeDecision::Refuse(unknown_code())
        );
    }

    #[test]
    fn a_failed_exchange_still_spends_the_code() {
        let spent_with =
            |request: &TokenRequest, now| match decide_code(&code(), &confidential(), request, now)
            {
                CodeDecision::Spend(Err(OAuthError::InvalidGrant(why))) => why,
                other => panic!("{other:?}"),
            };
        assert!(spent_with(&exchange(), 1_060).contains("expired"));
        let elsewhere = TokenRequest {
            redirect_uri: Some("https://evil.example/cb".into()),
            ..exchange()
        };
        assert!(spent_with(&elsewhere, 1_000).contains("redirect_uri"));
    }

    #[test]
    fn pkce_matches_the_challenge() {
        let verifier = "v".repeat(43);
        let challenge = secret::s256(&verifier);
        assert_eq!(check_pkce(Some(&challenge), Some(&verifier), true), Ok(()));
        assert!(check_pkce(Some(&challenge), Some(&"w".repeat(43)), true).is_err());
        assert!(check_pkce(Some(&challenge), None, false).is_err());
        assert!(check_pkce(None, Some(&verifier), false).is_err());
        assert!(
            check_pkce(None, None, true).is_err(),
            "a public client needs PKCE"
        );
        assert_eq!(check_pkce(None, None, false), Ok(()));
    }

    fn refresh_token(state: RefreshState) -> RefreshToken {
        RefreshToken {
            token_hash: "t".into(),
            client_id: "c".into(),
            user_id: 7,
            scope: "read write".into(),
            family: "h".into(),
            code_hash: Some("h".into()),
            state,
        }
    }

    fn refreshing(scope: Option<&str>) -> TokenRequest {
        TokenRequest {
            grant_type: Some(GRANT_REFRESH_TOKEN.into()),
            refresh_token: Some("raw".into()),
            scope: scope.map(str::to_owned),
            ..TokenRequest::default()
        }
    }

    #[test]
    fn a_live_refresh_token_rotates_within_its_grant() {
        let live = refresh_token(RefreshState::Live);
        let client = confidential();
        let RefreshDecision::Rotate(all) = decide_refresh(&live, &client, &refreshing(None)) else {
            panic!("not rotated");
        };
        assert_eq!(all.to_string(), "read write");
        let narrower = decide_refresh(&live, &client, &refreshing(Some("read")));
        assert!(matches!(narrower, RefreshDecision::Rotate(s) if s.to_string() == "read"));
        assert_eq!(
            decide_refresh(&live, &client, &refreshing(Some("read purchase"))),
            RefreshDecision::Refuse(OAuthError::InvalidScope("read purchase".into()))
        );
    }

    #[test]
    fn a_rotated_refresh_token_revokes_its_family_and_a_spent_one_is_refused() {
        let client = confidential();
        assert_eq!(
            decide_refresh(
                &refresh_token(RefreshState::Rotated),
                &client,
                &refreshing(None)
            ),
            RefreshDecision::Reuse
        );
        for spent in [RefreshState::Discarded, RefreshState::Revoked] {
            assert!(matches!(
                decide_refresh(&refresh_token(spent), &client, &refreshing(None)),
                RefreshDecision::Refuse(OAuthError::InvalidGrant(_))
            ));
        }
        let other = Client {
            id: "other".into(),
            ..confidential()
        };
        assert_eq!(
            decide_refresh(
                &refresh_token(RefreshState::Live),
                &other,
                &refreshing(None)
            ),
            RefreshDecision::Refuse(unknown_refresh_token())
        );
    }

    #[test]
    fn the_grant_must_be_known_and_registered() {
        let client = confidential();
        let asking = |grant: Option<&str>| TokenRequest {
            grant_type: grant.map(str::to_owned),
            ..TokenRequest::default()
        };
        assert_eq!(
            grant_of(&client, &asking(Some(GRANT_REFRESH_TOKEN))),
            Ok(Grant::RefreshToken)
        );
        assert!(matches!(
            grant_of(&client, &asking(None)),
            Err(OAuthError::InvalidRequest(_))
        ));
        assert_eq!(
            grant_of(&client, &asking(Some("password"))),
            Err(OAuthError::UnsupportedGrantType)
        );
        assert_eq!(
            grant_of(&client, &asking(Some(GRANT_CLIENT_CREDENTIALS))),
            Err(OAuthError::UnauthorizedClient)
        );
    }

    #[test]
    fn clients_authenticate_by_secret_or_as_public() {
        let by = |secret: Option<&str>| ClientCredentials {
            client_id: "c".into(),
            secret: secret.map(str::to_owned),
            via_basic: true,
        };
        assert!(authenticate(Some(confidential()), &by(Some("s3cret"))).is_ok());
        assert_eq!(
            authenticate(Some(confidential()), &by(Some("wrong"))),
            Err(OAuthError::InvalidClient { basic: true })
        );
        assert!(authenticate(Some(confidential()), &by(None)).is_err());
        assert!(authenticate(Some(client("read", "")), &by(None)).is_ok());
        assert!(authenticate(None, &by(Some("s3cret"))).is_err());
    }

    #[test]
    fn introspection_shows_only_live_tokens_of_the_client() {
        let token = AccessToken {
            token_hash: "a".into(),
            client_id: "c".into(),
            user_id: Some(7),
            scope: "read".into(),
            family: None,
            code_hash: None,
            issued_at: 1_000,
            expires_at: 2_000,
            revoked_at: None,
        };
        let client = confidential();
        assert!(introspect_access(token.clone(), &client, 1_999).is_some());
        assert!(introspect_access(token.clone(), &client, 2_000).is_none());
        let revoked = AccessToken {
            revoked_at: Some(1_500),
            ..token
        };
        assert!(introspect_access(revoked, &client, 1_600).is_none());
        assert!(introspect_refresh(refresh_token(RefreshState::Live), &client).is_some());
        assert!(introspect_refresh(refresh_token(RefreshState::Rotated), &client).is_none());
    }
}
