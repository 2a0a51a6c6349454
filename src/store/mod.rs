//! Storage on SQLite (the default) and PostgreSQL, behind one small interface.
//!
//! Query code is written once: a query function is an `async fn` taking `&mut dyn Conn`,
//! uses `$1`-style placeholders, and runs unchanged on both backends. [`Db`] decides *where*
//! it runs:
//!
//! - SQLite reads run right in the calling task on a pooled read-only connection (a point
//!   read takes microseconds; a thread hop would cost more than the read, see
//!   `docs/ARCHITECTURE.md`). SQLite's futures are always ready: awaiting them never
//!   suspends.
//! - SQLite writes go to one writer thread that commits whatever queued up meanwhile in one
//!   transaction (group commit): one fsync for many writes, and `SQLITE_BUSY` never happens
//!   because there is only one writer. Each write runs inside its own savepoint, so one
//!   failing write rolls back alone. A caller hears of its write only after the commit.
//! - PostgreSQL runs on `tokio-postgres` in the calling task: reads on a few connections
//!   that every request shares, so that concurrent queries pipeline (one round trip carries
//!   many), writes on a pooled connection of their own, in a transaction.

mod locks;
mod postgres;
pub(crate) mod record;
mod sqlite;
mod value;

pub mod ads;
pub mod alerts;
pub mod bids;
pub mod categories;
pub mod events;
pub mod features;
pub mod hooks;
pub mod idempotency;
pub mod images;
pub mod leased;
pub mod locations;
pub mod mail_queue;
pub mod migrations;
pub mod oauth;
pub mod orders;
pub mod renditions;
pub mod reviews;
pub mod saved_searches;
pub mod search;
pub mod transactions;
pub mod users;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use locks::TableLock;
pub use record::Record;
pub use value::{FromValue, Row, Value};

/// A boxed future that may move between threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a [`Conn`] answers: a future, ready at once on SQLite.
pub type DbFuture<'a, T> = BoxFuture<'a, Result<T, DbError>>;

/// A database connection as the query code sees it.
pub trait Conn: Send {
    /// Runs a statement and returns all rows it produced (stepping it to the end).
    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, Vec<Row>>;
    /// Runs a statement and returns the number of rows it changed.
    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, u64>;
    /// Runs several `;`-separated statements without parameters (migrations).
    fn execute_batch<'a>(&'a mut self, sql: &'a str) -> DbFuture<'a, ()>;
    fn backend(&self) -> Backend;
    /// From here on, the statements of a heavy read ([`Db::read_heavy`]) keep the plan the
    /// database makes for them, as every other connection's do, where until here they are
    /// planned for the values bound: for its reads whose plan does not depend on them (the
    /// ads of a search's page, found by their numbers). Nothing elsewhere.
    fn keep_plans(&mut self) {}
}

impl dyn Conn + '_ {
    /// Exactly one row, or `DbError::NotFound`.
    pub async fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Row, DbError> {
        self.query_opt(sql, params).await?.ok_or(DbError::NotFound)
    }

    /// At most one row.
    pub async fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params).await?.into_iter().next())
    }

    /// The first column of every row.
    pub async fn column<T: FromValue>(&mut self, sql: &str, params: &[Value]) -> DbResult<Vec<T>> {
        self.rows_as(sql, params, Row::take).await
    }

    /// Every row, each read as a record.
    pub async fn records<R: Record>(&mut self, sql: &str, params: &[Value]) -> DbResult<Vec<R>> {
        self.rows_as(sql, params, R::read).await
    }

    /// Runs a statement whose row count nobody needs.
    pub async fn run(&mut self, sql: &str, params: &[Value]) -> DbResult<()> {
        self.execute(sql, params).await.map(drop)
    }

    /// The record of `table` whose `key` column holds `value`, if any.
    pub async fn by_key<R: Record>(
        &mut self,
        table: &str,
        key: &str,
        value: &str,
    ) -> DbResult<Option<R>> {
        let sql = format!("SELECT {} FROM {table} WHERE {key} = $1", R::COLUMNS);
        self.record(&sql, &[Value::from(value)]).await
    }

    /// At most one row, read as a record.
    pub async fn record<R: Record>(&mut self, sql: &str, params: &[Value]) -> DbResult<Option<R>> {
        Ok(self.records(sql, params).await?.into_iter().next())
    }

    async fn rows_as<T>(
        &mut self,
        sql: &str,
        params: &[Value],
        read: fn(&mut Row) -> DbResult<T>,
    ) -> DbResult<Vec<T>> {
        let rows = self.query(sql, params).await?;
        rows.into_iter().map(|mut row| read(&mut row)).collect()
    }
}

type DbResult<T> = Result<T, DbError>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum DbError {
    #[error("row not found")]
    NotFound,
    #[error("unique constraint violated: {0}")]
    UniqueViolation(String),
    #[error("foreign key constraint violated: {0}")]
    ForeignKeyViolation(String),
    #[error("cannot decode a column: {0}")]
    Decode(String),
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The database undid the transaction to let a conflicting one go on (PostgreSQL's
    /// deadlock detection); nothing of it was written, and the same work may simply be run
    /// again.
    #[error("transaction undone by a conflicting one: {0}")]
    Contention(String),
    /// The connection was lost at COMMIT and the server could not be asked since whether
    /// the transaction committed (PostgreSQL): the write may have been made.
    #[error("outcome of the write unknown: {0}")]
    OutcomeUnknown(String),
    #[error("database error: {0}")]
    Other(String),
}

/// How SQLite syncs a commit to disk (`PRAGMA synchronous`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqliteSync {
    /// An acknowledged write survives a power cut (the default).
    #[serde(alias = "FULL")]
    Full,
    /// Faster; a power cut may lose the last commits (never corrupts).
    #[serde(alias = "NORMAL")]
    Normal,
}

/// The cores this process may run on (two when the system does not say).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

#[derive(Clone, Debug)]
pub struct DbOptions {
    pub sqlite_sync: SqliteSync,
    /// Most PostgreSQL connections held at once.
    pub max_connections: usize,
    /// PostgreSQL connections that reads share (their queries pipeline).
    pub read_connections: usize,
    /// Heavy reads ([`Db::read_heavy`]) under way at once (at least one; by default one per
    /// core, [`cores`]). Fewer leave more of the machine to point reads while searches run,
    /// and make searches wait their turn: on PostgreSQL at 100,000 ads, on two cores with the server beside Souk,
    /// one instead of two took point reads under search load from 0.42 x their rate alone
    /// to 0.45-0.55 x, and the searches' p50 from 7 ms to 12-14 ms (docs/OPERATIONS.md).
    pub heavy_reads: usize,
    /// How long PostgreSQL lets one statement of a heavy read run before it stops it (its
    /// `statement_timeout` on the heavy reads' connections).
    pub heavy_read_timeout: std::time::Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            sqlite_sync: SqliteSync::Full,
            max_connections: 16,
            read_connections: 1,
            heavy_reads: cores(),
            heavy_read_timeout: std::time::Duration::from_secs(31),
        }
    }
}

/// Connection counts for `/metrics`.
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolStats {
    pub in_use: usize,
    pub idle: usize,
    pub max: usize,
    /// Connections opened since the start (PostgreSQL's; SQLite's read connections).
    pub opened: u64,
}

/// The database handle shared by the whole server. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
    /// Bounds the heavy reads under way at once ([`Db::read_heavy`]).
    heavy: Arc<tokio::sync::Semaphore>,
    /// How long a heavy read may run on SQLite (PostgreSQL's connections are told on
    /// opening, [`DbOptions::heavy_read_timeout`]).
    heavy_read_timeout: std::time::Duration,
    /// How many writes this process has finished ([`Db::writes`]).
    writes: Arc<AtomicU64>,
}

enum Inner {
    /// Shared with the blocking threads that run its heavy reads.
    Sqlite(Arc<sqlite::SqliteDb>),
    Postgres(Box<postgres::PgDb>),
}

impl Db {
    /// Opens the database named by `url` (`sqlite://PATH` or `postgres://...`), creating a
    /// SQLite file if needed. Does not run migrations: see [`migrations::run`].
    pub async fn open(url: &str, options: &DbOptions) -> Result<Db, DbError> {
        let inner = if let Some(path) = sqlite_path(url) {
            Inner::Sqlite(Arc::new(sqlite::SqliteDb::open(path, options.sqlite_sync)?))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Inner::Postgres(Box::new(
                postgres::PgDb::open(
                    url,
                    options.max_connections,
                    options.read_connections,
                    options.heavy_read_timeout,
                )
                .await?,
            ))
        } else {
            return Err(DbError::Other(format!(
                "unsupported database URL scheme in `{}`: use sqlite:// or postgres://",
                redact_url(url)
            )));
        };
        Ok(Db {
            inner: Arc::new(inner),
            heavy: Arc::new(tokio::sync::Semaphore::new(options.heavy_reads.max(1))),
            heavy_read_timeout: options.heavy_read_timeout,
            writes: Arc::default(),
        })
    }

    pub fn backend(&self) -> Backend {
        match &*self.inner {
            Inner::Sqlite(_) => Backend::Sqlite,
            Inner::Postgres(_) => Backend::Postgres,
        }
    }

    /// Runs read-only queries:
    /// `db.read(|conn| Box::pin(async move { store::ads::get(conn, 12).await }))`. (The
    /// future is boxed and `Send` by its type: with an async closure, the compiler cannot
    /// prove that a handler awaiting it is `Send`.)
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
        E: From<DbError>,
    {
        match &*self.inner {
            Inner::Sqlite(db) => db.read(f, None).await,
            Inner::Postgres(db) => db.read(f).await,
        }
    }

    /// Runs read-only queries that may take milliseconds (a search): as [`Db::read`], but on
    /// SQLite, whose queries run on the calling thread, on a blocking thread instead, so
    /// that the runtime's few workers keep answering point reads meanwhile. On PostgreSQL,
    /// on a connection of its own, so that the point reads pipelined on the shared read
    /// connections do not queue behind it, and planned for the values bound
    /// (`postgres::PgDb::read_heavy`). On both, every statement of `f` reads one snapshot
    /// (a read-only `REPEATABLE READ` transaction on PostgreSQL). At most
    /// [`DbOptions::heavy_reads`] at once; one that runs past
    /// [`DbOptions::heavy_read_timeout`] is stopped and fails as `Unavailable`.
    pub async fn read_heavy<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let permit = self
            .heavy
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| E::from(DbError::Other(format!("heavy reads are closed: {e}"))))?;
        match &*self.inner {
            Inner::Sqlite(db) => {
                let db = db.clone();
                let runtime = tokio::runtime::Handle::current();
                let deadline = std::time::Instant::now() + self.heavy_read_timeout;
                // A request that gives up stops waiting, not the blocking thread: the read
                // keeps its place among the heavy reads until it ends, which its deadline
                // bounds (as PostgreSQL's `statement_timeout` bounds one there).
                tokio::task::spawn_blocking(move || {
                    let _permit = permit;
                    // SQLite's futures are ready at once: block_on runs the closure to its
                    // end on this thread.
                    runtime.block_on(db.read(f, Some(deadline)))
                })
                .await
                .map_err(|e| E::from(DbError::Other(format!("a heavy read stopped: {e}"))))?
            }
            Inner::Postgres(db) => {
                let _permit = permit;
                db.read_heavy(f).await
            }
        }
    }

    /// Runs `f` in a transaction: everything it wrote commits if it returns `Ok`, and
    /// nothing does if it returns `Err`. Returns once the commit is durable. On SQLite `f`
    /// runs on the writer thread, so it may await the database and nothing else.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let written = match &*self.inner {
            Inner::Sqlite(db) => db.write(f).await,
            Inner::Postgres(db) => db.write(f).await,
        };
        // Counted once the transaction has ended, committed or not: a lookup cached after
        // reading the count cannot have read the database before this write's changes.
        self.writes.fetch_add(1, Ordering::Release);
        written
    }

    /// How many writes this process has finished: a value read before a lookup and found
    /// unchanged later means that nothing this process wrote can have changed what the
    /// lookup read (`usecase::images::RenditionLookups`). Other processes' writes it does
    /// not see.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Acquire)
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<(), DbError> {
        self.read(|conn| {
            Box::pin(async move { conn.query("SELECT 1 AS one", &[]).await.map(|_| ()) })
        })
        .await
    }

    /// The size of SQLite's write-ahead log, which must stay bounded under sustained writes
    /// (performance.md); `None` on PostgreSQL.
    pub fn sqlite_wal_bytes(&self) -> Option<u64> {
        match &*self.inner {
            Inner::Sqlite(db) => Some(db.wal_bytes()),
            Inner::Postgres(_) => None,
        }
    }

    /// After a bulk load: brings the query planner's statistics up to date, and on
    /// PostgreSQL folds the kept search counts (a change appended per ad: a million rows
    /// for a million ads, folded now rather than by the first server's upkeep while it
    /// serves) and marks the new rows visible to every transaction (`VACUUM`, which cannot
    /// run in a transaction), without which an index-only scan still reads each row from
    /// the table. (Autovacuum would get there, but not before the first reads.)
    pub async fn settle_after_bulk_load(&self) -> Result<(), DbError> {
        match &*self.inner {
            Inner::Sqlite(_) => {
                self.write(|conn| Box::pin(conn.execute_batch("ANALYZE")))
                    .await
            }
            Inner::Postgres(db) => {
                self.write(|conn| Box::pin(search::fold_counts(conn)))
                    .await?;
                db.outside_transaction(|conn| Box::pin(conn.execute_batch("VACUUM (ANALYZE)")))
                    .await?;
                // The first fold left its rows behind the pages the appended changes
                // filled, which VACUUM cannot cut off while a row stands behind them:
                // every read of the online ads' total then read them all (35 MB, 10 ms at
                // a million ads). Folded again, the rows go to the room VACUUM has freed
                // at the front, and the pages behind are cut off. But VACUUM frees only
                // rows that no open transaction of the database may still see, so while
                // one that began before the first fold runs (another replica's, another
                // schema's), there is no room yet: fold and VACUUM again until the total
                // is one page, for a while, then leave the rest to autovacuum.
                let patience = std::time::Instant::now() + SETTLE_PATIENCE;
                loop {
                    self.write(|conn| Box::pin(search::fold_counts(conn)))
                        .await?;
                    db.outside_transaction(|conn| {
                        Box::pin(conn.execute_batch(
                            "VACUUM search_docs_total, search_area_counts, search_term_counts",
                        ))
                    })
                    .await?;
                    let pages: i64 = self
                        .read(|conn| {
                            Box::pin(async move {
                                conn.query_one(
                                    "SELECT pg_relation_size('search_docs_total') / 8192 \
                                     AS pages",
                                    &[],
                                )
                                .await?
                                .get("pages")
                            })
                        })
                        .await?;
                    if pages <= 1 {
                        return Ok(());
                    }
                    if std::time::Instant::now() >= patience {
                        tracing::warn!(
                            pages,
                            "the kept search total is left on several pages: a transaction \
                             open elsewhere in the database keeps VACUUM from freeing them"
                        );
                        return Ok(());
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                }
            }
        }
    }

    pub fn pool_stats(&self) -> PoolStats {
        match &*self.inner {
            Inner::Sqlite(db) => db.pool_stats(),
            Inner::Postgres(db) => db.pool_stats(),
        }
    }
}

/// How long `Db::settle_after_bulk_load` retries to cut the kept search total down to one
/// page while transactions open elsewhere keep VACUUM from freeing its old rows.
const SETTLE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

/// `($1, $2), ($3, $4)`: the VALUES of `rows` rows of `columns` parameters each, for
/// inserts of many rows in one statement.
pub(crate) fn placeholders(rows: usize, columns: usize) -> String {
    (0..rows)
        .map(|row| format!("({})", numbered(row * columns + 1, columns)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `$3, $4, $5`: `count` parameters from `$first` on, for `IN (...)` lists.
pub(crate) fn numbered(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The file path of a `sqlite://` URL (`sqlite://data/souk.db`, `sqlite:///abs/path.db`).
fn sqlite_path(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    Some(rest.split('?').next().unwrap_or(rest))
}

/// The URL as logs and `souk config` show it, with no password. A PostgreSQL URL is
/// shown as the driver reads it (user, hosts, ports, database; no options), so that a
/// password holding characters a URL reserves (`/`, `?`, `@`), which parsers split each
/// their own way, cannot surface as a host or a path. Another URL (SMTP, SQLite) is shown
/// with its password and any query parameter named like one as `***`; one that does not
/// parse is not shown.
pub fn redact_url(url: &str) -> String {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return match url.parse::<tokio_postgres::Config>() {
            Ok(config) => postgres_shown(&config),
            Err(_) => "postgres://(not shown: the URL does not parse)".to_owned(),
        };
    }
    let Ok(mut parsed) = url::Url::parse(url) else {
        return "(not shown: the URL does not parse)".to_owned();
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    let pairs: Vec<(String, String)> = parsed
        .query_pairs()
        .map(|(name, value)| {
            let hidden = name.to_ascii_lowercase().contains("password");
            let value = if hidden {
                "***".into()
            } else {
                value.into_owned()
            };
            (name.into_owned(), value)
        })
        .collect();
    if !pairs.is_empty() {
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.to_string()
}

fn postgres_shown(config: &tokio_postgres::Config) -> String {
    let user = match (config.get_user(), config.get_password()) {
        (Some(user), Some(_)) => format!("{user}:***@"),
        (Some(user), None) => format!("{user}@"),
        (None, Some(_)) => "***@".to_owned(),
        (None, None) => String::new(),
    };
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(n, host)| {
            let host = match host {
                tokio_postgres::config::Host::Tcp(name) if name.contains(':') => {
                    format!("[{name}]")
                }
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            };
            match ports.get(n).or(ports.first()) {
                Some(port) => format!("{host}:{port}"),
                None => host,
            }
        })
        .collect();
    let dbname = config.get_dbname().unwrap_or("");
    // The driver takes the user information to end at the first `@`: one more in the
    // password, or an `@` in a query parameter, leaves a host (or a user) that no server
    // has, and the rest of the password in it. Such a URL connects nowhere; say why.
    let host_like = |name: &str| {
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
    };
    let misread =
        config.get_hosts().iter().any(
            |host| matches!(host, tokio_postgres::config::Host::Tcp(name) if !host_like(name)),
        ) || config
            .get_user()
            .is_some_and(|user| user.contains(['/', '?', '&', '=']));
    if misread {
        return "postgres://(not shown: percent-encode the password's `@`, `/`, `?`)".to_owned();
    }
    format!("postgres://{user}{}/{dbname}", hosts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(
            redact_url("postgres://souk:s3cret@db:5432/souk"),
            "postgres://souk:***@db:5432/souk"
        );
        assert_eq!(
            redact_url("postgres://souk@db/souk"),
            "postgres://souk@db:5432/souk",
            "the port the driver takes"
        );
        assert_eq!(redact_url("sqlite://data/souk.db"), "sqlite://data/souk.db");
        assert_eq!(
            redact_url("postgresql://souk:pw@[::1]:5433/souk?sslmode=require"),
            "postgres://souk:***@[::1]:5433/souk"
        );
        assert_eq!(
            redact_url("smtps://mailer:s3cret@mail:465?tls=required"),
            "smtps://mailer:***@mail:465?tls=required"
        );
        // Passwords that parsers read in different ways: whatever the reading, no part of
        // the password is shown.
        for url in [
            "postgres://souk:s3/cret@db/souk",
            "postgres://souk:s3?cret@db/souk",
            "postgres://souk:s3@cret@db:5432/souk",
            "postgres://souk@db/souk?password=s3@cret",
            "postgres://db/souk?user=svc@corp&password=s3cret",
            "postgres://souk:s3cret@db/souk?sslrootcert=/x@y.pem",
            "smtps://mailer:s3/cret@mail:465",
            "smtp://mail:25?tls=required&password=s3cret",
        ] {
            let shown = redact_url(url);
            for piece in ["s3", "cret"] {
                assert!(!shown.contains(piece), "{url} -> {shown}");
            }
        }
    }

    #[test]
    fn placeholder_lists() {
        assert_eq!(placeholders(2, 2), "($1, $2), ($3, $4)");
        assert_eq!(numbered(3, 3), "$3, $4, $5");
    }

    #[test]
    fn sqlite_paths() {
        assert_eq!(sqlite_path("sqlite://data/souk.db"), Some("data/souk.db"));
        assert_eq!(
            sqlite_path("sqlite:///tmp/x.db?mode=rwc"),
            Some("/tmp/x.db")
        );
        assert_eq!(sqlite_path("postgres://x"), None);
    }
}
