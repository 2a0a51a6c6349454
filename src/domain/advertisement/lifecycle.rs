//! The lifecycle of an advertisement (docs/LIFECYCLE.md says the same in words): its
//! states, who may move it between them, and the dates that go with them.

/// Renewal is allowed in the last days before `closeDate`.
pub const RENEW_WINDOW_DAYS: i64 = 7;

/// The states of an advertisement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdStatus {
    Draft,
    Online,
    Paused,
    Expired,
    Closed,
    Deleted,
    Rejected,
}

impl AdStatus {
    pub const ALL: [AdStatus; 7] = [
        AdStatus::Draft,
        AdStatus::Online,
        AdStatus::Paused,
        AdStatus::Expired,
        AdStatus::Closed,
        AdStatus::Deleted,
        AdStatus::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AdStatus::Draft => "draft",
            AdStatus::Online => "online",
            AdStatus::Paused => "paused",
            AdStatus::Expired => "expired",
            AdStatus::Closed => "closed",
            AdStatus::Deleted => "deleted",
            AdStatus::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<AdStatus> {
        AdStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
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
            (Draft | Online | Paused, Rejected) | (Rejected, Draft | Online | Expired)
        ),
        Actor::System => matches!((from, to), (Online | Paused, Expired)),
    }
}

/// The status an ad has at `now`: an online or paused ad past its `closeDate` is expired
/// even before the expiry sweep has written it down.
pub fn effective_status(stored: AdStatus, close_date: Option<i64>, now: i64) -> AdStatus {
    match (stored, close_date) {
        (AdStatus::Online | AdStatus::Paused, Some(close)) if close <= now => AdStatus::Expired,
        _ => stored,
    }
}

/// Renewal is possible in the last week before `closeDate`, and after expiry.
pub fn renew_possible(status: AdStatus, close_date: Option<i64>, now: i64) -> bool {
    match (status, close_date) {
        (AdStatus::Expired, _) => true,
        (AdStatus::Online | AdStatus::Paused, Some(close)) => {
            close - now <= RENEW_WINDOW_DAYS * 86_400
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
