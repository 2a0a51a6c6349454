//! Who is calling: what an access token grants, and this process's cache of token lookups.
//!
//! Token lookups are cached per process for at most [`CACHE_SECONDS`], so a token revoked
//! on another replica stops working within that bound; a revocation on this replica clears
//! the cache at once. (`http::auth` resolves tokens into callers on every request.)

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
    entries: Mutex<HashMap<String, (i64, Option<Caller>)>>,
}

impl TokenCache {
    /// The lookup of `hash`, if made less than [`CACHE_SECONDS`] before `now`.
    pub fn get(&self, hash: &str, now: i64) -> Option<Option<Caller>> {
        let entries = self.entries.lock();
        let (fetched, caller) = entries.get(hash)?;
        (now - fetched < CACHE_SECONDS).then(|| caller.clone())
    }

    pub fn put(&self, hash: String, now: i64, caller: Option<Caller>) {
        let mut entries = self.entries.lock();
        if entries.len() >= CACHE_ENTRIES {
            entries.clear();
        }
        entries.insert(hash, (now, caller));
    }

    /// Forgets every lookup: called when this process revokes tokens.
    pub fn clear(&self) {
        self.entries.lock().clear();
    }
}
