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
        let exists = stored.is_some();
        let stored = stored.unwrap_or_else(|| DUMMY.clone());
        let ok = PasswordHash::new(&stored).is_ok_and(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        });
        ok && exists
    })
    .await
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
}
