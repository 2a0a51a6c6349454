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

/// The session whose cookie is `id`: the stored one while it is live, else a visitor's
/// (`oauth::session::visitor_session`, not stored).
pub async fn session(conn: &mut dyn Conn, id: &str, now: i64) -> Result<BrowserSession, DbError> {
    let stored = store::session(conn, &secret::hash(id)).await?;
    Ok(stored
        .filter(|record| session::session_live(record, now))
        .unwrap_or_else(|| session::visitor_session(id, now)))
}

/// A new visitor's session: a fresh cookie, nothing stored.
pub fn new_visitor(now: i64) -> Session {
    let id = secret::new_token();
    let record = session::visitor_session(&id, now);
    Session { id, record }
}

/// Opens a new session signed in as `user_id`: the first one stored for the browser.
async fn open_session(conn: &mut dyn Conn, user_id: i64, now: i64) -> Result<Session, DbError> {
    let id = secret::new_token();
    let record = BrowserSession {
        csrf_token: secret::new_token(),
        user_id: Some(user_id),
        expires_at: now + session::SESSION_SECONDS,
    };
    let hash = secret::hash(&id);
    store::insert_session(conn, &hash, &record.csrf_token, user_id, record.expires_at).await?;
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

/// Signs in with an address and password from `address`: counts the attempt, checks the
/// throttle, then the password (slowed down after a few failures), and leaves the attempt
/// counted as a failure or takes it back. Runs in several steps, as the password check must
/// not hold a transaction.
pub async fn sign_in(
    db: &Db,
    username: &str,
    password: String,
    address: &str,
    now: i64,
) -> Result<SignIn, DbError> {
    let keys = session::throttle_keys(username, address);
    // Counted first, then the count read in a transaction of its own: of attempts made at
    // the same moment, the one that counts last sees them all, so no more than the lockout
    // allows are checked, however many run in parallel (on one replica or several).
    let attempt = secret::new_token();
    let (recorded, attempt_id) = (keys.clone(), attempt.clone());
    db.write(move |conn| {
        Box::pin(async move {
            for key in recorded.both() {
                store::record_login_attempt(conn, key, &attempt_id, now).await?;
            }
            Ok::<_, DbError>(())
        })
    })
    .await?;
    let (counted, since) = (keys.clone(), now - session::THROTTLE_WINDOW);
    let counts = db
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
    // The failures before this attempt: all but its own.
    match session::throttle(counts - 1) {
        Throttle::Locked { retry_after } => {
            // Not counted: an account under attack is free again a window after the
            // attempts that locked it, however long the attack goes on.
            take_back(db, keys, attempt).await?;
            return Ok(SignIn::Locked { retry_after });
        }
        Throttle::Slow(pause) => tokio::time::sleep(pause).await,
        Throttle::Allow => {}
    }
    // Text that cannot be an address names no user.
    let lookup = Email::typed(username);
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
    let Some(user) = user.filter(|_| ok) else {
        // The attempt stays counted: it is the failure.
        return Ok(SignIn::Refused);
    };
    let user_id = user.id;
    let session = db
        .write(move |conn| {
            Box::pin(async move {
                take_back_in(conn, &keys, &attempt).await?;
                store::clear_login_failures(conn, &keys.account).await?;
                open_session(conn, user_id, now).await
            })
        })
        .await?;
    Ok(SignIn::SignedIn { user_id, session })
}

async fn take_back(db: &Db, keys: ThrottleKeys, attempt: String) -> Result<(), DbError> {
    db.write(move |conn| Box::pin(async move { take_back_in(conn, &keys, &attempt).await }))
        .await
}

/// Takes back what an attempt counted: it was no failure.
async fn take_back_in(
    conn: &mut dyn Conn,
    keys: &ThrottleKeys,
    attempt: &str,
) -> Result<(), DbError> {
    for key in keys.both() {
        store::take_back_attempt(conn, key, attempt).await?;
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
