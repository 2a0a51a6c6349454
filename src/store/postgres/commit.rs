//! A write's transaction, and what it is answered when the connection is lost at COMMIT.
//!
//! A COMMIT sent on a connection that breaks before its answer arrives may have committed
//! or not: the server may have received it, committed, and then found no one to tell (a
//! proxy restarted, the network cut, the connection terminated just after). Answering
//! "unavailable" then would tell the client that nothing changed, and a retry under the
//! same `Idempotency-Key` (freed by that 503) would make the change twice. So the
//! transaction's id is read before COMMIT, and after a lost COMMIT another connection asks
//! the server what became of it (`txid_status`): committed is the write's success, aborted
//! is the "unavailable, nothing changed" it was, and no answer within a few seconds is
//! [`DbError::OutcomeUnknown`], which says so.
//!
//! The id costs one round trip per write, a trivial query on a connection already open:
//! taken at `BEGIN` instead (the same round trip) it would give every write an id, and the
//! background loops' writes that find nothing to do would each flush a commit record.

use std::time::Duration;

use super::{Connector, OwnConn, map_error};
use crate::store::{BoxFuture, Conn, DbError};

/// How often, and how far apart, the outcome of a lost COMMIT is asked: a server that has
/// the COMMIT still running (a synchronous standby that is slow to confirm) answers
/// "in progress" until it is done.
const STATUS_TRIES: u32 = 5;
const STATUS_PAUSE: Duration = Duration::from_millis(400);

pub(super) async fn in_transaction<T, E, F>(
    conn: &mut OwnConn,
    connector: &Connector,
    f: F,
) -> Result<T, E>
where
    F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
    E: From<DbError>,
{
    conn.client.batch("BEGIN").await?;
    match f(conn).await {
        Ok(value) => {
            commit(conn, connector).await?;
            Ok(value)
        }
        Err(e) => {
            // A connection whose rollback failed is in an unknown state: not pooled again.
            if conn.client.batch("ROLLBACK").await.is_err() {
                conn.reusable = false;
            }
            Err(e)
        }
    }
}

async fn commit(conn: &mut OwnConn, connector: &Connector) -> Result<(), DbError> {
    let id = conn
        .client
        .query("SELECT txid_current_if_assigned() AS id", &[])
        .await?
        .into_iter()
        .next()
        .ok_or(DbError::NotFound)?
        .get::<Option<i64>>("id")?;
    let lost = match conn
        .client
        .client
        .batch_execute("COMMIT")
        .await
        .map_err(map_error)
    {
        Ok(()) => return Ok(()),
        // The connection went without an answer (or with the server's goodbye, which may
        // come after the commit): the outcome is the server's to tell.
        Err(DbError::Unavailable(cause)) => cause,
        // The server answered that it rolled back (a deferred constraint, a serialization
        // failure): nothing was written.
        Err(refused) => return Err(refused),
    };
    conn.reusable = false;
    match id {
        Some(id) => outcome(connector, id, &lost).await,
        // A transaction given no id wrote nothing: whatever became of its COMMIT, the
        // database holds what it read.
        None => Ok(()),
    }
}

/// Asks the server, on connections of its own, whether transaction `id` committed.
async fn outcome(connector: &Connector, id: i64, lost: &str) -> Result<(), DbError> {
    let mut last = String::new();
    for attempt in 0..STATUS_TRIES {
        if attempt > 0 {
            tokio::time::sleep(STATUS_PAUSE).await;
        }
        match status(connector, id).await {
            Ok(Some(status)) if status == "committed" => {
                tracing::warn!(cause = %lost, "the connection was lost at COMMIT, which committed");
                return Ok(());
            }
            Ok(Some(status)) if status == "aborted" => {
                return Err(DbError::Unavailable(format!(
                    "{lost}; the transaction was rolled back"
                )));
            }
            // "in progress", or no answer (a server still restarting).
            Ok(status) => {
                last = format!(
                    "the transaction is {}",
                    status.as_deref().unwrap_or("forgotten")
                )
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(DbError::OutcomeUnknown(format!(
        "{lost}; whether transaction {id} committed is not known: {last}"
    )))
}

async fn status(connector: &Connector, id: i64) -> Result<Option<String>, DbError> {
    let client = connector.connect().await?;
    let rows = client
        .query("SELECT txid_status($1)::text AS status", &[id.into()])
        .await?;
    rows.into_iter()
        .next()
        .ok_or(DbError::NotFound)?
        .get::<Option<String>>("status")
}
