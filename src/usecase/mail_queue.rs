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

use crate::clock::Clock;
use crate::mail::{Mail, Mailer};
use crate::store::{Conn, Db, DbError, mail_queue};

/// How long a sender may take over one mail before another sender may take it.
const SEND_LEASE_SECS: i64 = 300;

/// The longest wait between two attempts at a mail that fails.
const RETRY_MOST_SECS: i64 = 3600;

/// How long a mail that cannot be sent is kept trying: a week, as long as the confirmation
/// link it may carry works.
const KEEP_TRYING_SECS: i64 = 7 * 86_400;

/// Queues `mail` in the caller's transaction.
pub async fn post(conn: &mut dyn Conn, mail: &Mail, now: i64) -> Result<(), DbError> {
    mail_queue::push(conn, &mail.to, &mail.subject, &mail.body, now).await
}

/// Gives up the leases of a stopped sender (SQLite at start-up, before this process's
/// sender starts), so that a mail taken just before a crash goes now rather than when its
/// lease would have run out.
pub async fn release_leases(db: &Db, clock: &Clock) -> Result<u64, DbError> {
    let now = clock.now();
    db.write(move |conn| Box::pin(async move { mail_queue::release_all(conn, now).await }))
        .await
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
}

/// Takes the mail due first and sends it.
pub async fn send_next(db: &Db, mailer: &Mailer, clock: &Clock) -> Result<Sent, DbError> {
    let now = clock.now();
    let due = db
        .read(move |conn| Box::pin(async move { mail_queue::any_due(conn, now).await }))
        .await?;
    if !due {
        return Ok(Sent::Idle);
    }
    let until = now + SEND_LEASE_SECS;
    let taken = db
        .write(move |conn| Box::pin(async move { mail_queue::take(conn, now, until).await }))
        .await?;
    let Some(queued) = taken else {
        return Ok(Sent::Idle);
    };
    let (id, attempts) = (queued.id, queued.attempts);
    let mail = Mail {
        to: queued.recipient.clone(),
        subject: queued.subject.clone(),
        body: queued.body.clone(),
    };
    let error = match mailer.send_in_time(&mail).await {
        Ok(()) => {
            db.write(move |conn| Box::pin(async move { mail_queue::sent(conn, &queued).await }))
                .await?;
            return Ok(Sent::Sent);
        }
        Err(e) => e.to_string(),
    };
    let now = clock.now();
    if now - queued.created_at >= KEEP_TRYING_SECS {
        tracing::error!(
            mail_id = id,
            attempts,
            error,
            to = %queued.recipient,
            "a mail could not be sent for a week; given up"
        );
        db.write(move |conn| Box::pin(async move { mail_queue::sent(conn, &queued).await }))
            .await?;
        return Ok(Sent::Failed);
    }
    let wait = retry_wait(attempts);
    tracing::warn!(
        mail_id = id,
        attempts,
        error,
        "cannot send a mail; tried again in {wait} s"
    );
    let due = now + wait;
    db.write(move |conn| Box::pin(async move { mail_queue::retry_at(conn, &queued, due).await }))
        .await?;
    Ok(Sent::Failed)
}

/// The wait before the next attempt at a mail that failed `attempts` times: a minute, then
/// twice as long each time, at most an hour.
fn retry_wait(attempts: i64) -> i64 {
    (60_i64 << (attempts - 1).clamp(0, 6)).min(RETRY_MOST_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_mail_waits_longer_each_time_up_to_an_hour() {
        let waits: Vec<i64> = (1..=9).map(retry_wait).collect();
        assert_eq!(waits, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
        assert_eq!(
            retry_wait(0),
            60,
            "a count that cannot be is the first wait"
        );
    }
}
