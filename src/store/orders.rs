//! Orders and their products (migration 0019). The rules are `usecase::orders`'.

use crate::domain::feature::Feature;
use crate::domain::order::{OrderStatus, ProductKind};
use crate::params;

use super::record::record;
use super::{Conn, DbError, Record};

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Order {
        pub id: i64 = "order_id",
        pub buyer_id: i64,
        pub status: OrderStatus,
        pub created_at: i64,
        pub paid_at: Option<i64>,
    }
}

record! {
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Product {
        pub order_id: i64,
        pub id: i64 = "product_id",
        pub kind: ProductKind,
        /// The feature bought (kind `feature` only).
        pub feature: Option<Feature>,
        /// How long the feature lasts, or the ad runs (a renewal, an insertion), as priced
        /// when it was bought; none for a renewal or insertion bought before migration 0059.
        pub days: Option<i64>,
        pub item_number: i64,
        pub description: String,
        pub price: i64,
        pub vat: i64,
    }
}

/// A new order of `buyer`; its id.
pub async fn create(
    conn: &mut dyn Conn,
    buyer: i64,
    status: OrderStatus,
    now: i64,
) -> Result<i64, DbError> {
    conn.query_one(
        "INSERT INTO orders (buyer_id, status, created_at) VALUES ($1, $2, $3) RETURNING order_id",
        params![buyer, status.as_str(), now],
    )
    .await?
    .get("order_id")
}

/// Order `id`, locked for the rest of the transaction where the backend has row locks (a
/// payment and a purchase into the same order take turns).
pub async fn get_for_update(conn: &mut dyn Conn, id: i64) -> Result<Option<Order>, DbError> {
    let lock = conn.hold_keys();
    conn.record(
        &format!(
            "SELECT {} FROM orders WHERE order_id = $1{lock}",
            Order::COLUMNS
        ),
        params![id],
    )
    .await
}

pub async fn get(conn: &mut dyn Conn, id: i64) -> Result<Option<Order>, DbError> {
    conn.record(
        &format!("SELECT {} FROM orders WHERE order_id = $1", Order::COLUMNS),
        params![id],
    )
    .await
}

/// What a new product is.
pub struct NewProduct<'a> {
    pub kind: ProductKind,
    pub feature: Option<Feature>,
    pub days: Option<i64>,
    pub item_number: i64,
    pub description: &'a str,
    pub price: i64,
    pub vat: i64,
}

/// Adds a product to order `order`, numbered after its others; its id.
pub async fn add_product(
    conn: &mut dyn Conn,
    order: i64,
    product: &NewProduct<'_>,
) -> Result<i64, DbError> {
    conn.query_one(
        "INSERT INTO order_products (order_id, product_id, kind, feature, days, item_number, \
         description, price, vat) \
         SELECT $1, 1 + COALESCE(MAX(product_id), 0), $2, $3, $4, $5, $6, $7, $8 \
         FROM order_products WHERE order_id = $1 RETURNING product_id",
        params![
            order,
            product.kind.as_str(),
            product.feature.map(Feature::as_str),
            product.days,
            product.item_number,
            product.description,
            product.price,
            product.vat
        ],
    )
    .await?
    .get("product_id")
}

/// The products of an order, in the order they were added.
pub async fn products(conn: &mut dyn Conn, order: i64) -> Result<Vec<Product>, DbError> {
    conn.records(
        &format!(
            "SELECT {} FROM order_products WHERE order_id = $1 ORDER BY product_id",
            Product::COLUMNS
        ),
        params![order],
    )
    .await
}

/// The open order (`new` or `payment required`) that holds a renewal of ad `item_number`
/// and something to pay for, if there is one: a renewal of price 0 in an order with a
/// priced product waits for that payment too. An order of price 0 that a release before
/// this one left waiting (they are paid as they are made now) waits for nothing.
pub async fn unpaid_renewal(conn: &mut dyn Conn, item_number: i64) -> Result<Option<i64>, DbError> {
    let found: Vec<i64> = conn
        .column(
            "SELECT o.order_id FROM order_products p JOIN orders o ON o.order_id = p.order_id \
             WHERE p.item_number = $1 AND p.kind = $2 AND o.status IN ($3, $4) \
               AND EXISTS (SELECT 1 FROM order_products priced \
                           WHERE priced.order_id = o.order_id AND priced.price > 0) \
             ORDER BY o.order_id LIMIT 1",
            params![
                item_number,
                ProductKind::Renewal.as_str(),
                OrderStatus::New.as_str(),
                OrderStatus::PaymentRequired.as_str()
            ],
        )
        .await?;
    Ok(found.into_iter().next())
}

/// Marks an order refused: its payment did not come.
pub async fn set_refused(conn: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    conn.run(
        "UPDATE orders SET status = $2 WHERE order_id = $1",
        params![id, OrderStatus::Refused.as_str()],
    )
    .await
}

/// Marks an order paid at `now`.
pub async fn set_paid(conn: &mut dyn Conn, id: i64, now: i64) -> Result<(), DbError> {
    conn.run(
        "UPDATE orders SET status = $2, paid_at = $3 WHERE order_id = $1",
        params![id, OrderStatus::Paid.as_str(), now],
    )
    .await
}
