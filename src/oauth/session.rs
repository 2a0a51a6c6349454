//! The browser session and sign-in lockout policy of the authorization endpoint's pages:
//! how long a session lasts, which CSRF token counts, and what failed sign-ins lead to.
//! `usecase::sign_in` runs it; the pages only render its outcomes.

use std::time::Duration;

use subtle::ConstantTimeEq;

use crate::domain::user::normalize_email;

use super::records::BrowserSession;
use super::scope::Scopes;
use super::secret;

/// A browser session lasts a day.
pub const SESSION_SECONDS: i64 = 86_400;
/// Sign-in failures are counted over this window...
pub const THROTTLE_WINDOW: i64 = 15 * 60;
/// ...answers slow down from this many failures...
pub const SLOW_AFTER: i64 = 3;
/// ...and the account or address is locked from this many.
pub const LOCK_AFTER: i64 = 5;

/// Whether a stored session still counts at `now`.
pub fn session_live(session: &BrowserSession, now: i64) -> bool {
    session.expires_at > now
}

/// The session of a visitor who has not signed in: their cookie alone, never stored, with a
/// CSRF token derived from it (a double-submit token: a form counts only with the cookie it
/// was issued with). Storing a session for every anonymous visit of the authorize page would
/// let anyone fill the database; a session is stored from the sign-in on.
pub fn visitor_session(cookie: &str, now: i64) -> BrowserSession {
    BrowserSession {
        // Not the cookie itself, nor its stored hash (`secret::hash(cookie)`).
        csrf_token: secret::hash(&format!("csrf:{cookie}")),
        user_id: None,
        expires_at: now + SESSION_SECONDS,
    }
}

/// Whether a form's CSRF token is the one issued to the session (compared in constant time).
pub fn csrf_matches(given: Option<&str>, session: &BrowserSession) -> bool {
    given.is_some_and(|token| token.as_bytes().ct_eq(session.csrf_token.as_bytes()).into())
}

/// How much of a typed username a failure is counted under: more than any address.
const THROTTLED_NAME_CHARS: usize = 320;

/// The keys that sign-in failures are counted under: the account (its address as typed,
/// normalized) and the network address the attempt came from.
pub fn throttle_keys(username: &str, address: &str) -> ThrottleKeys {
    // Control characters are left out: PostgreSQL cannot store a NUL, and adding them must
    // not open a fresh count for the same account. So is what lies past the longest
    // address (254): no account has it, and an index refuses keys of some kilobytes. Cut
    // after normalizing, as the sign-in reads the name: spaces before an address would
    // otherwise push its end out of the key, and each count of them open a fresh count.
    let typed: String = username.chars().filter(|c| !c.is_control()).collect();
    let account: String = normalize_email(&typed)
        .chars()
        .take(THROTTLED_NAME_CHARS)
        .collect();
    ThrottleKeys {
        account: format!("account:{account}"),
        address: format!("address:{address}"),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThrottleKeys {
    /// Cleared by a successful sign-in.
    pub account: String,
    /// Never cleared early: one address trying many accounts stays slowed.
    pub address: String,
}

impl ThrottleKeys {
    pub fn both(&self) -> [&str; 2] {
        [&self.account, &self.address]
    }
}

/// What recent failures (the most of either key within [`THROTTLE_WINDOW`]) allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    /// Check the password at once.
    Allow,
    /// Check it after this pause (longer with each failure).
    Slow(Duration),
    /// Refuse without checking; try again after this many seconds.
    Locked { retry_after: i64 },
}

pub fn throttle(failures: i64) -> Throttle {
    if failures >= LOCK_AFTER {
        Throttle::Locked {
            retry_after: THROTTLE_WINDOW,
        }
    } else if failures >= SLOW_AFTER {
        Throttle::Slow(Duration::from_millis(
            500 * (failures - SLOW_AFTER + 1) as u64,
        ))
    } else {
        Throttle::Allow
    }
}

/// Whether the scopes a user granted a client before cover what it asks now (then the
/// consent page is skipped).
pub fn consent_covers(granted: Option<&str>, asked: &Scopes) -> bool {
    granted.is_some_and(|granted| asked.is_subset(&Scopes::from_stored(granted)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_slow_then_lock() {
        assert_eq!(throttle(0), Throttle::Allow);
        assert_eq!(throttle(SLOW_AFTER - 1), Throttle::Allow);
        assert_eq!(
            throttle(SLOW_AFTER),
            Throttle::Slow(Duration::from_millis(500))
        );
        assert_eq!(
            throttle(LOCK_AFTER - 1),
            Throttle::Slow(Duration::from_millis(1_000))
        );
        assert_eq!(
            throttle(LOCK_AFTER),
            Throttle::Locked {
                retry_after: THROTTLE_WINDOW
            }
        );
    }

    #[test]
    fn one_account_however_it_is_typed() {
        let keys = throttle_keys(" Jan@Example.NL\0", "192.0.2.1");
        assert_eq!(keys.account, "account:jan@example.nl");
        assert_eq!(keys.address, "address:192.0.2.1");
        assert_eq!(throttle_keys("jan@example.nl", "192.0.2.1"), keys);
        // However many spaces come first, as the sign-in trims them.
        let padded = format!("{}Jan@Example.NL", " ".repeat(THROTTLED_NAME_CHARS));
        assert_eq!(throttle_keys(&padded, "192.0.2.1"), keys);
        let long = "é".repeat(4_000);
        let kept = throttle_keys(&long, "192.0.2.1").account;
        assert_eq!(
            kept,
            format!("account:{}", "é".repeat(THROTTLED_NAME_CHARS))
        );
    }

    #[test]
    fn sessions_expire_and_carry_their_csrf_token() {
        let session = BrowserSession {
            csrf_token: "abc".into(),
            user_id: None,
            expires_at: 100,
        };
        assert!(session_live(&session, 99));
        assert!(!session_live(&session, 100));
        assert!(csrf_matches(Some("abc"), &session));
        assert!(!csrf_matches(Some("abd"), &session));
        assert!(!csrf_matches(None, &session));
    }

    #[test]
    fn a_visitors_csrf_token_belongs_to_their_cookie_alone() {
        let visitor = visitor_session("cookie-a", 0);
        assert_eq!(visitor.user_id, None);
        assert!(session_live(&visitor, SESSION_SECONDS - 1));
        assert!(csrf_matches(
            Some(&visitor.csrf_token),
            &visitor_session("cookie-a", 9)
        ));
        assert!(!csrf_matches(
            Some(&visitor.csrf_token),
            &visitor_session("cookie-b", 0)
        ));
        assert_ne!(visitor.csrf_token, "cookie-a");
        assert_ne!(visitor.csrf_token, secret::hash("cookie-a"));
    }

    #[test]
    fn consent_is_skipped_only_within_what_was_granted() {
        let asked = Scopes::parse("read write").unwrap();
        assert!(consent_covers(Some("read write purchase"), &asked));
        assert!(!consent_covers(Some("read"), &asked));
        assert!(!consent_covers(None, &asked));
    }
}
