//! Saved-search alerts: the queue of ads that are news to a search (filled by the trigger
//! that indexes an ad, migration 0060, and by [`queue`] for an ad's first image), the
//! matches found for each alerting saved search, and the lease on mailing them.

use crate::domain::search::saved::Alert;
use crate::params;

use super::record::record;
use super::{Conn, DbError, Record, Value, numbered};

/// Takes up to `limit` queued ads, oldest first, out of the queue (each ad once, however
/// often it was queued). On PostgreSQL a second replica taking at the same time waits for
/// the first one's transaction and finds those rows gone.
pub async fn take_queued(conn: &mut dyn Conn, limit: i64) -> Result<Vec<i64>, DbError> {
    let mut numbers: Vec<i64> = conn
        .column(
            "DELETE FROM alert_queue WHERE queued_id IN \
             (SELECT queued_id FROM alert_queue ORDER BY queued_id LIMIT $1) \
             RETURNING item_number",
            params![limit],
        )
        .await?;
    numbers.sort_unstable();
    numbers.dedup();
    Ok(numbers)
}

/// Makes what the calling transaction puts into search from here on no news to saved
/// searches: its ads are not queued (migration 0053) until [`resume_queueing`], which the
/// same transaction must call before it commits. For a re-index, which changes no ad.
pub async fn pause_queueing(conn: &mut dyn Conn) -> Result<(), DbError> {
    conn.run("INSERT INTO search_reindexing (held) VALUES (1)", params![])
        .await
}

/// Ends [`pause_queueing`]. Other transactions never see the row it deletes, so it deletes
/// only the calling transaction's own.
pub async fn resume_queueing(conn: &mut dyn Conn) -> Result<(), DbError> {
    conn.run("DELETE FROM search_reindexing", params![]).await
}

record! {
    /// A saved search that asks for alerts, as the alert worker reads it.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Alerting {
        pub id: i64 = "saved_search_id",
        pub user_id: i64,
        pub request: String,
        pub alert: Alert,
        pub created_at: i64,
        pub alerted_at: Option<i64>,
    }
}

/// Every saved search that asks for alerts, held (shared, on PostgreSQL) until the
/// caller's transaction ends: a replacement of one waits, so it cannot change the request
/// between this read and the matches the caller records for it.
pub async fn alerting(conn: &mut dyn Conn) -> Result<Vec<Alerting>, DbError> {
    let share = match conn.backend() {
        super::Backend::Postgres => " FOR SHARE",
        super::Backend::Sqlite => "",
    };
    conn.records(
        &format!(
            "SELECT {} FROM saved_searches WHERE alert <> 'none' ORDER BY saved_search_id{share}",
            Alerting::COLUMNS
        ),
        params![],
    )
    .await
}

/// Records that ads `numbers` match saved search `id` (an ad found before stays as it was);
/// returns how many are new.
pub async fn add_matches(
    conn: &mut dyn Conn,
    id: i64,
    numbers: &[i64],
    now: i64,
) -> Result<u64, DbError> {
    let mut added = 0;
    for number in numbers {
        added += conn
            .execute(
                "INSERT INTO saved_search_matches (saved_search_id, item_number, matched_at) \
             VALUES ($1, $2, $3) ON CONFLICT (saved_search_id, item_number) DO NOTHING",
                params![id, *number, now],
            )
            .await?;
    }
    Ok(added)
}

/// Queues ad `number` for the alert worker, if it is in search and some saved search asks
/// for alerts (the triggers queue what changes on the ad's own row; this is for what
/// changes beside it: its first image, which `withImages` looks at).
pub async fn queue(conn: &mut dyn Conn, number: i64) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO alert_queue (item_number) SELECT $1 \
         WHERE EXISTS (SELECT 1 FROM saved_searches WHERE alert <> 'none') \
           AND EXISTS (SELECT 1 FROM search_docs WHERE item_number = $1)",
        params![number],
    )
    .await
}

/// Forgets every match of saved search `id` (its request changed: they are no news of the
/// new one), and ends the lease of a mail being sent of them, so that once sent it marks
/// nothing (`mailed`): a match of the new request with the same ad is not its to mark.
pub async fn forget_matches(conn: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM saved_search_matches WHERE saved_search_id = $1",
        params![id],
    )
    .await?;
    conn.run(
        "UPDATE saved_searches SET alert_lease_until = 0 WHERE saved_search_id = $1",
        params![id],
    )
    .await
}

/// Takes the lease on mailing the saved searches with unmailed matches whose mail is due at
/// `now`: an immediate alert's at once, a daily digest's a day after the last one (or after
/// the search was saved). Returns them; the lease runs until `until`. On PostgreSQL a
/// search that another replica is claiming at this moment is passed over.
pub async fn claim_due(
    conn: &mut dyn Conn,
    now: i64,
    until: i64,
    limit: i64,
) -> Result<Vec<Alerting>, DbError> {
    conn.records(
        &format!(
            "UPDATE saved_searches SET alert_lease_until = $2 WHERE saved_search_id IN \
             (SELECT s.saved_search_id FROM saved_searches s \
              WHERE s.alert <> 'none' AND s.alert_lease_until <= $1 \
                AND (s.alert = 'immediate' OR COALESCE(s.alerted_at, s.created_at) <= $1 - 86400) \
                AND EXISTS (SELECT 1 FROM saved_search_matches m \
                            WHERE m.saved_search_id = s.saved_search_id AND m.mailed_at IS NULL) \
              ORDER BY s.saved_search_id LIMIT $3{}) \
             AND alert_lease_until <= $1 \
             RETURNING {}",
            conn.skip_locked(),
            Alerting::COLUMNS
        ),
        params![now, until, limit],
    )
    .await
}

/// The ads matched for saved search `id` and not mailed yet, oldest match first.
pub async fn unmailed(conn: &mut dyn Conn, id: i64) -> Result<Vec<i64>, DbError> {
    conn.column(
        "SELECT item_number FROM saved_search_matches \
         WHERE saved_search_id = $1 AND mailed_at IS NULL ORDER BY matched_at, item_number",
        params![id],
    )
    .await
}

/// Gives up the unmailed matches of saved search `id` made before `before` (marked mailed
/// at `now`, though no mail went); returns how many.
pub async fn give_up_before(
    conn: &mut dyn Conn,
    id: i64,
    before: i64,
    now: i64,
) -> Result<u64, DbError> {
    conn.execute(
        "UPDATE saved_search_matches SET mailed_at = $3 \
         WHERE saved_search_id = $1 AND mailed_at IS NULL AND matched_at < $2",
        params![id, before, now],
    )
    .await
}

/// How many item numbers one statement names at most: a search may have gathered tens of
/// thousands of matches, past what a statement may bind (32,766 parameters on SQLite,
/// 65,535 on PostgreSQL).
pub const NUMBERS_PER_STATEMENT: usize = 500;

/// Marks saved search `id` alerted at `now`, its lease (the one ending at `lease`) given
/// back, and its matches `numbers` mailed then (in statements of
/// [`NUMBERS_PER_STATEMENT`]). The search first, as its deletion holds it before its
/// matches go with it: the other order deadlocked with a deletion at that moment on
/// PostgreSQL. A search deleted meanwhile has nothing to mark, and one whose lease ran out
/// and was taken by another sender is left to that sender: giving its lease back would let
/// a third send the same mail.
pub async fn mailed(
    conn: &mut dyn Conn,
    id: i64,
    lease: i64,
    numbers: &[i64],
    now: i64,
) -> Result<(), DbError> {
    let marked = conn
        .execute(
            "UPDATE saved_searches SET alerted_at = $2, alert_lease_until = 0 \
             WHERE saved_search_id = $1 AND alert_lease_until = $3",
            params![id, now, lease],
        )
        .await?;
    if marked == 0 {
        return Ok(());
    }
    for some in numbers.chunks(NUMBERS_PER_STATEMENT) {
        let mut values = vec![Value::Int(id), Value::Int(now)];
        values.extend(some.iter().map(|n| Value::Int(*n)));
        conn.run(
            &format!(
                "UPDATE saved_search_matches SET mailed_at = $2 \
                 WHERE saved_search_id = $1 AND item_number IN ({})",
                numbered(3, some.len())
            ),
            &values,
        )
        .await?;
    }
    Ok(())
}

/// How many ads wait in the queue (for tests and the seed).
pub async fn queued(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COUNT(*) AS n FROM alert_queue", params![])
        .await?
        .get("n")
}
