//! SQLite through rusqlite: inline reads on pooled read-only connections, and one writer
//! thread doing group commit (see the module comment of `store`).

use std::collections::HashMap;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::{Backend, BoxFuture, Conn, DbError, DbFuture, PoolStats, Row, SqliteSync, Value};

/// Most writes committed together in one transaction.
const MAX_BATCH: usize = 512;
/// How long a connection waits on a lock held by another process before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Virtual machine steps between two looks at a read's deadline.
const DEADLINE_CHECK_STEPS: i32 = 10_000;
/// Read connections kept open when idle; more are opened under load and closed after.
const MAX_IDLE_READERS: usize = 16;
/// WAL pages after which the checkpointer thread copies the WAL into the database (the
/// size SQLite's own automatic checkpoint uses).
const CHECKPOINT_PAGES: i32 = 1000;
/// WAL pages after which the writer checkpoints itself. Under a steady stream of writes the
/// checkpointer copies most of the WAL but never all of it (the writer appends meanwhile),
/// and SQLite starts the WAL over only once all of it is copied: the writer copies the rest
/// (little, thanks to the checkpointer) between two transactions. The bound on the WAL (about
/// 12 MB).
const WRITER_CHECKPOINT_PAGES: i32 = 3000;
/// Page cache of each connection (KiB). A page found in the cache is a page not read from
/// the file again (a system call and a copy). Reads run on the runtime's worker threads, so
/// about as many read connections are busy as there are cores; the pool takes the most
/// recently used one first, so their caches stay warm.
const CACHE_KIB: i64 = 16 * 1024;

pub(super) struct SqliteDb {
    path: PathBuf,
    sync: SqliteSync,
    readers: Mutex<Vec<SqliteConn>>,
    readers_in_use: AtomicUsize,
    /// Read connections opened since the start.
    readers_opened: AtomicU64,
    writer: Mutex<mpsc::Sender<Job>>,
}

/// A write job: given the writer's connection, it runs inside a savepoint and reports
/// whether it succeeded, plus how to tell its caller the outcome once the commit is known;
/// given an error (its batch's transaction could not begin), it does not run and answers
/// that error.
type Job = Box<dyn FnOnce(Result<&mut dyn Conn, DbError>) -> Completion + Send>;

struct Completion {
    succeeded: bool,
    deliver: Box<dyn FnOnce(Result<(), DbError>) + Send>,
}

impl SqliteDb {
    pub(super) fn open(path: &str, sync: SqliteSync) -> Result<Self, DbError> {
        let path = PathBuf::from(path);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                DbError::Unavailable(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        let mut writer_conn = SqliteConn::open(&path, sync, false)?;
        // Copying the WAL back into the database (a checkpoint, with its fsync) would
        // otherwise happen on the writer thread after a commit, holding up every write queued
        // behind it; a thread of its own does it beside the writes.
        let checkpointer_conn = SqliteConn::open(&path, sync, false)?;
        let (wake_checkpointer, checkpoint_wanted) = mpsc::sync_channel::<()>(1);
        writer_conn
            .conn
            .wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
                if pages >= WRITER_CHECKPOINT_PAGES {
                    // Never an error from here: SQLite would report the commit, which has
                    // happened, as failed. Busy means the checkpointer is at it right now.
                    if let Err(e) = wal.checkpoint_v2(rusqlite::wal::CheckpointMode::PASSIVE) {
                        tracing::debug!(error = %e, "the writer's checkpoint was skipped");
                    }
                } else if pages >= CHECKPOINT_PAGES {
                    // Full means a wake-up is already pending.
                    let _ = wake_checkpointer.try_send(());
                }
                Ok(())
            }))
            .map_err(map_error)?;
        std::thread::Builder::new()
            .name("souk-sqlite-checkpointer".into())
            .spawn(move || checkpointer_loop(checkpointer_conn, checkpoint_wanted))
            .map_err(|e| DbError::Other(format!("cannot start the checkpointer thread: {e}")))?;
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("souk-sqlite-writer".into())
            .spawn(move || writer_loop(writer_conn, rx))
            .map_err(|e| DbError::Other(format!("cannot start the writer thread: {e}")))?;
        Ok(SqliteDb {
            path,
            sync,
            readers: Mutex::new(Vec::new()),
            readers_in_use: AtomicUsize::new(0),
            readers_opened: AtomicU64::new(0),
            writer: Mutex::new(tx),
        })
    }

    /// Runs `f` in a read transaction; one of its statements still running at `deadline`
    /// is interrupted (and fails as `Unavailable`).
    pub(super) async fn read<T, E, F>(&self, f: F, deadline: Option<Instant>) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
        E: From<DbError>,
    {
        let pooled = self.readers.lock().pop();
        let mut conn = match pooled {
            Some(conn) => conn,
            None => {
                self.readers_opened.fetch_add(1, Ordering::Relaxed);
                SqliteConn::open(&self.path, self.sync, true)?
            }
        };
        if let Some(deadline) = deadline {
            // Asked every so many virtual machine steps: a clock read is a few nanoseconds
            // against the microseconds those steps take.
            let past = move || Instant::now() >= deadline;
            conn.conn
                .progress_handler(DEADLINE_CHECK_STEPS, Some(past))
                .map_err(map_error)?;
        }
        // One read transaction for all the closure's statements: they see one snapshot (an
        // ad and its images agree), and the WAL read lock is taken once, not per statement.
        conn.control("BEGIN")?;
        self.readers_in_use.fetch_add(1, Ordering::Relaxed);
        // SQLite's futures are ready at once: this runs to its end without suspending.
        let result = f(&mut conn).await;
        // Ending a read transaction cannot lose anything; a failure is the connection's
        // problem, so it is not pooled again (nor one whose deadline stays on it).
        let ended = conn.control("COMMIT").is_ok()
            && (deadline.is_none() || conn.conn.progress_handler(0, None::<fn() -> bool>).is_ok());
        self.readers_in_use.fetch_sub(1, Ordering::Relaxed);
        if !ended {
            return result;
        }
        let mut readers = self.readers.lock();
        if readers.len() < MAX_IDLE_READERS {
            readers.push(conn);
        }
        result
    }

    pub(super) async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let (job, outcome) = job(f);
        self.writer
            .lock()
            .send(job)
            .map_err(|_| E::from(DbError::Unavailable("the writer thread stopped".into())))?;
        outcome
            .await
            .map_err(|_| E::from(DbError::Other("a write job was dropped".into())))?
    }

    pub(super) fn pool_stats(&self) -> PoolStats {
        let idle = self.readers.lock().len();
        PoolStats {
            in_use: self.readers_in_use.load(Ordering::Relaxed) + 1,
            idle,
            max: MAX_IDLE_READERS + 1,
            opened: self.readers_opened.load(Ordering::Relaxed),
        }
    }
}

/// A write job for the writer thread, and where its outcome arrives.
fn job<T, E, F>(f: F) -> (Job, tokio::sync::oneshot::Receiver<Result<T, E>>)
where
    F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>> + Send + 'static,
    T: Send + 'static,
    E: From<DbError> + Send + 'static,
{
    let (reply, outcome) = tokio::sync::oneshot::channel::<Result<T, E>>();
    let job: Job = Box::new(move |conn| {
        // A caller that has gone (its request answered 408, or its client hung up) was
        // told nothing: its write does not run, as on PostgreSQL, where dropping the
        // caller rolls it back.
        if reply.is_closed() {
            return Completion {
                succeeded: false,
                deliver: Box::new(|_| {}),
            };
        }
        let result = match conn {
            Ok(conn) => run_ready(f(conn)).unwrap_or_else(|| {
                Err(E::from(DbError::Other(
                    "a write waited for something other than the database".into(),
                )))
            }),
            Err(refused) => Err(E::from(refused)),
        };
        Completion {
            succeeded: result.is_ok(),
            deliver: Box::new(move |commit| {
                let outcome = match (commit, result) {
                    // A job that failed says why, whatever became of the batch (on a
                    // database before migration 0047, a failed migration's batch cannot
                    // hand the queue it lacks to FTS5).
                    (_, Err(own)) => Err(own),
                    (Ok(()), done) => done,
                    // The work was rolled back with the batch: the caller must not
                    // believe it happened.
                    (Err(e), Ok(_)) => Err(E::from(e)),
                };
                let _ = reply.send(outcome);
            }),
        }
    });
    (job, outcome)
}

/// Runs a future that is ready at once, as every future of a SQLite [`Conn`] is; `None` if
/// it is not (it waited for something else, which a write on the writer thread may not do).
fn run_ready<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

fn writer_loop(mut conn: SqliteConn, jobs: mpsc::Receiver<Job>) {
    // Ends when every `Db` handle is dropped, after the jobs already queued have run.
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        run_batch(&mut conn, batch);
    }
}

/// Checkpoints whenever the writer says the WAL has grown; ends with the writer (which
/// holds the other end).
fn checkpointer_loop(conn: SqliteConn, checkpoint_wanted: mpsc::Receiver<()>) {
    while checkpoint_wanted.recv().is_ok() {
        // PASSIVE: copies what no reader still needs, never waits for anyone. The writer
        // starts the WAL over once all of it is copied.
        if let Err(e) = conn
            .conn
            .wal_checkpoint_v2(None::<&str>, rusqlite::wal::CheckpointMode::PASSIVE)
        {
            tracing::warn!(error = %e, "a WAL checkpoint failed; the next one retries");
        }
    }
}

fn run_batch(conn: &mut SqliteConn, batch: Vec<Job>) {
    if let Err(e) = conn.control("BEGIN IMMEDIATE") {
        // Another process holds the database (a `souk` command's import) past the busy
        // timeout, or it cannot be written: no job ran, and each caller is told so (503,
        // nothing changed), so a retry is safe.
        tracing::error!(error = %e, jobs = batch.len(), "cannot begin a write transaction");
        for job in batch {
            (job(Err(e.clone())).deliver)(Err(e.clone()));
        }
        return;
    }
    let mut completions = Vec::with_capacity(batch.len());
    let mut jobs = batch.into_iter();
    while let Some(job) = jobs.next() {
        let step = conn.control("SAVEPOINT job");
        let completion = match step {
            Ok(()) => catch_unwind(AssertUnwindSafe(|| job(Ok(conn)))).unwrap_or_else(|_| {
                tracing::error!("a write job panicked; its changes are rolled back");
                Completion {
                    succeeded: false,
                    deliver: Box::new(|_| {}),
                }
            }),
            Err(e) => Completion {
                succeeded: false,
                deliver: Box::new(move |_| tracing::error!(error = %e, "savepoint failed")),
            },
        };
        let end = if completion.succeeded {
            conn.control("RELEASE job")
        } else {
            conn.batch_now("ROLLBACK TO job; RELEASE job")
        };
        if let Err(e) = end {
            tracing::error!(error = %e, "cannot close a savepoint");
        }
        completions.push(completion);
        if conn.conn.is_autocommit() {
            // SQLite rolled the whole transaction back (a full disk, an I/O error): what
            // ran is gone, and a job run now would commit on its own, outside the batch.
            // Those that ran are told so; those that did not are not run.
            let lost = DbError::Unavailable("the write transaction was rolled back".into());
            for job in jobs.by_ref() {
                (job(Err(lost.clone())).deliver)(Err(lost.clone()));
            }
            for completion in completions {
                (completion.deliver)(Err(lost.clone()));
            }
            return;
        }
    }
    // The index's changes go with the batch's: if FTS5 cannot take them, nothing commits.
    let commit = write_pending_index(conn).and_then(|()| conn.control("COMMIT"));
    if commit.is_err() {
        let _ = conn.batch_now("ROLLBACK");
    }
    for completion in completions {
        (completion.deliver)(commit.clone());
    }
}

/// Hands FTS5 the search index's changes that the batch's triggers queued (migration 0047),
/// in one statement, so that the batch writes one segment rather than one per ad. Every
/// database is migrated before it is written (`migrations::run` is the first write job, and
/// creates the queue before this runs at its commit), so the queue is always there.
fn write_pending_index(conn: &mut SqliteConn) -> Result<(), DbError> {
    for sql in super::search::WRITE_PENDING_INDEX {
        conn.control(sql)?;
    }
    Ok(())
}

pub(super) struct SqliteConn {
    conn: rusqlite::Connection,
    /// The column names of each statement's result, made once instead of per query.
    column_names: HashMap<Box<str>, Arc<[String]>>,
}

/// Statements whose column names are remembered; the queries are a fixed set, but lists
/// (`IN ($3, $4, ...)`) make a few variants of some.
const COLUMN_NAMES_KEPT: usize = 512;

impl SqliteConn {
    fn open(path: &Path, sync: SqliteSync, read_only: bool) -> Result<Self, DbError> {
        let conn = rusqlite::Connection::open(path)
            .map_err(|e| DbError::Unavailable(format!("cannot open {}: {e}", path.display())))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_error)?;
        // The bundled SQLite is built with STAT4, which re-prepares a cached statement
        // whenever a parameter compared to an indexed column changes: every point read
        // would parse its SQL again. The query planner stability guarantee turns that off.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )
        .map_err(map_error)?;
        conn.set_prepared_statement_cache_capacity(256);
        let synchronous = match sync {
            SqliteSync::Full => "FULL",
            SqliteSync::Normal => "NORMAL",
        };
        // Each write runs in a savepoint, whose journal is a temporary file by default:
        // every page a write touches would be copied out to it first. In memory, that copy
        // is a memcpy (the savepoint holds at most one write's pages).
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = {synchronous};
             PRAGMA temp_store = MEMORY;
             PRAGMA cache_size = -{CACHE_KIB};
             PRAGMA foreign_keys = ON;
             PRAGMA query_only = {};",
            if read_only { "ON" } else { "OFF" }
        ))
        .map_err(map_error)?;
        Ok(SqliteConn {
            conn,
            column_names: HashMap::new(),
        })
    }
}

impl SqliteConn {
    /// A statement of the writer's transaction control, from the statement cache (the
    /// writer runs a few of them per write).
    fn control(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut statement| statement.execute([]))
            .map(|_| ())
            .map_err(map_error)
    }
}

impl SqliteConn {
    fn query_now(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let rewritten = numbered_if_many(sql, params);
        let sql = rewritten.as_deref().unwrap_or(sql);
        let mut stmt = self.conn.prepare_cached(sql).map_err(map_error)?;
        bind(&mut stmt, params, rewritten.is_some())?;
        let columns = match self.column_names.get(sql) {
            Some(columns) => columns.clone(),
            None => {
                let columns: Arc<[String]> = stmt.column_names().map(str::to_owned).collect();
                if self.column_names.len() >= COLUMN_NAMES_KEPT {
                    self.column_names.clear();
                }
                self.column_names.insert(sql.into(), columns.clone());
                columns
            }
        };
        let width = columns.len();
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        // Stepping to the end finishes the statement; an unfinished statement pins the WAL
        // and keeps it from being checkpointed (performance.md).
        while let Some(row) = rows.next().map_err(map_error)? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(from_sqlite(row.get_ref(i).map_err(map_error)?));
            }
            out.push(Row::new(columns.clone(), values));
        }
        Ok(out)
    }

    fn batch_now(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.execute_batch(sql).map_err(map_error)
    }

    fn execute_now(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let rewritten = numbered_if_many(sql, params);
        let sql = rewritten.as_deref().unwrap_or(sql);
        let mut stmt = self.conn.prepare_cached(sql).map_err(map_error)?;
        bind(&mut stmt, params, rewritten.is_some())?;
        let changed = stmt.raw_execute().map_err(map_error)?;
        Ok(changed as u64)
    }
}

/// SQLite answers at once: every future is ready when it is made.
impl Conn for SqliteConn {
    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, Vec<Row>> {
        Box::pin(std::future::ready(self.query_now(sql, params)))
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, u64> {
        Box::pin(std::future::ready(self.execute_now(sql, params)))
    }

    fn execute_batch<'a>(&'a mut self, sql: &'a str) -> DbFuture<'a, ()> {
        Box::pin(std::future::ready(self.batch_now(sql)))
    }

    fn backend(&self) -> Backend {
        Backend::Sqlite
    }
}

/// Above this many values, a statement's `$N` placeholders are written `?N`
/// ([`numbered_if_many`]).
const MANY_PARAMETERS: usize = 32;

/// The statement with its `$N` placeholders written `?N` when it has many values (a bulk
/// insert has thousands): SQLite binds `?N` at index N, while finding a `$N`'s index scans
/// the statement's names, a cost quadratic in their number (83% of `souk seed`'s time). A
/// short statement keeps its text: rewriting it would cost every point read more than the
/// scan does. Outside quoted literals only.
fn numbered_if_many(sql: &str, params: &[Value]) -> Option<String> {
    if params.len() <= MANY_PARAMETERS {
        return None;
    }
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        let placeholder = c == '$' && !quoted && chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if placeholder { '?' } else { c });
    }
    Some(out)
}

/// Binds placeholders by their number: `?N` (`numbered`) is at index N; SQLite numbers
/// named `$N` parameters in order of first appearance, which is not the order of N when a
/// query uses `$2` before `$1`.
fn bind(
    stmt: &mut rusqlite::CachedStatement<'_>,
    params: &[Value],
    numbered: bool,
) -> Result<(), DbError> {
    let count = stmt.parameter_count();
    for index in 1..=count {
        if numbered {
            let value = params.get(index - 1).ok_or_else(|| {
                DbError::Other(format!("no value for ?{index} ({} given)", params.len()))
            })?;
            stmt.raw_bind_parameter(index, value).map_err(map_error)?;
            continue;
        }
        let name = stmt.parameter_name(index).unwrap_or("");
        let number: usize = name
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| DbError::Other(format!("placeholder `{name}` is not of the form $N")))?;
        let value = params.get(number - 1).ok_or_else(|| {
            DbError::Other(format!("no value for ${number} ({} given)", params.len()))
        })?;
        stmt.raw_bind_parameter(index, value).map_err(map_error)?;
    }
    Ok(())
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Real(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Value::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Value::Bool(v) => ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*v))),
            Value::Blob(v) => ToSqlOutput::Borrowed(ValueRef::Blob(v)),
            Value::TextList(_) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "SQLite has no arrays: a list is bound on PostgreSQL only".into(),
                ));
            }
        })
    }
}

fn from_sqlite(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(v) => Value::Int(v),
        ValueRef::Real(v) => Value::Real(v),
        ValueRef::Text(v) => Value::Text(match std::str::from_utf8(v) {
            Ok(text) => text.to_owned(),
            // Souk writes only UTF-8; another writer of the file might not.
            Err(_) => String::from_utf8_lossy(v).into_owned(),
        }),
        ValueRef::Blob(v) => Value::Blob(v.to_vec()),
    }
}

fn map_error(e: rusqlite::Error) -> DbError {
    use rusqlite::ffi::ErrorCode;
    if let rusqlite::Error::SqliteFailure(failure, message) = &e {
        let message = message.clone().unwrap_or_default();
        match failure.extended_code {
            rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                return DbError::UniqueViolation(message);
            }
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                return DbError::ForeignKeyViolation(message);
            }
            _ => {}
        }
        // Interrupted: a read past its deadline (`SqliteDb::read`), as PostgreSQL's 57014.
        if matches!(
            failure.code,
            ErrorCode::DatabaseBusy
                | ErrorCode::CannotOpen
                | ErrorCode::DiskFull
                | ErrorCode::OperationInterrupted
        ) {
            return DbError::Unavailable(e.to_string());
        }
    }
    DbError::Other(e.to_string())
}

impl SqliteDb {
    /// Bytes of the write-ahead log (0 when there is none).
    pub(super) fn wal_bytes(&self) -> u64 {
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::metadata(PathBuf::from(wal)).map_or(0, |m| m.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer's connection to a new, migrated database with one more table, `t (x)`.
    async fn writer() -> (SqliteConn, tempfile::TempDir) {
        let (_db, dir) = super::super::migrations::migrated_sqlite().await;
        let path = dir.path().join("souk.db");
        let mut conn = SqliteConn::open(&path, SqliteSync::Full, false).unwrap();
        conn.batch_now("CREATE TABLE t (x INTEGER)").unwrap();
        (conn, dir)
    }

    fn insert(x: i64) -> (Job, tokio::sync::oneshot::Receiver<Result<(), DbError>>) {
        job(move |conn: &mut dyn Conn| {
            Box::pin(async move {
                conn.execute("INSERT INTO t VALUES ($1)", &[Value::Int(x)])
                    .await
                    .map(drop)
            })
        })
    }

    fn rows(conn: &mut SqliteConn) -> Vec<i64> {
        let conn: &mut dyn Conn = conn;
        run_ready(conn.column::<i64>("SELECT x FROM t ORDER BY x", &[]))
            .unwrap()
            .unwrap()
    }

    /// A write whose caller has gone (a request answered 408) is not run: as on
    /// PostgreSQL, where the dropped caller's transaction rolls back.
    #[tokio::test]
    async fn a_job_whose_caller_left_does_not_run() {
        let (mut conn, _dir) = writer().await;
        let (left, gone) = insert(1);
        drop(gone);
        let (stays, mut outcome) = insert(2);
        run_batch(&mut conn, vec![left, stays]);
        let got = outcome.try_recv();
        assert!(matches!(got, Ok(Ok(()))), "{got:?}");
        assert_eq!(rows(&mut conn), [2]);
    }

    /// When SQLite rolls a batch's transaction back under it (a full disk, an I/O error;
    /// here a job's own ROLLBACK), no later job of the batch runs, and every caller is told
    /// its write failed. (A later job's savepoint began a transaction of its own, which
    /// committed, and its caller was told it had failed.)
    #[tokio::test]
    async fn a_batch_whose_transaction_is_lost_commits_nothing() {
        let (mut conn, _dir) = writer().await;
        let (lost, mut first) = job(|conn: &mut dyn Conn| {
            Box::pin(async move {
                conn.execute("INSERT INTO t VALUES (1)", &[]).await?;
                conn.execute("ROLLBACK", &[]).await.map(drop)
            })
        });
        let (after, mut second) = insert(2);
        run_batch(&mut conn, vec![lost, after]);
        let got = first.try_recv();
        assert!(matches!(got, Ok(Err(DbError::Unavailable(_)))), "{got:?}");
        assert!(matches!(
            second.try_recv(),
            Ok(Err(DbError::Unavailable(_)))
        ));
        assert_eq!(rows(&mut conn), [0; 0]);
        // The writer goes on: the next batch commits.
        let (next, mut third) = insert(3);
        run_batch(&mut conn, vec![next]);
        let got = third.try_recv();
        assert!(matches!(got, Ok(Ok(()))), "{got:?}");
        assert_eq!(rows(&mut conn), [3]);
    }

    #[test]
    fn many_values_are_bound_by_number_outside_literals() {
        let few = vec![Value::Int(1); MANY_PARAMETERS];
        assert_eq!(numbered_if_many("SELECT $1", &few), None);
        let many = vec![Value::Int(1); MANY_PARAMETERS + 1];
        assert_eq!(
            numbered_if_many("SELECT '$1', $12, x$ FROM t WHERE a = $2", &many).as_deref(),
            Some("SELECT '$1', ?12, x$ FROM t WHERE a = ?2")
        );
    }
}
