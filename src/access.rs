//! Who is calling: what an access token grants, and this process's cache of token lookups.
//!
//! Token lookups are cached per process for at most [`CACHE_SECONDS`], so a token revoked
//! on another replica stops working within that bound; a revocation on this replica forgets
//! the revoking client's lookups at once. (`http::auth` resolves tokens into callers on every request.)

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::oauth::scope::Scopes;

/// How long a token lookup is trusted: the bound on a revocation elsewhere taking effect.
pub const CACHE_SECONDS: i64 = 5;
/// Entries kept before the cache starts over (bounds memory under token spraying).
const CACHE_ENTRIES: usize = 100_000;

/// Who is calling: the client of the token and, for a user token, the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub client_id: String,
    pub user_id: Option<i64>,
    pub scopes: Scopes,
    pub expires_at: i64,
}

/// Recent lookups of access tokens by their hash: the caller, or `None` for a token that is
/// unknown or revoked.
#[derive(Default)]
pub struct TokenCache {
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_hash: HashMap<String, (i64, Option<Caller>)>,
    /// How many times the cache was cleared: a lookup read before a clear is not kept.
    clears: u64,
}

/// When a lookup started, for [`TokenCache::put`].
#[derive(Clone, Copy)]
pub struct LookupStart {
    clears: u64,
}

impl TokenCache {
    /// The lookup of `hash`, if made less than [`CACHE_SECONDS`] before `now`.
    pub fn get(&self, hash: &str, now: i64) -> Option<Option<Caller>> {
        let entries = self.entries.lock();
        let (fetched, caller) = entries.by_hash.get(hash)?;
        (now - fetched < CACHE_SECONDS).then(|| caller.clone())
    }

    /// To be read before a lookup reads the database.
    pub fn start_lookup(&self) -> LookupStart {
        LookupStart {
            clears: self.entries.lock().clears,
        }
    }

    /// Keeps a lookup, unless the cache was cleared since it started: a revocation that
    /// committed meanwhile may not be in what it read.
    pub fn put(&self, started: LookupStart, hash: String, now: i64, caller: Option<Caller>) {
        let mut entries = self.entries.lock();
        if entries.clears != started.clears {
            return;
        }
        if entries.by_hash.len() >= CACHE_ENTRIES {
            entries.by_hash.clear();
        }
        entries.by_hash.insert(hash, (now, caller));
    }

    /// Forgets the lookups of client `client_id`'s tokens, and any lookup running now:
    /// called when this process revokes tokens of that client. The other clients' stay, so
    /// that one client revoking its own tokens in a loop does not make every request of
    /// the others read the database again.
    pub fn forget_client(&self, client_id: &str) {
        let mut entries = self.entries.lock();
        entries.by_hash.retain(|_, (_, caller)| {
            caller
                .as_ref()
                .is_none_or(|caller| caller.client_id != client_id)
        });
        entries.clears += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            client_id: "app".into(),
            user_id: Some(1),
            scopes: Scopes::from_stored("read"),
            expires_at: 100,
        }
    }

    #[test]
    fn a_lookup_that_a_revocation_overtook_is_not_kept() {
        let cache = TokenCache::default();
        let before_revocation = cache.start_lookup();
        cache.forget_client("app");
        cache.put(before_revocation, "h".into(), 10, Some(caller()));
        assert_eq!(cache.get("h", 10), None);

        let after = cache.start_lookup();
        cache.put(after, "h".into(), 10, Some(caller()));
        assert_eq!(cache.get("h", 10), Some(Some(caller())));
        assert_eq!(cache.get("h", 10 + CACHE_SECONDS), None, "too old");
    }

    #[test]
    fn a_revocation_forgets_its_clients_lookups_alone() {
        let cache = TokenCache::default();
        let other = Caller {
            client_id: "other".into(),
            ..caller()
        };
        for (hash, caller) in [
            ("a", Some(caller())),
            ("o", Some(other.clone())),
            ("u", None),
        ] {
            let started = cache.start_lookup();
            cache.put(started, hash.into(), 10, caller);
        }
        cache.forget_client("app");
        assert_eq!(cache.get("a", 10), None, "the revoking client's");
        assert_eq!(cache.get("o", 10), Some(Some(other)));
        assert_eq!(
            cache.get("u", 10),
            Some(None),
            "an unknown token stays unknown"
        );
    }
}
