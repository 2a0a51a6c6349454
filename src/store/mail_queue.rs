//! Mails waiting to be sent (migration 0051): written in the transaction of the change they
//! tell of, taken one at a time by a sender under a lease ([`QUEUE`]), deleted once sent.

use crate::params;

use super::leased::{LeasedQueue, leased};
use super::record::record;
use super::{Conn, DbError};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct QueuedMail {
        pub id: i64 = "mail_id",
        pub recipient: String,
        pub subject: String,
        pub body: String,
        /// How many times a sender has taken it, this time included: it also names this
        /// taking (`store::leased`).
        pub attempts: i64,
        pub created_at: i64,
        /// The confirmation whose link the body carries, by the hash of the link's latest
        /// token; the body has a placeholder where the token goes (migration 0058).
        pub confirmation_hash: Option<String>,
    }
}

/// Queues a mail, due at once; `confirmation_hash` names the confirmation whose link the
/// body carries, if any.
pub async fn push(
    conn: &mut dyn Conn,
    recipient: &str,
    subject: &str,
    body: &str,
    confirmation_hash: Option<&str>,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO mail_queue (recipient, subject, body, confirmation_hash, created_at, \
                                 due_at) \
         VALUES ($1, $2, $3, $4, $5, $5)",
        params![recipient, subject, body, confirmation_hash, now],
    )
    .await
}

/// Notes the new hash of the link `mail` carries, if its taking is still the last one;
/// false if another sender took the mail over.
pub async fn relink(conn: &mut dyn Conn, mail: &QueuedMail, hash: &str) -> Result<bool, DbError> {
    let changed = conn
        .execute(
            "UPDATE mail_queue SET confirmation_hash = $3 WHERE mail_id = $1 AND attempts = $2",
            params![mail.id, mail.attempts, hash],
        )
        .await?;
    Ok(changed == 1)
}

/// The queue its senders take mails from.
pub static QUEUE: LeasedQueue<QueuedMail> = LeasedQueue::new("mail_queue", "mail_id");

leased!(QueuedMail);
