//! The authorization endpoint's rules (RFC 6749 §4.1, RFC 7636): which requests may go on
//! to sign-in and consent, and which are refused on a page or at the client's redirect URI.

use super::grants::{CODE_SECONDS, GRANT_AUTHORIZATION_CODE, grant_scopes};
use super::records::{AuthorizationCode, Client};
use super::redirect::{Redirect, match_redirect};
use super::scope::{Scope, Scopes};
use super::secret;

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

/// The `client_id` an authorization request names (the first, if repeated: the request is
/// refused for that, but the client is looked up all the same).
pub fn requested_client_id(pairs: &[(String, String)]) -> Option<&str> {
    pairs
        .iter()
        .find(|(k, _)| k == "client_id")
        .map(|(_, v)| v.as_str())
}

/// Validates the query of `GET /accounts/oauth/authorize` (all pairs, repeated ones kept),
/// given the client that [`requested_client_id`] names, if there is one.
pub fn validate_authorization(
    pairs: &[(String, String)],
    client: Option<Client>,
) -> Result<Authorization, AuthorizeError> {
    let count = |name: &str| pairs.iter().filter(|(k, _)| k == name).count();
    let value = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let page = |why: &str| Err(AuthorizeError::Page(why.to_owned()));
    if count("client_id") > 1 || count("redirect_uri") > 1 {
        // oauth.md case 8's `invalid_request`, shown on the page: a redirect to one of
        // two addresses cannot be trusted.
        return page("invalid_request: client_id and redirect_uri may appear only once");
    }
    if value("client_id").is_none() {
        return page("client_id is missing");
    }
    let Some(client) = client else {
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
        Err(AuthorizeError::Redirect {
            url: redirect.to_url(&params),
            error,
        })
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
    // A client registered with no user scope would get a code for nothing but a refresh
    // token, and with it the user's events: RFC 6749 §3.3 lets the request fail instead.
    if scopes.is_empty() {
        return fail("invalid_scope");
    }
    let code_challenge = value("code_challenge");
    match (value("code_challenge_method").as_deref(), &code_challenge) {
        (Some(method), _) if method != "S256" => return fail("invalid_request"),
        (Some(_), None) => return fail("invalid_request"),
        (_, Some(challenge)) if !valid_challenge(challenge) => return fail("invalid_request"),
        (None, Some(_)) => return fail("invalid_request"),
        (_, None) if client.secret_hash.is_none() => return fail("invalid_request"),
        _ => {}
    }
    Ok(Authorization {
        client,
        redirect,
        redirect_uri,
        scopes,
        state,
        code_challenge,
    })
}

/// An S256 challenge is the base64url of a SHA-256: 43 characters.
pub(super) fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && secret::is_base64url(challenge)
}

impl Authorization {
    /// The record of a new code for a signed-in user who consented (`raw`: the code the
    /// browser carries to the client; only its hash is kept).
    pub fn code_record(&self, raw: &str, user_id: i64, now: i64) -> AuthorizationCode {
        AuthorizationCode {
            code_hash: secret::hash(raw),
            client_id: self.client.id.clone(),
            user_id,
            redirect_uri: self.redirect_uri.clone(),
            scope: self.scopes.to_string(),
            code_challenge: self.code_challenge.clone(),
            expires_at: now + CODE_SECONDS,
            used_at: None,
        }
    }
}
