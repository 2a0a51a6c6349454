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

/// The queue its senders take mails from.
pub static QUEUE: LeasedQueue<QueuedMail> = LeasedQueue::new("mail_queue", "mail_id");

leased!(QueuedMail);
