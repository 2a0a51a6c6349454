//! `souk-bench-ceiling --listen ADDR --database URL [--rows N]`
//!
//! - `GET /static`: a fixed 300-byte JSON (the HTTP ceiling);
//! - `POST /insert`: one row, one commit (and on SQLite with synchronous=FULL one fsync) per
//!   request: the durable-write ceiling of the backend under test;
//! - `GET /read/{id}`: one of N rows by primary key, the fastest way known for the backend
//!   (SQLite: a connection per worker thread, queried in the handler; PostgreSQL: one
//!   connection shared by every request, whose queries pipeline): the read ceiling.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
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
    Sqlite {
        path: String,
        writer: Mutex<rusqlite::Connection>,
    },
    Postgres {
        url: String,
        idle: Mutex<Vec<postgres::Client>>,
        permits: Arc<tokio::sync::Semaphore>,
        reader: tokio_postgres::Client,
        read: tokio_postgres::Statement,
    },
}

/// A 300-byte payload, like the static answer.
const PAYLOAD: &str = "a row of the read ceiling, padded to about the size of the static answer: ................................................................................................................................................................................................................................................";

const READ_SQL_SQLITE: &str = "SELECT payload FROM reads WHERE id = ?1";

thread_local! {
    static SQLITE_READER: std::cell::RefCell<Option<rusqlite::Connection>> = const { std::cell::RefCell::new(None) };
}

async fn read(State(store): State<Arc<Store>>, Path(id): Path<i64>) -> impl IntoResponse {
    let payload: String = match &*store {
        Store::Sqlite { path, .. } => SQLITE_READER.with(|cell| {
            let mut reader = cell.borrow_mut();
            let conn = reader
                .get_or_insert_with(|| rusqlite::Connection::open(path).expect("open reader"));
            conn.prepare_cached(READ_SQL_SQLITE)
                .expect("prepare")
                .query_row([id], |row| row.get(0))
                .expect("read")
        }),
        Store::Postgres { reader, read, .. } => {
            reader.query_one(read, &[&id]).await.expect("read").get(0)
        }
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        format!("{{\"payload\":\"{payload}\"}}"),
    )
}

async fn static_json() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], STATIC)
}

/// The most bytes `/bytes/{n}` answers.
const MOST_BYTES: usize = 1 << 20;
static BYTES: [u8; MOST_BYTES] = [b'x'; MOST_BYTES];

/// `n` bytes (at most 1 MiB) from memory: the ceiling for answers of an image's size.
async fn bytes(Path(n): Path<usize>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "image/jpeg")],
        &BYTES[..n.min(MOST_BYTES)],
    )
}

async fn insert(State(store): State<Arc<Store>>) -> impl IntoResponse {
    let permit = match &*store {
        Store::Postgres { permits, .. } => {
            Some(permits.clone().acquire_owned().await.expect("permits"))
        }
        Store::Sqlite { .. } => None,
    };
    let store = store.clone();
    let id = tokio::task::spawn_blocking(move || match &*store {
        Store::Sqlite { writer, .. } => {
            let conn = writer.lock();
            conn.execute(
                "INSERT INTO rows (payload) VALUES (?1)",
                ["a row of the durable-write ceiling"],
            )
            .expect("insert");
            conn.last_insert_rowid()
        }
        Store::Postgres { url, idle, .. } => {
            let _permit = permit;
            let pooled = idle.lock().pop();
            let mut client = pooled.unwrap_or_else(|| {
                postgres::Client::connect(url, postgres::NoTls).expect("connect")
            });
            let row = client
                .query_one(
                    "INSERT INTO rows (payload) VALUES ($1) RETURNING id",
                    &[&"a row of the durable-write ceiling"],
                )
                .expect("insert");
            idle.lock().push(client);
            row.get::<_, i64>(0)
        }
    })
    .await
    .expect("insert task");
    (
        [(header::CONTENT_TYPE, "application/json")],
        format!("{{\"id\":{id}}}"),
    )
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
    let rows: i64 = args
        .iter()
        .position(|a| a == "--rows")
        .and_then(|i| args.get(i + 1))
        .map_or(100_000, |n| n.parse().expect("--rows is a number"));
    let store = if let Some(path) = database.strip_prefix("sqlite://") {
        let conn = rusqlite::Connection::open(path).expect("open");
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
             CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS reads (id INTEGER PRIMARY KEY, payload TEXT NOT NULL);
             DELETE FROM reads;
             INSERT INTO reads (id, payload)
                 WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < {rows})
                 SELECT id, '{PAYLOAD}' FROM n;"
        ))
        .expect("prepare SQLite");
        Store::Sqlite {
            path: path.to_owned(),
            writer: Mutex::new(conn),
        }
    } else {
        let (reader, connection) = tokio_postgres::connect(&database, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(connection);
        reader
            .batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS rows (id BIGSERIAL PRIMARY KEY, payload TEXT NOT NULL);
                 DROP TABLE IF EXISTS reads;
                 CREATE TABLE reads (id BIGINT PRIMARY KEY, payload TEXT NOT NULL);
                 INSERT INTO reads SELECT n, '{PAYLOAD}' FROM generate_series(1, {rows}) AS n;
                 ANALYZE reads;"
            ))
            .await
            .expect("prepare PostgreSQL");
        let read = reader
            .prepare("SELECT payload FROM reads WHERE id = $1")
            .await
            .expect("prepare the read");
        Store::Postgres {
            url: database,
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(tokio::sync::Semaphore::new(PG_CONNECTIONS)),
            reader,
            read,
        }
    };
    let app = Router::new()
        .route("/static", get(static_json))
        .route("/bytes/{n}", get(bytes))
        .route("/insert", post(insert))
        .route("/read/{id}", get(read))
        .with_state(Arc::new(store));
    let listener = tokio::net::TcpListener::bind(&listen).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}
