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

/// A page of the ad's bids, with what the list says of all of them.
#[derive(Debug)]
pub struct BidPage {
    /// Highest first (earlier first among equal amounts).
    pub bids: Vec<Bid>,
    /// How many bids the ad has.
    pub total: i64,
    /// The highest amount bid, if any.
    pub highest: Option<i64>,
}

/// A page of the ad's bids, how many there are and the highest, read by one statement: on
/// PostgreSQL each statement of a read sees its own snapshot, and a bid placed between two
/// would show in the count or the least next bid and not on the page.
pub async fn page(
    conn: &mut dyn Conn,
    item_number: i64,
    offset: i64,
    limit: i64,
) -> Result<BidPage, DbError> {
    let rows = conn
        .query(
            &format!(
                "SELECT {}, COUNT(*) OVER () AS total, MAX(b.amount) OVER () AS highest{FROM} \
                 WHERE b.item_number = $1 ORDER BY b.amount DESC, b.bid_id LIMIT $2 OFFSET $3",
                Bid::COLUMNS
            ),
            params![item_number, limit, offset],
        )
        .await?;
    let Some(first) = rows.first() else {
        // A page past the last bid (or an ad without bids): the window has no row to ride
        // on, so the totals are read on their own.
        let row = conn
            .query_one(
                "SELECT COUNT(*) AS total, MAX(amount) AS highest FROM bids WHERE item_number = $1",
                params![item_number],
            )
            .await?;
        return Ok(BidPage {
            bids: Vec::new(),
            total: row.get("total")?,
            highest: row.get("highest")?,
        });
    };
    let (total, highest) = (first.get("total")?, first.get("highest")?);
    let bids = rows
        .into_iter()
        .map(|mut row| Bid::read(&mut row))
        .collect::<Result<_, _>>()?;
    Ok(BidPage {
        bids,
        total,
        highest,
    })
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
