//! The one place where responses are finished: request ids, error bodies, HAL bodies,
//! `_links=false`, ETags and `If-None-Match`, metrics and the request log line.

use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tracing::Instrument;

use crate::error::{ApiError, ErrorCode};
use crate::hal::strip_links;
use crate::state::AppState;

use super::oauth::{INTROSPECT_PATH, REVOKE_PATH, TOKEN_PATH, server_refusal_code};

pub const REQUEST_ID: &str = "x-request-id";

/// A successful JSON answer, serialized when it is made; the render middleware sends it.
///
/// Handlers pass any `Serialize`: a `serde_json::Value` built with `json!`, or, on hot
/// routes, a typed representation that writes itself without building a tree.
#[derive(Clone, Debug)]
pub struct Json {
    status: StatusCode,
    /// The body, or why it could not be serialized (a bug: answered as a 500).
    body: Result<Bytes, String>,
    location: Option<String>,
    /// The body is not the resource at `location` (a list of several created at once):
    /// no `Content-Location`.
    lists_created: bool,
    etag: Etag,
}

/// How a [`Json`] answer gets its `ETag` (and honours `If-None-Match`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Etag {
    None,
    /// A hash of the body bytes: for representations that only change with their content.
    Body,
    /// A tag the handler knows (a version): what `If-Match` compares against.
    Fixed(String),
}

impl Json {
    pub fn ok(body: impl Serialize) -> Self {
        // Most bodies fit: the buffer grows (copying what it holds) less often.
        let mut bytes = Vec::with_capacity(4096);
        Json {
            status: StatusCode::OK,
            body: serde_json::to_writer(&mut bytes, &body)
                .map(|()| Bytes::from(bytes))
                .map_err(|e| e.to_string()),
            location: None,
            lists_created: false,
            etag: Etag::None,
        }
    }

    /// 201 with `Location` and `Content-Location` (the new resource's `self` href).
    pub fn created(location: String, body: impl Serialize) -> Self {
        Json {
            status: StatusCode::CREATED,
            location: Some(location),
            ..Json::ok(body)
        }
    }

    /// 201 whose body lists several new resources, the first of them at `location`:
    /// `Location` only, as the body is not that resource's representation.
    pub fn created_several(location: String, body: impl Serialize) -> Self {
        Json {
            lists_created: true,
            ..Json::created(location, body)
        }
    }

    /// Marks the body as cacheable: it gets a strong `ETag` computed from its bytes.
    pub fn with_etag(mut self) -> Self {
        self.etag = Etag::Body;
        self
    }

    /// Gives the answer a known `ETag` (quoted here).
    pub fn with_version_tag(mut self, tag: &str) -> Self {
        self.etag = Etag::Fixed(format!("\"{tag}\""));
        self
    }
}

/// The stored form of a [`Json`] answer (for idempotent replays).
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredJson {
    status: u16,
    body: Box<RawValue>,
    location: Option<String>,
    /// Absent in answers kept before it existed.
    #[serde(default)]
    lists_created: bool,
    etag: Etag,
}

impl Json {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The answer as text, to keep and replay later (empty if it has no body, which
    /// [`Json::from_stored`] refuses).
    pub fn to_stored(&self) -> String {
        let Some(body) = self.body.as_ref().ok().and_then(|bytes| {
            let text = String::from_utf8(bytes.to_vec()).ok()?;
            RawValue::from_string(text).ok()
        }) else {
            return String::new();
        };
        serde_json::to_string(&StoredJson {
            status: self.status.as_u16(),
            body,
            location: self.location.clone(),
            lists_created: self.lists_created,
            etag: self.etag.clone(),
        })
        .unwrap_or_default()
    }

    pub fn from_stored(text: &str) -> Option<Json> {
        let stored: StoredJson = serde_json::from_str(text).ok()?;
        Some(Json {
            status: StatusCode::from_u16(stored.status).ok()?,
            body: Ok(Bytes::from(String::from(stored.body.get()))),
            location: stored.location,
            lists_created: stored.lists_created,
            etag: stored.etag,
        })
    }
}

impl IntoResponse for Json {
    fn into_response(self) -> Response {
        let mut response = self.status.into_response();
        response.extensions_mut().insert(self);
        response
    }
}

/// The authorization server's endpoints that authenticate a client. Every answer carries
/// `Cache-Control: no-store` and `Pragma: no-cache`, and every error is an RFC 6749 body
/// (oauth.md), the server's own refusals too (a body too large, a timeout, 503).
const OAUTH_CLIENT_ENDPOINTS: [&str; 3] = [TOKEN_PATH, REVOKE_PATH, INTROSPECT_PATH];

/// How an error is written.
#[derive(Clone, Copy)]
enum ErrorBody {
    /// The API's `Error`, with its `_links` unless the request asked for none.
    Api { links_wanted: bool },
    /// RFC 6749's `{error, error_description}` (`oauth::server_refusal_code`).
    OAuth,
}

/// Middleware around every route (see the module comment).
pub async fn render(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let request_id = request
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| is_safe_request_id(v))
        .map_or_else(|| ulid::Ulid::generate().to_string(), str::to_owned);
    let method = request.method().clone();
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let route = matched.as_ref().map_or("unmatched", MatchedPath::as_str);
    let links_wanted = !query_says_no_links(request.uri().query());
    let if_none_match = header_list(request.headers(), header::IF_NONE_MATCH);
    let span = tracing::info_span!("request", id = %request_id, method = %method, path = %request.uri().path());

    let response = next.run(request).instrument(span.clone()).await;
    let errors = if OAUTH_CLIENT_ENDPOINTS.contains(&route) {
        ErrorBody::OAuth
    } else {
        ErrorBody::Api { links_wanted }
    };
    let mut response = finish(
        &state,
        response,
        &request_id,
        links_wanted,
        errors,
        if_none_match.as_deref(),
        &method,
    );

    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    if OAUTH_CLIENT_ENDPOINTS.contains(&route) {
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    }
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    state
        .metrics
        .record(method.as_str(), route, status, elapsed);
    span.in_scope(|| {
        tracing::info!(
            status,
            route = %route,
            micros = elapsed.as_micros() as u64,
            "answered"
        );
    });
    response
}

fn finish(
    state: &AppState,
    mut response: Response,
    request_id: &str,
    links_wanted: bool,
    errors: ErrorBody,
    if_none_match: Option<&str>,
    method: &Method,
) -> Response {
    if let Some(error) = response.extensions_mut().remove::<ApiError>() {
        return error_response(&error, request_id, state, errors);
    }
    if let Some(json) = response.extensions_mut().remove::<Json>() {
        let bytes = match json.body {
            Ok(bytes) if links_wanted => bytes,
            Ok(bytes) => without_links(&bytes),
            Err(e) => {
                let error = ApiError::internal(format!("cannot serialize an answer: {e}"));
                return error_response(&error, request_id, state, errors);
            }
        };
        // Keep what inner layers added (e.g. `Idempotency-Replayed`).
        let mut headers = std::mem::take(response.headers_mut());
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(location) = json.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
            // The body of a 201 is the new resource's representation: it is at `Location`
            // (clients of the original's purchases read `Content-Location`), unless it
            // lists several.
            if !json.lists_created {
                headers.insert(header::CONTENT_LOCATION, location.clone());
            }
            headers.insert(header::LOCATION, location);
        }
        let tag = match json.etag {
            Etag::None => None,
            Etag::Body => Some(format!(
                "\"{}\"",
                &hex::encode(Sha256::digest(&bytes))[..32]
            )),
            Etag::Fixed(tag) => Some(tag),
        };
        if let Some(tag) = tag {
            let matches = if_none_match.is_some_and(|v| etag_matches(v, &tag));
            if let Ok(value) = HeaderValue::from_str(&tag) {
                headers.insert(header::ETAG, value);
            }
            if matches && (method == Method::GET || method == Method::HEAD) {
                return (StatusCode::NOT_MODIFIED, headers).into_response();
            }
        }
        return (json.status, headers, bytes).into_response();
    }
    // A bare error from the router or a layer (unknown route, wrong method, body limit,
    // timeout, panic): give it the documented body too.
    let status = response.status();
    // Pages (HTML) and JSON answers are already complete; an empty or plain-text error
    // body comes from the router or a layer.
    let is_bare = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_none_or(|v| v.as_bytes().starts_with(b"text/plain"));
    if (status.is_client_error() || status.is_server_error()) && is_bare {
        let mut error = ApiError::new(ErrorCode::for_status(status));
        if let Some(allow) = response
            .headers()
            .get(header::ALLOW)
            .and_then(|v| v.to_str().ok())
        {
            error = error.with_header("allow", allow);
        }
        if error.code == ErrorCode::InternalServerError {
            tracing::error!(
                status = status.as_u16(),
                "a layer answered with a server error"
            );
        }
        return error_response(&error, request_id, state, errors);
    }
    response
}

fn error_response(
    error: &ApiError,
    request_id: &str,
    state: &AppState,
    errors: ErrorBody,
) -> Response {
    let body = match errors {
        ErrorBody::Api { links_wanted } => {
            let mut body = error.body(request_id, state.config.region.language());
            if !links_wanted {
                strip_links(&mut body);
            }
            body
        }
        ErrorBody::OAuth => serde_json::json!({
            "error": server_refusal_code(error.code),
            "error_description": error.code.as_str(),
        }),
    };
    let mut response = (
        error.code.status(),
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CONTENT_LANGUAGE, state.config.region.as_str()),
        ],
        Body::from(serde_json::to_vec(&body).unwrap_or_default()),
    )
        .into_response();
    for (name, value) in &error.headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.headers_mut().insert(*name, value);
        }
    }
    response
}

/// The body with every `_links` member removed (`_links=false`): rare, so it pays for
/// parsing the body back instead of every representation knowing how to leave links out.
fn without_links(bytes: &[u8]) -> Bytes {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(mut body) => {
            strip_links(&mut body);
            serde_json::to_vec(&body).map_or_else(|_| Bytes::copy_from_slice(bytes), Bytes::from)
        }
        Err(_) => Bytes::copy_from_slice(bytes),
    }
}

/// The lines of header `name` as one list (RFC 9110 §5.3: several lines are one, joined by
/// commas); `None` without any. A line that is not text names nothing.
pub fn header_list(headers: &HeaderMap, name: HeaderName) -> Option<String> {
    let lines: Vec<&str> = headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap_or_default())
        .collect();
    (!lines.is_empty()).then(|| lines.join(", "))
}

/// `If-None-Match` holds `*` or a list of tags, compared weakly (RFC 9110 §13.1.2): a weak
/// tag matches by its opaque part.
pub fn etag_matches(header: &str, tag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == tag)
}

/// `If-Match` holds `*` or a list of tags, compared strongly (RFC 9110 §13.1.1): a weak tag
/// never matches, since a change guarded by it could land on different bytes.
pub fn etag_matches_strong(header: &str, tag: &str) -> bool {
    !tag.starts_with("W/")
        && header
            .split(',')
            .map(str::trim)
            .any(|candidate| candidate == "*" || candidate == tag)
}

fn query_says_no_links(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|pair| pair == "_links=false"))
}

/// An incoming `X-Request-Id` (from a load balancer) is kept when it is short and plain, so
/// it cannot forge log lines.
fn is_safe_request_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_compare_in_lists_and_weakly() {
        assert!(etag_matches("\"a\", \"b\"", "\"b\""));
        assert!(etag_matches("W/\"b\"", "\"b\""));
        assert!(etag_matches("*", "\"b\""));
        assert!(!etag_matches("\"a\"", "\"b\""));
        assert!(etag_matches_strong("\"a\", \"b\"", "\"b\""));
        assert!(etag_matches_strong("*", "\"b\""));
        assert!(!etag_matches_strong("W/\"b\"", "\"b\""));
        assert!(!etag_matches_strong("\"b\"", "W/\"b\""));
    }

    #[test]
    fn links_flag_and_request_ids() {
        assert!(query_says_no_links(Some("a=1&_links=false")));
        assert!(!query_says_no_links(Some("_links=true")));
        assert!(!query_says_no_links(None));
        assert!(is_safe_request_id("01JDZ-abc_1.2"));
        assert!(!is_safe_request_id("a b"));
        assert!(!is_safe_request_id(&"a".repeat(65)));
    }
}
