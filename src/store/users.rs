//! User accounts.

use crate::domain::locale::Locale;
use crate::domain::user::{DealerPackage, Email, UserStatus};
use crate::params;

use super::record::record;
use super::{Conn, DbError, Record, Value};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct User {
        pub id: i64 = "user_id",
        pub email: Email,
        /// Empty while the owner has not chosen a password (see `usecase::accounts`).
        pub password_hash: String,
        pub name: String,
        pub postcode: Option<String>,
        pub phone_number: Option<String>,
        pub locale: Locale,
        pub status: UserStatus,
        pub dealer_package: DealerPackage,
        pub confirm_date: Option<i64>,
    }
}

impl User {
    pub fn is_confirmed(&self) -> bool {
        self.status == UserStatus::Confirmed
    }
}

pub struct NewUser<'a> {
    pub email: &'a Email,
    pub password_hash: &'a str,
    pub name: &'a str,
    pub postcode: Option<&'a str>,
    pub phone_number: Option<&'a str>,
    pub locale: Locale,
    pub status: UserStatus,
}

/// Inserts a user (confirmed at `now` if it starts confirmed); a taken e-mail address is
/// `DbError::UniqueViolation`.
pub async fn insert(conn: &mut dyn Conn, user: &NewUser<'_>, now: i64) -> Result<i64, DbError> {
    conn.query_one(
        "INSERT INTO users (email, password_hash, name, postcode, phone_number, locale, status, \
             confirm_date, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING user_id",
        params![
            user.email.as_str(),
            user.password_hash,
            user.name,
            user.postcode,
            user.phone_number,
            user.locale.as_str(),
            user.status.as_str(),
            (user.status == UserStatus::Confirmed).then_some(now),
            now
        ],
    )
    .await?
    .get("user_id")
}

pub async fn get(conn: &mut dyn Conn, id: i64) -> Result<Option<User>, DbError> {
    conn.record(
        &format!("SELECT {} FROM users WHERE user_id = $1", User::COLUMNS),
        params![id],
    )
    .await
}

pub async fn by_email(conn: &mut dyn Conn, email: &Email) -> Result<Option<User>, DbError> {
    conn.record(
        &format!("SELECT {} FROM users WHERE email = $1", User::COLUMNS),
        params![email.as_str()],
    )
    .await
}

pub async fn count(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COUNT(*) AS n FROM users", &[])
        .await?
        .get("n")
}

/// Holds user `id`'s row until the transaction ends (`lock_row`), so that a rule
/// over all of a user's rows (a limit per user) is checked by one transaction at a time.
pub async fn lock(conn: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    conn.lock_row("SELECT user_id FROM users WHERE user_id = $1", id)
        .await
}

pub async fn confirm(conn: &mut dyn Conn, id: i64, now: i64) -> Result<(), DbError> {
    conn.run(
        "UPDATE users SET status = $3, confirm_date = COALESCE(confirm_date, $2) \
         WHERE user_id = $1",
        params![id, now, UserStatus::Confirmed.as_str()],
    )
    .await
}

/// Changes the e-mail address; a taken address is `DbError::UniqueViolation`.
pub async fn set_email(conn: &mut dyn Conn, id: i64, email: &Email) -> Result<(), DbError> {
    conn.run(
        "UPDATE users SET email = $2 WHERE user_id = $1",
        params![id, email.as_str()],
    )
    .await
}

pub async fn set_password(
    conn: &mut dyn Conn,
    id: i64,
    password_hash: &str,
) -> Result<(), DbError> {
    conn.run(
        "UPDATE users SET password_hash = $2 WHERE user_id = $1",
        params![id, password_hash],
    )
    .await
}

/// The brands of a user, in order.
pub async fn brands(conn: &mut dyn Conn, id: i64) -> Result<Vec<String>, DbError> {
    conn.column(
        "SELECT brand FROM user_brands WHERE user_id = $1 ORDER BY position",
        params![id],
    )
    .await
}

/// Replaces the brands of a user.
/// Holds the user's row first: two replacements at once would otherwise each delete what
/// they see and insert the same positions.
pub async fn set_brands(conn: &mut dyn Conn, id: i64, brands: &[String]) -> Result<(), DbError> {
    lock(conn, id).await?;
    conn.execute("DELETE FROM user_brands WHERE user_id = $1", params![id])
        .await?;
    for (position, brand) in brands.iter().enumerate() {
        conn.execute(
            "INSERT INTO user_brands (user_id, position, brand) VALUES ($1, $2, $3)",
            params![id, position as i64, brand],
        )
        .await?;
    }
    Ok(())
}

/// The highest user id so far (0 without users).
pub async fn max_id(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COALESCE(MAX(user_id), 0) AS n FROM users", &[])
        .await?
        .get("n")
}

/// Inserts many users (`souk seed`), a few hundred per statement; returns their ids in
/// ascending order.
pub async fn insert_many(
    conn: &mut dyn Conn,
    users: &[NewUser<'_>],
    now: i64,
) -> Result<Vec<i64>, DbError> {
    const COLUMNS: usize = 9;
    let mut ids = Vec::with_capacity(users.len());
    for chunk in users.chunks(200) {
        let values: Vec<Value> = chunk
            .iter()
            .flat_map(|user| {
                [
                    Value::from(user.email.as_str()),
                    Value::from(user.password_hash),
                    Value::from(user.name),
                    Value::from(user.postcode),
                    Value::from(user.phone_number),
                    Value::from(user.locale.as_str()),
                    Value::from(user.status.as_str()),
                    Value::from((user.status == UserStatus::Confirmed).then_some(now)),
                    Value::Int(now),
                ]
            })
            .collect();
        let rows = conn
            .query(
                &format!(
                    "INSERT INTO users (email, password_hash, name, postcode, phone_number,                      locale, status, confirm_date, created_at) VALUES {} RETURNING user_id",
                    super::placeholders(chunk.len(), COLUMNS)
                ),
                &values,
            )
            .await?;
        for row in rows {
            ids.push(row.get("user_id")?);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}
