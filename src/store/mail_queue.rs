//! Mails waiting to be sent (migration 0051): written in the transaction of the change they
//! tell of, taken one at a time by a sender under a lease, deleted once sent.

use crate::params;

use super::record::record;
use super::{Conn, DbError, Record};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct QueuedMail {
        pub id: i64 = "mail_id",
        pub recipient: String,
        pub subject: String,
        pub body: String,
        /// How many times a sender has taken it, this time included: it also names this
        /// taking ([`sent`] and [`retry_at`] change the row only while it is still theirs).
        pub attempts: i64,
        pub created_at: i64,
    }
}

/// Queues a mail, due at once.
pub async fn push(
    conn: &mut dyn Conn,
    recipient: &str,
    subject: &str,
    body: &str,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO mail_queue (recipient, subject, body, created_at, due_at) \
         VALUES ($1, $2, $3, $4, $4)",
        params![recipient, subject, body, now],
    )
    .await
}

/// Takes the mail due first at `now`, if any, until `until`: no other sender takes it
/// before then, and if this one stops without a word, another takes it then. A mail that
/// another sender is taking at this moment is passed over (PostgreSQL's `SKIP LOCKED`).
pub async fn take(
    conn: &mut dyn Conn,
    now: i64,
    until: i64,
) -> Result<Option<QueuedMail>, DbError> {
    let skip_locked = conn.skip_locked();
    conn.record(
        &format!(
            "UPDATE mail_queue SET due_at = $2, attempts = attempts + 1 \
             WHERE mail_id = (SELECT mail_id FROM mail_queue WHERE due_at <= $1 \
                              ORDER BY due_at, mail_id LIMIT 1{skip_locked}) \
               AND due_at <= $1 \
             RETURNING {}",
            QueuedMail::COLUMNS
        ),
        params![now, until],
    )
    .await
}

/// Whether a mail is due at `now` (a read, so that an idle sender does not write).
pub async fn any_due(conn: &mut dyn Conn, now: i64) -> Result<bool, DbError> {
    Ok(conn
        .query_opt(
            "SELECT mail_id FROM mail_queue WHERE due_at <= $1 LIMIT 1",
            params![now],
        )
        .await?
        .is_some())
}

/// Forgets a mail that was sent (or given up), if the sender's taking (`attempts`) is
/// still the last one.
pub async fn sent(conn: &mut dyn Conn, mail: &QueuedMail) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM mail_queue WHERE mail_id = $1 AND attempts = $2",
        params![mail.id, mail.attempts],
    )
    .await
}

/// Puts a mail whose sending failed back, due at `due_at`, if the sender's taking is still
/// the last one.
pub async fn retry_at(conn: &mut dyn Conn, mail: &QueuedMail, due_at: i64) -> Result<(), DbError> {
    conn.run(
        "UPDATE mail_queue SET due_at = $3 WHERE mail_id = $1 AND attempts = $2",
        params![mail.id, mail.attempts, due_at],
    )
    .await
}

/// Makes every mail due at `now` (SQLite at start-up: one process, so no lease is anyone's
/// now). A mail waiting to be tried again is tried at once as well: it keeps its count of
/// attempts, so its next wait after a failure is as long as it would have been.
pub async fn release_all(conn: &mut dyn Conn, now: i64) -> Result<u64, DbError> {
    conn.execute(
        "UPDATE mail_queue SET due_at = $1 WHERE due_at > $1",
        params![now],
    )
    .await
}

/// How many mails wait, sent by no one yet or being sent now (for tests and metrics).
pub async fn waiting(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COUNT(*) AS n FROM mail_queue", &[])
        .await?
        .get::<i64>("n")
}
