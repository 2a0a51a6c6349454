//! Webhooks (migration 0056): each client's hooks with the event types they want, and the
//! deliveries to make, taken one at a time by a sender under a lease ([`DELIVERIES`]).

use crate::params;

use super::leased::{Failure, LeasedQueue, leased};
use super::record::record;
use super::{Conn, DbError, Record, Value, placeholders};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct HookRecord {
        pub id: i64 = "hook_id",
        pub client_id: String,
        pub url: String,
        pub secret: String,
        pub active: bool,
        pub created_at: i64,
        pub updated_at: i64,
        ..
        /// The event types it wants, as stored (`domain::hook::EventType`).
        pub events: Vec<String>,
        ..
        /// The deliveries it still waits for: read by `usecase::hooks` for a
        /// representation ([`backlog`]), empty otherwise.
        pub backlog: Backlog,
    }
}

/// The deliveries a hook still waits for (not yet taken by its receiver, nor given up).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub waiting: i64,
    /// When the oldest of them was queued.
    pub oldest: Option<i64>,
    /// The latest failed attempt at one of them.
    pub last_failure: Option<Failure>,
}

record! {
    /// Where an active hook's deliveries go, and the key that signs them.
    #[derive(Clone, Debug)]
    pub struct Receiver {
        pub url: String,
        pub secret: String,
    }
}

/// What a hook is set to.
#[derive(Clone, Copy, Debug)]
pub struct HookWrite<'a> {
    pub url: &'a str,
    /// `None` in a replacement: the hook keeps its own (a new hook always has one).
    pub secret: Option<&'a str>,
    pub active: bool,
    pub events: &'a [&'a str],
}

/// Holds `client`'s row until the transaction ends, so that its hooks are counted by one
/// transaction at a time.
pub async fn lock_client(conn: &mut dyn Conn, client: &str) -> Result<(), DbError> {
    conn.lock_row("SELECT client_id FROM clients WHERE client_id = $1", client)
        .await
}

/// How many hooks `client` has.
pub async fn count(conn: &mut dyn Conn, client: &str) -> Result<i64, DbError> {
    conn.query_one(
        "SELECT COUNT(*) AS n FROM hooks WHERE client_id = $1",
        params![client],
    )
    .await?
    .get::<i64>("n")
}

pub async fn insert(
    conn: &mut dyn Conn,
    client: &str,
    hook: HookWrite<'_>,
    now: i64,
) -> Result<HookRecord, DbError> {
    let mut record: HookRecord = conn
        .record(
            &format!(
                "INSERT INTO hooks (client_id, url, secret, active, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $5) RETURNING {}",
                HookRecord::COLUMNS
            ),
            params![client, hook.url, hook.secret, hook.active, now],
        )
        .await?
        .ok_or(DbError::NotFound)?;
    set_events(conn, record.id, hook.events).await?;
    record.events = hook.events.iter().map(|e| (*e).to_owned()).collect();
    Ok(record)
}

/// Replaces hook `id`, if it is still there.
pub async fn replace(
    conn: &mut dyn Conn,
    id: i64,
    hook: HookWrite<'_>,
    now: i64,
) -> Result<Option<HookRecord>, DbError> {
    let replaced: Option<HookRecord> = conn
        .record(
            &format!(
                "UPDATE hooks SET url = $2, secret = COALESCE($3, secret), active = $4, updated_at = $5 \
                 WHERE hook_id = $1 RETURNING {}",
                HookRecord::COLUMNS
            ),
            params![id, hook.url, hook.secret, hook.active, now],
        )
        .await?;
    let Some(mut record) = replaced else {
        return Ok(None);
    };
    if !hook.active {
        // Made inactive, it gets nothing more: not even what waits for a retry, which
        // would go out if the hook were made active again before it fell due.
        conn.run(
            "DELETE FROM hook_deliveries WHERE hook_id = $1",
            params![id],
        )
        .await?;
    }
    conn.run("DELETE FROM hook_events WHERE hook_id = $1", params![id])
        .await?;
    set_events(conn, id, hook.events).await?;
    record.events = hook.events.iter().map(|e| (*e).to_owned()).collect();
    Ok(Some(record))
}

async fn set_events(conn: &mut dyn Conn, hook: i64, events: &[&str]) -> Result<(), DbError> {
    if events.is_empty() {
        return Ok(());
    }
    let mut values = Vec::with_capacity(events.len() * 2);
    for event in events {
        values.push(Value::from(hook));
        values.push(Value::from(*event));
    }
    conn.run(
        &format!(
            "INSERT INTO hook_events (hook_id, event_type) VALUES {}",
            placeholders(events.len(), 2)
        ),
        &values,
    )
    .await
}

/// Hook `id`, with its event types.
pub async fn get(conn: &mut dyn Conn, id: i64) -> Result<Option<HookRecord>, DbError> {
    let found: Option<HookRecord> = conn
        .record(
            &format!(
                "SELECT {} FROM hooks WHERE hook_id = $1",
                HookRecord::COLUMNS
            ),
            params![id],
        )
        .await?;
    let Some(mut hook) = found else {
        return Ok(None);
    };
    hook.events = conn
        .column(
            "SELECT event_type FROM hook_events WHERE hook_id = $1 ORDER BY event_type",
            params![id],
        )
        .await?;
    Ok(Some(hook))
}

/// What hook `id` still waits for: a count of its deliveries (through
/// `hook_deliveries_hook`), and the latest failure among them (`hook_deliveries_failed`).
pub async fn backlog(conn: &mut dyn Conn, id: i64) -> Result<Backlog, DbError> {
    let mut row = conn
        .query_one(
            "SELECT w.waiting, w.oldest, f.last_error, f.failed_at \
             FROM (SELECT COUNT(*) AS waiting, MIN(created_at) AS oldest \
                   FROM hook_deliveries WHERE hook_id = $1) w \
             LEFT JOIN (SELECT last_error, failed_at FROM hook_deliveries \
                        WHERE hook_id = $1 AND failed_at IS NOT NULL \
                        ORDER BY failed_at DESC, delivery_id DESC LIMIT 1) f ON 1 = 1",
            params![id],
        )
        .await?;
    let (waiting, oldest) = (row.take()?, row.take()?);
    let (error, at): (Option<String>, Option<i64>) = (row.take()?, row.take()?);
    Ok(Backlog {
        waiting,
        oldest,
        last_failure: error.zip(at).map(|(error, at)| Failure { error, at }),
    })
}

/// Where hook `id` gets its events of type `event_type`, if it is there, active and still
/// wants them (a replacement may have taken the type out since the event was queued).
pub async fn receiver(
    conn: &mut dyn Conn,
    id: i64,
    event_type: &str,
) -> Result<Option<Receiver>, DbError> {
    conn.record(
        &format!(
            "SELECT {} FROM hooks WHERE hook_id = $1 AND active AND EXISTS \
             (SELECT 1 FROM hook_events w WHERE w.hook_id = $1 AND w.event_type = $2)",
            Receiver::COLUMNS
        ),
        params![id, event_type],
    )
    .await
}

/// The hooks of `client`, oldest first, with their event types.
pub async fn of_client(conn: &mut dyn Conn, client: &str) -> Result<Vec<HookRecord>, DbError> {
    let mut hooks: Vec<HookRecord> = conn
        .records(
            &format!(
                "SELECT {} FROM hooks WHERE client_id = $1 ORDER BY hook_id",
                HookRecord::COLUMNS
            ),
            params![client],
        )
        .await?;
    let rows = conn
        .query(
            "SELECT e.hook_id, e.event_type FROM hook_events e \
             JOIN hooks h ON h.hook_id = e.hook_id \
             WHERE h.client_id = $1 ORDER BY e.hook_id, e.event_type",
            params![client],
        )
        .await?;
    for mut row in rows {
        let (hook, event): (i64, String) = (row.take()?, row.take()?);
        if let Some(found) = hooks.iter_mut().find(|h| h.id == hook) {
            found.events.push(event);
        }
    }
    Ok(hooks)
}

/// Deletes hook `id` and the deliveries it was still waiting for (a delivery queued by a
/// change that commits after this is dropped when taken: its hook is gone).
pub async fn delete(conn: &mut dyn Conn, id: i64) -> Result<bool, DbError> {
    conn.run(
        "DELETE FROM hook_deliveries WHERE hook_id = $1",
        params![id],
    )
    .await?;
    Ok(conn
        .execute("DELETE FROM hooks WHERE hook_id = $1", params![id])
        .await?
        > 0)
}

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Delivery {
        pub id: i64 = "delivery_id",
        pub hook_id: i64,
        pub event_id: i64,
        /// How many times a sender has taken it, this time included: it also names this
        /// taking (`store::leased`).
        pub attempts: i64,
        pub created_at: i64,
    }
}

/// The queue its senders take deliveries from.
pub static DELIVERIES: LeasedQueue<Delivery> = LeasedQueue::new("hook_deliveries", "delivery_id");

leased!(Delivery);

#[cfg(test)]
mod tests {
    use super::DELIVERIES;
    use crate::store::DbError;

    /// An idle sender's look for work passes over what a take would (the deliveries of the
    /// hooks that hold their share of the senders): when only theirs are due, it finds
    /// nothing, and the sender stays with a read.
    #[tokio::test]
    async fn a_look_for_work_passes_over_what_a_take_would() {
        let (db, _dir) = crate::store::migrations::migrated_sqlite().await;
        let (found, taken) = db
            .write::<_, DbError, _>(|conn| {
                Box::pin(async move {
                    conn.execute_batch(
                        "INSERT INTO events (event_id, event_type, event_data, resource_rel,
                                             resource_path, resource, created_at)
                             VALUES (1, 'advertisement.created', '{}', 'svc:advertisement',
                                     '/v1/advertisements/m1', '{}', 0);
                         INSERT INTO hook_deliveries (hook_id, event_id, created_at, due_at)
                             VALUES (7, 1, 0, 10), (8, 1, 0, 10), (9, 1, 0, 20);",
                    )
                    .await?;
                    let mut found = Vec::new();
                    for passed in [&[][..], &[7], &[7, 8], &[8, 7]] {
                        let passing = Some(("hook_id", passed));
                        found.push(DELIVERIES.any_due(conn, 10, passing).await?);
                    }
                    let taken = DELIVERIES
                        .take(conn, 10, 130, Some(("hook_id", &[7, 8])))
                        .await?;
                    Ok((found, taken.map(|delivery| delivery.hook_id)))
                })
            })
            .await
            .unwrap();
        assert_eq!(found, [true, true, false, false], "hook 9 is not due yet");
        assert_eq!(taken, None);
    }
}
