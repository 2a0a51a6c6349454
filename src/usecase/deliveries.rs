//! Webhook deliveries: a background sender ([`deliver_next`], in a loop of `app`) POSTs each
//! event that `usecase::events` queued to each hook that wants it, off the request path.
//!
//! - The body is the event's HAL representation (rendered by the caller, which knows the
//!   links), signed: `X-Souk-Signature` holds the hex HMAC-SHA-256 of the body's bytes
//!   under the hook's secret. `X-Souk-Event` names the event type, `X-Souk-Delivery` the
//!   delivery (the same on every attempt, so that a receiver can drop a repeat).
//! - Any 2xx answer is delivered. Anything else (another status, a redirect, no answer
//!   within `webhook_timeout_secs`, an address that may not be reached) is tried again:
//!   after 30 seconds, then twice as long each time, at most an hour apart, for three days;
//!   then it is given up, with a warning in the log.
//! - Only public internet addresses are reached, as by the image import, unless the
//!   operator's `webhook_allow` names them; a host name is checked on the address actually
//!   connected to.
//! - A delivery is made at least once: a sender that stops after the receiver took it but
//!   before the queue forgets it leaves it to be made again once its lease runs out.
//! - A hook deleted or made inactive meanwhile gets nothing more; nor does one that no
//!   longer wants the event's type.
//! - A hook holds at most [`SENDERS_PER_HOOK`] of the replica's [`SENDERS`] ([`InFlight`]):
//!   receivers that answer slowly, or not at all (each attempt the whole timeout), leave
//!   senders to the other hooks; it takes four such hooks at once to hold them all.
//! - A hook whose receiver did not answer in time, or could not be reached, rests on this
//!   replica for [`REST_SECS`] (or until that delivery is due again, if sooner): its other
//!   deliveries wait too, rather than each holding a sender for the timeout to find the
//!   receiver still down. A delivery of the hook taken meanwhile (by another sender) ends
//!   the rest. A receiver that answers with an error status does not rest (it answered;
//!   its other deliveries may be taken). The rest is short, as the receiver may time out
//!   on that one delivery alone.

use std::collections::HashMap;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Method, Request, Url};
use sha2::Sha256;

use crate::clock::Clock;
use crate::images::fetch::address::AllowList;
use crate::images::fetch::{FetchError, send_guarded};
use crate::store::events::{self, EventRecord};
use crate::store::hooks::{self, DELIVERIES, Receiver};
use crate::store::{Db, DbError};

use super::queue::{Attempt, Backoff, Settled, forget, settle, take_due};

/// Webhook senders per replica, each making one delivery at a time.
pub const SENDERS: usize = 8;

/// How many of a replica's senders one hook may hold at once: two, so that a receiver's
/// round trip is not all its deliveries wait on, and no more, so that a receiver that holds
/// its deliveries for the whole timeout holds no more than two senders (one that makes
/// every attempt fail at once holds each only briefly).
pub const SENDERS_PER_HOOK: usize = 2;

/// How long a sender may take over one delivery before another sender may take it.
const DELIVERY_LEASE_SECS: i64 = 120;

/// 30 seconds after the first failure, up to an hour apart, for three days.
const BACKOFF: Backoff = Backoff {
    first_secs: 30,
    most_secs: 3600,
    keep_secs: 3 * 86_400,
};

/// The longest rest of a hook whose receiver did not answer in time or could not be
/// reached: a dead receiver holds two senders for a timeout once a minute at most, rather
/// than all the time, and a receiver that times out on one delivery alone holds the others
/// back for a minute only.
pub const REST_SECS: i64 = 60;

/// How a sender reaches receivers.
#[derive(Clone, Debug)]
pub struct DeliveryPolicy {
    /// One delivery's time, from the connection to the answer's status.
    pub timeout: Duration,
    /// What may be reached although it is not a public internet address.
    pub allow: AllowList,
}

/// What one attempt came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Delivered {
    /// No delivery was due.
    Idle,
    /// The receiver took it (or its hook is gone), and the queue forgot it.
    Done,
    /// The receiver did not take it; it is due again later, or given up after three days.
    Failed,
}

/// The header of the signature: the hex HMAC-SHA-256 of the body under the hook's secret.
pub const SIGNATURE_HEADER: &str = "x-souk-signature";

/// The hex HMAC-SHA-256 of `body` under `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// The hooks whose deliveries this replica's senders are making, and how many each: a hook
/// holds at most `share` senders at once, so a receiver that answers slowly (or not at all,
/// each attempt the whole timeout) never holds every sender while other clients' deliveries
/// wait behind its own. And the hooks resting after their receiver was found down, until
/// when.
#[derive(Debug)]
pub struct InFlight {
    share: usize,
    /// One take at a time, so that two senders cannot both take a hook's last share.
    taking: tokio::sync::Mutex<()>,
    making: parking_lot::Mutex<HashMap<i64, usize>>,
    resting: parking_lot::Mutex<HashMap<i64, i64>>,
}

impl InFlight {
    /// For senders of which a hook may hold `share` (at least one).
    pub fn new(share: usize) -> InFlight {
        InFlight {
            share: share.max(1),
            taking: tokio::sync::Mutex::default(),
            making: parking_lot::Mutex::default(),
            resting: parking_lot::Mutex::default(),
        }
    }

    /// The hooks whose deliveries a sender passes over at `now`: those that hold their
    /// share, and those resting until later.
    fn passed_over(&self, now: i64) -> Vec<i64> {
        let mut resting = self.resting.lock();
        resting.retain(|_, until| *until > now);
        let making = self.making.lock();
        let full = making
            .iter()
            .filter(|(_, senders)| **senders >= self.share)
            .map(|(hook, _)| *hook);
        let mut passed: Vec<i64> = full.chain(resting.keys().copied()).collect();
        passed.sort_unstable();
        passed.dedup();
        passed
    }

    /// Passes over `hook`'s deliveries until `until`.
    fn rest(&self, hook: i64, until: i64) {
        self.resting.lock().insert(hook, until);
    }

    /// Ends `hook`'s rest: its receiver took a delivery.
    fn wake(&self, hook: i64) {
        self.resting.lock().remove(&hook);
    }

    /// Counts a sender on `hook` until the guard is dropped.
    fn start(&self, hook: i64) -> Making<'_> {
        let mut making = self.making.lock();
        *making.entry(hook).or_default() += 1;
        Making {
            in_flight: self,
            hook,
        }
    }
}

/// A sender making a delivery of `hook`.
struct Making<'a> {
    in_flight: &'a InFlight,
    hook: i64,
}

impl Drop for Making<'_> {
    fn drop(&mut self) {
        let mut making = self.in_flight.making.lock();
        if let Some(senders) = making.get_mut(&self.hook) {
            *senders -= 1;
            if *senders == 0 {
                making.remove(&self.hook);
            }
        }
    }
}

/// Gives up a stopped sender's leases (SQLite at start-up, `queue::release_leases`).
pub async fn release_leases(db: &Db, clock: &Clock) -> Result<u64, DbError> {
    super::queue::release_leases(db, clock, &DELIVERIES, DELIVERY_LEASE_SECS).await
}

/// Takes the delivery due first, of a hook that does not hold its share of this replica's
/// senders (`in_flight`), and makes it; `render` writes an event's body.
pub async fn deliver_next(
    db: &Db,
    clock: &Clock,
    policy: &DeliveryPolicy,
    render: &(dyn Fn(&EventRecord) -> Vec<u8> + Sync),
    in_flight: &InFlight,
) -> Result<Delivered, DbError> {
    let (delivery, _making) = {
        let _turn = in_flight.taking.lock().await;
        let passed = Some(("hook_id", in_flight.passed_over(clock.now())));
        let Some(delivery) = take_due(db, clock, &DELIVERIES, DELIVERY_LEASE_SECS, passed).await?
        else {
            return Ok(Delivered::Idle);
        };
        let making = in_flight.start(delivery.hook_id);
        (delivery, making)
    };
    // Read after the take's commit, not in its transaction: the SQLite writer is held
    // for the take alone, and a hook changed meanwhile is seen as it is now. Should the
    // read fail, the delivery waits for its lease to run out.
    let (hook_id, event_id) = (delivery.hook_id, delivery.event_id);
    let (receiver, event) = db
        .read(move |conn| {
            Box::pin(async move {
                let Some(event) = events::by_id(conn, event_id).await? else {
                    return Ok::<_, DbError>((None, None));
                };
                let receiver = hooks::receiver(conn, hook_id, &event.event_type).await?;
                Ok((receiver, Some(event)))
            })
        })
        .await?;
    let (id, attempts) = (delivery.id, delivery.attempts);
    let (Some(receiver), Some(event)) = (receiver, event) else {
        // The hook is gone, inactive or no longer wants the event's type: what it did not
        // get meanwhile is not sent later.
        forget(db, &DELIVERIES, delivery).await?;
        return Ok(Delivered::Done);
    };
    let body = render(&event);
    // The log has the error whole (a refused address too); the hook's owner reads its code.
    let error = send(policy, &receiver, &event, id, body).await.err();
    let attempt = error
        .as_ref()
        .map_or(Attempt::Done, |e| Attempt::Failed(reason(e)));
    let receiver_down = matches!(error, Some(FetchError::TooSlow | FetchError::NotAnswering));
    match settle(db, clock, &DELIVERIES, delivery, attempt, &BACKOFF).await? {
        Settled::Done => {
            in_flight.wake(hook_id);
            Ok(Delivered::Done)
        }
        Settled::Retry { wait_secs } => {
            if receiver_down {
                in_flight.rest(hook_id, clock.now() + wait_secs.min(REST_SECS));
            }
            tracing::info!(
                delivery_id = id,
                hook_id,
                attempts,
                ?error,
                "a webhook delivery failed; tried again in {wait_secs} s"
            );
            Ok(Delivered::Failed)
        }
        Settled::GivenUp => {
            tracing::warn!(
                delivery_id = id,
                hook_id,
                attempts,
                ?error,
                "a webhook delivery failed for three days; given up"
            );
            Ok(Delivered::Failed)
        }
    }
}

/// POSTs `body` to the hook's URL; `Err` says why it was not taken.
async fn send(
    policy: &DeliveryPolicy,
    receiver: &Receiver,
    event: &EventRecord,
    delivery_id: i64,
    body: Vec<u8>,
) -> Result<(), FetchError> {
    let url = Url::parse(&receiver.url).map_err(|_| FetchError::InvalidUrl)?;
    let mut request = Request::new(Method::POST, url);
    let headers = request.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let signed = HeaderValue::try_from(signature(&receiver.secret, &body))
        .expect("a hex digest is a header value");
    headers.insert(HeaderName::from_static(SIGNATURE_HEADER), signed);
    // Souk's own names (`domain::hook::EventType`): always a header value.
    if let Ok(event_type) = HeaderValue::try_from(event.event_type.as_str()) {
        headers.insert(HeaderName::from_static("x-souk-event"), event_type);
    }
    headers.insert(
        HeaderName::from_static("x-souk-delivery"),
        HeaderValue::from(delivery_id),
    );
    *request.body_mut() = Some(body.into());
    let user_agent = concat!("Souk/", env!("CARGO_PKG_VERSION"), " webhooks");
    let exchange = send_guarded(&policy.allow, policy.timeout, user_agent, request);
    let response = match tokio::time::timeout(policy.timeout, exchange).await {
        Err(_) => return Err(FetchError::TooSlow),
        Ok(Err(error)) => return Err(error),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(FetchError::Status(status.as_u16()))
    }
}

/// Why a delivery failed, as its hook's owner reads it (`Hook.deliveries`): the image
/// import's error code (which never names a refused address), and the status of an answer
/// that was not a success.
fn reason(error: &FetchError) -> String {
    match error {
        FetchError::Status(status) => format!("{} {status}", error.code()),
        other => other.code().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_told_to_the_hooks_owner_by_its_code_without_the_address() {
        assert_eq!(reason(&FetchError::Status(503)), "error-status 503");
        assert_eq!(reason(&FetchError::TooSlow), "too-slow");
        let refused = FetchError::Refused {
            address: std::net::IpAddr::from([10, 0, 3, 7]),
            why: crate::images::fetch::address::Refused::Private,
        };
        assert_eq!(reason(&refused), "address-refused");
    }

    /// A resting hook is passed over until its rest ends, or until a delivery of it is
    /// taken; a hook holding its share is passed over while it holds it.
    #[test]
    fn a_hook_is_passed_over_while_it_rests_or_holds_its_share() {
        let in_flight = InFlight::new(1);
        in_flight.rest(7, 100);
        assert_eq!(in_flight.passed_over(99), [7]);
        assert!(in_flight.passed_over(100).is_empty(), "the rest is over");
        in_flight.rest(7, 200);
        in_flight.wake(7);
        assert!(
            in_flight.passed_over(150).is_empty(),
            "woken by a delivery taken"
        );
        let making = in_flight.start(8);
        in_flight.rest(8, 200);
        assert_eq!(in_flight.passed_over(150), [8], "once, though both");
        drop(making);
        assert!(in_flight.passed_over(200).is_empty());
    }

    #[test]
    fn a_failing_delivery_waits_longer_each_time_up_to_an_hour() {
        let waits: Vec<i64> = (1..=9).map(|n| BACKOFF.wait(n)).collect();
        assert_eq!(waits, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    }

    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
