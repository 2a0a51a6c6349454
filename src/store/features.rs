//! The feature price list (migration 0020) and the features bought for an ad. The rules
//! are `usecase::features`'.

use crate::domain::feature::{Feature, Price, PriceList};
use crate::params;

use super::{Conn, DbError, TableLock, Value};

/// Replaces the whole price list. The table is held first (`TableLock::Writes`): another
/// import, or a first start's default load, waits for this one and then reads what it
/// wrote, so none inserts an entry after this one's delete.
pub async fn replace(conn: &mut dyn Conn, list: &PriceList) -> Result<(), DbError> {
    conn.lock_table("feature_prices", TableLock::Writes).await?;
    conn.run("DELETE FROM feature_prices", &[]).await?;
    for (category, feature, price) in &list.entries {
        let (cents, days) = match price {
            Some(Price { price, days }) => (Value::Int(*price), *days),
            // `days` is required by the table; an entry off sale lasts nothing.
            None => (Value::Null, 1),
        };
        conn.run(
            "INSERT INTO feature_prices (category_id, feature, price, days) \
             VALUES ($1, $2, $3, $4) \
             ON CONFLICT (category_id, feature) DO UPDATE SET price = excluded.price, \
             days = excluded.days",
            &[
                Value::Int(*category),
                Value::Text(feature.as_str().to_owned()),
                cents,
                Value::Int(days),
            ],
        )
        .await?;
    }
    Ok(())
}

/// The entries that apply to `leaf` under `parent` (its own, its parent's and the default).
pub async fn entries_for(
    conn: &mut dyn Conn,
    leaf: i64,
    parent: Option<i64>,
) -> Result<Vec<(i64, Feature, Option<Price>)>, DbError> {
    let rows = conn
        .query(
            "SELECT category_id, feature, price, days FROM feature_prices \
             WHERE category_id IN (0, $1, $2)",
            params![leaf, parent.unwrap_or(0)],
        )
        .await?;
    rows.into_iter()
        .map(|mut row| {
            let category: i64 = row.take()?;
            let feature: Feature = row.take()?;
            let price: Option<i64> = row.take()?;
            let days: i64 = row.take()?;
            Ok((category, feature, price.map(|price| Price { price, days })))
        })
        .collect()
}

/// How many entries the price list has (0: a new database, which gets the default list).
pub async fn count(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COUNT(*) AS n FROM feature_prices", &[])
        .await?
        .get("n")
}

/// A feature bought for an ad, and when its order was paid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Purchased {
    pub feature: Feature,
    pub paid_at: i64,
}

/// The paid features of ad `item`, most recent first.
pub async fn purchased(conn: &mut dyn Conn, item: i64) -> Result<Vec<Purchased>, DbError> {
    let rows = conn
        .query(
            "SELECT p.feature, o.paid_at FROM order_products p \
             JOIN orders o ON o.order_id = p.order_id \
             WHERE p.item_number = $1 AND p.kind = 'feature' AND o.paid_at IS NOT NULL \
             ORDER BY o.paid_at DESC, p.order_id DESC, p.product_id DESC",
            params![item],
        )
        .await?;
    rows.into_iter()
        .map(|mut row| {
            Ok(Purchased {
                feature: row.take()?,
                paid_at: row.take()?,
            })
        })
        .collect()
}
