//! Bearer authentication of the resource API and the caller it yields.
//!
//! Every `/v1/...` and `/v2/...` resource needs a valid access token (the roots do not).
//! Lookups go through the process's cache of tokens (`access::TokenCache`).

use std::marker::PhantomData;

use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use crate::access::Caller;
use crate::domain::locale::Text;
use crate::error::{ApiError, ErrorCode};
use crate::oauth::scope::{Scope, Scopes};
use crate::oauth::secret;
use crate::state::AppState;
use crate::store::oauth as store;
use crate::usecase::advertisements::Reader;

/// The user of a user token that carries `scope`; 403 otherwise (handlers ask through
/// [`UserWith`]).
fn user_with(caller: &Caller, scope: Scope) -> Result<i64, ApiError> {
    match caller.user_id {
        Some(user) if caller.scopes.contains(scope) => Ok(user),
        Some(_) => Err(lacks(scope)),
        None => Err(forbidden("this needs a user's token, not a client token")),
    }
}

/// The client of a client-credentials token that carries `scope`; 403 otherwise (handlers
/// ask through [`ClientWith`]).
fn client_with(caller: Caller, scope: Scope) -> Result<String, ApiError> {
    match caller.user_id {
        None if caller.scopes.contains(scope) => Ok(caller.client_id),
        None => Err(lacks(scope)),
        Some(_) => Err(forbidden("this needs a client token, not a user's token")),
    }
}

fn lacks(scope: Scope) -> ApiError {
    forbidden(&format!("the token lacks the scope `{}`", scope.as_str()))
}

fn forbidden(why: &str) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized).with_message(Text::new(
        format!("Geen toegang: {why}"),
        format!("Accès refusé : {why}"),
    ))
}

/// The caller as a reader of ads: its user (none for a client token), and whether the
/// token may read private fields (scope `read`).
pub fn ad_reader(caller: &Caller) -> Reader {
    Reader {
        user: caller.user_id,
        private: caller.scopes.contains(Scope::Read),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| unauthenticated("invalid_token"))
    }
}

/// The scopes an extractor can ask for, as types: `UserWith<need::Write>`.
pub mod need {
    use crate::oauth::scope::Scope;

    pub trait Needs {
        const SCOPE: Scope;
    }

    macro_rules! needs {
        ($($name:ident = $scope:ident),+) => {$(
            pub struct $name;
            impl Needs for $name {
                const SCOPE: Scope = Scope::$scope;
            }
        )+};
    }

    needs!(
        Read = Read,
        Write = Write,
        Purchase = Purchase,
        CreateAccount = CreateAccount,
        ConfirmUpcall = ConfirmUpcall,
        Webhooks = Webhooks
    );
}

/// The user of a user token that carries the scope `N`, else 403 `unauthorized`.
///
/// This is how a handler says who may call it. Being an extractor placed before the body
/// (axum runs the request-parts extractors first, in argument order), it answers 403
/// before anything about the body is judged; a handler whose permission also depends on
/// the resource (the ad's seller, the user in the path) takes its body as
/// `Result<JsonBody<T>, ApiError>` and uses it only once that check passed.
pub struct UserWith<N>(pub i64, pub(super) PhantomData<N>);

impl<N: need::Needs, S: Send + Sync> FromRequestParts<S> for UserWith<N> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        Ok(UserWith(user_with(&caller, N::SCOPE)?, PhantomData))
    }
}

/// The client of a client-credentials token that carries the scope `N`, else 403
/// `unauthorized` (see [`UserWith`]).
pub struct ClientWith<N>(pub String, pub(super) PhantomData<N>);

impl<N: need::Needs, S: Send + Sync> FromRequestParts<S> for ClientWith<N> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        Ok(ClientWith(client_with(caller, N::SCOPE)?, PhantomData))
    }
}

/// 401 `unauthenticated` with the bearer challenge naming RFC 6750's `error`.
pub(super) fn unauthenticated(error: &str) -> ApiError {
    let challenge = format!("Bearer realm=\"souk\", error=\"{error}\"");
    ApiError::new(ErrorCode::Unauthenticated).with_header("www-authenticate", challenge)
}

/// Admits a request (`http::guard` calls it for every route): a versioned resource request
/// needs a valid access token, whose [`Caller`] goes into the request's extensions; any
/// other passes as it is. `Err` is the answer to send instead.
pub async fn admit(state: &AppState, request: &mut Request) -> Result<(), Response> {
    let needs_token = request.extensions().get::<MatchedPath>().is_some_and(|p| {
        let path = p.as_str();
        path.starts_with("/v1/") || path.starts_with("/v2/")
    });
    if !needs_token {
        return Ok(());
    }
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().map(str::to_owned));
    let query = request.uri().query().map(str::to_owned);
    let caller = resolve(state, authorization, query.as_deref())
        .await
        .map_err(IntoResponse::into_response)?;
    request.extensions_mut().insert(caller);
    Ok(())
}

/// The caller of a request, from its `Authorization` header (`Err` when not ASCII) and
/// its query.
async fn resolve(
    state: &AppState,
    authorization: Option<Result<String, axum::http::header::ToStrError>>,
    query: Option<&str>,
) -> Result<Caller, ApiError> {
    let from_header = match authorization {
        None => None,
        Some(value) => {
            // Another scheme, no token or one that is not text is no bearer token: the
            // token is missing, which oauth.md answers `invalid_token`.
            let text = value.map_err(|_| unauthenticated("invalid_token"))?;
            let (scheme, token) = text.split_once(' ').unwrap_or((&text, ""));
            if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
                return Err(unauthenticated("invalid_token"));
            }
            Some(token.trim().to_owned())
        }
    };
    let from_query = query.and_then(|query| {
        form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == "access_token")
            .map(|(_, v)| v.into_owned())
    });
    let token = match (from_header, from_query) {
        (Some(_), Some(_)) => {
            return Err(ApiError::new(ErrorCode::InvalidRequest).with_message(Text::new(
                "Geef het access token in de Authorization-header of in de query, niet in beide",
                "Donnez le jeton d'accès dans l'en-tête Authorization ou dans la requête, pas les deux",
            )));
        }
        (Some(token), None) | (None, Some(token)) => token,
        // oauth.md: a missing token is answered as an unknown one is (RFC 6750 would leave
        // the error out; the contract names it).
        (None, None) => return Err(unauthenticated("invalid_token")),
    };
    let now = state.clock.now();
    let hash = secret::hash(&token);
    let caller = match state.tokens.get(&hash, now) {
        Some(cached) => cached,
        None => {
            let started = state.tokens.start_lookup();
            let lookup = hash.clone();
            let record = state
                .db
                .read(move |conn| Box::pin(async move { store::access_token(conn, &lookup).await }))
                .await?;
            let caller = record.filter(|t| t.revoked_at.is_none()).map(|t| Caller {
                client_id: t.client_id,
                user_id: t.user_id,
                scopes: Scopes::from_stored(&t.scope),
                expires_at: t.expires_at,
            });
            state.tokens.put(started, hash, now, caller.clone());
            caller
        }
    };
    caller
        .filter(|c| c.expires_at > now)
        .ok_or_else(|| unauthenticated("invalid_token"))
}
