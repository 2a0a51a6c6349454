//! Mail that a change promises (an account's confirmation link, a question to a bidder):
//! queued in the change's own transaction ([`post`]), so that a change that was
//! acknowledged never loses its mail, and sent by a background sender ([`send_next`], in a
//! loop of `app`),
//! so that no request waits for the mail server. A mail that cannot be sent is tried again,
//! a minute later and then twice as long each time, up to an hour, for a week (as long as
//! a confirmation link lasts); then it is given up, with an error in the log.
//!
//! A mail is sent at least once: a sender that stops after the mail server took the mail
//! but before the queue forgets it leaves it to be sent again once its lease runs out.
//! Replicas' clocks must agree to within a few minutes, or one may take a mail another is
//! still sending (a late sender's answer then changes nothing: each taking is named).
//!
//! A mail that carries a confirmation link is queued without it ([`post_with_link`]): its
//! body holds [`LINK_TOKEN`] where the link's token goes, and the queue only the hash of a
//! token no one holds. Each sending mints a new token and gives the confirmation its hash,
//! so a database dump holds no usable link however long the mail waits (oauth.md). A link
//! from an earlier sending of the same mail (one the mail server took but did not
//! acknowledge in time) stops working; the newest mail's link works. A mail whose link was
//! used, retired (a later address change) or expired before it went is not sent at all.

use crate::clock::Clock;
use crate::mail::{Mail, Mailer};
use crate::oauth::secret;
use crate::store::mail_queue::{self, QUEUE, QueuedMail};
use crate::store::oauth as oauth_store;
use crate::store::{Conn, Db, DbError};

use super::queue::{Attempt, Backoff, Settled, settle, take_due};

/// What a queued mail's body has where its confirmation link's token goes.
pub const LINK_TOKEN: &str = "{token}";

/// How long a sender may take over one mail before another sender may take it.
const SEND_LEASE_SECS: i64 = 300;

/// A minute after the first failure, up to an hour apart, for a week: as long as the
/// confirmation link a mail may carry works.
const BACKOFF: Backoff = Backoff {
    first_secs: 60,
    most_secs: 3600,
    keep_secs: 7 * 86_400,
};

/// Queues `mail` in the caller's transaction.
pub async fn post(conn: &mut dyn Conn, mail: &Mail, now: i64) -> Result<(), DbError> {
    mail_queue::push(conn, &mail.to, &mail.subject, &mail.body, None, now).await
}

/// Queues `mail`, whose body has [`LINK_TOKEN`] in place of the token of the link of the
/// confirmation stored as `confirmation_hash`, in the caller's transaction.
pub async fn post_with_link(
    conn: &mut dyn Conn,
    mail: &Mail,
    confirmation_hash: &str,
    now: i64,
) -> Result<(), DbError> {
    let (to, subject, body) = (&mail.to, &mail.subject, &mail.body);
    mail_queue::push(conn, to, subject, body, Some(confirmation_hash), now).await
}

/// What one attempt came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    /// No mail was due.
    Idle,
    /// A mail went, and the queue forgot it.
    Sent,
    /// A mail could not go; it is due again later, or given up after a week.
    Failed,
    /// A mail was not sent: its link was used, retired or expired (the queue forgot the
    /// mail), or another sender took it over.
    Stale,
}

/// Gives up a stopped sender's leases (SQLite at start-up, `queue::release_leases`).
pub async fn release_leases(db: &Db, clock: &Clock) -> Result<u64, DbError> {
    super::queue::release_leases(db, clock, &QUEUE, SEND_LEASE_SECS).await
}

/// Takes the mail due first and sends it.
pub async fn send_next(db: &Db, mailer: &Mailer, clock: &Clock) -> Result<Sent, DbError> {
    let Some(queued) = take_due(db, clock, &QUEUE, SEND_LEASE_SECS, None).await? else {
        return Ok(Sent::Idle);
    };
    let (id, attempts) = (queued.id, queued.attempts);
    let mut mail = Mail {
        to: queued.recipient.clone(),
        subject: queued.subject.clone(),
        body: queued.body.clone(),
    };
    if queued.confirmation_hash.is_some() {
        let Some(token) = mint_link(db, clock, &queued).await? else {
            tracing::info!(mail_id = id, "a mail's link was used or retired; not sent");
            return Ok(Sent::Stale);
        };
        mail.body = mail.body.replace(LINK_TOKEN, &token);
    }
    let error = mailer
        .send_in_time(&mail)
        .await
        .err()
        .map(|e| e.to_string());
    let attempt = error.clone().map_or(Attempt::Done, Attempt::Failed);
    match settle(db, clock, &QUEUE, queued, attempt, &BACKOFF).await? {
        Settled::Done => Ok(Sent::Sent),
        Settled::Retry { wait_secs } => {
            tracing::warn!(
                mail_id = id,
                attempts,
                error,
                "cannot send a mail; tried again in {wait_secs} s"
            );
            Ok(Sent::Failed)
        }
        Settled::GivenUp => {
            tracing::error!(
                mail_id = id,
                attempts,
                error,
                to = %mail.to,
                "a mail could not be sent for a week; given up"
            );
            Ok(Sent::Failed)
        }
    }
}

/// Mints a new token for the confirmation link `mail` carries and gives the confirmation
/// its hash, in place of the hash it had; `None` if the link was used, retired or expired
/// (the mail is forgotten in the same transaction), or if another sender took the mail
/// over.
async fn mint_link(db: &Db, clock: &Clock, mail: &QueuedMail) -> Result<Option<String>, DbError> {
    let token = secret::new_token();
    let hash = secret::hash(&token);
    let mail = mail.clone();
    let now = clock.now();
    let minted = db
        .write(move |conn| {
            Box::pin(async move {
                let Some(old) = mail.confirmation_hash.as_deref() else {
                    return Ok(false);
                };
                if !mail_queue::relink(conn, &mail, &hash).await? {
                    return Ok(false);
                }
                if oauth_store::rekey_confirmation(conn, old, &hash, now).await? {
                    return Ok(true);
                }
                QUEUE.forget(conn, &mail).await?;
                Ok(false)
            })
        })
        .await?;
    Ok(minted.then_some(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_mail_waits_longer_each_time_up_to_an_hour() {
        let waits: Vec<i64> = (1..=9).map(|n| BACKOFF.wait(n)).collect();
        assert_eq!(waits, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
    }
}
