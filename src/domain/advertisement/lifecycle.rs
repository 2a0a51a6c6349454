//! The lifecycle of an advertisement (docs/LIFECYCLE.md says the same in words): its
//! states, who may move it between them, and the dates that go with them.

use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::text_enum;

/// Renewal is allowed in the last days before `closeDate`.
pub const RENEW_WINDOW_DAYS: i64 = 7;
/// An expired ad can still be renewed this many days after its `closeDate`.
pub const RENEW_GRACE_DAYS: i64 = 30;
/// Seconds in a day.
pub const DAY: i64 = 86_400;
/// The longest period an operator may set (a category's running days, a feature's days):
/// ten years, so that every date Souk computes from one stays far from overflowing.
pub const PERIOD_MAX_DAYS: i64 = 3_650;

text_enum! {
    /// The states of an advertisement.
    pub enum AdStatus {
        Draft = "draft",
        Online = "online",
        Paused = "paused",
        Expired = "expired",
        Closed = "closed",
        Deleted = "deleted",
        Rejected = "rejected",
    }
}

impl AdStatus {
    /// The states in which an ad's `closeDate` runs: past it, the ad is expired.
    pub const RUNNING: [AdStatus; 2] = [AdStatus::Online, AdStatus::Paused];
}

/// Who asks for a change of state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    Seller,
    Operator,
    System,
}

/// The lifecycle (docs/LIFECYCLE.md): may `actor` move an ad from `from` to `to`?
pub fn may_transition(from: AdStatus, to: AdStatus, actor: Actor) -> bool {
    use AdStatus::*;
    if from == to {
        return true;
    }
    match actor {
        Actor::Seller => matches!(
            (from, to),
            (Draft, Online)
                | (Online, Paused)
                | (Paused, Online)
                | (Online | Paused, Closed)
                | (
                    Draft | Online | Paused | Expired | Closed | Rejected,
                    Deleted
                )
        ),
        Actor::Operator => matches!(
            (from, to),
            (Draft | Online | Paused, Rejected) | (Rejected, Draft | Online | Paused | Expired)
        ),
        Actor::System => matches!((from, to), (Online | Paused, Expired)),
    }
}

/// The status an ad has at `now`: an online or paused ad past its `closeDate` is expired
/// even before the expiry sweep has written it down. (`store::ads` says the same in SQL,
/// built from [`AdStatus::RUNNING`].)
pub fn effective_status(stored: AdStatus, close_date: Option<i64>, now: i64) -> AdStatus {
    match close_date {
        Some(close) if close <= now && AdStatus::RUNNING.contains(&stored) => AdStatus::Expired,
        _ => stored,
    }
}

/// Renewal is possible in the last week before `closeDate`, and in the grace period after
/// it: an ad expired for at most [`RENEW_GRACE_DAYS`] comes back online when renewed.
pub fn renew_possible(status: AdStatus, close_date: Option<i64>, now: i64) -> bool {
    match (status, close_date) {
        (AdStatus::Expired, Some(close)) => now - close <= RENEW_GRACE_DAYS * DAY,
        (AdStatus::Online | AdStatus::Paused, Some(close)) => {
            close - now <= RENEW_WINDOW_DAYS * DAY
        }
        _ => false,
    }
}

/// When an ad went online and when it closes; neither before it is first published.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dates {
    pub start: Option<i64>,
    pub close: Option<i64>,
}

impl Dates {
    /// Published at `start` in a category whose ads run `running_days`.
    pub fn published(start: i64, running_days: i64) -> Dates {
        Dates {
            start: Some(start),
            close: Some(start + running_days * DAY),
        }
    }
}

/// The state a new ad starts in: online unless it asks to be a draft (as the original
/// did, a POST without `status` publishes).
pub fn new_ad_status(requested: Option<AdStatus>) -> Result<AdStatus, FieldError> {
    match requested {
        None | Some(AdStatus::Online) => Ok(AdStatus::Online),
        Some(AdStatus::Draft) => Ok(AdStatus::Draft),
        Some(other) => Err(FieldError::new(
            "status",
            "invalid-value",
            Text::new(
                "een nieuwe advertentie is online of draft",
                "une nouvelle annonce est online ou draft",
            ),
        )
        .with_value(other.as_str())),
    }
}

/// The states a seller's list shows: those of `filter` (comma-separated), or all. Deleted
/// ads are gone for everyone, their seller included: no list shows them, and asking for
/// them (or for a state that does not exist) is refused.
pub fn listed_statuses(filter: Option<&str>) -> Result<Vec<AdStatus>, FieldError> {
    match filter.filter(|f| !f.is_empty()) {
        None => Ok(AdStatus::ALL
            .into_iter()
            .filter(|s| *s != AdStatus::Deleted)
            .collect()),
        // Each state once, however often the list names it: it becomes a query's values.
        Some(list) => list
            .split(',')
            .map(|s| AdStatus::parse(s.trim()).filter(|s| *s != AdStatus::Deleted))
            .collect::<Option<Vec<_>>>()
            .map(|named| {
                AdStatus::ALL
                    .into_iter()
                    .filter(|s| named.contains(s))
                    .collect()
            })
            .ok_or_else(|| {
                FieldError::new(
                    "status",
                    "invalid-value",
                    Text::new(
                        "bevat een onbekende status of `deleted` (verwijderde advertenties staan in geen lijst)",
                        "contient un statut inconnu ou `deleted` (les annonces supprimées ne figurent dans aucune liste)",
                    ),
                )
                .with_value(list)
            }),
    }
}

/// A draft going online is published: it gets its dates, and (as a new ad would) needs an
/// open category.
pub fn publishes(from: AdStatus, to: AdStatus) -> bool {
    from == AdStatus::Draft && to == AdStatus::Online
}

/// Where an operator's restore takes a rejected ad: back to the state it was rejected in
/// (`before`: draft, online or paused) while it has running time left, expired after. Where
/// that state is unknown (rejected before Souk kept it): online, or a draft if it was never
/// published.
pub fn restored_status(before: Option<AdStatus>, close_date: Option<i64>, now: i64) -> AdStatus {
    match (before, close_date) {
        (Some(AdStatus::Draft), _) | (_, None) => AdStatus::Draft,
        (_, Some(close)) if close <= now => AdStatus::Expired,
        (Some(AdStatus::Paused), Some(_)) => AdStatus::Paused,
        (_, Some(_)) => AdStatus::Online,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_state_counts_once() {
        use AdStatus::*;
        let named = listed_statuses(Some(" online,draft,online ,draft")).unwrap();
        assert_eq!(named, [Draft, Online]);
        let many = vec!["paused"; 40_000].join(",");
        assert_eq!(listed_statuses(Some(&many)).unwrap(), [Paused]);
        assert!(listed_statuses(Some("online,deleted")).is_err());
        assert!(!listed_statuses(None).unwrap().contains(&Deleted));
    }

    #[test]
    fn lifecycle() {
        use AdStatus::*;
        assert!(may_transition(Draft, Online, Actor::Seller));
        assert!(may_transition(Online, Paused, Actor::Seller));
        assert!(may_transition(Paused, Online, Actor::Seller));
        assert!(may_transition(Online, Closed, Actor::Seller));
        assert!(may_transition(Closed, Deleted, Actor::Seller));
        assert!(!may_transition(Deleted, Online, Actor::Seller));
        assert!(!may_transition(Rejected, Online, Actor::Seller));
        assert!(
            !may_transition(Expired, Online, Actor::Seller),
            "renewal is its own action"
        );
        assert!(!may_transition(Closed, Online, Actor::Seller));
        assert!(!may_transition(Online, Expired, Actor::Seller));
        assert!(may_transition(Online, Rejected, Actor::Operator));
        assert!(may_transition(Rejected, Online, Actor::Operator));
        assert!(!may_transition(Deleted, Online, Actor::Operator));
        assert!(may_transition(Online, Expired, Actor::System));
        assert_eq!(effective_status(Online, Some(100), 100), Expired);
        assert_eq!(effective_status(Online, Some(101), 100), Online);
        assert!(renew_possible(Online, Some(7 * 86_400), 0));
        assert!(!renew_possible(Online, Some(7 * 86_400 + 1), 0));
        assert!(renew_possible(Expired, Some(0), 100));
        assert!(!renew_possible(Draft, None, 0));
        assert_eq!(restored_status(None, None, 100), Draft);
        assert_eq!(restored_status(None, Some(101), 100), Online);
        assert_eq!(restored_status(None, Some(100), 100), Expired);
        assert_eq!(restored_status(Some(Draft), None, 100), Draft);
        assert_eq!(restored_status(Some(Online), Some(101), 100), Online);
        assert_eq!(restored_status(Some(Paused), Some(101), 100), Paused);
        assert_eq!(restored_status(Some(Paused), Some(100), 100), Expired);
        assert!(may_transition(Rejected, Paused, Actor::Operator));
        assert_eq!(Dates::published(10, 2).close, Some(10 + 2 * 86_400));
        assert_eq!(new_ad_status(None), Ok(Online));
        assert_eq!(new_ad_status(Some(Draft)), Ok(Draft));
        assert!(new_ad_status(Some(Paused)).is_err());
    }
}
