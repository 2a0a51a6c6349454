//! How a background sender works a leased queue (`store::leased`: the mails to send, the
//! webhook deliveries to make): it takes the item due first ([`take_due`]), works it off
//! the request path, and settles it ([`settle`]): forgotten once done, or tried again after
//! a first wait, then twice as long each time up to a longest wait ([`Backoff`]), until it
//! is old enough to be given up.

use crate::clock::Clock;
use crate::store::leased::{Failure, Leased, LeasedQueue};
use crate::store::{Db, DbError};

/// Takes the item of `queue` due first, if any, for `lease_secs`: no other sender takes it
/// before then, and if this one stops without a word, another takes it then. An idle
/// sender only reads, as does one that would pass over every item due (`passing_over`).
pub async fn take_due<R: Leased>(
    db: &Db,
    clock: &Clock,
    queue: &'static LeasedQueue<R>,
    lease_secs: i64,
    passing_over: Option<(&'static str, Vec<i64>)>,
) -> Result<Option<R>, DbError> {
    let now = clock.now();
    let passing = passing_over.clone();
    let due = db
        .read(move |conn| {
            Box::pin(async move {
                let passing = passing.as_ref().map(|(c, v)| (*c, v.as_slice()));
                queue.any_due(conn, now, passing).await
            })
        })
        .await?;
    if !due {
        return Ok(None);
    }
    let until = now + lease_secs;
    db.write(move |conn| {
        Box::pin(async move {
            let passing_over = passing_over.as_ref().map(|(c, v)| (*c, v.as_slice()));
            queue.take(conn, now, until, passing_over).await
        })
    })
    .await
}

/// Gives up the leases of `lease_secs` of a stopped sender (SQLite at start-up, before
/// this process's senders start: one process, so no lease is anyone's now): an item taken
/// just before a crash is worked again at once rather than when its lease would have run
/// out. Items waiting to be tried again keep their waits (`LeasedQueue::release_leases`).
pub async fn release_leases<R: Leased>(
    db: &Db,
    clock: &Clock,
    queue: &'static LeasedQueue<R>,
    lease_secs: i64,
) -> Result<u64, DbError> {
    let now = clock.now();
    db.write(move |conn| Box::pin(async move { queue.release_leases(conn, now, lease_secs).await }))
        .await
}

/// How working an item went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// It was done.
    Done,
    /// It failed, for this reason, and may be tried again.
    Failed(String),
}

/// What became of an item that was worked.
#[derive(Debug, PartialEq, Eq)]
pub enum Settled {
    /// It was done, and the queue forgot it.
    Done,
    /// It failed, and is due again in this many seconds.
    Retry { wait_secs: i64 },
    /// It failed for as long as the policy keeps trying, and the queue forgot it.
    GivenUp,
}

/// Settles `item` after the `attempt` at it, by `backoff`.
pub async fn settle<R: Leased>(
    db: &Db,
    clock: &Clock,
    queue: &'static LeasedQueue<R>,
    item: R,
    attempt: Attempt,
    backoff: &Backoff,
) -> Result<Settled, DbError> {
    let now = clock.now();
    let error = match attempt {
        Attempt::Done => {
            forget(db, queue, item).await?;
            return Ok(Settled::Done);
        }
        Attempt::Failed(error) => error,
    };
    let Some(due) = backoff.next_attempt(item.attempts(), item.created_at(), now) else {
        forget(db, queue, item).await?;
        return Ok(Settled::GivenUp);
    };
    let failure = Failure { error, at: now };
    db.write(move |conn| Box::pin(async move { queue.retry_at(conn, &item, due, &failure).await }))
        .await?;
    Ok(Settled::Retry {
        wait_secs: due - now,
    })
}

/// Forgets `item` without working it (what it was for is gone).
pub async fn forget<R: Leased>(
    db: &Db,
    queue: &'static LeasedQueue<R>,
    item: R,
) -> Result<(), DbError> {
    db.write(move |conn| Box::pin(async move { queue.forget(conn, &item).await }))
        .await
}

/// A retry policy, in seconds.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    /// The wait after the first failure.
    pub first_secs: i64,
    /// The longest wait.
    pub most_secs: i64,
    /// How long after it was queued an item is kept trying.
    pub keep_secs: i64,
}

impl Backoff {
    /// When an item queued at `created_at`, which failed its `attempts`-th attempt at
    /// `now`, is tried next; `None` when it is given up.
    pub fn next_attempt(&self, attempts: i64, created_at: i64, now: i64) -> Option<i64> {
        if now - created_at >= self.keep_secs {
            return None;
        }
        Some(now + self.wait(attempts))
    }

    /// The wait after the `attempts`-th failure (a count that cannot be is the first).
    pub fn wait(&self, attempts: i64) -> i64 {
        let doublings = (attempts - 1).clamp(0, 32);
        self.first_secs
            .saturating_mul(1 << doublings)
            .min(self.most_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: Backoff = Backoff {
        first_secs: 60,
        most_secs: 3600,
        keep_secs: 86_400,
    };

    #[test]
    fn the_wait_doubles_up_to_the_longest() {
        let waits: Vec<i64> = (1..=9).map(|n| POLICY.wait(n)).collect();
        assert_eq!(waits, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
        assert_eq!(
            POLICY.wait(0),
            60,
            "a count that cannot be is the first wait"
        );
        assert_eq!(POLICY.wait(i64::MAX), 3600, "no overflow");
    }

    #[test]
    fn an_item_is_given_up_once_it_is_as_old_as_the_policy_keeps_trying() {
        assert_eq!(
            POLICY.next_attempt(2, 1_000, 1_000 + 86_399),
            Some(1_000 + 86_399 + 120)
        );
        assert_eq!(POLICY.next_attempt(2, 1_000, 1_000 + 86_400), None);
    }
}
