//! Saved searches: each a user's search parameters (a query string) and alert choice.

use crate::domain::search::saved::{Alert, MAX_PER_USER};
use crate::params;

use super::record::record;
use super::{Conn, DbError, Record};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct SavedSearch {
        pub id: i64 = "saved_search_id",
        pub user_id: i64,
        /// The parameters of `GET /v1/search`, as a query string.
        pub request: String,
        pub alert: Alert,
        pub created_at: i64,
        pub updated_at: i64,
    }
}

/// Stores a saved search of `user`, unless they have [`MAX_PER_USER`] already (then `None`).
/// The bound holds under concurrent saves only when the caller holds the user's lock
/// ([`super::users::lock`]): otherwise two transactions on PostgreSQL may count the same rows.
pub async fn insert(
    conn: &mut dyn Conn,
    user: i64,
    request: &str,
    alert: Alert,
    now: i64,
) -> Result<Option<SavedSearch>, DbError> {
    conn.record(
        &format!(
            "INSERT INTO saved_searches (user_id, request, alert, created_at, updated_at) \
             SELECT $1, $2, $3, $4, $4 \
             WHERE (SELECT count(*) FROM saved_searches WHERE user_id = $1) < $5 \
             RETURNING {}",
            SavedSearch::COLUMNS
        ),
        params![user, request, alert.as_str(), now, MAX_PER_USER],
    )
    .await
}

pub async fn get(conn: &mut dyn Conn, id: i64) -> Result<Option<SavedSearch>, DbError> {
    conn.record(
        &format!(
            "SELECT {} FROM saved_searches WHERE saved_search_id = $1",
            SavedSearch::COLUMNS
        ),
        params![id],
    )
    .await
}

/// The saved searches of `user`, newest first.
pub async fn of_user(conn: &mut dyn Conn, user: i64) -> Result<Vec<SavedSearch>, DbError> {
    conn.records(
        &format!(
            "SELECT {} FROM saved_searches WHERE user_id = $1 ORDER BY saved_search_id DESC",
            SavedSearch::COLUMNS
        ),
        params![user],
    )
    .await
}

/// Holds saved search `id`'s row until the transaction ends (see [`super::users::lock`]).
pub async fn lock(conn: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    conn.lock_row(
        "SELECT saved_search_id FROM saved_searches WHERE saved_search_id = $1",
        id,
    )
    .await
}

/// Replaces the parameters and alert choice of saved search `id`.
pub async fn replace(
    conn: &mut dyn Conn,
    id: i64,
    request: &str,
    alert: Alert,
    now: i64,
) -> Result<Option<SavedSearch>, DbError> {
    conn.record(
        &format!(
            "UPDATE saved_searches SET request = $2, alert = $3, updated_at = $4 \
             WHERE saved_search_id = $1 RETURNING {}",
            SavedSearch::COLUMNS
        ),
        params![id, request, alert.as_str(), now],
    )
    .await
}

pub async fn delete(conn: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM saved_searches WHERE saved_search_id = $1",
        params![id],
    )
    .await
}
