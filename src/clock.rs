//! The server's clock. Production reads the system time; tests move it forward to cross
//! expiry boundaries without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// Seconds added to the system time; only tests change it.
    offset: Arc<AtomicI64>,
}

impl Clock {
    /// Unix time in seconds.
    pub fn now(&self) -> i64 {
        time::OffsetDateTime::now_utc().unix_timestamp() + self.offset.load(Ordering::Relaxed)
    }

    /// Moves the clock forward (tests only: production never calls it).
    pub fn advance(&self, seconds: i64) {
        self.offset.fetch_add(seconds, Ordering::Relaxed);
    }
}
