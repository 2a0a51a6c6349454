//! The application: shared state, database preparation, and the server with graceful
//! shutdown.

use std::ops::Deref;
use std::sync::Arc;

use serde_json::Value;

use crate::clock::Clock;
use crate::config::Config;
use crate::domain::category::parse_taxonomy;
use crate::hal::Hal;
use crate::metrics::Metrics;
use crate::store::{Db, DbOptions, categories, migrations};

/// The default taxonomy, shipped in the binary so that `souk` runs from any directory.
pub const DEFAULT_TAXONOMY: &str = include_str!("../data/categories.json");

/// Everything a request handler may need. Cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub config: Config,
    pub db: Db,
    pub clock: Clock,
    pub metrics: Metrics,
    /// Recent access token lookups (see `http::auth`).
    pub tokens: crate::http::auth::TokenCache,
    /// The OpenAPI document, rendered once at start with the configured prefix.
    pub openapi: Value,
}

impl Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    pub fn new(config: Config, db: Db, clock: Clock) -> AppState {
        let openapi = crate::http::openapi_document(&config);
        AppState(Arc::new(Shared {
            config,
            db,
            clock,
            metrics: Metrics::default(),
            tokens: Default::default(),
            openapi,
        }))
    }

    /// The HAL context of a request under `/v1` or `/v2`.
    pub fn hal(&self, version: &'static str) -> Hal {
        Hal {
            prefix: self.config.curie_prefix.clone(),
            base_url: self.config.base_url.clone(),
            version,
        }
    }
}

pub fn db_options(config: &Config) -> DbOptions {
    DbOptions {
        sqlite_sync: config.sqlite_synchronous,
        max_connections: config.database_max_connections,
    }
}

/// Opens the database, applies migrations and fills a new database with the default
/// taxonomy. Demo data for sandboxes arrives with users and ads (see README).
pub async fn prepare_database(config: &Config, clock: &Clock) -> anyhow::Result<Db> {
    let db = Db::open(&config.database_url, &db_options(config)).await?;
    let applied = migrations::run(&db).await?;
    if applied > 0 {
        tracing::info!(applied, "database migrations applied");
    }
    let taxonomy = parse_taxonomy(DEFAULT_TAXONOMY)?;
    let now = clock.now();
    let loaded = db
        .write(move |conn| {
            if categories::count(conn)? > 0 {
                return Ok(None);
            }
            categories::import(conn, &taxonomy, false, now).map(Some)
        })
        .await?;
    if let Some(summary) = loaded {
        tracing::info!(categories = summary.inserted, "default taxonomy loaded");
    }
    Ok(db)
}

/// Serves until SIGTERM or SIGINT, then stops accepting, finishes the requests in flight
/// and returns (the SQLite writer finishes its queue when the last handle drops).
pub async fn serve(config: Config) -> anyhow::Result<()> {
    let clock = Clock::default();
    let db = prepare_database(&config, &clock).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    let state = AppState::new(config.clone(), db, clock);
    tracing::info!(
        listen = %config.listen,
        base_url = %config.base_url,
        database = %crate::store::redact_url(&config.database_url),
        region = %config.region,
        "souk is serving"
    );
    println!(
        "Souk serves {base}/v1 (docs: {base}/docs). Try: curl {base}/v1",
        base = config.base_url
    );
    axum::serve(
        listener,
        crate::http::router(state).into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    tracing::info!("souk stopped");
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutdown signal received: finishing requests in flight");
}
