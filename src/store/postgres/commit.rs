//! A write's transaction, and what it is answered when the connection is lost at COMMIT.
//!
//! A COMMIT sent on a connection that breaks before its answer arrives may have committed
//! or not: the server may have received it, committed, and then found no one to tell (a
//! proxy restarted, the network cut, the connection terminated just after). Answering
//! "unavailable" then would tell the client that nothing changed, and a retry under the
//! same `Idempotency-Key` (freed by that 503) would make the change twice. So the
//! transaction's id is read before COMMIT, and after a lost COMMIT another connection asks
//! the server what became of it (`txid_status`): committed is the write's success, aborted
//! is the "unavailable, nothing changed" it was, and no answer within [`OUTCOME_WAIT`] is
//! [`DbError::OutcomeUnknown`], which says so.
//!
//! The id is taken with `BEGIN`, in the same message and round trip. It gives every write
//! transaction an id, which one that writes takes anyway; the background loops' writes
//! that find nothing to do (a rendition worker's claim, about once a second) now each
//! flush a commit record. Read before COMMIT instead, it took a round trip more per write.
//! Neither cost shows beyond the harness's noise: R3 on PostgreSQL measured 0.93 x and
//! 0.94 x the build without the check, and R1, which neither changes, 0.97 x and 0.94 x
//! (`bench/run --backend postgres --baseline 53bf122`, in turns; bench/results).

use std::time::Duration;

use super::{Connector, OwnConn, PgClient, connection_lost, map_error};
use crate::store::{BoxFuture, Conn, DbError};

/// How long the outcome of a lost COMMIT is asked for, and the pause between two asks: a
/// server that has the COMMIT still running (a synchronous standby slow to confirm it)
/// answers "in progress" until it is done, and one that restarts answers nothing for a
/// moment. Bounded as a whole, so that the request is answered well within its timeout.
const OUTCOME_WAIT: Duration = Duration::from_secs(3);
const STATUS_PAUSE: Duration = Duration::from_millis(200);

pub(super) async fn in_transaction<T, E, F>(
    conn: &mut OwnConn,
    connector: &Connector,
    f: F,
) -> Result<T, E>
where
    F: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, Result<T, E>>,
    E: From<DbError>,
{
    let id = match begin(conn).await {
        Ok(id) => id,
        Err(e) => {
            // `BEGIN` may have run and the id's query failed (a standby refuses to give
            // one): the connection must not go back to the pool inside that transaction.
            if conn.client.batch("ROLLBACK").await.is_err() {
                conn.reusable = false;
            }
            return Err(e.into());
        }
    };
    match f(conn).await {
        Ok(value) => {
            commit(conn, connector, id).await?;
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

/// Begins the transaction; its id.
async fn begin(conn: &mut OwnConn) -> Result<i64, DbError> {
    let messages = conn
        .client
        .client
        .simple_query("BEGIN; SELECT txid_current()")
        .await
        .map_err(map_error)?;
    messages
        .iter()
        .find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0)?.parse().ok(),
            _ => None,
        })
        .ok_or_else(|| DbError::Decode("BEGIN gave no transaction id".into()))
}

async fn commit(conn: &mut OwnConn, connector: &Connector, id: i64) -> Result<(), DbError> {
    let lost = match conn.client.client.batch_execute("COMMIT").await {
        Ok(()) => return Ok(()),
        // The connection went without an answer, or with the server's goodbye (which may
        // come after the commit): the outcome is the server's to tell.
        Err(e) if connection_lost(&e) => map_error(e).to_string(),
        // The server answered that it rolled back (a deferred constraint, a serialization
        // failure, a full disk): nothing was written.
        Err(e) => return Err(map_error(e)),
    };
    conn.reusable = false;
    outcome(connector, id, &lost).await
}

/// Asks the server, on a connection of its own, whether transaction `id` committed, for
/// [`OUTCOME_WAIT`] at most. (After a failover to a standby that had not received the
/// transaction, the new primary may give its id to another: a rare case, in which the
/// answer is that one's.)
async fn outcome(connector: &Connector, id: i64, lost: &str) -> Result<(), DbError> {
    let deadline = tokio::time::Instant::now() + OUTCOME_WAIT;
    let mut asked: Option<PgClient> = None;
    let mut last = String::from("no answer");
    loop {
        if asked
            .as_ref()
            .is_none_or(|client| client.client.is_closed())
        {
            match tokio::time::timeout_at(deadline, connector.connect()).await {
                Ok(Ok(client)) => asked = Some(client),
                Ok(Err(e)) => {
                    last = e.to_string();
                    asked = None;
                }
                Err(_) => break,
            }
        }
        if let Some(client) = &asked {
            match tokio::time::timeout_at(deadline, status(client, id)).await {
                Ok(Ok(Some(status))) if status == "committed" => {
                    tracing::warn!(cause = %lost, "the connection was lost at COMMIT, which committed");
                    return Ok(());
                }
                Ok(Ok(Some(status))) if status == "aborted" => {
                    return Err(DbError::Unavailable(format!(
                        "{lost}; the transaction was rolled back"
                    )));
                }
                // "in progress", or too old to tell (which a transaction just ended is not).
                Ok(Ok(status)) => {
                    last = format!("it is {}", status.as_deref().unwrap_or("forgotten"));
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => break,
            }
        }
        if tokio::time::timeout_at(deadline, tokio::time::sleep(STATUS_PAUSE))
            .await
            .is_err()
        {
            break;
        }
    }
    Err(DbError::OutcomeUnknown(format!(
        "{lost}; whether transaction {id} committed is not known after {OUTCOME_WAIT:?}: {last}"
    )))
}

async fn status(client: &PgClient, id: i64) -> Result<Option<String>, DbError> {
    let rows = client
        .query("SELECT txid_status($1)::text AS status", &[id.into()])
        .await?;
    rows.into_iter()
        .next()
        .ok_or(DbError::NotFound)?
        .get::<Option<String>>("status")
}
