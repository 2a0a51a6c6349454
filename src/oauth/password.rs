//! Password hashing with argon2id (OWASP parameters: 19 MiB, 2 passes), on blocking
//! threads and at most a few at a time, so that a burst of sign-ins cannot starve the
//! server.

use std::sync::LazyLock;

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use tokio::sync::Semaphore;

static HASHING: LazyLock<Semaphore> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    Semaphore::new(cores.clamp(1, 4))
});

/// A hash of a password nobody has, verified against when the account does not exist, so
/// that an unknown e-mail address costs the same time as a wrong password.
static DUMMY: LazyLock<String> = LazyLock::new(|| hash_now("no account has this password"));

fn hash_now(password: &str) -> String {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .unwrap_or_default()
}

async fn limited<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let _permit = HASHING
        .acquire()
        .await
        .expect("the hashing semaphore is never closed");
    tokio::task::spawn_blocking(work)
        .await
        .expect("password hashing does not panic")
}

pub async fn hash(password: String) -> String {
    limited(move || hash_now(&password)).await
}

/// Checks a password against a stored hash (or against nothing, in the same time).
pub async fn verify(password: String, stored: Option<String>) -> bool {
    limited(move || {
        let (checked, usable) = to_check(stored);
        let ok = PasswordHash::new(&checked).is_ok_and(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        });
        ok && usable
    })
    .await
}

/// The hash a password is checked against, and whether a match counts. No account, and an
/// account without a password (stored as an empty text: its owner chooses one when
/// confirming), are checked against [`DUMMY`], so that neither answers sooner than a wrong
/// password and the time tells nothing about the address.
fn to_check(stored: Option<String>) -> (String, bool) {
    match stored {
        Some(own) if PasswordHash::new(&own).is_ok() => (own, true),
        _ => (DUMMY.clone(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify() {
        let stored = hash("correct horse".into()).await;
        assert!(stored.starts_with("$argon2id$"));
        assert!(verify("correct horse".into(), Some(stored.clone())).await);
        assert!(!verify("wrong".into(), Some(stored)).await);
        assert!(!verify("no account has this password".into(), None).await);
    }

    #[tokio::test]
    async fn an_account_without_a_password_costs_a_full_check() {
        let stored = hash("correct horse".into()).await;
        assert_eq!(to_check(Some(stored.clone())), (stored, true));
        for none in [None, Some(String::new())] {
            assert_eq!(to_check(none), (DUMMY.clone(), false));
        }
        assert!(!verify("no account has this password".into(), Some(String::new())).await);
    }
}
