//! User accounts.

use crate::params;

use super::{Conn, DbError, Row};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub email: String,
    pub password_hash: String,
    pub name: String,
    pub postcode: Option<String>,
    pub phone_number: Option<String>,
    pub locale: String,
    pub confirmed: bool,
    pub dealer_package: String,
    pub confirm_date: Option<i64>,
}

pub struct NewUser<'a> {
    pub email: &'a str,
    pub password_hash: &'a str,
    pub name: &'a str,
    pub postcode: Option<&'a str>,
    pub phone_number: Option<&'a str>,
    pub locale: &'a str,
    pub confirmed: bool,
}

const COLUMNS: &str = "user_id, email, password_hash, name, postcode, phone_number, locale, \
                       status, dealer_package, confirm_date";

/// Inserts a user; a taken e-mail address is `DbError::UniqueViolation`.
pub async fn insert(conn: &mut dyn Conn, user: &NewUser<'_>, now: i64) -> Result<i64, DbError> {
    conn.query_one(
        "INSERT INTO users (email, password_hash, name, postcode, phone_number, locale, status, \
             confirm_date, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING user_id",
        params![
            user.email.to_lowercase(),
            user.password_hash,
            user.name,
            user.postcode,
            user.phone_number,
            user.locale,
            if user.confirmed {
                "confirmed"
            } else {
                "unconfirmed"
            },
            user.confirmed.then_some(now),
            now
        ],
    )
    .await?
    .get("user_id")
}

pub async fn get(conn: &mut dyn Conn, id: i64) -> Result<Option<User>, DbError> {
    conn.query_opt(
        &format!("SELECT {COLUMNS} FROM users WHERE user_id = $1"),
        params![id],
    )
    .await?
    .as_ref()
    .map(from_row)
    .transpose()
}

pub async fn by_email(conn: &mut dyn Conn, email: &str) -> Result<Option<User>, DbError> {
    // No stored address holds a control character (`valid_email`); a NUL would not even
    // reach the query on PostgreSQL, so such an address is simply unknown.
    if !crate::domain::text::is_one_line(email) {
        return Ok(None);
    }
    conn.query_opt(
        &format!("SELECT {COLUMNS} FROM users WHERE email = $1"),
        params![email.trim().to_lowercase()],
    )
    .await?
    .as_ref()
    .map(from_row)
    .transpose()
}

pub async fn count(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COUNT(*) AS n FROM users", &[])
        .await?
        .get("n")
}

pub async fn confirm(conn: &mut dyn Conn, id: i64, now: i64) -> Result<(), DbError> {
    conn.execute(
        "UPDATE users SET status = 'confirmed', confirm_date = COALESCE(confirm_date, $2) \
         WHERE user_id = $1",
        params![id, now],
    )
    .await?;
    Ok(())
}

/// Changes the e-mail address; a taken address is `DbError::UniqueViolation`.
pub async fn set_email(conn: &mut dyn Conn, id: i64, email: &str) -> Result<(), DbError> {
    conn.execute(
        "UPDATE users SET email = $2 WHERE user_id = $1",
        params![id, email.to_lowercase()],
    )
    .await?;
    Ok(())
}

fn from_row(row: &Row) -> Result<User, DbError> {
    Ok(User {
        id: row.get("user_id")?,
        email: row.get("email")?,
        password_hash: row.get("password_hash")?,
        name: row.get("name")?,
        postcode: row.get("postcode")?,
        phone_number: row.get("phone_number")?,
        locale: row.get("locale")?,
        confirmed: row.get::<String>("status")? == "confirmed",
        dealer_package: row.get("dealer_package")?,
        confirm_date: row.get("confirm_date")?,
    })
}

pub async fn set_password(
    conn: &mut dyn Conn,
    id: i64,
    password_hash: &str,
) -> Result<(), DbError> {
    conn.execute(
        "UPDATE users SET password_hash = $2 WHERE user_id = $1",
        params![id, password_hash],
    )
    .await?;
    Ok(())
}

/// The brands of a user, in order.
pub async fn brands(conn: &mut dyn Conn, id: i64) -> Result<Vec<String>, DbError> {
    conn.query(
        "SELECT brand FROM user_brands WHERE user_id = $1 ORDER BY position",
        params![id],
    )
    .await?
    .iter()
    .map(|row| row.get("brand"))
    .collect()
}

/// Replaces the brands of a user.
pub async fn set_brands(conn: &mut dyn Conn, id: i64, brands: &[String]) -> Result<(), DbError> {
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
