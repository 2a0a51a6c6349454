//! `souk-bench-ceiling --listen ADDR --database URL`
//!
//! - `GET /static`: a fixed 300-byte JSON (the HTTP ceiling);
//! - `POST /insert`: one row, one commit (and on SQLite with synchronous=FULL one fsync) per
//!   request: the durable-write ceiling of the backend under test.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use parking_lot::Mutex;

const STATIC: &str = r#"{"_links":{"self":{"href":"/v1/static"},"describedby":{"href":"http://127.0.0.1/docs/resources/static"}},"itemId":"m123456789","title":"Damesfiets Gazelle Orange C7","status":"online","priceModel":{"modelType":"fixed","askingPrice":15000},"location":{"postcode":"1097DN","cityName":"Amsterdam"},"categoryId":402,"reserved":false}"#;

/// Connections to PostgreSQL at most: one per wrk connection. (A client per blocking
/// thread, as this once had, opened more than the server's `max_connections` as the
/// blocking pool replaced idle threads, and the ceiling measured 0.)
const PG_CONNECTIONS: usize = 64;

enum Store {
    Sqlite(Mutex<rusqlite::Connection>),
    Postgres {
        url: String,
        idle: Mutex<Vec<postgres::Client>>,
        permits: Arc<tokio::sync::Semaphore>,
    },
}

async fn static_json() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], STATIC)
}

async fn insert(State(store): State<Arc<Store>>) -> impl IntoResponse {
    let permit = match &*store {
        Store::Postgres { permits, .. } => Some(permits.clone().acquire_owned().await.expect("permits")),
        Store::Sqlite(_) => None,
    };
    let store = store.clone();
    let id = tokio::task::spawn_blocking(move || match &*store {
        Store::Sqlite(conn) => {
            let conn = conn.lock();
            conn.execute("INSERT INTO rows (payload) VALUES (?1)", ["a row of the durable-write ceiling"])
                .expect("insert");
            conn.last_insert_rowid()
        }
        Store::Postgres { url, idle, .. } => {
            let _permit = permit;
            let pooled = idle.lock().pop();
            let mut client = pooled.unwrap_or_else(|| postgres::Client::connect(url, postgres::NoTls).expect("connect"));
            let row = client
                .query_one("INSERT INTO rows (payload) VALUES ($1) RETURNING id", &[&"a row of the durable-write ceiling"])
                .expect("insert");
            idle.lock().push(client);
            row.get::<_, i64>(0)
        }
    })
    .await
    .expect("insert task");
    ([(header::CONTENT_TYPE, "application/json")], format!("{{\"id\":{id}}}"))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or_else(|| panic!("{flag} is required"))
    };
    let listen = value("--listen");
    let database = value("--database");
    let store = if let Some(path) = database.strip_prefix("sqlite://") {
        let conn = rusqlite::Connection::open(path).expect("open");
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
             CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL);",
        )
        .expect("prepare SQLite");
        Store::Sqlite(Mutex::new(conn))
    } else {
        // The blocking client runs its own runtime: set up on a blocking thread.
        let url = database.clone();
        tokio::task::spawn_blocking(move || {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
            client
                .batch_execute("CREATE TABLE IF NOT EXISTS rows (id BIGSERIAL PRIMARY KEY, payload TEXT NOT NULL)")
                .expect("prepare PostgreSQL");
        })
        .await
        .expect("setup");
        Store::Postgres {
            url: database,
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(tokio::sync::Semaphore::new(PG_CONNECTIONS)),
        }
    };
    let app = Router::new()
        .route("/static", get(static_json))
        .route("/insert", post(insert))
        .with_state(Arc::new(store));
    let listener = tokio::net::TcpListener::bind(&listen).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}
