//! Bids on advertisements (migration 0016). The rules are `usecase::bids`'; here are the
//! queries, and the lock that makes the rules hold under concurrency.

use crate::params;

use super::record::record;
use super::transactions::{self, Counter};
use super::{Conn, DbError, Record};

record! {
    /// A bid, with its bidder's name.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Bid in "b" {
        pub id: i64 = "b.bid_id",
        pub item_number: i64,
        pub bidder_id: i64,
        pub bidder_name: String = "u.name",
        pub amount: i64,
        pub placed_at: i64,
    }
}

/// The tables of a [`Bid`].
const FROM: &str = " FROM bids b JOIN users u ON u.user_id = b.bidder_id";

/// Counts a bid in the ad's statistics, which is also the lock that serializes bidding on
/// one ad: the upsert takes the row lock of the ad's statistics row and holds it until the
/// transaction ends, so on PostgreSQL a second bid on the ad waits here until the first
/// commits or rolls back, and its next statement (READ COMMITTED: a snapshot per statement)
/// sees the first bid. Call it before reading the highest bid; a refused bid rolls the
/// count back with everything else. On SQLite the one writer serializes writes anyway.
pub async fn count_and_lock(conn: &mut dyn Conn, item_number: i64) -> Result<(), DbError> {
    transactions::count(conn, Counter::Bids, &[(item_number, 1)]).await
}

/// The highest bid on the ad, if any.
pub async fn highest(conn: &mut dyn Conn, item_number: i64) -> Result<Option<i64>, DbError> {
    let row = conn
        .query_one(
            "SELECT MAX(amount) AS highest FROM bids WHERE item_number = $1",
            params![item_number],
        )
        .await?;
    row.get("highest")
}

/// Stores a bid; returns its id.
pub async fn insert(
    conn: &mut dyn Conn,
    item_number: i64,
    bidder_id: i64,
    amount: i64,
    now: i64,
) -> Result<i64, DbError> {
    conn.query_one(
        "INSERT INTO bids (item_number, bidder_id, amount, placed_at) \
         VALUES ($1, $2, $3, $4) RETURNING bid_id",
        params![item_number, bidder_id, amount, now],
    )
    .await?
    .get("bid_id")
}

/// One bid of the ad.
pub async fn get(conn: &mut dyn Conn, item_number: i64, id: i64) -> Result<Option<Bid>, DbError> {
    conn.record(
        &format!(
            "SELECT {}{FROM} WHERE b.item_number = $1 AND b.bid_id = $2",
            Bid::COLUMNS
        ),
        params![item_number, id],
    )
    .await
}

/// A page of the ad's bids, highest first (earlier first among equal amounts), and how
/// many there are.
pub async fn page(
    conn: &mut dyn Conn,
    item_number: i64,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Bid>, i64), DbError> {
    let listed = conn
        .records(
            &format!(
                "SELECT {}{FROM} WHERE b.item_number = $1 \
                 ORDER BY b.amount DESC, b.bid_id LIMIT $2 OFFSET $3",
                Bid::COLUMNS
            ),
            params![item_number, limit, offset],
        )
        .await?;
    let total = conn
        .query_one(
            "SELECT COUNT(*) AS n FROM bids WHERE item_number = $1",
            params![item_number],
        )
        .await?
        .get("n")?;
    Ok((listed, total))
}

/// Whether `user` has a bid on the ad.
pub async fn has_bid(conn: &mut dyn Conn, item_number: i64, user: i64) -> Result<bool, DbError> {
    Ok(conn
        .query_opt(
            "SELECT 1 AS one FROM bids WHERE item_number = $1 AND bidder_id = $2 LIMIT 1",
            params![item_number, user],
        )
        .await?
        .is_some())
}

/// Deletes a bid; false if it was gone already.
pub async fn delete(conn: &mut dyn Conn, item_number: i64, id: i64) -> Result<bool, DbError> {
    Ok(conn
        .execute(
            "DELETE FROM bids WHERE item_number = $1 AND bid_id = $2",
            params![item_number, id],
        )
        .await?
        == 1)
}
