//! PostgreSQL through the `postgres` client: each closure runs on a blocking thread with a
//! pooled connection; prepared statements are cached per connection.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::BytesMut;
use parking_lot::Mutex;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};
use tokio::sync::Semaphore;

use super::{Backend, Conn, DbError, PoolStats, Row, Value};

pub(super) struct PgDb {
    config: postgres::Config,
    idle: Arc<Mutex<Vec<PgConn>>>,
    permits: Arc<Semaphore>,
    in_use: Arc<AtomicUsize>,
    max: usize,
}

impl PgDb {
    pub(super) async fn open(url: &str, max: usize) -> Result<Self, DbError> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e| DbError::Other(format!("invalid PostgreSQL URL: {e}")))?;
        let db = PgDb {
            config,
            idle: Arc::new(Mutex::new(Vec::new())),
            permits: Arc::new(Semaphore::new(max.max(1))),
            in_use: Arc::new(AtomicUsize::new(0)),
            max: max.max(1),
        };
        // Fail at start, not at the first request, when the server cannot be reached.
        db.run(false, |conn| conn.query("SELECT 1 AS one", &[]).map(|_| ()))
            .await?;
        Ok(db)
    }

    pub(super) async fn run<T, E, F>(&self, transaction: bool, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| E::from(DbError::Unavailable("the pool is closed".into())))?;
        let pooled = self.idle.lock().pop();
        let config = self.config.clone();
        let idle = self.idle.clone();
        let in_use = self.in_use.clone();
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut conn = match pooled {
                Some(conn) if !conn.client.is_closed() => conn,
                _ => PgConn::connect(&config)?,
            };
            in_use.fetch_add(1, Ordering::Relaxed);
            let result = if transaction {
                run_in_transaction(&mut conn, f)
            } else {
                f(&mut conn)
            };
            in_use.fetch_sub(1, Ordering::Relaxed);
            if !conn.client.is_closed() {
                idle.lock().push(conn);
            }
            result
        });
        task.await
            .map_err(|e| E::from(DbError::Other(format!("a database task failed: {e}"))))?
    }

    pub(super) fn pool_stats(&self) -> PoolStats {
        PoolStats {
            in_use: self.in_use.load(Ordering::Relaxed),
            idle: self.idle.lock().len(),
            max: self.max,
        }
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        // Closing a `postgres::Client` blocks on its own runtime, which panics on a thread
        // that drives async tasks: close the idle connections on a thread of their own.
        let idle = std::mem::take(&mut *self.idle.lock());
        if !idle.is_empty() {
            let _ = std::thread::spawn(move || drop(idle)).join();
        }
    }
}

fn run_in_transaction<T, E, F>(conn: &mut PgConn, f: F) -> Result<T, E>
where
    F: FnOnce(&mut dyn Conn) -> Result<T, E>,
    E: From<DbError>,
{
    conn.execute_batch("BEGIN")?;
    match f(conn) {
        Ok(value) => {
            conn.execute_batch("COMMIT")?;
            Ok(value)
        }
        Err(e) => {
            // A failed rollback leaves the connection unusable; dropping it is enough.
            if conn.execute_batch("ROLLBACK").is_err() {
                let _ = conn.execute_batch("SELECT 1");
            }
            Err(e)
        }
    }
}

pub(super) struct PgConn {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl PgConn {
    fn connect(config: &postgres::Config) -> Result<Self, DbError> {
        let client = config
            .connect(NoTls)
            .map_err(|e| DbError::Unavailable(format!("cannot connect to PostgreSQL: {e}")))?;
        Ok(PgConn {
            client,
            statements: HashMap::new(),
        })
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).map_err(map_error)?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

impl Conn for PgConn {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let statement = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        let rows = self.client.query(&statement, &params).map_err(map_error)?;
        let columns: Arc<[String]> = statement
            .columns()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        rows.iter()
            .map(|row| {
                let values = (0..columns.len())
                    .map(|i| from_pg(row, i))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Row::new(columns.clone(), values))
            })
            .collect()
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let statement = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        self.client.execute(&statement, &params).map_err(map_error)
    }

    fn execute_batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(map_error)
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
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
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn from_pg(row: &postgres::Row, i: usize) -> Result<Value, DbError> {
    let ty = row.columns()[i].type_().clone();
    let decode = |e: postgres::Error| DbError::Decode(e.to_string());
    let value = match ty {
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

fn map_error(e: postgres::Error) -> DbError {
    use postgres::error::SqlState;
    if let Some(db) = e.as_db_error() {
        let constraint = db.constraint().unwrap_or_default().to_owned();
        if *db.code() == SqlState::UNIQUE_VIOLATION {
            return DbError::UniqueViolation(constraint);
        }
        if *db.code() == SqlState::FOREIGN_KEY_VIOLATION {
            return DbError::ForeignKeyViolation(constraint);
        }
        return DbError::Other(format!("{}: {}", db.code().code(), db.message()));
    }
    if e.is_closed() {
        return DbError::Unavailable(e.to_string());
    }
    DbError::Other(e.to_string())
}
