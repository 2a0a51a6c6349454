//! Locks on PostgreSQL, where writes run side by side at READ COMMITTED: the ends of
//! `SELECT`s that hold rows, and the table locks of operators' imports. SQLite serializes
//! write transactions (one writer, `BEGIN IMMEDIATE` across processes), so each is nothing
//! there.

use std::time::Duration;

use crate::params;

use super::{Backend, Conn, DbError, DbResult, Value};

/// What [`Conn::lock_table`] holds off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableLock {
    /// Every write of the table's rows, and every other holder of this lock: what an
    /// operator's import reads of the table first is then what it writes over
    /// (PostgreSQL's `SHARE ROW EXCLUSIVE`).
    Writes,
    /// Those, and every row lock on the table as well (`EXCLUSIVE`), so that an update of
    /// many of its rows under this lock never waits for a transaction that holds one row
    /// and then waits for the table.
    RowLocksToo,
}

/// How long one try at a [`TableLock::RowLocksToo`] waits: while it waits, every later
/// writer of the table waits behind it.
const TRY_FOR: &str = "200ms";

/// The pause between two tries, in which the writers that waited behind one go on.
const BETWEEN_TRIES: Duration = Duration::from_millis(800);

/// How long the tries go on before the lock is given up as held by a transaction that does
/// not end (an operator's open session, say).
const GIVE_UP_AFTER: Duration = Duration::from_secs(120);

impl dyn Conn + '_ {
    /// The end of a `SELECT` in a queue's claim that passes over the rows another
    /// transaction is claiming at this moment, instead of waiting for it (PostgreSQL's
    /// `SKIP LOCKED`); nothing on SQLite, whose one writer claims alone. The lock is the one
    /// the claim's `UPDATE` takes, `FOR NO KEY UPDATE`: `FOR UPDATE` would also pass over
    /// rows that an insert elsewhere refers to (a saved search while its matches are
    /// recorded), which are free to claim.
    pub fn skip_locked(&self) -> &'static str {
        match self.backend() {
            Backend::Postgres => " FOR NO KEY UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        }
    }

    /// Holds the row that `select` (a `SELECT` of one row by the key `$1`) finds until the
    /// transaction ends, so that a rule over what it and the rows under it hold now is
    /// checked by one transaction at a time. SQLite has one writer and no row locks: a
    /// write transaction is serialized already.
    ///
    /// On PostgreSQL the lock is `FOR NO KEY UPDATE`, the one an `UPDATE` that keeps the
    /// key takes: it does not wait for the key-share locks that inserting a row which
    /// refers to this one takes, so two transactions that each inserted such a row (an
    /// order's product of the ad) and then lock it do not deadlock.
    pub async fn lock_row(&mut self, select: &str, key: impl Into<Value>) -> DbResult<()> {
        match self.backend() {
            Backend::Postgres => self
                .query(&format!("{select}{}", self.hold_rows()), &[key.into()])
                .await
                .map(drop),
            Backend::Sqlite => Ok(()),
        }
    }

    /// The end of a `SELECT` that holds the rows it returns, in the order it returns them,
    /// as [`Conn::lock_row`] holds one (`FOR NO KEY UPDATE`); nothing on SQLite. An update
    /// of many rows picks them with it, ordered by key, so that it holds them in the order
    /// every other writer does.
    pub fn hold_rows(&self) -> &'static str {
        match self.backend() {
            Backend::Postgres => " FOR NO KEY UPDATE",
            Backend::Sqlite => "",
        }
    }

    /// The end of a `SELECT` that holds the rows it returns against every other lock on
    /// them, key-share locks included (PostgreSQL's `FOR UPDATE`): a change that every
    /// write reading them `FOR KEY SHARE` (`key_share`) must wait for, or be seen by.
    /// Nothing on SQLite.
    pub fn hold_keys(&self) -> &'static str {
        match self.backend() {
            Backend::Postgres => " FOR UPDATE",
            Backend::Sqlite => "",
        }
    }

    /// The end of a `SELECT` that keeps the rows it returns as they are until the
    /// transaction ends against a writer that locks them `FOR UPDATE` (PostgreSQL's
    /// `FOR KEY SHARE`, the lock a row that refers to them takes, only sooner); nothing on
    /// SQLite, whose write transactions are serialized already.
    pub fn key_share(&self) -> &'static str {
        match self.backend() {
            Backend::Postgres => " FOR KEY SHARE",
            Backend::Sqlite => "",
        }
    }

    /// Holds `table` until the transaction ends as `lock` says: this transaction first
    /// waits for those under way that the lock holds off, and later ones wait for it; plain
    /// reads go on. Nothing on SQLite.
    ///
    /// A [`TableLock::RowLocksToo`] holds off every writer of the table, and so does a
    /// request for it while it waits: it is asked for in tries of [`TRY_FOR`] with pauses
    /// between, so that a long transaction under way (an operator's session holding a row)
    /// does not stop every write of the table for as long as it lasts, only this one.
    /// After [`GIVE_UP_AFTER`] it is `DbError::Contention`.
    pub async fn lock_table(&mut self, table: &str, lock: TableLock) -> DbResult<()> {
        if self.backend() == Backend::Sqlite {
            return Ok(());
        }
        match lock {
            TableLock::Writes => {
                let sql = format!("LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE");
                self.execute_batch(&sql).await
            }
            TableLock::RowLocksToo => self.lock_in_tries(table).await,
        }
    }

    async fn lock_in_tries(&mut self, table: &str) -> DbResult<()> {
        let timeout: String = self
            .query_one("SELECT current_setting('lock_timeout') AS t", &[])
            .await?
            .get("t")?;
        let started = std::time::Instant::now();
        loop {
            // The savepoint undoes a try that timed out, and its timeout with it.
            let try_lock = format!(
                "SAVEPOINT lock_table; SET LOCAL lock_timeout = '{TRY_FOR}'; \
                 LOCK TABLE {table} IN EXCLUSIVE MODE"
            );
            match self.execute_batch(&try_lock).await {
                Ok(()) => {
                    self.execute_batch("RELEASE SAVEPOINT lock_table").await?;
                    let restore = "SELECT set_config('lock_timeout', $1, true)";
                    return self.run(restore, params![timeout]).await;
                }
                Err(DbError::Contention(why)) => {
                    self.execute_batch("ROLLBACK TO SAVEPOINT lock_table")
                        .await?;
                    if started.elapsed() >= GIVE_UP_AFTER {
                        return Err(DbError::Contention(format!(
                            "{table} held by another transaction for over {} s: {why}",
                            GIVE_UP_AFTER.as_secs()
                        )));
                    }
                    tokio::time::sleep(BETWEEN_TRIES).await;
                }
                Err(other) => return Err(other),
            }
        }
    }
}
