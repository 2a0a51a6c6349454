//! The API roots, health, readiness, metrics and the OpenAPI document.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::json;

use crate::error::{ApiError, ErrorCode};
use crate::hal::{Rel, Resource};
use crate::metrics::{QueueDepth, QueueDepths};
use crate::state::AppState;
use crate::store::{DbError, hooks, mail_queue, migrations};

use super::OpenApi;
use super::api::{Api, get};
use super::extract::Context;
use super::render::Json;

pub fn routes(api: Api) -> Api {
    let root = |path, id| {
        get(path, id)
            .tag("Root")
            .summary("The API root: links to every top-level resource")
            .description("Needs no token.")
            .ok(200, "The root", "Root")
    };
    api.route(root("/v1", "getRootV1"), root_handler)
        .route(root("/v2", "getRootV2"), root_handler)
        .route(
            get("/healthz", "health")
                .tag("Operations")
                .summary("The process is up")
                .ok(200, "Up", "Health"),
            health,
        )
        .route(
            get("/readyz", "readiness")
                .tag("Operations")
                .summary("The database answers and its schema is current")
                .ok(200, "Ready to serve", "Health")
                .errors(&[ErrorCode::ServiceUnavailable]),
            ready,
        )
        .route(
            get("/metrics", "metrics")
                .tag("Operations")
                .summary("Prometheus metrics (text exposition format)")
                .media(
                    200,
                    "Requests by route and status, latency histogram, pool usage",
                    "text/plain",
                ),
            metrics,
        )
        .route(
            get("/openapi.json", "openapi")
                .tag("Operations")
                .summary("This OpenAPI 3.1 document")
                .ok(200, "The document", "OpenApiDocument"),
            openapi,
        )
}

async fn root_handler(Context { state, hal }: Context) -> Json {
    let links = hal
        .links(hal.path(""), Resource::Root)
        .rel(Rel::Advertisements, hal.path("/advertisements"))
        .rel(Rel::Categories, hal.path("/categories"))
        .rel(Rel::Users, hal.path("/users"))
        .rel(Rel::Me, hal.path("/me"))
        .templated(Rel::Locations, hal.path("/locations{?postcode}"))
        .rel(Rel::Search, hal.path("/search"))
        .build();
    Json::ok(json!({
        "_links": links,
        "message": format!(
            "Welcome to the Souk API. Documentation: {base}/docs (OpenAPI: {base}/openapi.json).",
            base = state.config.base_url
        ),
    }))
}

async fn health() -> Json {
    Json::ok(json!({"status": "ok"}))
}

async fn ready(State(state): State<AppState>) -> Result<Json, ApiError> {
    // Within 5 s: a balancer asks again soon, and a database that does not answer in
    // that time is not ready (the request timeout would answer 408 only much later).
    let read = state
        .db
        .read(|conn| Box::pin(async move { migrations::current_version(conn).await }));
    let version = tokio::time::timeout(std::time::Duration::from_secs(5), read)
        .await
        .unwrap_or_else(|_| Err(DbError::Unavailable("no answer within 5 s".into())))
        .map_err(|e| {
            tracing::warn!(error = %e, "not ready: the database does not answer");
            ApiError::new(ErrorCode::ServiceUnavailable)
        })?;
    if version < migrations::latest_version() {
        return Err(ErrorCode::ServiceUnavailable.into());
    }
    Ok(Json::ok(
        json!({"status": "ready", "schemaVersion": version}),
    ))
}

/// How long a scrape waits for the queues' count.
const QUEUE_COUNT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    // One statement per queue per scrape, its count and its first due item: the tables
    // stay small unless receivers or the mail server fail, which is when the figures
    // matter. A database that does not answer in
    // time costs the scrape these lines only, not the pool figures.
    let now = state.clock.now();
    let count = state.db.read(move |conn| {
        Box::pin(async move {
            Ok::<_, DbError>(QueueDepths {
                webhook_deliveries: QueueDepth::of(hooks::DELIVERIES.waiting(conn).await?, now),
                mails: QueueDepth::of(mail_queue::QUEUE.waiting(conn).await?, now),
            })
        })
    });
    let queues = match tokio::time::timeout(QUEUE_COUNT_TIMEOUT, count).await {
        Ok(Ok(depths)) => Some(depths),
        Ok(Err(error)) => {
            tracing::warn!(%error, "cannot count the queues for the metrics");
            None
        }
        Err(_) => {
            tracing::warn!("the queues' count for the metrics took too long");
            None
        }
    };
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(
            crate::metrics::Held {
                pool: state.db.pool_stats(),
                uploads_reserved: state.uploads.reserved(),
                connections_open: state.connections.open(),
                connections_max: state.connections.max(),
            },
            queues,
        ),
    )
}

/// Served as is: the `_links=false` rewriting of resources does not apply to a schema.
async fn openapi(State(OpenApi(document)): State<OpenApi>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec_pretty(&*document).unwrap_or_default(),
    )
}
