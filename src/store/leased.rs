//! A queue of work that background senders take one item at a time under a lease: the
//! mails to send (`mail_queue`) and the webhook deliveries to make (`hooks`).
//!
//! Each item is a row with a key, `due_at` (when a sender may take it next) and `attempts`
//! (how many times one has). Taking an item sets `due_at` to the end of the lease, so no
//! other sender takes it before then, and if this one stops without a word, another takes
//! it then. Each taking is named by its count of attempts: a sender that finishes or puts
//! an item back changes the row only while the last taking is still its own, so a late
//! sender's answer changes nothing.

use std::marker::PhantomData;

use crate::params;

use super::{Conn, DbError, Record, Value};

/// A record taken from a [`LeasedQueue`]: which row, and which taking of it.
pub trait Leased: Record + Send + Sync + 'static {
    /// The row's key.
    fn key(&self) -> i64;
    /// How many times a sender has taken it, this time included.
    fn attempts(&self) -> i64;
    /// When it was queued.
    fn created_at(&self) -> i64;
}

/// Implements [`Leased`] for a record with the fields `id`, `attempts` and `created_at`.
macro_rules! leased {
    ($record:ty) => {
        impl $crate::store::leased::Leased for $record {
            fn key(&self) -> i64 {
                self.id
            }
            fn attempts(&self) -> i64 {
                self.attempts
            }
            fn created_at(&self) -> i64 {
                self.created_at
            }
        }
    };
}
pub(crate) use leased;

/// The condition that passes over the items whose column holds one of the values, with
/// the values added to `values` (numbered after those already there); none without any.
fn passing(passing_over: Option<(&str, &[i64])>, values: &mut Vec<Value>) -> String {
    match passing_over {
        Some((column, passed)) if !passed.is_empty() => {
            let first = values.len() + 1;
            values.extend(passed.iter().map(|value| Value::Int(*value)));
            format!(
                " AND {column} NOT IN ({})",
                super::numbered(first, passed.len())
            )
        }
        _ => String::new(),
    }
}

/// The queue in table `table`, whose key column is `key`, of records `R`.
pub struct LeasedQueue<R> {
    table: &'static str,
    key: &'static str,
    records: PhantomData<fn() -> R>,
}

impl<R: Leased> LeasedQueue<R> {
    pub const fn new(table: &'static str, key: &'static str) -> Self {
        LeasedQueue {
            table,
            key,
            records: PhantomData,
        }
    }

    /// Whether an item is due at `now` that [`take`](Self::take) would not pass over (a
    /// read, so that an idle sender does not write, also while every item due is passed
    /// over).
    pub async fn any_due(
        &self,
        conn: &mut dyn Conn,
        now: i64,
        passing_over: Option<(&str, &[i64])>,
    ) -> Result<bool, DbError> {
        let (table, key) = (self.table, self.key);
        let mut values = params![now].to_vec();
        let passed = passing(passing_over, &mut values);
        Ok(conn
            .query_opt(
                &format!("SELECT {key} FROM {table} WHERE due_at <= $1{passed} LIMIT 1"),
                &values,
            )
            .await?
            .is_some())
    }

    /// Takes the item due first at `now`, if any, until `until`. An item that another
    /// sender is taking at this moment is passed over (PostgreSQL's `SKIP LOCKED`).
    ///
    /// With `passing_over`, also the items whose column holds one of the values (a hook's
    /// deliveries while it holds its share of the senders).
    pub async fn take(
        &self,
        conn: &mut dyn Conn,
        now: i64,
        until: i64,
        passing_over: Option<(&str, &[i64])>,
    ) -> Result<Option<R>, DbError> {
        let (table, key) = (self.table, self.key);
        let skip_locked = conn.skip_locked();
        let mut values = params![now, until].to_vec();
        let passed = passing(passing_over, &mut values);
        conn.record(
            &format!(
                "UPDATE {table} SET due_at = $2, attempts = attempts + 1 \
                 WHERE {key} = (SELECT {key} FROM {table} WHERE due_at <= $1{passed} \
                                ORDER BY due_at, {key} LIMIT 1{skip_locked}) \
                   AND due_at <= $1 \
                 RETURNING {}",
                R::COLUMNS
            ),
            &values,
        )
        .await
    }

    /// Forgets an item that was done (or given up), if its taking is still the last one.
    pub async fn forget(&self, conn: &mut dyn Conn, item: &R) -> Result<(), DbError> {
        let (table, key) = (self.table, self.key);
        conn.run(
            &format!("DELETE FROM {table} WHERE {key} = $1 AND attempts = $2"),
            params![item.key(), item.attempts()],
        )
        .await
    }

    /// Puts an item whose attempt failed back, due at `due_at`, with why it failed and
    /// when, if its taking is still the last one.
    pub async fn retry_at(
        &self,
        conn: &mut dyn Conn,
        item: &R,
        due_at: i64,
        failure: &Failure,
    ) -> Result<(), DbError> {
        let (table, key) = (self.table, self.key);
        conn.run(
            &format!(
                "UPDATE {table} SET due_at = $3, last_error = $4, failed_at = $5 \
                 WHERE {key} = $1 AND attempts = $2"
            ),
            params![
                item.key(),
                item.attempts(),
                due_at,
                failure.error.as_str(),
                failure.at
            ],
        )
        .await
    }

    /// Gives up the leases taken before `now` (SQLite at start-up: one process, so no
    /// lease is anyone's now): makes due at `now` every item due within `lease_secs`, the
    /// longest that such a lease can still run. An item waiting longer to be tried again
    /// keeps its wait, so a restart does not try every failing receiver at once; one whose
    /// wait ends within a lease's length is tried at once (it keeps its count of attempts,
    /// so its next wait after a failure is as long as it would have been).
    pub async fn release_leases(
        &self,
        conn: &mut dyn Conn,
        now: i64,
        lease_secs: i64,
    ) -> Result<u64, DbError> {
        let table = self.table;
        conn.execute(
            &format!("UPDATE {table} SET due_at = $1 WHERE due_at > $1 AND due_at <= $2"),
            params![now, now.saturating_add(lease_secs)],
        )
        .await
    }

    /// How many items wait (due, being worked on now, or waiting to be tried again), and
    /// when the first of them is due.
    pub async fn waiting(&self, conn: &mut dyn Conn) -> Result<Waiting, DbError> {
        let table = self.table;
        let row = conn
            .query_one(
                &format!("SELECT COUNT(*) AS n, MIN(due_at) AS first_due FROM {table}"),
                &[],
            )
            .await?;
        Ok(Waiting {
            count: row.get("n")?,
            first_due: row.get("first_due")?,
        })
    }
}

/// Why an attempt at an item failed, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub error: String,
    pub at: i64,
}

/// What a queue holds, for the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub count: i64,
    /// When the first item is due (past, when the senders are behind); `None` when none
    /// waits.
    pub first_due: Option<i64>,
}
