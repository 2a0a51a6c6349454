//! PostgreSQL through `tokio-postgres`, in the calling task.
//!
//! Reads share a few connections: `tokio-postgres` sends the queries of concurrent reads on
//! one connection without waiting for each answer (pipelining), and the server answers them
//! in turn, so one round trip and one wake-up of the server carry many reads. A bare server
//! reading rows this way did six times the reads per second of one doing them on blocking
//! threads with a connection each (`bench/README.md`). `SOUK_DATABASE_READ_CONNECTIONS` says
//! how many. Writes take a connection of their own for their transaction, from a pool of
//! `SOUK_DATABASE_MAX_CONNECTIONS`. Statements are prepared once per connection.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bytes::BytesMut;
use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{Backend, BoxFuture, Conn, DbError, DbFuture, PoolStats, Row, Value};

mod commit;
mod errors;
mod tls;

use errors::{connection_lost, map_error};

/// Statements kept prepared per connection; the queries are a fixed set, but lists
/// (`IN ($3, $4, ...)`) make a few variants of some.
const STATEMENTS_KEPT: usize = 512;

pub(super) struct PgDb {
    /// Opens the connections that reads share.
    connector: Connector,
    readers: Vec<Reader>,
    /// One more connection that point reads share while heavy reads run ([`PgDb::read`]).
    spare: Reader,
    /// Heavy reads under way.
    heavy_in_flight: AtomicUsize,
    /// The connections of writes, each used by one at a time.
    own: Idle,
    /// The connections of heavy reads ([`PgDb::read_heavy`]), planned for their values.
    heavy: Idle,
    permits: Semaphore,
    in_use: AtomicUsize,
    max: usize,
}

/// A server that stops answering without closing its connections (a failover that moves
/// its address, a host that is gone) must not hold a request or a background loop for the
/// operating system's minutes: connecting gives up after 10 s, and a connection whose sent
/// data goes unacknowledged for 30 s is closed (its next use opens another). A query the
/// server is still working on sends nothing, so it is not cut short. Timeouts the URL
/// gives win.
fn with_network_timeouts(config: &mut tokio_postgres::Config) {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(std::time::Duration::from_secs(30));
    }
}

impl PgDb {
    /// `max` connections at most for writes, and `readers` that reads share: each is served
    /// by one server process, so more spread reads over more of the server's cores and fewer
    /// pipeline deeper.
    pub(super) async fn open(
        url: &str,
        max: usize,
        readers: usize,
        heavy_read_timeout: std::time::Duration,
    ) -> Result<Self, DbError> {
        let (tls, url) = tls::Tls::split_url(url)?;
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| DbError::Other(format!("invalid PostgreSQL URL: {e}")))?;
        tls.check(config.get_ssl_mode())?;
        let tls = tls.connector()?;
        // So that an operator finds Souk's connections in `pg_stat_activity`.
        if config.get_application_name().is_none() {
            config.application_name("souk");
        }
        with_network_timeouts(&mut config);
        // No JIT compilation: it pays off for long analytic queries, not for Souk's, whose
        // larger ones (a search counting a common word over a million ads) cross its cost
        // threshold and then spent tens of milliseconds compiling (a search within 25 km of
        // a city: 4.2 s with it, 2.9 s without, at a million ads). Options the URL gives
        // come after, so an operator's `-c jit=on` wins.
        let options = match config.get_options() {
            Some(given) => format!("-c jit=off {given}"),
            None => "-c jit=off".to_owned(),
        };
        config.options(&options);
        // Searches' plans (docs/OPERATIONS.md): made for the values bound; no parallel
        // workers (Souk runs a search per core already); random reads priced as the cached
        // or solid-state pages they are (PostgreSQL's 4.0 prices a spinning disk's seek, and
        // then counted a common word by reading all of `search_docs` instead of the pages of
        // its matches: 600 ms against 160 at a million ads, the table in shared buffers);
        // and memory enough for a bitmap of a common word's matches to stay exact (at 4 MB
        // it turned lossy past ~150,000 matches and rechecked every row of those pages).
        let opened = Arc::new(AtomicU64::new(0));
        let connector = |config: tokio_postgres::Config| Connector {
            config,
            tls: tls.clone(),
            opened: opened.clone(),
        };
        // A heavy read is stopped by the server once it runs past `heavy_read_timeout`:
        // its request was answered 408 by then, and dropping the connection would not
        // stop the server's work on it.
        let mut heavy_config = config.clone();
        heavy_config.options(format!(
            "-c plan_cache_mode=force_custom_plan -c max_parallel_workers_per_gather=0 \
             -c random_page_cost=1.1 -c work_mem=16MB -c statement_timeout={} {options}",
            heavy_read_timeout.as_millis()
        ));
        let max = max.max(1);
        let db = PgDb {
            own: Idle::new(connector(config.clone())),
            connector: connector(config),
            readers: (0..readers.max(1)).map(|_| Reader::default()).collect(),
            spare: Reader::default(),
            heavy_in_flight: AtomicUsize::new(0),
            heavy: Idle::new(connector(heavy_config)),
            permits: Semaphore::new(max),
            in_use: AtomicUsize::new(0),
            max,
        };
        // Fail at start, not at the first request, when the server cannot be reached.
        db.readers[0].client(&db.connector).await?;
        Ok(db)
    }

    pub(super) async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
        E: From<DbError>,
    {
        // The connection with the fewest reads under way: a slow query holds up the reads
        // queued behind it on its connection, and the others go round it. While heavy reads
        // run, the spare connection is one of them: the server shares its cores out by
        // process, and one reading process beside two searching ones got about a third of
        // them (R1 beside R2's search mix at 100,000 ads, in turns: 0.49 to 0.54 x its rate
        // alone on one connection, 0.58 to 0.67 x with the spare). Not at all times: two
        // connections pipeline less deeply, and point reads alone made 0.78 x the rate of
        // one connection.
        let searching = self.heavy_in_flight.load(Ordering::Relaxed) > 0;
        let reader = self
            .readers
            .iter()
            .chain(searching.then_some(&self.spare))
            .min_by_key(|r| r.in_flight.load(Ordering::Relaxed))
            .expect("at least one reader");
        let _in_flight = InUse::count(&reader.in_flight);
        let mut conn = SharedConn(reader.client(&self.connector).await?);
        f(&mut conn).await
    }

    /// A read that takes long (a search), on a connection of its own: on a shared one, the
    /// point reads pipelined behind it would wait for it. [`super::Db::read_heavy`] bounds
    /// how many run at once. These connections plan each statement for the values bound
    /// (`plan_cache_mode`): a search's best plan depends on them (a word in half the ads
    /// or in a few; how many areas a radius holds), and the generic plan that PostgreSQL
    /// takes after five runs of a prepared statement compared an ad's area with each of
    /// a radius's 1,144 areas in turn (5.4 s, where the plan for the values took 0.3 s).
    /// Nor do they start parallel workers: with searches on every core already, the workers
    /// of one take cores from the others and from the point reads (the R2 mix at a million
    /// ads without them: 45 searches a second against 35, point reads beside it 7,300 a
    /// second against 5,100). The ads of a search's page and their images are read here
    /// too, but with their plans kept ([`Conn::keep_plans`]): planned for their 30 numbers
    /// at each search they took 0.3 ms of planning (R2's mix at a million ads), and the
    /// mix run straight on the database from four tasks for 10 s made 6% more searches
    /// with the plans kept (2,722, 2,954 and 2,922 against 2,586, 2,687 and 2,808, in
    /// turns). On a shared read connection, which keeps plans too, it had made 9 to 15%
    /// fewer searches, as the pages of searches under way queued on one connection and one
    /// more server process took its share of the cores.
    pub(super) async fn read_heavy<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
        E: From<DbError>,
    {
        let _searching = InUse::count(&self.heavy_in_flight);
        let mut conn = HeavyConn {
            conn: self.heavy.take().await?,
            keep_plans: false,
        };
        // One snapshot for the whole read, as SQLite's read transaction gives it: a
        // search's count, its featured and plain parts and its page see the same commits.
        conn.conn
            .client
            .batch("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await?;
        let result = f(&mut conn).await;
        // COMMIT ends a transaction that a failed statement aborted too; but then the
        // server undid a change of `plan_cache_mode` that the client counts as made. So
        // after an error (a search refused as invalid, too) the connection goes back to
        // planning for the values, on both sides, and is kept.
        let settled = match (&result, conn.conn.client.batch("COMMIT").await) {
            (_, Err(_)) => false,
            (Ok(_), Ok(())) => true,
            (Err(_), Ok(())) => conn.conn.client.plan_for_values().await.is_ok(),
        };
        conn.conn.reusable = settled;
        self.heavy.give_back(conn.conn);
        result
    }

    /// Runs `f` on a pooled connection of its own, outside any transaction: for statements
    /// that cannot run in one (`VACUUM`).
    pub(super) async fn outside_transaction<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
        E: From<DbError>,
    {
        self.with_own(f, false).await
    }

    pub(super) async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
        E: From<DbError>,
    {
        self.with_own(f, true).await
    }

    /// Runs `f` on a connection of the pool, in a transaction if `transaction`.
    async fn with_own<T, E, F>(&self, f: F, transaction: bool) -> Result<T, E>
    where
        F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
        E: From<DbError>,
    {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| E::from(DbError::Unavailable("the pool is closed".into())))?;
        let mut conn = self.own.take().await?;
        let _in_use = InUse::count(&self.in_use);
        // If this future is dropped halfway (a timeout), the connection is dropped with it and
        // the server rolls the transaction back; it never returns to the pool.
        let result = if transaction {
            commit::in_transaction(&mut conn, &self.connector, f).await
        } else {
            f(&mut conn).await
        };
        self.own.give_back(conn);
        result
    }

    pub(super) fn pool_stats(&self) -> PoolStats {
        PoolStats {
            in_use: self.in_use.load(Ordering::Relaxed),
            idle: self.own.clients.lock().len(),
            max: self.max,
            opened: self.connector.opened.load(Ordering::Relaxed),
        }
    }
}

/// Opens connections with one configuration, and counts them (all of a process's
/// connectors share the count: `souk_db_connections_opened_total`).
struct Connector {
    config: tokio_postgres::Config,
    /// TLS as the URL's `sslmode` says ([`tls`]).
    tls: MakeRustlsConnect,
    opened: Arc<AtomicU64>,
}

impl Connector {
    async fn connect(&self) -> Result<PgClient, DbError> {
        self.opened.fetch_add(1, Ordering::Relaxed);
        PgClient::connect(&self.config, self.tls.clone()).await
    }
}

/// Connections opened with one configuration, each used by one caller at a time, and kept
/// when idle for the next.
struct Idle {
    connector: Connector,
    clients: Mutex<Vec<PgClient>>,
}

impl Idle {
    fn new(connector: Connector) -> Self {
        Idle {
            connector,
            clients: Mutex::new(Vec::new()),
        }
    }

    /// An idle connection still open, or a new one.
    async fn take(&self) -> Result<OwnConn, DbError> {
        let pooled = self.clients.lock().pop();
        let client = match pooled {
            Some(client) if !client.client.is_closed() => client,
            _ => self.connector.connect().await?,
        };
        Ok(OwnConn {
            client,
            reusable: true,
        })
    }

    /// Keeps `conn` for the next caller unless it was lost or left in an unknown state.
    fn give_back(&self, conn: OwnConn) {
        if conn.reusable && !conn.client.client.is_closed() {
            self.clients.lock().push(conn.client);
        }
    }
}

/// A connection that reads share, opened when first needed and again when lost.
#[derive(Default)]
struct Reader {
    client: Mutex<Option<Arc<PgClient>>>,
    /// Held while the connection is opened again; the time the last try failed.
    reconnecting: tokio::sync::Mutex<Option<std::time::Instant>>,
    in_flight: AtomicUsize,
}

impl Reader {
    async fn client(&self, connector: &Connector) -> Result<Arc<PgClient>, DbError> {
        if let Some(client) = self.open_client() {
            return Ok(client);
        }
        // One reconnect at a time: the reads that find the connection lost (under load,
        // hundreds at once) wait for it, instead of each opening one past the server's
        // `max_connections`. A try that failed a moment ago answers those that waited.
        let mut last_failure = self.reconnecting.lock().await;
        if let Some(client) = self.open_client() {
            return Ok(client);
        }
        if last_failure.is_some_and(|at| at.elapsed() < std::time::Duration::from_secs(1)) {
            return Err(DbError::Unavailable(
                "PostgreSQL did not answer a moment ago".into(),
            ));
        }
        match connector.connect().await {
            Ok(client) => {
                let client = Arc::new(client);
                *self.client.lock() = Some(client.clone());
                *last_failure = None;
                Ok(client)
            }
            Err(e) => {
                *last_failure = Some(std::time::Instant::now());
                Err(e)
            }
        }
    }

    fn open_client(&self) -> Option<Arc<PgClient>> {
        self.client
            .lock()
            .as_ref()
            .filter(|c| !c.client.is_closed())
            .cloned()
    }
}

/// Counts something in use (a write connection, a read under way) for as long as it lives.
struct InUse<'a>(&'a AtomicUsize);

impl<'a> InUse<'a> {
    fn count(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        InUse(counter)
    }
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection and the statements prepared on it.
struct PgClient {
    client: Client,
    statements: Mutex<HashMap<Box<str>, Prepared>>,
    /// Whether the server keeps plans (`plan_cache_mode` `auto`) where the connection was
    /// opened to plan for the values (a heavy read's, [`HeavyConn`]).
    plans_kept: AtomicBool,
}

/// A prepared statement and the names of its result columns.
#[derive(Clone)]
struct Prepared {
    statement: Statement,
    columns: Arc<[String]>,
}

impl PgClient {
    async fn connect(
        config: &tokio_postgres::Config,
        tls: MakeRustlsConnect,
    ) -> Result<Self, DbError> {
        let (client, connection) = config.connect(tls).await.map_err(|e| {
            // With its causes: "error performing TLS handshake" alone does not say that
            // the certificate was not trusted.
            let mut text = format!("cannot connect to PostgreSQL: {e}");
            let mut cause = StdError::source(&e);
            while let Some(e) = cause {
                text = format!("{text}: {e}");
                cause = e.source();
            }
            DbError::Unavailable(text)
        })?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "a PostgreSQL connection ended");
            }
        });
        Ok(PgClient {
            client,
            statements: Mutex::new(HashMap::new()),
            plans_kept: AtomicBool::new(false),
        })
    }

    async fn statement(&self, sql: &str) -> Result<Prepared, DbError> {
        if let Some(prepared) = self.statements.lock().get(sql) {
            return Ok(prepared.clone());
        }
        let statement = self.client.prepare(sql).await.map_err(map_error)?;
        let columns: Arc<[String]> = statement
            .columns()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        let mut statements = self.statements.lock();
        if statements.len() >= STATEMENTS_KEPT {
            statements.clear();
        }
        let prepared = Prepared { statement, columns };
        statements.insert(sql.into(), prepared.clone());
        Ok(prepared)
    }

    async fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let Prepared { statement, columns } = self.statement(sql).await?;
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        let rows = self
            .client
            .query(&statement, &params)
            .await
            .map_err(map_error)?;
        Ok(rows
            .into_iter()
            .map(|row| Row::from_postgres(columns.clone(), row))
            .collect())
    }

    async fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let statement = self.statement(sql).await?.statement;
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        self.client
            .execute(&statement, &params)
            .await
            .map_err(map_error)
    }

    async fn batch(&self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).await.map_err(map_error)
    }

    /// Plans for the values again (the connection's own `plan_cache_mode`), whatever the
    /// client counted.
    async fn plan_for_values(&self) -> Result<(), DbError> {
        self.batch("RESET plan_cache_mode").await?;
        self.plans_kept.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Runs `statement` (one of this client's) keeping plans or planning for the values, as
    /// `keep_plans` says: when the server plans otherwise now, the change of
    /// `plan_cache_mode` is sent with the statement (pipelined), so both take one round
    /// trip.
    async fn planning<T>(
        &self,
        keep_plans: bool,
        statement: impl Future<Output = Result<T, DbError>>,
    ) -> Result<T, DbError> {
        if self.plans_kept.load(Ordering::Relaxed) == keep_plans {
            return statement.await;
        }
        let set = if keep_plans {
            "SET plan_cache_mode = auto"
        } else {
            "RESET plan_cache_mode"
        };
        let (set, result) = tokio::join!(self.batch(set), statement);
        // A SET that failed changed nothing.
        if set.is_ok() {
            self.plans_kept.store(keep_plans, Ordering::Relaxed);
        }
        set?;
        result
    }
}

/// A read's view: a connection that other reads use at the same time.
struct SharedConn(Arc<PgClient>);

impl Conn for SharedConn {
    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, Vec<Row>> {
        Box::pin(self.0.query(sql, params))
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, u64> {
        Box::pin(self.0.execute(sql, params))
    }

    fn execute_batch<'a>(&'a mut self, sql: &'a str) -> DbFuture<'a, ()> {
        Box::pin(self.0.batch(sql))
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }
}

/// A write's view: a connection of its own, inside the write's transaction.
struct OwnConn {
    client: PgClient,
    reusable: bool,
}

impl Conn for OwnConn {
    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, Vec<Row>> {
        Box::pin(self.client.query(sql, params))
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, u64> {
        Box::pin(self.client.execute(sql, params))
    }

    fn execute_batch<'a>(&'a mut self, sql: &'a str) -> DbFuture<'a, ()> {
        Box::pin(self.client.batch(sql))
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }
}

/// A heavy read's view ([`PgDb::read_heavy`]): a connection of its own that plans each
/// statement for its values (the connection's `plan_cache_mode`, which `RESET` returns to)
/// until [`Conn::keep_plans`].
struct HeavyConn {
    conn: OwnConn,
    keep_plans: bool,
}

impl Conn for HeavyConn {
    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, Vec<Row>> {
        let client = &self.conn.client;
        Box::pin(client.planning(self.keep_plans, client.query(sql, params)))
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> DbFuture<'a, u64> {
        let client = &self.conn.client;
        Box::pin(client.planning(self.keep_plans, client.execute(sql, params)))
    }

    fn execute_batch<'a>(&'a mut self, sql: &'a str) -> DbFuture<'a, ()> {
        self.conn.execute_batch(sql)
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn keep_plans(&mut self) {
        self.keep_plans = true;
    }
}

type BoxError = Box<dyn StdError + Sync + Send>;

/// Encodes a value for the parameter type PostgreSQL inferred, so that one query text binds
/// the same `Value`s on both backends (an `Int` fits INT2/4/8 columns alike).
impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                _ => v.to_string().as_str().to_sql(ty, out),
            },
            Value::Real(v) => match *ty {
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Value::Text(v) => v.as_str().to_sql(ty, out),
            Value::Bool(v) => match *ty {
                Type::INT8 | Type::INT4 | Type::INT2 => Value::Int(i64::from(*v)).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Value::Blob(v) => v.as_slice().to_sql(ty, out),
            Value::TextList(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// Column `i` of `row` (which has it) as a [`Value`].
pub(super) fn from_pg(row: &tokio_postgres::Row, i: usize) -> Result<Value, DbError> {
    let ty = row.columns()[i].type_();
    let decode = |e: tokio_postgres::Error| DbError::Decode(e.to_string());
    let value = match *ty {
        Type::INT8 => row
            .try_get::<_, Option<i64>>(i)
            .map_err(decode)?
            .map(Value::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)
            .map_err(decode)?
            .map(|v| Value::Int(v.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)
            .map_err(decode)?
            .map(|v| Value::Int(v.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)
            .map_err(decode)?
            .map(Value::Bool),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)
            .map_err(decode)?
            .map(Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)
            .map_err(decode)?
            .map(|v| Value::Real(v.into())),
        Type::BYTEA => row
            .try_get::<_, Option<Vec<u8>>>(i)
            .map_err(decode)?
            .map(Value::Blob),
        _ => row
            .try_get::<_, Option<String>>(i)
            .map_err(decode)?
            .map(Value::Text),
    };
    Ok(value.unwrap_or(Value::Null))
}

/// Whether column `i` of `row` (which has it) is NULL, whatever its type.
pub(super) fn is_null(row: &tokio_postgres::Row, i: usize) -> bool {
    /// Any value, read without decoding it.
    struct Present;
    impl<'a> FromSql<'a> for Present {
        fn from_sql(_: &Type, _: &'a [u8]) -> Result<Self, Box<dyn StdError + Sync + Send>> {
            Ok(Present)
        }
        fn accepts(_: &Type) -> bool {
            true
        }
    }
    matches!(row.try_get::<_, Option<Present>>(i), Ok(None))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn a_silent_server_is_given_up_unless_the_url_says_otherwise() {
        let mut config: tokio_postgres::Config = "postgres://souk@db/souk".parse().unwrap();
        super::with_network_timeouts(&mut config);
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(10)));
        assert_eq!(
            config.get_tcp_user_timeout(),
            Some(&Duration::from_secs(30))
        );
        let given = "postgres://souk@db/souk?connect_timeout=3&tcp_user_timeout=5";
        let mut config: tokio_postgres::Config = given.parse().unwrap();
        super::with_network_timeouts(&mut config);
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(config.get_tcp_user_timeout(), Some(&Duration::from_secs(5)));
    }
}
