//! The use cases: each change to the marketplace is one function here that the HTTP
//! handlers, the command line and `souk seed` all call, so that each rule is applied in one
//! place.
//!
//! A use case runs inside its caller's transaction: it takes `&mut dyn store::Conn` (from
//! `db.write`, or `db.read` for the reads that carry a visibility rule), typed input and the
//! time, and returns a typed outcome or an [`Error`]. It knows nothing of HTTP: the handlers
//! parse and authorize, call one use case, and render its outcome.
//!
//! Every use case that changes something ends with `Ok(outcome)`, where the outcome names
//! what changed; just before it, the use case records its event in the transactional outbox
//! ([`events::record`]), in the same transaction (docs/ARCHITECTURE.md).

pub mod accounts;
pub mod advertisements;
pub mod alerts;
pub mod authorization;
pub mod bids;
pub mod deliveries;
pub mod events;
pub mod features;
pub mod hooks;
pub mod image_store;
pub mod images;
pub mod mail_queue;
pub mod moderation;
pub mod orders;
pub mod queue;
pub mod renditions;
pub mod reviews;
pub mod sales;
pub mod saved_searches;
pub mod search;
pub mod sign_in;

/// Runs CPU-bound `work` on a blocking thread, off the runtime's workers that other
/// requests wait for; `None` when the runtime is shutting down. A panic in `work` goes on
/// as the caller's.
pub(crate) async fn on_blocking_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => Some(value),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => None,
    }
}

use std::convert::Infallible;
use std::sync::Arc;

use crate::domain::advertisement::AdStatus;
use crate::domain::field_error::FieldError;
use crate::domain::sale::TransactionStatus;
use crate::store::DbError;

/// Wakes a background worker of this replica (the blob sweeper, the mail sender) after a
/// change that gave it work, so that it need not poll for it. A wake while the worker is
/// busy makes it look once more when it is done.
#[derive(Clone, Debug, Default)]
pub struct Wake(Arc<tokio::sync::Notify>);

impl Wake {
    pub fn wake(&self) {
        self.0.notify_one();
    }

    /// Resolves at the next wake, or at once if one came since the last.
    pub fn woken(&self) -> tokio::sync::futures::Notified<'_> {
        self.0.notified()
    }
}

/// Why a use case did not do what it was asked.
///
/// `R` is the caller's own reason to refuse the request, which the use case reports only
/// after it checked that the caller may act at all: a malformed body that HTTP could not
/// read counts only once the caller is known to be the ad's seller, so that someone who may
/// not act learns nothing from it (403 or 404 first). Callers without such a reason use the
/// default, `Infallible`.
#[derive(Debug)]
pub enum Error<R = Infallible> {
    /// The caller's refusal of the request, handed back.
    Request(R),
    /// No such thing, or none the caller may know of.
    NotFound(Thing),
    /// The caller may not do this (someone else's ad, sale or account).
    Forbidden,
    /// A seller whose account is not confirmed yet may not publish.
    NotConfirmed,
    /// What the caller sent breaks the rules: every problem at once.
    Invalid(Vec<FieldError>),
    /// The thing is not in a state that allows this.
    Conflict(Conflict),
    /// The thing changed since the caller read it (its precondition failed, or another
    /// write came first).
    Changed,
    /// Files that are not images Souk takes (`usecase::images`): how to answer, and the
    /// problem of each.
    Upload(UploadRefusal, Vec<FieldError>),
    /// A purchase that cannot be made (`usecase::orders`).
    Purchase(PurchaseRefusal),
    Db(DbError),
}

/// The kind of an upload's refusal, for its status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadRefusal {
    /// A file above the byte limit (413).
    TooLarge,
    /// A format Souk does not take (415).
    Unsupported,
    /// Not an image, cut off, lying about its type, or too many pixels (400).
    Invalid,
}

/// Why a purchase cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PurchaseRefusal {
    /// The ad is outside its renewal window and grace period.
    NotRenewable,
    /// The `orderId` names no order of the buyer's.
    UnknownOrder,
    /// The order is paid, refused or closed: it takes no more products.
    OrderNotOpen,
    /// No feature has that name.
    UnknownFeature,
    /// The ad's category does not sell the feature, or the ad is not online.
    FeatureNotAllowed,
}

/// What was not found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thing {
    Advertisement,
    Transaction,
    User,
    Image,
    SavedSearch,
    Bid,
    Review,
    Order,
    Feature,
    Hook,
    Event,
}

/// What state stands in the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The lifecycle does not go from `from` to `to` (docs/LIFECYCLE.md).
    Transition { from: AdStatus, to: AdStatus },
    /// The transaction is completed or cancelled already.
    Finished(TransactionStatus),
    /// Another account took the address meanwhile.
    EmailTaken,
    /// The ad's price model is not `bidding`: it takes no bids.
    NoBidding,
    /// Only a completed transaction is reviewed; this one is created or cancelled.
    NotCompleted(TransactionStatus),
    /// The transaction has its review already.
    Reviewed,
    /// The draft goes online when its insertion order (this one) is paid.
    AwaitingPayment(i64),
    /// A renewal of the ad waits for the payment of this order already.
    RenewalAwaitingPayment(i64),
    /// The draft's category is the one its insertion order (this one) charges for: it
    /// cannot change before the order is paid.
    CategoryAwaitingPayment(i64),
}

impl<R> From<DbError> for Error<R> {
    fn from(e: DbError) -> Self {
        Error::Db(e)
    }
}

impl<R> From<Vec<FieldError>> for Error<R> {
    fn from(errors: Vec<FieldError>) -> Self {
        Error::Invalid(errors)
    }
}

impl<R> From<FieldError> for Error<R> {
    fn from(error: FieldError) -> Self {
        Error::Invalid(vec![error])
    }
}

/// Runs `delete` (which deletes at most `batch` rows of each kind it deletes) in a write of
/// its own, again and again until it deletes fewer: other writes get their turn between
/// the batches, and SQLite's log stays small. Returns how many rows went.
pub async fn in_batches(
    db: &crate::store::Db,
    batch: i64,
    delete: impl for<'c> Fn(
        &'c mut dyn crate::store::Conn,
    ) -> crate::store::BoxFuture<'c, Result<u64, DbError>>
    + Clone
    + Send
    + 'static,
) -> Result<u64, DbError> {
    let mut total = 0;
    loop {
        let delete = delete.clone();
        let gone = db.write(move |conn| delete(conn)).await?;
        total += gone;
        if gone < batch.unsigned_abs() {
            return Ok(total);
        }
    }
}
