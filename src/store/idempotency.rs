//! Idempotency keys: the first response to a POST, kept for replay.

use crate::params;

use super::{Conn, DbError};

/// What a key holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    /// The first request with this key is still running.
    Pending { fingerprint: String },
    /// The first request's answer: its status and the stored JSON answer (empty for an
    /// answer without a body).
    Done {
        fingerprint: String,
        status: u16,
        response: String,
    },
}

/// When a claimed key is forgotten: its answer after `expired_before`, and a claim whose
/// request never finished (pending since before `abandoned_before`: the replica that ran it
/// stopped) at that time.
#[derive(Clone, Copy, Debug)]
pub struct Forget {
    pub expired_before: i64,
    pub abandoned_before: i64,
}

/// One claim of a key: the key and when it was claimed. A key freed as abandoned and
/// claimed again is another claim, so the first claimant's late answer or release changes
/// nothing of the second's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub scope_key: String,
    pub claimed_at: i64,
}

/// Claims `scope_key` for a new request at `now`; `Ok(None)` if it was free (and is now
/// pending under the claim `(scope_key, now)`), else what it holds. Keys to [`Forget`] are
/// forgotten first.
pub async fn claim(
    conn: &mut dyn Conn,
    scope_key: &str,
    fingerprint: &str,
    now: i64,
    forget: Forget,
) -> Result<Option<Stored>, DbError> {
    conn.execute(
        "DELETE FROM idempotency_keys WHERE scope_key = $1 \
         AND (created_at < $2 OR (status IS NULL AND created_at < $3))",
        params![scope_key, forget.expired_before, forget.abandoned_before],
    )
    .await?;
    // On PostgreSQL the key's holder may free it between the insert that met it and the
    // read (each statement sees the latest commits): then it is free to insert again.
    for _ in 0..3 {
        let inserted = conn
            .execute(
                "INSERT INTO idempotency_keys (scope_key, fingerprint, created_at) \
                 VALUES ($1, $2, $3) ON CONFLICT (scope_key) DO NOTHING",
                params![scope_key, fingerprint, now],
            )
            .await?;
        if inserted == 1 {
            return Ok(None);
        }
        if let Some(row) = conn
            .query_opt(
                "SELECT fingerprint, status, response FROM idempotency_keys WHERE scope_key = $1",
                params![scope_key],
            )
            .await?
        {
            return stored(&row).map(Some);
        }
    }
    Err(DbError::Unavailable(
        "an idempotency key was taken and freed again and again".into(),
    ))
}

fn stored(row: &super::Row) -> Result<Stored, DbError> {
    let fingerprint = row.get("fingerprint")?;
    Ok(
        match (
            row.get::<Option<i64>>("status")?,
            row.get::<Option<String>>("response")?,
        ) {
            (Some(status), Some(response)) => Stored::Done {
                fingerprint,
                status: u16::try_from(status)
                    .map_err(|_| DbError::Decode(format!("status {status}")))?,
                response,
            },
            _ => Stored::Pending { fingerprint },
        },
    )
}

/// Keeps the answer of a claim (`response` empty for an answer without a body), if the
/// key is still under that claim.
pub async fn complete(
    conn: &mut dyn Conn,
    claim: &Claim,
    status: u16,
    response: &str,
) -> Result<(), DbError> {
    conn.run(
        "UPDATE idempotency_keys SET status = $3, response = $4 \
         WHERE scope_key = $1 AND created_at = $2",
        params![
            &claim.scope_key,
            claim.claimed_at,
            i64::from(status),
            response
        ],
    )
    .await
}

/// Frees a claimed key whose request did not succeed, so that a retry runs again; only
/// under that claim, and only while it is pending.
pub async fn release(conn: &mut dyn Conn, claim: &Claim) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM idempotency_keys WHERE scope_key = $1 AND created_at = $2 \
         AND response IS NULL",
        params![&claim.scope_key, claim.claimed_at],
    )
    .await
}

/// Forgets at most `most` keys older than `before` (a periodic sweep keeps the table
/// small, a batch per write).
pub async fn sweep(conn: &mut dyn Conn, before: i64, most: i64) -> Result<u64, DbError> {
    conn.execute(
        "DELETE FROM idempotency_keys WHERE scope_key IN ( \
         SELECT scope_key FROM idempotency_keys WHERE created_at < $1 LIMIT $2)",
        params![before, most],
    )
    .await
}
