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

use super::queue::{Attempt, Backoff, Settled, settle, take_due};

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
    mail_queue::push(conn, &mail.to, &mail.subject, &mail.body, now).await
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
    let Some(queued) = take_due(db, clock, &mail_queue::QUEUE, SEND_LEASE_SECS).await? else {
        return Ok(Sent::Idle);
    };
    let (id, attempts) = (queued.id, queued.attempts);
    let mail = Mail {
        to: queued.recipient.clone(),
        subject: queued.subject.clone(),
        body: queued.body.clone(),
    };
    let error = mailer
        .send_in_time(&mail)
        .await
        .err()
        .map(|e| e.to_string());
    let attempt = error.clone().map_or(Attempt::Done, Attempt::Failed);
    match settle(db, clock, &mail_queue::QUEUE, queued, attempt, &BACKOFF).await? {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_mail_waits_longer_each_time_up_to_an_hour() {
        let waits: Vec<i64> = (1..=9).map(|n| BACKOFF.wait(n)).collect();
        assert_eq!(waits, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
    }
}
