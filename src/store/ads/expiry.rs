//! The expiry sweep's write: running ads past their close date written down as expired.

use crate::domain::advertisement::AdStatus;
use crate::params;

use super::{AdRecord, by_numbers, running_states};
use crate::store::{Conn, DbError, Value};

/// Writes down the expiry of online and paused ads whose `closeDate` has passed, at most
/// `limit` of them; returns the ads as they were before (running, for the events that
/// tell of it). (Reads already treat them as expired; see `effective_status`.) The ads are
/// held in item order, as a payment and a re-index hold them: the update alone would take
/// them in the order of the index it walks, by close date, and deadlock with those on
/// PostgreSQL.
pub async fn expire_due(
    conn: &mut dyn Conn,
    now: i64,
    limit: i64,
) -> Result<Vec<AdRecord>, DbError> {
    let due = format!("status IN ({}) AND close_date <= $1", running_states());
    let numbers: Vec<i64> = conn
        .column(
            &format!(
                "SELECT item_number FROM advertisements WHERE {due} \
                 ORDER BY item_number LIMIT $2{}",
                conn.hold_rows()
            ),
            params![now, limit],
        )
        .await?;
    if numbers.is_empty() {
        return Ok(Vec::new());
    }
    let before = by_numbers(conn, &numbers).await?;
    let mut values: Vec<Value> = vec![Value::from(now)];
    values.extend(numbers.iter().map(|n| Value::Int(*n)));
    let expired: Vec<i64> = conn
        .column(
            &format!(
                "UPDATE advertisements SET status = '{}', version = version + 1, updated_at = $1 \
                 WHERE item_number IN ({}) AND {due} RETURNING item_number",
                AdStatus::Expired.as_str(),
                crate::store::numbered(2, numbers.len())
            ),
            &values,
        )
        .await?;
    // Only those the update changed: an ad changed since the read is told of by its change.
    Ok(before
        .into_iter()
        .filter(|ad| expired.contains(&ad.number))
        .collect())
}
