//! The browser side of the authorization endpoint: sessions, signing in with the lockout
//! policy of `oauth::session`, consent. The pages call these and render the outcomes.

use crate::domain::user::Email;
use crate::oauth::session::{self, Throttle, ThrottleKeys};
use crate::oauth::{Authorization, BrowserSession, password, secret};
use crate::store::oauth as store;
use crate::store::{Conn, Db, DbError, users};

/// A session and its id (raw: the cookie's value; the database keeps its hash).
#[derive(Clone, Debug)]
pub struct Session {
    pub id: String,
    pub record: BrowserSession,
}

/// The live session whose cookie is `id`, if any.
pub async fn session(
    conn: &mut dyn Conn,
    id: &str,
    now: i64,
) -> Result<Option<BrowserSession>, DbError> {
    Ok(store::session(conn, &secret::hash(id))
        .await?
        .filter(|record| session::session_live(record, now)))
}

/// Opens a new session, signed in as `user_id` if given.
pub async fn open_session(
    conn: &mut dyn Conn,
    user_id: Option<i64>,
    now: i64,
) -> Result<Session, DbError> {
    let id = secret::new_token();
    let record = BrowserSession {
        csrf_token: secret::new_token(),
        user_id,
        expires_at: now + session::SESSION_SECONDS,
    };
    let hash = secret::hash(&id);
    store::insert_session(conn, &hash, &record.csrf_token, record.expires_at).await?;
    if let Some(user) = user_id {
        store::sign_in_session(conn, &hash, user).await?;
    }
    Ok(Session { id, record })
}

/// How a sign-in attempt ended.
#[derive(Debug)]
pub enum SignIn {
    /// Too many recent failures: the password was not checked.
    Locked { retry_after: i64 },
    /// An unknown address or a wrong password (one answer for both); counted.
    Refused,
    /// Signed in, in a new session (so that a session planted before cannot be ridden).
    SignedIn { user_id: i64, session: Session },
}

/// Signs in with an address and password from `address`: checks the throttle, then the
/// password (slowed down after a few failures), and counts or clears the failures. Runs in
/// several steps, as the password check must not hold a transaction.
pub async fn sign_in(
    db: &Db,
    username: &str,
    password: String,
    address: &str,
    now: i64,
) -> Result<SignIn, DbError> {
    let keys = session::throttle_keys(username, address);
    let counted = keys.clone();
    let since = now - session::THROTTLE_WINDOW;
    let failures = db
        .read(move |conn| {
            Box::pin(async move {
                let mut most = 0;
                for key in counted.both() {
                    most = most.max(store::login_failures_since(conn, key, since).await?);
                }
                Ok::<_, DbError>(most)
            })
        })
        .await?;
    match session::throttle(failures) {
        Throttle::Locked { retry_after } => return Ok(SignIn::Locked { retry_after }),
        Throttle::Slow(pause) => tokio::time::sleep(pause).await,
        Throttle::Allow => {}
    }
    // An address that cannot be one names no user.
    let lookup = Email::parse(username);
    let user = db
        .read(move |conn| {
            Box::pin(async move {
                match lookup {
                    Some(email) => users::by_email(conn, &email).await,
                    None => Ok(None),
                }
            })
        })
        .await?;
    let ok = password::verify(password, user.as_ref().map(|u| u.password_hash.clone())).await;
    match user.filter(|_| ok) {
        None => {
            db.write(move |conn| Box::pin(async move { count_failure(conn, &keys, now).await }))
                .await?;
            Ok(SignIn::Refused)
        }
        Some(user) => {
            let user_id = user.id;
            let session = db
                .write(move |conn| {
                    Box::pin(async move {
                        store::clear_login_failures(conn, &keys.account).await?;
                        open_session(conn, Some(user_id), now).await
                    })
                })
                .await?;
            Ok(SignIn::SignedIn { user_id, session })
        }
    }
}

async fn count_failure(conn: &mut dyn Conn, keys: &ThrottleKeys, now: i64) -> Result<(), DbError> {
    for key in keys.both() {
        store::record_login_failure(conn, key, now).await?;
    }
    Ok(())
}

/// Whether the user consented before to all that the request asks (no consent page then).
pub async fn consented(
    conn: &mut dyn Conn,
    user_id: i64,
    authorization: &Authorization,
) -> Result<bool, DbError> {
    let granted = store::consent(conn, user_id, &authorization.client.id).await?;
    Ok(session::consent_covers(
        granted.as_deref(),
        &authorization.scopes,
    ))
}

/// The user allows the request: remembers the consent if asked to, and issues a code
/// (returned raw, for the redirect).
pub async fn allow(
    conn: &mut dyn Conn,
    authorization: &Authorization,
    user_id: i64,
    remember: bool,
    now: i64,
) -> Result<String, DbError> {
    if remember {
        let scope = authorization.scopes.to_string();
        store::grant_consent(conn, user_id, &authorization.client.id, &scope, now).await?;
    }
    super::authorization::issue_code(conn, authorization, user_id, now).await
}
