//! The token, revocation, introspection and metadata endpoints of the authorization server.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::domain::image::media_type;
use crate::error::{ApiError, ErrorCode};
use crate::oauth::scope::Scope;
use crate::oauth::{
    Client, ClientCredentials, GRANT_AUTHORIZATION_CODE, GRANT_CLIENT_CREDENTIALS,
    GRANT_REFRESH_TOKEN, OAuthError, TokenRequest,
};
use crate::state::AppState;
use crate::store::{Conn, DbError, DbFuture};
use crate::usecase::authorization;

/// An answer of these endpoints: the error answers are as much answers as the others.
type Answer = Result<Response, Response>;

use super::api::{Api, Operation, get, post};

pub const TOKEN_PATH: &str = "/accounts/oauth/token";
pub const REVOKE_PATH: &str = "/accounts/oauth/revoke";
pub const INTROSPECT_PATH: &str = "/accounts/oauth/introspect";
pub const AUTHORIZE_PATH: &str = "/accounts/oauth/authorize";

const TAG: &str = "Authorization server";

pub fn routes(api: Api) -> Api {
    api.route(
        client_endpoint(post(TOKEN_PATH, "token"), "TokenRequest", "An RFC 6749 §5.2 error")
            .summary("Issue tokens: authorization_code, refresh_token and client_credentials grants")
            .description("RFC 6749. Parameters as `application/x-www-form-urlencoded` body, or (a compatibility allowance for clients of the original) in the query string of the POST. Client authentication by HTTP Basic or `client_id`/`client_secret` parameters, not both. Errors are RFC 6749 §5.2 bodies. Every answer carries `Cache-Control: no-store`.")
            .ok(200, "The tokens", "TokenResponse"),
        token,
    )
    .route(
        get(TOKEN_PATH, "tokenGet")
            .tag(TAG)
            .summary("Refused: the token endpoint takes POST")
            .fails(400, "`invalid_request`", "OAuthError"),
        token_get,
    )
    .route(
        client_endpoint(post(REVOKE_PATH, "revoke"), "TokenParameter", "`invalid_request`: no `token`")
            .summary("Revoke an access or refresh token (RFC 7009)")
            .ok(200, "Revoked (or unknown: the answer is the same)", "Revocation"),
        revoke,
    )
    .route(
        client_endpoint(post(INTROSPECT_PATH, "introspect"), "TokenParameter", "`invalid_request`: no `token`")
            .summary("Describe a token of the calling client (RFC 7662)")
            .ok(200, "The token, or `{active: false}`", "Introspection"),
        introspect,
    )
    .route(
        get("/.well-known/oauth-authorization-server", "authorizationServerMetadata")
            .tag(TAG)
            .summary("Authorization server metadata (RFC 8414)")
            .ok(200, "The metadata", "AuthorizationServerMetadata"),
        metadata,
    )
}

/// What the endpoints that authenticate a client share: a form body of the schema
/// `body`, a 400 (`invalid_request`: `why`) and a 401 (`invalid_client`), both RFC 6749
/// §5.2 bodies.
fn client_endpoint(operation: Operation, body: &'static str, why: &'static str) -> Operation {
    operation
        .tag(TAG)
        .client_authenticated()
        .body("application/x-www-form-urlencoded", body)
        .fails(400, why, "OAuthError")
        .fails(401, "`invalid_client`", "OAuthError")
        .errors(&[ErrorCode::ServiceUnavailable])
}

/// A JSON answer of the authorization server, never cached.
fn no_store(status: StatusCode, body: Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// The RFC 6749 error code of an error that the server itself answers at the endpoints
/// that authenticate a client (a body too large, a timeout, the database unreachable):
/// §5.2's `invalid_request` for what the request did, and §4.1.2.1's `server_error` and
/// `temporarily_unavailable` for the server's own failures, so that an OAuth client library
/// reads every answer of these endpoints. `error_description` carries the API's error code
/// (its page is `/docs/errors/{code}`).
pub fn server_refusal_code(code: ErrorCode) -> &'static str {
    match code.status() {
        StatusCode::SERVICE_UNAVAILABLE => "temporarily_unavailable",
        status if status.is_server_error() => "server_error",
        StatusCode::UNAUTHORIZED => "invalid_client",
        _ => "invalid_request",
    }
}

fn oauth_error(error: &OAuthError) -> Response {
    let status = match error {
        OAuthError::InvalidClient { .. } => StatusCode::UNAUTHORIZED,
        _ => StatusCode::BAD_REQUEST,
    };
    let mut response = no_store(
        status,
        json!({"error": error.code(), "error_description": error.description()}),
    );
    if let OAuthError::InvalidClient { basic: true } = error {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"souk\""),
        );
    }
    response
}

/// The parameters of a request: the query string, then a form body. A name given twice
/// (in either place) is `invalid_request`, as RFC 6749 §3.2 asks.
///
/// The query is read at the token endpoint alone, where clients of the original send it
/// (oauth.md's compatibility allowance); revocation and introspection take a form body, as
/// RFC 7009 and 7662 say, and refuse a query: a token in a URL stays in the logs of every
/// proxy it passes.
fn parameters(
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Vec<(String, String)>, OAuthError> {
    let query = uri.query().filter(|query| !query.is_empty());
    if query.is_some() && uri.path() != TOKEN_PATH {
        return Err(OAuthError::InvalidRequest(
            "parameters go in a form body: the query is read at the token endpoint only".into(),
        ));
    }
    let mut pairs: Vec<(String, String)> = query
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let is_form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| media_type(v) == "application/x-www-form-urlencoded");
    if is_form {
        pairs.extend(form_urlencoded::parse(body).into_owned());
    }
    let mut seen = std::collections::HashSet::with_capacity(pairs.len());
    if let Some((name, _)) = pairs.iter().find(|(name, _)| !seen.insert(name)) {
        return Err(OAuthError::InvalidRequest(format!(
            "`{name}` is given more than once"
        )));
    }
    Ok(pairs)
}

fn param(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// An optional parameter's value; one sent empty counts as omitted (RFC 6749 §3.1), so a
/// public client's `client_secret=` is no secret. (An empty `code` or `refresh_token` stays
/// what it is, a grant that fails: oauth.md case 23.)
fn optional(pairs: &[(String, String)], name: &str) -> Option<String> {
    param(pairs, name).filter(|v| !v.is_empty())
}

/// The client's credentials: HTTP Basic (id and secret form-urlencoded, RFC 6749 §2.3.1)
/// or body parameters; both at once is `invalid_request`.
fn credentials(
    headers: &HeaderMap,
    pairs: &[(String, String)],
) -> Result<ClientCredentials, OAuthError> {
    let body_id = optional(pairs, "client_id");
    let body_secret = optional(pairs, "client_secret");
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, encoded)| encoded.trim().to_owned());
    match basic {
        Some(encoded) => {
            if body_secret.is_some() {
                return Err(OAuthError::InvalidRequest(
                    "client credentials in both the Authorization header and the body".into(),
                ));
            }
            let failed = OAuthError::InvalidClient { basic: true };
            let decoded = STANDARD.decode(encoded).map_err(|_| failed.clone())?;
            let text = String::from_utf8(decoded).map_err(|_| failed.clone())?;
            let (id, secret) = text.split_once(':').ok_or(failed)?;
            let id = decode_component(id);
            if body_id.as_ref().is_some_and(|b| *b != id) {
                return Err(OAuthError::InvalidRequest(
                    "client_id differs from the Authorization header".into(),
                ));
            }
            // An empty password is no secret, as an empty `client_secret` is (a public
            // client's way of sending Basic).
            let secret = Some(decode_component(secret)).filter(|s| !s.is_empty());
            Ok(ClientCredentials {
                client_id: id,
                secret,
                via_basic: true,
            })
        }
        None => match body_id {
            Some(client_id) => Ok(ClientCredentials {
                client_id,
                secret: body_secret,
                via_basic: false,
            }),
            None => Err(OAuthError::InvalidClient { basic: false }),
        },
    }
}

fn decode_component(text: &str) -> String {
    form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// A request to the token, revocation or introspection endpoint: its parameters (the
/// query, then a form body) and the client's credentials; a malformed one is answered with
/// its OAuth error.
struct ClientRequest {
    pairs: Vec<(String, String)>,
    credentials: ClientCredentials,
}

impl<S: Send + Sync> FromRequest<S> for ClientRequest {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let (uri, headers) = (request.uri().clone(), request.headers().clone());
        let body = Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let pairs = parameters(&uri, &headers, &body).map_err(|e| oauth_error(&e))?;
        let credentials = credentials(&headers, &pairs).map_err(|e| oauth_error(&e))?;
        Ok(ClientRequest { pairs, credentials })
    }
}

/// The request's client, authenticated, and its parameters.
async fn authenticated(
    state: &AppState,
    request: ClientRequest,
) -> Result<(Client, Vec<(String, String)>), Response> {
    let credentials = request.credentials;
    let client = read(state, move |conn| {
        Box::pin(async move { authorization::authenticate_client(conn, &credentials).await })
    })
    .await?
    .map_err(|e| oauth_error(&e))?;
    Ok((client, request.pairs))
}

/// Runs a workflow on a reader; a database failure is answered as the resource API's error.
async fn read<T, F>(state: &AppState, workflow: F) -> Result<T, Response>
where
    F: for<'c> FnOnce(&'c mut dyn Conn) -> DbFuture<'c, T>,
{
    state.db.read(workflow).await.map_err(db_error)
}

/// Runs a workflow in one transaction; a database failure is answered as the resource
/// API's error.
async fn write<T, F>(state: &AppState, workflow: F) -> Result<T, Response>
where
    F: for<'c> FnOnce(&'c mut dyn Conn) -> DbFuture<'c, T> + Send + 'static,
    T: Send + 'static,
{
    state.db.write(workflow).await.map_err(db_error)
}

fn db_error(error: DbError) -> Response {
    ApiError::from(error).into_response()
}

async fn token(State(state): State<AppState>, request: ClientRequest) -> Answer {
    let via_basic = request.credentials.via_basic;
    let (client, pairs) = authenticated(&state, request).await?;
    let request = TokenRequest {
        grant_type: param(&pairs, "grant_type"),
        code: param(&pairs, "code"),
        redirect_uri: optional(&pairs, "redirect_uri"),
        code_verifier: optional(&pairs, "code_verifier"),
        refresh_token: param(&pairs, "refresh_token"),
        scope: optional(&pairs, "scope"),
    };
    let now = state.clock.now();
    let client_id = client.id.clone();
    let issued = write(&state, move |conn| {
        Box::pin(async move { authorization::token(conn, &client, &request, now).await })
    })
    .await?
    .map_err(|refused| {
        // A code or refresh token presented twice revoked its family (always one of the
        // presenting client's). Only then: a refusal that revoked nothing leaves the cache
        // be, so that a stream of bad grants cannot send requests to the database.
        if refused.revoked {
            state.tokens.forget_client(&client_id);
        }
        match refused.error {
            // Found in the grant's write (a secret rotated meanwhile), which knows not how
            // the client authenticated.
            OAuthError::InvalidClient { .. } => {
                oauth_error(&OAuthError::InvalidClient { basic: via_basic })
            }
            error => oauth_error(&error),
        }
    })?;
    let mut body = json!({
        "access_token": issued.access_token,
        "token_type": "bearer",
        "expires_in": issued.expires_in,
        "scope": issued.scope.to_string(),
    });
    if let Some(refresh) = issued.refresh_token {
        body["refresh_token"] = json!(refresh);
    }
    Ok(no_store(StatusCode::OK, body))
}

async fn token_get() -> Response {
    oauth_error(&OAuthError::InvalidRequest(
        "the token endpoint takes POST".into(),
    ))
}

/// What revocation and introspection both start with (RFC 7009, RFC 7662): the
/// authenticated client and the `token` parameter.
async fn client_and_token(
    state: &AppState,
    request: ClientRequest,
) -> Result<(Client, String), Response> {
    let (client, pairs) = authenticated(state, request).await?;
    let token = param(&pairs, "token")
        .ok_or_else(|| oauth_error(&OAuthError::InvalidRequest("token is missing".into())))?;
    Ok((client, token))
}

async fn revoke(State(state): State<AppState>, request: ClientRequest) -> Answer {
    let (client, token) = client_and_token(&state, request).await?;
    let now = state.clock.now();
    let client_id = client.id.clone();
    let revoked = write(&state, move |conn| {
        Box::pin(async move { authorization::revoke(conn, &client, &token, now).await })
    })
    .await?;
    // Revocation touches the client's own tokens alone (`authorization::revoke`).
    if revoked {
        state.tokens.forget_client(&client_id);
    }
    Ok(no_store(StatusCode::OK, json!({})))
}

async fn introspect(State(state): State<AppState>, request: ClientRequest) -> Answer {
    let (client, token) = client_and_token(&state, request).await?;
    let now = state.clock.now();
    let found = read(&state, move |conn| {
        Box::pin(async move { authorization::introspect(conn, &client, &token, now).await })
    })
    .await?;
    let Some(found) = found else {
        return Ok(no_store(StatusCode::OK, json!({"active": false})));
    };
    let mut body = json!({
        "active": true,
        "scope": found.scope,
        "client_id": found.client_id,
    });
    if let Some(token_type) = found.token_type {
        body["token_type"] = json!(token_type);
    }
    if let Some(user) = found.user_id {
        body["sub"] = json!(user.to_string());
    }
    if let Some(exp) = found.expires_at {
        body["exp"] = json!(exp);
    }
    if let Some(iat) = found.issued_at {
        body["iat"] = json!(iat);
    }
    Ok(no_store(StatusCode::OK, body))
}

async fn metadata(State(state): State<AppState>) -> Response {
    let auth = &state.config.auth_url;
    let body = json!({
        "issuer": auth,
        "authorization_endpoint": format!("{auth}{AUTHORIZE_PATH}"),
        "token_endpoint": format!("{auth}{TOKEN_PATH}"),
        "revocation_endpoint": format!("{auth}{REVOKE_PATH}"),
        "introspection_endpoint": format!("{auth}{INTROSPECT_PATH}"),
        "scopes_supported": Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "response_types_supported": ["code"],
        "grant_types_supported": [GRANT_AUTHORIZATION_CODE, GRANT_REFRESH_TOKEN, GRANT_CLIENT_CREDENTIALS],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "code_challenge_methods_supported": ["S256"],
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_own_refusals_have_rfc_6749_codes() {
        let codes = [
            ErrorCode::PayloadTooLarge,
            ErrorCode::RequestTimeout,
            ErrorCode::InternalServerError,
            ErrorCode::ServiceUnavailable,
            ErrorCode::OutcomeUnknown,
        ]
        .map(server_refusal_code);
        let expected = [
            "invalid_request",
            "invalid_request",
            "server_error",
            "temporarily_unavailable",
            "temporarily_unavailable",
        ];
        assert_eq!(codes, expected);
    }
}
