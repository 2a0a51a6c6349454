//! What the authorization server keeps and decides over: clients, codes and tokens, as plain
//! values. `store::oauth` reads and writes them; the rules here never reach the database.

use crate::domain::text_enum;

/// An application registered to ask for tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Client {
    pub id: String,
    pub name: String,
    /// `None` for a public client (no secret; PKCE required).
    pub secret_hash: Option<String>,
    pub redirect_uris: Vec<String>,
    /// Space-separated scopes the client may be granted.
    pub scopes: String,
    /// Space-separated scopes used when a request names none (empty: all that fit).
    pub default_scopes: String,
    pub grants: Vec<String>,
}

/// An authorization code, by its hash: what the user allowed, for one exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizationCode {
    pub code_hash: String,
    pub client_id: String,
    pub user_id: i64,
    pub redirect_uri: String,
    pub scope: String,
    pub code_challenge: Option<String>,
    pub expires_at: i64,
    pub used_at: Option<i64>,
}

/// An access token, by its hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessToken {
    pub token_hash: String,
    pub client_id: String,
    pub user_id: Option<i64>,
    pub scope: String,
    /// The refresh family it was issued in (none for client credentials).
    pub family: Option<String>,
    /// The code it came from, if any.
    pub code_hash: Option<String>,
    pub issued_at: i64,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
}

text_enum! {
    /// Where a refresh token is in its life.
    pub enum RefreshState {
        Live = "live",
        /// Replaced by its successor: presenting it again is reuse.
        Rotated = "rotated",
        /// Pushed out by the 20-token rule.
        Discarded = "discarded",
        Revoked = "revoked",
    }
}

/// A refresh token, by its hash. The tokens issued from one code (and their successors)
/// form a family, named by the code's hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefreshToken {
    pub token_hash: String,
    pub client_id: String,
    pub user_id: i64,
    pub scope: String,
    pub family: String,
    pub code_hash: Option<String>,
    pub state: RefreshState,
}

/// A browser session at the authorization endpoint, by the hash of its cookie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrowserSession {
    /// The token every form of the session must carry.
    pub csrf_token: String,
    /// The signed-in user, once there is one.
    pub user_id: Option<i64>,
    pub expires_at: i64,
}
