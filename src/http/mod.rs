//! The HTTP layer: one module per resource, the route registry, extractors and the render
//! middleware.

mod ads;
mod api;
mod auth;
mod bids;
mod categories;
mod docs;
mod extract;
mod features;
mod hooks;
mod idempotency;
mod images;
mod locations;
mod oauth;
mod orders;
mod pages;
mod render;
mod reviews;
mod root;
mod saved_searches;
mod schemas;
mod search;
mod serve;
mod transactions;
mod users;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef, Request, State};
use axum::http::StatusCode;
use axum::middleware::{Next, from_fn_with_state};
use axum::response::Response;
use serde_json::{Map, Value, json};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::timeout::TimeoutLayer;

use crate::config::Config;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

pub use extract::{JsonBody, parse_json};
pub use hooks::event_json;
pub use idempotency::KEEP_SECONDS as IDEMPOTENCY_KEEP_SECONDS;
pub use render::{Json, REQUEST_ID};
pub use serve::{ServeLimits, serve};

/// Every route of Souk, registered once for the router and the OpenAPI document.
fn api() -> api::Api {
    let api = api::Api::new();
    let api = root::routes(api);
    let api = categories::routes(api);
    let api = oauth::routes(api);
    let api = pages::routes(api);
    let api = users::routes(api);
    let api = ads::routes(api);
    let api = images::routes(api);
    let api = transactions::routes(api);
    let api = bids::routes(api);
    let api = locations::routes(api);
    let api = search::routes(api);
    let api = saved_searches::routes(api);
    let api = reviews::routes(api);
    let api = orders::routes(api);
    let api = features::routes(api);
    let api = hooks::routes(api);
    docs::routes(api)
}

/// What the handlers extract as `State`: the application's state, and what only HTTP has.
#[derive(Clone)]
pub struct HttpState {
    app: AppState,
    openapi: OpenApi,
}

/// The OpenAPI document of the routes, rendered once at start with the configured prefix.
#[derive(Clone)]
pub struct OpenApi(pub Arc<Value>);

impl FromRef<HttpState> for AppState {
    fn from_ref(state: &HttpState) -> AppState {
        state.app.clone()
    }
}

impl FromRef<HttpState> for OpenApi {
    fn from_ref(state: &HttpState) -> OpenApi {
        state.openapi.clone()
    }
}

/// The complete router with its middleware.
pub fn router(state: AppState) -> Router {
    let (routes, _) = api().into_parts();
    let openapi = OpenApi(Arc::new(openapi_document(&state.config)));
    let timeout = Duration::from_secs(state.config.request_timeout_secs);
    // One `layer` call for the four: each call wraps every route in another boxed service,
    // which is cloned (with everything inside it) on every request.
    let around_every_route = ServiceBuilder::new()
        .layer(from_fn_with_state(state.clone(), render::render))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(CatchPanicLayer::new())
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes));
    routes
        .route_layer(from_fn_with_state(state.clone(), guard))
        .fallback(|| async { ApiError::new(ErrorCode::NotFound) })
        .layer(around_every_route)
        .with_state(HttpState {
            app: state,
            openapi,
        })
}

/// The middleware of every route: authentication, then idempotency (which scopes its keys
/// by the caller). One middleware, not two: a `from_fn` layer clones and boxes the route's
/// service on every request (one instead of two raised `/healthz` by about 7%).
async fn guard(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if let Err(refused) = auth::admit(&state, &mut request).await {
        return refused;
    }
    idempotency::idempotency(State(state), request, next).await
}

/// The OpenAPI 3.1 document of every registered route, with the configured prefix and
/// base address.
pub fn openapi_document(config: &Config) -> Value {
    let (_, operations) = api().into_parts();
    let mut paths = Map::new();
    for (path, method, operation) in operations {
        let item = paths.entry(path).or_insert_with(|| json!({}));
        item[method] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Souk marketplace API",
            "version": "1.0",
            "description": "The HTTP/JSON API of the Souk classifieds marketplace. Every path under `/v1` is served identically under `/v2`. Responses are HAL-style JSON (`_links`, `_embedded`) served as `application/json`; errors share one body (schema `Error`). Changes are recorded in CHANGELOG.md.",
            "license": {"name": "Proprietary", "identifier": "LicenseRef-Souk"},
        },
        "servers": [{"url": config.base_url}],
        "tags": [
            {"name": "Root", "description": "Entry points."},
            {"name": "Categories", "description": "The two-level category tree, attribute definitions and fees."},
            {"name": "Users", "description": "Accounts, `me` and the e-mail change."},
            {"name": "Transactions", "description": "Sales of an advertisement (served under `/v2` as in the original, and under `/v1`)."},
            {"name": "Advertisements", "description": "Placing, reading, changing and deleting advertisements; the seller's list and a user's online ads."},
            {"name": "Bids", "description": "Bids on advertisements whose price model is `bidding`, and the seller's questions to bidders."},
            {"name": "Images", "description": "The images of an advertisement: uploads, renditions in four sizes, their bytes and descriptions."},
            {"name": "Locations", "description": "Postcodes: their place, province and province code."},
            {"name": "Search", "description": "Full-text search of the online advertisements, and saved searches with their alerts."},
            {"name": "Reviews", "description": "Reviews of sellers by the buyers of their completed sales."},
            {"name": "Features", "description": "Paid promotions of an advertisement: their prices, buying one, the ones bought."},
            {"name": "Orders", "description": "Orders of features and renewals, and renewing an advertisement."},
            {"name": "Webhooks", "description": "A client's webhooks (a client token with scope `webhooks`): each event of the users who granted the client access is POSTed to them, signed; the same events are readable at `/v1/events` for 30 days."},
            {"name": "Authorization server", "description": "OAuth 2.0: authorization code (with sign-in and consent pages), refresh tokens, client credentials; revocation, introspection, metadata."},
            {"name": "Documentation", "description": "Human-readable pages."},
            {"name": "Website", "description": "The pages people reach from links in answers and mails: an advertisement's page."},
            {"name": "Operations", "description": "Health, readiness, metrics and this document."},
        ],
        "paths": paths,
        "components": {
            "schemas": schemas::all(&config.curie_prefix),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An access token from the authorization server, as `Authorization: Bearer <token>` or the `access_token` query parameter.",
                },
                "clientBasic": {
                    "type": "http",
                    "scheme": "basic",
                    "description": "A client of the authorization server: its id and secret, form-urlencoded, as HTTP Basic (RFC 6749 §2.3.1); or `client_id` and `client_secret` in the body.",
                },
            },
        },
    })
}
