//! Events (migration 0056): what changed, written in the transaction of the change, and the
//! clients each is for.

use crate::params;

use super::record::record;
use super::{Backend, Conn, DbError, Record, Value, placeholders};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct EventRecord in "e" {
        pub id: i64 = "e.event_id",
        pub event_type: String,
        /// JSON: what changed.
        pub event_data: String,
        /// The rel under which the resource is embedded (`domain`'s name, without prefix).
        pub resource_rel: String,
        /// The resource's path under the version prefix (`/advertisements/m12`).
        pub resource_path: String,
        /// JSON: the resource's members when the event happened.
        pub resource: String,
        pub created_at: i64,
    }
}

/// An event to write.
#[derive(Clone, Debug)]
pub struct NewEvent<'a> {
    pub event_type: &'a str,
    pub event_data: String,
    pub resource_rel: &'a str,
    pub resource_path: String,
    pub resource: String,
}

/// Writes `event` for the clients it is for, and queues a delivery to each of their active
/// hooks that wants its type; returns its id, or `None` when it is for no one (then nothing
/// is written).
///
/// The clients it is for: those that one of `users` has granted access (a live refresh
/// token: every user token comes with one, and revoking either ends the family), and
/// `acting`, the client that made the change for itself. They are read through the partial
/// index of live refresh tokens (migration 0056): a few rows per user and client.
///
/// On PostgreSQL this is one statement (a data-modifying `WITH`), so that a change pays
/// one round trip for its event, not four; SQLite, in process, runs the four in turn.
pub async fn record(
    conn: &mut dyn Conn,
    event: &NewEvent<'_>,
    users: &[i64],
    acting: Option<&str>,
    now: i64,
) -> Result<Option<i64>, DbError> {
    let mut params: Vec<Value> = vec![
        Value::from(acting),
        Value::from(event.event_type),
        Value::from(event.event_data.as_str()),
        Value::from(event.resource_rel),
        Value::from(event.resource_path.as_str()),
        Value::from(event.resource.as_str()),
        Value::from(now),
    ];
    let listed = if users.is_empty() {
        // No user: a list that matches no one (an id is positive).
        "0".to_owned()
    } else {
        params.extend(users.iter().map(|user| Value::from(*user)));
        super::numbered(params.len() - users.len() + 1, users.len())
    };
    let recipients = format!(
        "SELECT client_id FROM refresh_tokens WHERE user_id IN ({listed}) AND state = 'live' \
         UNION \
         SELECT client_id FROM clients WHERE client_id = $1"
    );
    if conn.backend() == Backend::Postgres {
        let row = conn
            .query_opt(
                &format!(
                    "WITH recipients AS ({recipients}), \
                     event AS ( \
                       INSERT INTO events \
                       (event_type, event_data, resource_rel, resource_path, resource, created_at) \
                       SELECT $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint \
                       WHERE EXISTS (SELECT 1 FROM recipients) \
                       RETURNING event_id), \
                     recorded AS ( \
                       INSERT INTO event_recipients (client_id, event_id) \
                       SELECT r.client_id, e.event_id FROM recipients r CROSS JOIN event e), \
                     queued AS ( \
                       INSERT INTO hook_deliveries (hook_id, event_id, created_at, due_at) \
                       SELECT h.hook_id, e.event_id, $7::bigint, $7::bigint \
                       FROM event e CROSS JOIN recipients r \
                       JOIN hooks h ON h.client_id = r.client_id AND h.active \
                       JOIN hook_events w ON w.hook_id = h.hook_id AND w.event_type = $2::text) \
                     SELECT event_id FROM event"
                ),
                &params,
            )
            .await?;
        return row.map(|row| row.get::<i64>("event_id")).transpose();
    }
    let clients: Vec<String> = conn.column(&recipients, &params).await?;
    if clients.is_empty() {
        return Ok(None);
    }
    let id = insert(conn, event, &clients, now).await?;
    queue_deliveries(conn, id, event.event_type, now).await?;
    Ok(Some(id))
}

/// Queues a delivery of event `event` to every active hook of its recipients that wants
/// events of type `event_type` (SQLite's step; PostgreSQL's `queued` in [`record`]).
async fn queue_deliveries(
    conn: &mut dyn Conn,
    event: i64,
    event_type: &str,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO hook_deliveries (hook_id, event_id, created_at, due_at) \
         SELECT h.hook_id, $1, $3, $3 FROM hooks h \
         JOIN hook_events w ON w.hook_id = h.hook_id AND w.event_type = $2 \
         JOIN event_recipients r ON r.client_id = h.client_id AND r.event_id = $1 \
         WHERE h.active",
        params![event, event_type, now],
    )
    .await
}

/// Writes an event for `recipients` (not empty); returns its id (SQLite's step; PostgreSQL's
/// `event` and `recorded` in [`record`]).
async fn insert(
    conn: &mut dyn Conn,
    event: &NewEvent<'_>,
    recipients: &[String],
    now: i64,
) -> Result<i64, DbError> {
    let id = conn
        .query_one(
            "INSERT INTO events \
             (event_type, event_data, resource_rel, resource_path, resource, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING event_id",
            params![
                event.event_type,
                event.event_data.as_str(),
                event.resource_rel,
                event.resource_path.as_str(),
                event.resource.as_str(),
                now
            ],
        )
        .await?
        .get::<i64>("event_id")?;
    let mut values = Vec::with_capacity(recipients.len() * 2);
    for client in recipients {
        values.push(Value::from(client.as_str()));
        values.push(Value::from(id));
    }
    conn.run(
        &format!(
            "INSERT INTO event_recipients (client_id, event_id) VALUES {}",
            placeholders(recipients.len(), 2)
        ),
        &values,
    )
    .await?;
    Ok(id)
}

/// A page of the events for `client`, newest first, and how many there are.
pub async fn page(
    conn: &mut dyn Conn,
    client: &str,
    offset: i64,
    limit: i64,
) -> Result<(Vec<EventRecord>, i64), DbError> {
    let events = conn
        .records(
            &format!(
                "SELECT {} FROM events e \
                 JOIN event_recipients r ON r.event_id = e.event_id \
                 WHERE r.client_id = $1 ORDER BY e.event_id DESC LIMIT $2 OFFSET $3",
                EventRecord::COLUMNS
            ),
            params![client, limit, offset],
        )
        .await?;
    let total = conn
        .query_one(
            "SELECT COUNT(*) AS n FROM event_recipients WHERE client_id = $1",
            params![client],
        )
        .await?
        .get::<i64>("n")?;
    Ok((events, total))
}

/// Event `id`, if it is for `client`.
pub async fn get(
    conn: &mut dyn Conn,
    client: &str,
    id: i64,
) -> Result<Option<EventRecord>, DbError> {
    conn.record(
        &format!(
            "SELECT {} FROM events e \
             JOIN event_recipients r ON r.event_id = e.event_id \
             WHERE r.client_id = $1 AND e.event_id = $2",
            EventRecord::COLUMNS
        ),
        params![client, id],
    )
    .await
}

/// Event `id`, whoever it is for (a delivery's).
pub async fn by_id(conn: &mut dyn Conn, id: i64) -> Result<Option<EventRecord>, DbError> {
    conn.record(
        &format!(
            "SELECT {} FROM events e WHERE e.event_id = $1",
            EventRecord::COLUMNS
        ),
        params![id],
    )
    .await
}

/// Forgets at most `limit` of the events written before `before`, with their recipients and
/// deliveries; returns how many events went.
pub async fn forget_before(conn: &mut dyn Conn, before: i64, limit: i64) -> Result<u64, DbError> {
    conn.execute(
        "DELETE FROM events WHERE event_id IN \
         (SELECT event_id FROM events WHERE created_at < $1 LIMIT $2)",
        params![before, limit],
    )
    .await
}
