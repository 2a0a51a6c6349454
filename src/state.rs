//! The application's state: what the server shares between requests and its background
//! upkeep. Nothing of HTTP lives here (the router keeps its own, see `http::router`).

use std::ops::Deref;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::access::TokenCache;
use crate::clock::Clock;
use crate::config::Config;
use crate::hal::Hal;
use crate::images::blobs::{BlobConfig, Blobs};
use crate::mail::Mailer;
use crate::metrics::Metrics;
use crate::statistics::ViewCounter;
use crate::store::Db;
use crate::usecase::Wake;
use crate::usecase::images::RenditionLookups;
use crate::usecase::renditions::RenderTurns;

/// Everything a request handler may need. Cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub config: Config,
    pub db: Db,
    pub clock: Clock,
    pub metrics: Metrics,
    pub mailer: Mailer,
    /// The bytes of images (see `images::blobs`).
    pub blobs: Blobs,
    /// Wakes the rendition workers when an upload queued a job.
    pub renditions: Arc<tokio::sync::Notify>,
    /// Wakes the blob sweeper when a change may have left blobs unreferenced.
    pub sweeps: Wake,
    /// Wakes the mail sender when a change queued mail (`usecase::mail_queue`).
    pub mail: Wake,
    /// Views of ads not yet written (see `statistics`).
    pub views: ViewCounter,
    /// Recent access token lookups (see `access`).
    pub tokens: TokenCache,
    /// Recent lookups of images' renditions, for blob answers (see the type).
    pub rendition_lookups: RenditionLookups,
    /// Requests that run on after their answer (an idempotent request that timed out, see
    /// `http::idempotency`), and the freeing of their keys: shutdown waits for them, so
    /// that a write they began ends with its key settled.
    pub detached: TaskTracker,
    /// The background workers (senders, rendition workers, upkeep): shutdown tells them
    /// to stop ([`Shared::stopping`]) and waits for the item each has in hand.
    pub workers: TaskTracker,
    /// Cancelled when the server is told to stop: a worker takes no more work then.
    pub stopping: CancellationToken,
    /// The rendition workers' turns to render, which a stop waits for (see the type).
    pub render_turns: Arc<RenderTurns>,
    /// Room for image uploads in memory ([`UploadBudget`]).
    pub uploads: UploadBudget,
    /// The connections served at once ([`Connections`]).
    pub connections: Connections,
    /// The names every representation's links use (see [`AppState::hal`]).
    hal: Hal,
}

impl Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// The state of a server on `db`, with `blobs`, the database's image store
    /// (`app::open_blobs`).
    pub fn new(config: Config, db: Db, blobs: Blobs, clock: Clock) -> anyhow::Result<AppState> {
        let hal = Hal::new(&config.curie_prefix, &config.base_url, "v1");
        let mailer = Mailer::new(
            config.smtp_url.as_deref(),
            &config.mail_from,
            &config.data_dir,
        )?;
        let uploads = UploadBudget::new(config.upload_memory_bytes);
        let connections = Connections::within_descriptors(config.max_connections);
        Ok(AppState(Arc::new(Shared {
            uploads,
            connections,
            mailer,
            blobs,
            renditions: Arc::default(),
            sweeps: Wake::default(),
            mail: Wake::default(),
            config,
            db,
            clock,
            metrics: Metrics::default(),
            tokens: TokenCache::default(),
            rendition_lookups: RenditionLookups::default(),
            detached: TaskTracker::new(),
            workers: TaskTracker::new(),
            stopping: CancellationToken::new(),
            render_turns: Arc::default(),
            views: ViewCounter::default(),
            hal,
        })))
    }

    /// The HAL context of a request under `/v1` or `/v2`.
    pub fn hal(&self, version: &'static str) -> Hal {
        self.hal.with_version(version)
    }
}

/// How this deployment takes payment, from its settings: the sandbox pays every order at
/// once; production waits for a confirmed payment.
pub fn till(config: &Config) -> crate::usecase::orders::Till {
    crate::usecase::orders::Till {
        pays_at_once: config.environment == crate::config::Environment::Sandbox,
        vat_percent: config.vat_percent,
        language: config.region.language(),
    }
}

/// Where image blobs go: S3 when a bucket is configured, else the data directory.
pub fn blob_config(config: &Config) -> BlobConfig {
    if config.s3_bucket.is_empty() {
        return BlobConfig::Local(config.data_dir.join("images"));
    }
    let given = |text: &str| Some(text.to_owned()).filter(|t| !t.is_empty());
    BlobConfig::S3 {
        bucket: config.s3_bucket.clone(),
        region: config.s3_region.clone(),
        endpoint: given(&config.s3_endpoint),
        access_key_id: given(&config.s3_access_key_id),
        secret_access_key: given(&config.s3_secret_access_key),
    }
}

/// The bytes of image uploads that this process holds in memory at once
/// (`upload_memory_bytes`): an upload's body is read whole (an ad's 24 images at 20 MiB
/// are 480 MiB), so each reserves room for it before reading it, and waits for room while
/// others take it (its request's timeout answers 408 if it waits too long). One larger
/// than the whole budget takes the whole budget.
#[derive(Debug)]
pub struct UploadBudget {
    /// A permit per KiB.
    room: Arc<tokio::sync::Semaphore>,
    total_kib: u32,
}

/// Room reserved for an upload; given back when the last clone is dropped.
#[derive(Clone, Debug)]
pub struct UploadRoom(#[allow(dead_code)] Arc<tokio::sync::OwnedSemaphorePermit>);

impl UploadBudget {
    pub fn new(bytes: usize) -> UploadBudget {
        let total_kib = u32::try_from(bytes / 1024).unwrap_or(u32::MAX).max(1);
        UploadBudget {
            room: Arc::new(tokio::sync::Semaphore::new(total_kib as usize)),
            total_kib,
        }
    }

    /// Waits for room for `bytes` (at most the whole budget) and reserves it.
    pub async fn reserve(&self, bytes: usize) -> UploadRoom {
        let kib = u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, self.total_kib);
        let permit = self
            .room
            .clone()
            .acquire_many_owned(kib)
            .await
            .expect("the upload budget is never closed");
        UploadRoom(Arc::new(permit))
    }

    /// The bytes reserved now, with those promised to the upload first in line for room
    /// (`souk_upload_memory_reserved_bytes` on `/metrics`).
    pub fn reserved(&self) -> usize {
        (self.total_kib as usize - self.room.available_permits()) * 1024
    }
}

/// The connections this process serves at once: `http::serve` takes a slot before it
/// accepts a connection and gives it back when the connection closes. Past the bound, new
/// connections wait in the listener's backlog, rather than take the descriptors that the
/// database's connections, image files and outgoing requests need (a flood of idle
/// connections would otherwise make those fail).
#[derive(Clone, Debug)]
pub struct Connections {
    slots: Arc<tokio::sync::Semaphore>,
    max: usize,
    /// The process's descriptor limit, when it made the bound lower than configured.
    pub lowered_by_descriptors: Option<u64>,
}

/// Descriptors kept for everything but client connections: the database's, blob files,
/// outgoing requests, the listener, logs.
const RESERVED_DESCRIPTORS: u64 = 256;

impl Connections {
    /// At most `max` connections at once (at least one).
    pub fn new(max: usize) -> Connections {
        let max = max.max(1);
        Connections {
            slots: Arc::new(tokio::sync::Semaphore::new(max)),
            max,
            lowered_by_descriptors: None,
        }
    }

    /// At most `configured` connections, and no more than the process's descriptors allow
    /// beside [`RESERVED_DESCRIPTORS`] (or half of them, when they are few). The soft
    /// descriptor limit is raised towards the hard one first, as far as `configured`
    /// needs: many systems start a process with a soft limit of 1,024 (256 on macOS)
    /// under a far higher hard one.
    pub fn within_descriptors(configured: usize) -> Connections {
        let wanted = (configured as u64).saturating_add(RESERVED_DESCRIPTORS);
        let Some(limit) = raised_descriptor_limit(wanted) else {
            return Connections::new(configured);
        };
        let allowed = limit.saturating_sub(RESERVED_DESCRIPTORS).max(limit / 2);
        let allowed = usize::try_from(allowed).unwrap_or(usize::MAX);
        if allowed >= configured {
            return Connections::new(configured);
        }
        Connections {
            lowered_by_descriptors: Some(limit),
            ..Connections::new(allowed)
        }
    }

    /// Waits for a free slot; the connection holds it until the permit is dropped.
    pub async fn slot(&self) -> tokio::sync::OwnedSemaphorePermit {
        self.slots
            .clone()
            .acquire_owned()
            .await
            .expect("the connection slots are never closed")
    }

    /// The connections open now (`souk_http_connections` on `/metrics`).
    pub fn open(&self) -> usize {
        self.max - self.slots.available_permits()
    }

    /// The most served at once.
    pub fn max(&self) -> usize {
        self.max
    }
}

/// macOS refuses a soft descriptor limit above this (`OPEN_MAX`) under an unlimited hard
/// one.
const MACOS_OPEN_MAX: u64 = 10_240;

/// The process's descriptor limit after raising its soft limit towards `wanted` (no
/// further than the hard limit); `None` when it has none.
fn raised_descriptor_limit(wanted: u64) -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let soft = limit.current?;
    let target = limit.maximum.map_or(wanted, |hard| hard.min(wanted));
    if soft >= target {
        return Some(soft);
    }
    for raised in [target, target.min(MACOS_OPEN_MAX)] {
        let asked = rustix::process::Rlimit {
            current: Some(raised),
            ..limit
        };
        match setrlimit(Resource::Nofile, asked) {
            Ok(()) => return Some(raised),
            Err(e) => tracing::debug!(error = %e, raised, "cannot raise the descriptor limit"),
        }
    }
    Some(soft)
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::{Connections, RESERVED_DESCRIPTORS, UploadBudget};

    /// A bound past what the descriptors allow is lowered to leave the reserve, once the
    /// soft limit is raised as far as the hard one lets it; one within them is kept.
    #[test]
    fn connections_leave_descriptors_for_the_rest() {
        use rustix::process::{Resource, getrlimit};
        let before = getrlimit(Resource::Nofile);
        let many = 100_000_000;
        let connections = Connections::within_descriptors(many);
        let after = getrlimit(Resource::Nofile);
        assert!(after.current >= before.current, "never lowered");
        match after.current {
            Some(descriptors) if descriptors < many as u64 => {
                assert_eq!(after.current, after.maximum, "raised to the hard limit");
                assert_eq!(connections.lowered_by_descriptors, Some(descriptors));
                let expected = descriptors
                    .saturating_sub(RESERVED_DESCRIPTORS)
                    .max(descriptors / 2);
                assert_eq!(connections.max() as u64, expected);
            }
            _ => assert_eq!(connections.lowered_by_descriptors, None),
        }
        let few = Connections::within_descriptors(10);
        assert_eq!((few.max(), few.lowered_by_descriptors), (10, None));
    }

    #[tokio::test]
    async fn uploads_wait_for_room_and_give_it_back() {
        let budget = UploadBudget::new(1024 * 1024);
        let first = budget.reserve(700 * 1024).await;
        assert_eq!(budget.reserved(), 700 * 1024);
        // A second that does not fit waits; one that fits goes at once.
        assert!(budget.reserve(400 * 1024).now_or_never().is_none());
        let small = budget.reserve(300 * 1024).now_or_never().expect("room");
        drop((first, small));
        assert_eq!(budget.reserved(), 0);
        // Larger than the whole budget: the whole budget, not a wait for ever.
        let whole = budget
            .reserve(5 << 20)
            .now_or_never()
            .expect("the whole budget");
        assert_eq!(budget.reserved(), 1024 * 1024);
        let copy = whole.clone();
        drop(whole);
        assert_eq!(budget.reserved(), 1024 * 1024, "held while a clone lives");
        drop(copy);
        assert_eq!(budget.reserved(), 0);
    }
}
