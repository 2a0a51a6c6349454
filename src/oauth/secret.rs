//! Random tokens and their hashes: the database only ever sees the hash.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A new opaque secret: 256 random bits, URL-safe (43 characters).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A new client id: 96 random bits, URL-safe and easy to paste.
pub fn new_client_id() -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    format!("souk-{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// The SHA-256 of a secret, hex: what the database stores and looks up.
pub fn hash(secret: &str) -> String {
    // Every request with a token hashes it: through a buffer, not `hex::encode`'s
    // character-by-character `String` (about 1% of a blob answer's time).
    let mut text = [0u8; 64];
    hex::encode_to_slice(Sha256::digest(secret.as_bytes()), &mut text)
        .expect("64 hex digits hold a SHA-256");
    String::from_utf8_lossy(&text).into_owned()
}

/// Compares a presented secret with a stored hash in constant time.
pub fn matches(secret: &str, stored_hash: &str) -> bool {
    hash(secret).as_bytes().ct_eq(stored_hash.as_bytes()).into()
}

/// The PKCE S256 transform: BASE64URL(SHA256(verifier)).
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `text` is written in the base64url alphabet, as every token, code and PKCE
/// challenge Souk deals in is (letters, digits, `-` and `_`).
pub fn is_base64url(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_url_safe() {
        let a = new_token();
        assert_eq!(a.len(), 43);
        assert_ne!(a, new_token());
        assert!(is_base64url(&a));
    }

    #[test]
    fn a_hash_is_lowercase_hex_sha256() {
        // What earlier releases stored: a stored token's hash must not change.
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn hashes_compare() {
        let token = new_token();
        assert!(matches(&token, &hash(&token)));
        assert!(!matches("other", &hash(&token)));
    }

    #[test]
    fn s256_matches_rfc7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
