//! Transactions (sales) of an advertisement, upcall confirmations and statistics counters.

use crate::domain::sale::{Call, Sale, TransactionStatus};
use crate::params;

use super::record::record;
use super::{Conn, DbError, Record, Value};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Transaction {
        pub item_number: i64,
        pub id: i64 = "transaction_id",
        pub buyer_id: i64,
        pub amount: i64,
        pub shipping_costs: i64,
        pub status: TransactionStatus,
        pub created_at: i64,
    }
}

/// Stores a transaction with the ad's next number. The number comes from the ad's counter:
/// the `UPDATE` holds the ad's row lock until the commit, so concurrent sales of one ad
/// take their numbers in turn on PostgreSQL (on SQLite the one writer serializes them).
/// The counter also steps over numbers it did not hand out (a replica of the release before
/// it, during a rolling upgrade, numbers with MAX + 1); looking for them is one probe of the
/// primary key that normally finds nothing.
pub async fn insert(
    conn: &mut dyn Conn,
    item_number: i64,
    sale: &Sale,
    now: i64,
) -> Result<Transaction, DbError> {
    let id: i64 = conn
        .query_one(
            "UPDATE advertisements SET transaction_count = 1 + COALESCE( \
                 (SELECT MAX(t.transaction_id) FROM advertisement_transactions t \
                  WHERE t.item_number = advertisements.item_number \
                    AND t.transaction_id > advertisements.transaction_count), \
                 transaction_count) \
             WHERE item_number = $1 RETURNING transaction_count",
            params![item_number],
        )
        .await?
        .get("transaction_count")?;
    conn.record(
        &format!(
            "INSERT INTO advertisement_transactions (item_number, transaction_id, buyer_id, \
             amount, shipping_costs, status, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING {}",
            Transaction::COLUMNS
        ),
        params![
            item_number,
            id,
            sale.buyer_id,
            sale.amount,
            sale.shipping_costs,
            TransactionStatus::Created.as_str(),
            now
        ],
    )
    .await?
    .ok_or(DbError::NotFound)
}

/// The ad's transactions, newest first; with `buyer`, only that buyer's. (The cast types the
/// parameter as a user id: against the literal 0 alone, PostgreSQL took it for a 32-bit
/// integer, which a user id past 2^31 did not fit.)
pub async fn list(
    conn: &mut dyn Conn,
    item_number: i64,
    buyer: Option<i64>,
) -> Result<Vec<Transaction>, DbError> {
    conn.records(
        &format!(
            "SELECT {} FROM advertisement_transactions \
             WHERE item_number = $1 AND (CAST($2 AS BIGINT) = 0 OR buyer_id = $2) \
             ORDER BY transaction_id DESC",
            Transaction::COLUMNS
        ),
        params![item_number, buyer.unwrap_or(0)],
    )
    .await
}

pub async fn get(
    conn: &mut dyn Conn,
    item_number: i64,
    id: i64,
) -> Result<Option<Transaction>, DbError> {
    conn.record(
        &format!(
            "SELECT {} FROM advertisement_transactions \
             WHERE item_number = $1 AND transaction_id = $2",
            Transaction::COLUMNS
        ),
        params![item_number, id],
    )
    .await
}

/// Moves a created transaction to `status`; false if it was no longer created.
pub async fn finish(
    conn: &mut dyn Conn,
    item_number: i64,
    id: i64,
    status: TransactionStatus,
    now: i64,
) -> Result<bool, DbError> {
    Ok(conn
        .execute(
            "UPDATE advertisement_transactions SET status = $3, updated_at = $4 \
             WHERE item_number = $1 AND transaction_id = $2 AND status = $5",
            params![
                item_number,
                id,
                status.as_str(),
                now,
                TransactionStatus::Created.as_str()
            ],
        )
        .await?
        == 1)
}

/// Keeps a phone call about an ad that the client `client_id` confirmed.
pub async fn insert_upcall(
    conn: &mut dyn Conn,
    item_number: i64,
    client_id: &str,
    call: &Call,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO upcall_confirmations (item_number, client_id, caller_phone, callee_phone, \
             start_time, end_time, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        params![
            item_number,
            client_id,
            &call.caller_phone,
            &call.callee_phone,
            call.start_time,
            call.end_time,
            now
        ],
    )
    .await
}

record! {
    /// The counters of an ad's statistics.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Statistics {
        pub views: i64,
        pub asqs: i64,
        pub bids: i64,
        pub url_clicks: i64,
        pub phone_clicks: i64,
        pub favorite_clicks: i64,
    }
}

/// Which counter an event adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Views,
    Asqs,
    Bids,
    UrlClicks,
    PhoneClicks,
    FavoriteClicks,
}

impl Counter {
    fn column(self) -> &'static str {
        match self {
            Counter::Views => "views",
            Counter::Asqs => "asqs",
            Counter::Bids => "bids",
            Counter::UrlClicks => "url_clicks",
            Counter::PhoneClicks => "phone_clicks",
            Counter::FavoriteClicks => "favorite_clicks",
        }
    }
}

/// Rows per statement when counts are added in bulk. The sizes are fixed, so the statement
/// caches hold four texts, not one per batch size.
const COUNT_ROWS_PER_STATEMENT: [usize; 4] = [500, 50, 5, 1];

/// Adds to a counter of ads, `(item_number, by)` each, a few hundred ads per statement (a
/// flush of views adds to tens of thousands). Ads are taken in order, so two replicas adding
/// to the same ads at once lock their rows in the same order and cannot deadlock.
pub async fn count(
    conn: &mut dyn Conn,
    counter: Counter,
    counts: &[(i64, i64)],
) -> Result<(), DbError> {
    let mut counts = counts.to_vec();
    counts.sort_unstable();
    // One statement may not change a row twice: an ad named twice is added up first.
    counts.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 += later.1;
        }
        same
    });
    let column = counter.column();
    let mut rest = counts.as_slice();
    for size in COUNT_ROWS_PER_STATEMENT {
        while rest.len() >= size {
            let (chunk, tail) = rest.split_at(size);
            let rows: Vec<String> = (0..size)
                .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
                .collect();
            let params: Vec<Value> = chunk
                .iter()
                .flat_map(|&(item, by)| [Value::Int(item), Value::Int(by)])
                .collect();
            conn.execute(
                &format!(
                    "INSERT INTO advertisement_statistics (item_number, {column}) VALUES {} \
                     ON CONFLICT (item_number) DO UPDATE \
                     SET {column} = advertisement_statistics.{column} + excluded.{column}",
                    rows.join(", ")
                ),
                &params,
            )
            .await?;
            rest = tail;
        }
    }
    Ok(())
}

pub async fn statistics(conn: &mut dyn Conn, item_number: i64) -> Result<Statistics, DbError> {
    Ok(conn
        .record(
            &format!(
                "SELECT {} FROM advertisement_statistics WHERE item_number = $1",
                Statistics::COLUMNS
            ),
            params![item_number],
        )
        .await?
        .unwrap_or_default())
}
