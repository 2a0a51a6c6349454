//! The authorization server's workflows: each loads the records a decision of `oauth` needs,
//! asks it, and does what it says (marks a code used, rotates a refresh token, revokes a
//! family, stores new tokens), inside the caller's one transaction.

use crate::oauth::{
    self, Authorization, AuthorizeError, Client, ClientCredentials, CodeDecision, Grant, Issued,
    LIVE_REFRESH_TOKENS, OAuthError, RefreshDecision, RefreshState, RefreshToken, TokenRequest,
};
use crate::oauth::{ACCESS_TOKEN_SECONDS, Introspection, scope::Scopes, secret};
use crate::store::oauth::{self as store, UserSecret};
use crate::store::{Conn, DbError};

/// Authenticates the client of a token, revocation or introspection request.
pub async fn authenticate_client(
    conn: &mut dyn Conn,
    credentials: &ClientCredentials,
) -> Result<Result<Client, OAuthError>, DbError> {
    let client = store::client(conn, &credentials.client_id).await?;
    Ok(oauth::authenticate(client, credentials))
}

/// A token request refused: the error to answer, and whether the refusal revoked tokens
/// (a code or a refresh token presented twice revokes what is still live of its family),
/// which the token caches must then forget.
#[derive(Debug)]
pub struct Refusal {
    pub error: OAuthError,
    pub revoked: bool,
}

impl From<OAuthError> for Refusal {
    fn from(error: OAuthError) -> Refusal {
        Refusal {
            error,
            revoked: false,
        }
    }
}

/// The token endpoint: runs the grant the request names.
pub async fn token(
    conn: &mut dyn Conn,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Result<Issued, Refusal>, DbError> {
    match oauth::grant_of(client, request) {
        Err(error) => Ok(Err(error.into())),
        Ok(Grant::AuthorizationCode) => exchange_code(conn, client, request, now).await,
        Ok(Grant::RefreshToken) => refresh(conn, client, request, now).await,
        Ok(Grant::ClientCredentials) => {
            Ok(match oauth::client_credentials_scopes(client, request) {
                Ok(scope) => {
                    // The secret was checked before this write: a rotation meanwhile revokes
                    // the client's tokens, and one of the old secret must not slip past it.
                    if !store::secret_unchanged(conn, client).await? {
                        let rotated = OAuthError::InvalidClient { basic: false };
                        return Ok(Err(rotated.into()));
                    }
                    let (access, record) = oauth::new_access_token(client, None, &scope, now);
                    store::insert_access_token(conn, &record).await?;
                    Ok(issued(access, None, scope))
                }
                Err(error) => Err(error.into()),
            })
        }
    }
}

async fn exchange_code(
    conn: &mut dyn Conn,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Result<Issued, Refusal>, DbError> {
    let Some(raw_code) = request.code.as_deref() else {
        return Ok(Err(
            OAuthError::InvalidRequest("code is missing".into()).into()
        ));
    };
    let code_hash = secret::hash(raw_code);
    store::lock_owner(conn, UserSecret::Code(&code_hash)).await?;
    let Some(code) = store::code(conn, &code_hash).await? else {
        return Ok(Err(oauth::unknown_code().into()));
    };
    let mut decision = oauth::decide_code(&code, client, request, now);
    // Marking the code used is what tells two exchanges at one moment apart: only one does.
    if matches!(decision, CodeDecision::Spend(_)) && !store::use_code(conn, &code_hash, now).await?
    {
        decision = CodeDecision::Replay;
    }
    let scope = match decision {
        CodeDecision::Refuse(error) | CodeDecision::Spend(Err(error)) => {
            return Ok(Err(error.into()));
        }
        CodeDecision::Replay => {
            // Everything issued from the code is its family, named by the code.
            let revoked = store::revoke_family(conn, &code_hash, now).await? > 0;
            return Ok(Err(Refusal {
                error: oauth::code_used_twice(),
                revoked,
            }));
        }
        CodeDecision::Spend(Ok(scope)) => scope,
    };
    // The family of the tokens from this code is named by the code, so that a replay of
    // the code finds them.
    let refresh = secret::new_token();
    let token = RefreshToken {
        token_hash: secret::hash(&refresh),
        client_id: client.id.clone(),
        user_id: code.user_id,
        scope: scope.to_string(),
        family: code.code_hash.clone(),
        code_hash: Some(code.code_hash),
        state: RefreshState::Live,
    };
    store::insert_refresh_token(conn, &token, now).await?;
    let (access, record) = oauth::new_access_token(client, Some(&token), &scope, now);
    store::insert_access_token(conn, &record).await?;
    store::discard_beyond(conn, code.user_id, &client.id, LIVE_REFRESH_TOKENS, now).await?;
    Ok(Ok(issued(access, Some(refresh), scope)))
}

async fn refresh(
    conn: &mut dyn Conn,
    client: &Client,
    request: &TokenRequest,
    now: i64,
) -> Result<Result<Issued, Refusal>, DbError> {
    let Some(raw) = request.refresh_token.as_deref() else {
        return Ok(Err(OAuthError::InvalidRequest(
            "refresh_token is missing".into(),
        )
        .into()));
    };
    let hash = secret::hash(raw);
    store::lock_owner(conn, UserSecret::RefreshToken(&hash)).await?;
    let Some(token) = store::refresh_token(conn, &hash).await? else {
        return Ok(Err(oauth::unknown_refresh_token().into()));
    };
    let mut decision = oauth::decide_refresh(&token, client, request);
    // With the owner's row held the token is still live; were it not, this is a reuse.
    if matches!(decision, RefreshDecision::Rotate(_))
        && !store::change_refresh_state(conn, &hash, RefreshState::Live, RefreshState::Rotated, now)
            .await?
    {
        decision = RefreshDecision::Reuse;
    }
    let scope = match decision {
        RefreshDecision::Refuse(error) => return Ok(Err(error.into())),
        RefreshDecision::Reuse => {
            let revoked = store::revoke_family(conn, &token.family, now).await? > 0;
            return Ok(Err(Refusal {
                error: oauth::refresh_used_twice(),
                revoked,
            }));
        }
        RefreshDecision::Rotate(scope) => scope,
    };
    // The successor keeps the grant's scope, so a narrower access token now does not
    // narrow later refreshes.
    let successor = secret::new_token();
    let next = RefreshToken {
        token_hash: secret::hash(&successor),
        state: RefreshState::Live,
        ..token
    };
    store::insert_refresh_token(conn, &next, now).await?;
    let (access, record) = oauth::new_access_token(client, Some(&next), &scope, now);
    store::insert_access_token(conn, &record).await?;
    Ok(Ok(issued(access, Some(successor), scope)))
}

fn issued(access_token: String, refresh_token: Option<String>, scope: Scopes) -> Issued {
    Issued {
        access_token,
        refresh_token,
        scope,
        expires_in: ACCESS_TOKEN_SECONDS,
    }
}

/// Validates the query of `GET /accounts/oauth/authorize` (all pairs, repeated ones kept).
pub async fn validate_authorization(
    conn: &mut dyn Conn,
    pairs: &[(String, String)],
) -> Result<Result<Authorization, AuthorizeError>, DbError> {
    let client = match oauth::requested_client_id(pairs) {
        Some(id) => store::client(conn, id).await?,
        None => None,
    };
    Ok(oauth::validate_authorization(pairs, client))
}

/// Issues an authorization code for a signed-in user who consented; returns the raw code.
pub async fn issue_code(
    conn: &mut dyn Conn,
    authorization: &Authorization,
    user_id: i64,
    now: i64,
) -> Result<String, DbError> {
    let raw = secret::new_token();
    store::insert_code(conn, &authorization.code_record(&raw, user_id, now)).await?;
    Ok(raw)
}

/// RFC 7009: revokes a token of this client (a refresh token with its whole family);
/// whether anything was still live to revoke. An unknown token is answered as revoked, as
/// §2.2 asks. Another client's token is left alone and answered alike, where §2.1 would
/// refuse the request: a refusal would tell the client that the token it holds is live
/// (and whose it is not), which the same answer for every token it does not own does not.
pub async fn revoke(
    conn: &mut dyn Conn,
    client: &Client,
    token: &str,
    now: i64,
) -> Result<bool, DbError> {
    let hash = secret::hash(token);
    store::lock_owner(conn, UserSecret::RefreshToken(&hash)).await?;
    let mut revoked = 0;
    if let Some(access) = store::access_token(conn, &hash).await?
        && access.client_id == client.id
    {
        revoked += store::revoke_access_token(conn, &hash, now).await?;
    }
    if let Some(refresh) = store::refresh_token(conn, &hash).await?
        && refresh.client_id == client.id
    {
        revoked += store::revoke_family(conn, &refresh.family, now).await?;
    }
    Ok(revoked > 0)
}

/// RFC 7662: `None` means inactive: unknown, expired, revoked, or another client's.
pub async fn introspect(
    conn: &mut dyn Conn,
    client: &Client,
    token: &str,
    now: i64,
) -> Result<Option<Introspection>, DbError> {
    let hash = secret::hash(token);
    if let Some(access) = store::access_token(conn, &hash).await? {
        return Ok(oauth::introspect_access(access, client, now));
    }
    if let Some(refresh) = store::refresh_token(conn, &hash).await? {
        return Ok(oauth::introspect_refresh(refresh, client));
    }
    Ok(None)
}
