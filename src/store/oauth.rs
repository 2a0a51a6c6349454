//! What the authorization server keeps: clients, codes, tokens, consents, browser sessions,
//! sign-in failures and mailed confirmation links. Every secret is stored as its hash.
//! The records the authorization server decides over are declared in `oauth::records`.

use crate::domain::text_enum;
use crate::domain::user::Email;
use crate::oauth::{
    AccessToken, AuthorizationCode, BrowserSession, Client, RefreshState, RefreshToken,
};
use crate::params;

use super::record::record;
use super::value::from_text;
use super::{Backend, Conn, DbError, FromValue, Record, Row, Value};

fn json_list(items: &[String]) -> Result<String, DbError> {
    serde_json::to_string(items).map_err(|e| DbError::Decode(e.to_string()))
}

pub async fn insert_client(conn: &mut dyn Conn, client: &Client, now: i64) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO clients (client_id, name, secret_hash, redirect_uris, scopes, \
             default_scopes, grants, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        params![
            &client.id,
            &client.name,
            client.secret_hash.clone(),
            json_list(&client.redirect_uris)?,
            &client.scopes,
            &client.default_scopes,
            client.grants.join(" "),
            now
        ],
    )
    .await
}

/// A client is a record by hand: its redirect URIs are a JSON list, its grants a
/// space-separated one.
impl Record for Client {
    const COLUMNS: &'static str =
        "client_id, name, secret_hash, redirect_uris, scopes, default_scopes, grants";
    const WIDTH: usize = 7;

    fn read(row: &mut Row) -> Result<Self, DbError> {
        Ok(Client {
            id: row.take()?,
            name: row.take()?,
            secret_hash: row.take()?,
            redirect_uris: serde_json::from_str(&row.take::<String>()?)
                .map_err(|e| DbError::Decode(e.to_string()))?,
            scopes: row.take()?,
            default_scopes: row.take()?,
            grants: row
                .take::<String>()?
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
        })
    }
}

pub async fn client(conn: &mut dyn Conn, id: &str) -> Result<Option<Client>, DbError> {
    // Client ids are Souk's own, without control characters; a NUL would not even reach
    // the query on PostgreSQL (TEXT cannot hold it), so such an id is simply unknown.
    if !crate::domain::text::is_one_line(id) {
        return Ok(None);
    }
    conn.record(
        &format!(
            "SELECT {} FROM clients WHERE client_id = $1",
            Client::COLUMNS
        ),
        params![id],
    )
    .await
}

pub async fn clients(conn: &mut dyn Conn) -> Result<Vec<Client>, DbError> {
    conn.records(
        &format!(
            "SELECT {} FROM clients ORDER BY created_at, client_id",
            Client::COLUMNS
        ),
        &[],
    )
    .await
}

/// Deletes a client with its codes, tokens, consents, hooks and events; false if there was
/// none. (Its events' recipients and its hooks' deliveries have no foreign key to cascade:
/// migration 0056 says why.)
pub async fn delete_client(conn: &mut dyn Conn, id: &str) -> Result<bool, DbError> {
    conn.run(
        "DELETE FROM hook_deliveries \
         WHERE hook_id IN (SELECT hook_id FROM hooks WHERE client_id = $1)",
        params![id],
    )
    .await?;
    conn.run(
        "DELETE FROM event_recipients WHERE client_id = $1",
        params![id],
    )
    .await?;
    Ok(conn
        .execute("DELETE FROM clients WHERE client_id = $1", params![id])
        .await?
        > 0)
}

/// Whether `client`'s stored secret is still the one it was authenticated with (before
/// this transaction), read `FOR KEY SHARE`: a rotation of it ([`rotate_client_secret`])
/// either waits for this transaction, and then revokes what it issued, or this one waits
/// for the rotation and sees the new secret.
pub async fn secret_unchanged(conn: &mut dyn Conn, client: &Client) -> Result<bool, DbError> {
    let held = conn.key_share();
    let row = conn
        .query_opt(
            &format!("SELECT secret_hash FROM clients WHERE client_id = $1{held}"),
            params![client.id.as_str()],
        )
        .await?;
    Ok(match row {
        Some(row) => row.get::<Option<String>>("secret_hash")? == client.secret_hash,
        None => false,
    })
}

/// What a rotation of a client's secret came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretRotation {
    Rotated,
    NoSuchClient,
    /// A public client has no secret: given one, it would be a confidential client, and
    /// every code exchange of its app (which has no secret) would fail.
    Public,
}

/// Replaces confidential client `id`'s secret (as its hash), and revokes the access tokens
/// it got by its own grant (client credentials: no user's) at `now`: a leaked secret's
/// tokens would outlive it by up to a day. Its users' grants stay: their refresh needs the
/// new secret.
pub async fn rotate_client_secret(
    conn: &mut dyn Conn,
    id: &str,
    hash: &str,
    now: i64,
) -> Result<SecretRotation, DbError> {
    // `FOR UPDATE`, which a token grant's check of the secret (`secret_unchanged`)
    // waits for; nothing on SQLite, whose writes take turns.
    let held = conn.hold_keys();
    let Some(row) = conn
        .query_opt(
            &format!("SELECT secret_hash FROM clients WHERE client_id = $1{held}"),
            params![id],
        )
        .await?
    else {
        return Ok(SecretRotation::NoSuchClient);
    };
    if row.get::<Option<String>>("secret_hash")?.is_none() {
        return Ok(SecretRotation::Public);
    }
    conn.run(
        "UPDATE clients SET secret_hash = $2 WHERE client_id = $1",
        params![id, hash],
    )
    .await?;
    conn.run(
        "UPDATE access_tokens SET revoked_at = $2 \
         WHERE client_id = $1 AND user_id IS NULL AND revoked_at IS NULL",
        params![id, now],
    )
    .await?;
    Ok(SecretRotation::Rotated)
}

record! {
    impl for AuthorizationCode {
        code_hash, client_id, user_id, redirect_uri, scope, code_challenge, expires_at, used_at
    }
}

pub async fn insert_code(conn: &mut dyn Conn, code: &AuthorizationCode) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO authorization_codes (code_hash, client_id, user_id, redirect_uri, scope, \
             code_challenge, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        params![
            &code.code_hash,
            &code.client_id,
            code.user_id,
            &code.redirect_uri,
            &code.scope,
            code.code_challenge.clone(),
            code.expires_at
        ],
    )
    .await
}

pub async fn code(
    conn: &mut dyn Conn,
    code_hash: &str,
) -> Result<Option<AuthorizationCode>, DbError> {
    conn.by_key("authorization_codes", "code_hash", code_hash)
        .await
}

/// Marks a code used; true only for the one caller that used it first, so two exchanges
/// of one code at the same moment cannot both succeed.
pub async fn use_code(conn: &mut dyn Conn, code_hash: &str, now: i64) -> Result<bool, DbError> {
    Ok(conn
        .execute(
            "UPDATE authorization_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL",
            params![code_hash, now],
        )
        .await?
        == 1)
}

record! {
    impl for AccessToken {
        token_hash, client_id, user_id, scope, family, code_hash, issued_at, expires_at,
        revoked_at
    }
}

pub async fn insert_access_token(conn: &mut dyn Conn, token: &AccessToken) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO access_tokens (token_hash, client_id, user_id, scope, family, code_hash, \
             issued_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        params![
            &token.token_hash,
            &token.client_id,
            token.user_id,
            &token.scope,
            token.family.clone(),
            token.code_hash.clone(),
            token.issued_at,
            token.expires_at
        ],
    )
    .await
}

pub async fn access_token(
    conn: &mut dyn Conn,
    token_hash: &str,
) -> Result<Option<AccessToken>, DbError> {
    conn.by_key("access_tokens", "token_hash", token_hash).await
}

pub async fn revoke_access_token(
    conn: &mut dyn Conn,
    token_hash: &str,
    now: i64,
) -> Result<u64, DbError> {
    conn.execute(
        "UPDATE access_tokens SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL",
        params![token_hash, now],
    )
    .await
}

/// A secret issued to a user, by its hash: an authorization code, a refresh token, or a
/// confirmation link.
#[derive(Clone, Copy, Debug)]
pub enum UserSecret<'a> {
    Code(&'a str),
    RefreshToken(&'a str),
    ConfirmationLink(&'a str),
}

/// Holds the row of the user that `secret` was issued to, until the transaction ends. Every
/// change to a refresh family, and every use of a confirmation link, takes its user's row
/// first (as a request for a new link does), so that on PostgreSQL two requests about one
/// user's family or links (a refresh token presented twice at once, a revocation or a
/// replayed code racing a rotation, two address changes at once) run one after the other,
/// and the second reads what the first wrote: without it, a statement neither waits for
/// nor sees the row that a transaction still open has inserted.
pub async fn lock_owner(conn: &mut dyn Conn, secret: UserSecret<'_>) -> Result<(), DbError> {
    let (table, key, hash) = match secret {
        UserSecret::Code(hash) => ("authorization_codes", "code_hash", hash),
        UserSecret::RefreshToken(hash) => ("refresh_tokens", "token_hash", hash),
        UserSecret::ConfirmationLink(hash) => ("email_confirmations", "token_hash", hash),
    };
    conn.lock_row(
        &format!(
            "SELECT user_id FROM users WHERE user_id = (SELECT user_id FROM {table} WHERE {key} = $1)"
        ),
        hash,
    )
    .await
}

/// Revokes every token of a refresh family: its live refresh tokens and its access tokens.
pub async fn revoke_family(conn: &mut dyn Conn, family: &str, now: i64) -> Result<u64, DbError> {
    let refresh = conn
        .execute(
            "UPDATE refresh_tokens SET state = 'revoked', spent_at = $2 \
             WHERE family = $1 AND state = 'live'",
            params![family, now],
        )
        .await?;
    let access = conn
        .execute(
            "UPDATE access_tokens SET revoked_at = $2 WHERE family = $1 AND revoked_at IS NULL",
            params![family, now],
        )
        .await?;
    Ok(refresh + access)
}

from_text!(RefreshState => RefreshState::parse);

record! {
    impl for RefreshToken {
        token_hash, client_id, user_id, scope, family, code_hash, state
    }
}

/// Stores a new live refresh token, numbered after every earlier one so that "issued
/// longest ago" is well defined even within one second.
pub async fn insert_refresh_token(
    conn: &mut dyn Conn,
    token: &RefreshToken,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO refresh_tokens (token_hash, client_id, user_id, scope, family, code_hash, \
             state, issued_at, sequence) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, \
             (SELECT COALESCE(MAX(sequence), 0) + 1 FROM refresh_tokens))",
        params![
            &token.token_hash,
            &token.client_id,
            token.user_id,
            &token.scope,
            &token.family,
            token.code_hash.clone(),
            token.state.as_str(),
            now
        ],
    )
    .await
}

pub async fn refresh_token(
    conn: &mut dyn Conn,
    token_hash: &str,
) -> Result<Option<RefreshToken>, DbError> {
    conn.by_key("refresh_tokens", "token_hash", token_hash)
        .await
}

/// Moves a refresh token from `from` to `to`; true only if it was in `from` (so of two
/// concurrent rotations of one token, one wins).
pub async fn change_refresh_state(
    conn: &mut dyn Conn,
    token_hash: &str,
    from: RefreshState,
    to: RefreshState,
    now: i64,
) -> Result<bool, DbError> {
    // Any state but live is spent, from now on.
    let spent_at = (to != RefreshState::Live).then_some(now);
    Ok(conn
        .execute(
            "UPDATE refresh_tokens SET state = $3, spent_at = $4 WHERE token_hash = $1 AND state = $2",
            params![token_hash, from.as_str(), to.as_str(), spent_at],
        )
        .await?
        == 1)
}

/// Keeps the `keep` newest live refresh tokens of a user at a client and discards the rest.
pub async fn discard_beyond(
    conn: &mut dyn Conn,
    user_id: i64,
    client_id: &str,
    keep: i64,
    now: i64,
) -> Result<u64, DbError> {
    conn.execute(
        "UPDATE refresh_tokens SET state = 'discarded', spent_at = $4 \
         WHERE user_id = $1 AND client_id = $2 AND state = 'live' AND token_hash NOT IN ( \
             SELECT token_hash FROM refresh_tokens \
             WHERE user_id = $1 AND client_id = $2 AND state = 'live' \
             ORDER BY sequence DESC LIMIT $3)",
        params![user_id, client_id, keep, now],
    )
    .await
}

/// The scopes a user granted a client, if any.
pub async fn consent(
    conn: &mut dyn Conn,
    user_id: i64,
    client_id: &str,
) -> Result<Option<String>, DbError> {
    conn.query_opt(
        "SELECT scope FROM consents WHERE user_id = $1 AND client_id = $2",
        params![user_id, client_id],
    )
    .await?
    .map(|row| row.get("scope"))
    .transpose()
}

pub async fn grant_consent(
    conn: &mut dyn Conn,
    user_id: i64,
    client_id: &str,
    scope: &str,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO consents (user_id, client_id, scope, granted_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, \
             granted_at = excluded.granted_at",
        params![user_id, client_id, scope, now],
    )
    .await
}

record! {
    impl for BrowserSession {
        csrf_token, user_id, expires_at
    }
}

pub async fn insert_session(
    conn: &mut dyn Conn,
    session_hash: &str,
    csrf_token: &str,
    user_id: i64,
    expires_at: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO browser_sessions (session_hash, csrf_token, user_id, expires_at) \
         VALUES ($1, $2, $3, $4)",
        params![session_hash, csrf_token, user_id, expires_at],
    )
    .await
}

pub async fn session(
    conn: &mut dyn Conn,
    session_hash: &str,
) -> Result<Option<BrowserSession>, DbError> {
    conn.by_key("browser_sessions", "session_hash", session_hash)
        .await
}

/// Counts sign-in attempt `attempt` under `key` as a failure until it is taken back
/// ([`take_back_attempt`]).
pub async fn record_login_attempt(
    conn: &mut dyn Conn,
    key: &str,
    attempt: &str,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO login_failures (throttle_key, failed_at, attempt_id) VALUES ($1, $2, $3)",
        params![key, now, attempt],
    )
    .await
}

/// Takes back what [`record_login_attempt`] counted under `key` for `attempt`.
pub async fn take_back_attempt(
    conn: &mut dyn Conn,
    key: &str,
    attempt: &str,
) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM login_failures WHERE throttle_key = $1 AND attempt_id = $2",
        params![key, attempt],
    )
    .await
}

pub async fn login_failures_since(
    conn: &mut dyn Conn,
    key: &str,
    since: i64,
) -> Result<i64, DbError> {
    conn.query_one(
        "SELECT COUNT(*) AS n FROM login_failures WHERE throttle_key = $1 AND failed_at >= $2",
        params![key, since],
    )
    .await?
    .get("n")
}

pub async fn clear_login_failures(conn: &mut dyn Conn, key: &str) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM login_failures WHERE throttle_key = $1",
        params![key],
    )
    .await
}

text_enum! {
    /// What a mailed link confirms.
    pub enum ConfirmationPurpose {
        /// A new account's address.
        Account = "account",
        /// A new address of an account (`new_email`).
        EmailChange = "email-change",
    }
}

from_text!(ConfirmationPurpose => ConfirmationPurpose::parse);

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct EmailConfirmation {
        pub user_id: i64,
        pub purpose: ConfirmationPurpose,
        pub new_email: Option<Email>,
    }
}

pub async fn insert_confirmation(
    conn: &mut dyn Conn,
    token_hash: &str,
    confirmation: &EmailConfirmation,
    expires_at: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO email_confirmations (token_hash, user_id, purpose, new_email, expires_at) \
         VALUES ($1, $2, $3, $4, $5)",
        params![
            token_hash,
            confirmation.user_id,
            confirmation.purpose.as_str(),
            confirmation.new_email.as_ref().map(Email::as_str),
            expires_at
        ],
    )
    .await
}

/// Retires every unused address-change link of `user` (as used at `now`): only the newest
/// request of an address change may make it, and none after a change was made.
pub async fn retire_email_changes(conn: &mut dyn Conn, user: i64, now: i64) -> Result<(), DbError> {
    conn.run(
        "UPDATE email_confirmations SET used_at = $2 \
         WHERE user_id = $1 AND purpose = $3 AND used_at IS NULL",
        params![user, now, ConfirmationPurpose::EmailChange.as_str()],
    )
    .await
}

/// Gives a confirmation link that is still usable the token hashed as `new_hash` in place
/// of its own (a mail's sender mints the token it sends); false if the link was used,
/// retired or expired.
pub async fn rekey_confirmation(
    conn: &mut dyn Conn,
    token_hash: &str,
    new_hash: &str,
    now: i64,
) -> Result<bool, DbError> {
    let changed = conn
        .execute(
            "UPDATE email_confirmations SET token_hash = $2 \
             WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $3",
            params![token_hash, new_hash, now],
        )
        .await?;
    Ok(changed == 1)
}

/// Uses a confirmation link once; `None` if unknown, used or expired.
pub async fn take_confirmation(
    conn: &mut dyn Conn,
    token_hash: &str,
    now: i64,
) -> Result<Option<EmailConfirmation>, DbError> {
    conn.record(
        &format!(
            "UPDATE email_confirmations SET used_at = $2 \
             WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING {}",
            EmailConfirmation::COLUMNS
        ),
        params![token_hash, now],
    )
    .await
}

/// Whether the link, still usable at `now`, confirms an account whose owner has not chosen
/// a password yet (the confirmation page then asks for one). Unknown, used, retired or
/// expired links: false.
pub async fn confirmation_wants_password(
    conn: &mut dyn Conn,
    token_hash: &str,
    now: i64,
) -> Result<bool, DbError> {
    let hash: Option<String> = conn
        .query_opt(
            "SELECT u.password_hash FROM email_confirmations c \
             JOIN users u ON u.user_id = c.user_id \
             WHERE c.token_hash = $1 AND c.purpose = $2 \
               AND c.used_at IS NULL AND c.expires_at > $3",
            params![token_hash, ConfirmationPurpose::Account.as_str(), now],
        )
        .await?
        .map(|mut row| row.take())
        .transpose()?;
    Ok(hash.is_some_and(|h| h.is_empty()))
}

/// Rows deleted per statement by [`forget_spent`], so that one hourly sweep never holds
/// the writer for long; the caller repeats until fewer come back.
pub const FORGET_BATCH: i64 = 5_000;

/// Deletes up to [`FORGET_BATCH`] rows of each kind that nothing needs any more: access
/// tokens, authorization codes and browser sessions that expired before `expired_before`,
/// refresh tokens spent (rotated, discarded, revoked) before `spent_before`,
/// and failed sign-ins from before `failed_before` (no lockout counts them). Returns how
/// many rows went.
pub async fn forget_spent(
    conn: &mut dyn Conn,
    expired_before: i64,
    spent_before: i64,
    failed_before: i64,
) -> Result<u64, DbError> {
    // login_failures has no key of its own: each backend's row address stands in.
    let row = match conn.backend() {
        Backend::Sqlite => "rowid",
        Backend::Postgres => "ctid",
    };
    let spent = [
        (
            "access_tokens",
            "token_hash",
            "expires_at < $1",
            expired_before,
        ),
        (
            "authorization_codes",
            "code_hash",
            "expires_at < $1",
            expired_before,
        ),
        // Counted from when a token was spent (its rotation, say), not from its issue: a
        // token rotated after 30 days was forgotten within the hour, and its reuse
        // revoked nothing (migration 0055).
        (
            "refresh_tokens",
            "token_hash",
            "spent_at < $1",
            spent_before,
        ),
        // Spent by a replica of the previous version during an upgrade (no `spent_at`):
        // from their issue, as that version did.
        (
            "refresh_tokens",
            "token_hash",
            "spent_at IS NULL AND state IN ('rotated', 'discarded', 'revoked') \
             AND issued_at < $1",
            spent_before,
        ),
        (
            "browser_sessions",
            "session_hash",
            "expires_at < $1",
            expired_before,
        ),
        ("login_failures", row, "failed_at < $1", failed_before),
    ];
    let mut gone = 0;
    for (table, key, condition, bound) in spent {
        gone += conn
            .execute(
                &format!(
                    "DELETE FROM {table} WHERE {key} IN ( \
                     SELECT {key} FROM {table} WHERE {condition} LIMIT $2)"
                ),
                params![bound, FORGET_BATCH],
            )
            .await?;
    }
    Ok(gone)
}
