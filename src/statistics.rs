//! Views of advertisements, counted in memory and written in batches: a write per read
//! would cost the hottest route (R1) a database write. A replica's counts reach the
//! database within [`FLUSH_SECONDS`] (the seller's statistics add the views not written
//! yet); a crash loses at most that window of views, which the seller's statistics may
//! have shown already (a view is no write a client was acknowledged).

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::store::transactions::{self, Counter};
use crate::store::{Db, DbError};

pub const FLUSH_SECONDS: u64 = 5;

#[derive(Default)]
pub struct ViewCounter {
    pending: Mutex<HashMap<i64, i64>>,
    /// Held through a flush, so that the last flush at shutdown waits for a periodic one
    /// that has taken counts and not written them yet, instead of finding nothing to write
    /// while the runtime's end cuts the other short.
    flushing: tokio::sync::Mutex<()>,
}

impl ViewCounter {
    pub fn record(&self, item_number: i64) {
        *self.pending.lock().entry(item_number).or_default() += 1;
    }

    /// The views of an ad counted here and not written yet (the seller's statistics add
    /// them, so reading statistics needs no write).
    pub fn pending(&self, item_number: i64) -> i64 {
        self.pending
            .lock()
            .get(&item_number)
            .copied()
            .unwrap_or_default()
    }

    /// Writes the pending counts; on a failure that wrote nothing they are kept for the
    /// next flush. A write whose outcome is unknown (its COMMIT lost, PostgreSQL) keeps
    /// none: written again after it did commit, they would count twice (a view is an
    /// estimate; a count twice over is worse than a few lost).
    pub async fn flush(&self, db: &Db) -> Result<(), DbError> {
        let _flushing = self.flushing.lock().await;
        let pending = std::mem::take(&mut *self.pending.lock());
        if pending.is_empty() {
            return Ok(());
        }
        let batch: Vec<(i64, i64)> = pending
            .iter()
            .map(|(&item, &views)| (item, views))
            .collect();
        let result = db
            .write(move |conn| {
                Box::pin(async move { transactions::count(conn, Counter::Views, &batch).await })
            })
            .await;
        if result
            .as_ref()
            .is_err_and(|e| !matches!(e, DbError::OutcomeUnknown(_)))
        {
            let mut current = self.pending.lock();
            for (item, views) in pending {
                *current.entry(item).or_default() += views;
            }
        }
        result
    }
}
