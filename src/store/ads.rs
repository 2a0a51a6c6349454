//! Advertisements as stored.

use crate::domain::advertisement::{AdStatus, effective_status};
use crate::params;

use super::images::{self, ImageRecord};
use super::users::User;
use super::{Conn, DbError, Row, Value};

/// An advertisement row with what its representation needs from other tables.
#[derive(Clone, Debug, PartialEq)]
pub struct AdRecord {
    pub number: i64,
    pub seller_id: i64,
    pub seller_name: String,
    pub seller_phone: Option<String>,
    pub category_id: i64,
    /// The L1 parent of the leaf category.
    pub parent_category_id: Option<i64>,
    pub status: String,
    pub rejection_reason: Option<String>,
    pub title: String,
    pub description: String,
    /// JSON text.
    pub price_model: String,
    /// JSON text (an object).
    pub attributes: String,
    pub postcode: String,
    pub locale: String,
    pub reserved: bool,
    pub show_on_map: bool,
    pub start_date: Option<i64>,
    pub close_date: Option<i64>,
    pub version: i64,
    /// In the ad's order.
    pub images: Vec<ImageRecord>,
}

impl AdRecord {
    /// The ad's state at `now`: the stored one, except that an online or paused ad past its
    /// `closeDate` is expired already (the sweep writes that down later).
    pub fn status_at(&self, now: i64) -> AdStatus {
        let stored = AdStatus::parse(&self.status).unwrap_or(AdStatus::Draft);
        effective_status(stored, self.close_date, now)
    }
}

/// The writable content of an ad, ready for storage.
#[derive(Clone, Debug)]
pub struct AdWrite {
    pub category_id: i64,
    pub title: String,
    pub description: String,
    pub price_model: String,
    pub attributes: String,
    pub postcode: String,
    pub locale: String,
    pub reserved: bool,
    pub show_on_map: bool,
}

/// The columns of an [`AdRecord`] and the tables they come from, as literals (so that
/// statements are assembled at compile time with `concat!`).
macro_rules! ad_columns {
    () => {
        "SELECT a.item_number, a.seller_id, u.name AS seller_name, \
         u.phone_number AS seller_phone, a.category_id, c.parent_id AS parent_category_id, \
         a.status, a.rejection_reason, a.title, a.description, a.price_model, a.attributes, \
         a.postcode, a.locale, a.reserved, a.show_on_map, a.start_date, a.close_date, a.version"
    };
}
macro_rules! ad_tables {
    () => {
        " FROM advertisements a JOIN users u ON u.user_id = a.seller_id \
         JOIN categories c ON c.category_id = a.category_id"
    };
}
const SELECT: &str = concat!(ad_columns!(), ad_tables!());

/// One ad with its images: a row per image, or one row with NULL image columns.
const GET_WITH_IMAGES: &str = concat!(
    ad_columns!(),
    ", i.media_id, i.position, i.status AS image_status, i.content_type, i.width, i.height, \
     i.bytes, i.sha256",
    ad_tables!(),
    " LEFT JOIN images i ON i.item_number = a.item_number \
     WHERE a.item_number = $1 ORDER BY i.position"
);

fn from_row(row: &Row) -> Result<AdRecord, DbError> {
    Ok(AdRecord {
        number: row.get("item_number")?,
        seller_id: row.get("seller_id")?,
        seller_name: row.get("seller_name")?,
        seller_phone: row.get("seller_phone")?,
        category_id: row.get("category_id")?,
        parent_category_id: row.get("parent_category_id")?,
        status: row.get("status")?,
        rejection_reason: row.get("rejection_reason")?,
        title: row.get("title")?,
        description: row.get("description")?,
        price_model: row.get("price_model")?,
        attributes: row.get("attributes")?,
        postcode: row.get("postcode")?,
        locale: row.get("locale")?,
        reserved: row.get("reserved")?,
        show_on_map: row.get("show_on_map")?,
        start_date: row.get("start_date")?,
        close_date: row.get("close_date")?,
        version: row.get("version")?,
        images: Vec::new(),
    })
}

/// One ad with its images, in one statement (one round trip on PostgreSQL): a row per
/// image, or one row with no image.
pub async fn get(conn: &mut dyn Conn, number: i64) -> Result<Option<AdRecord>, DbError> {
    let rows = conn.query(GET_WITH_IMAGES, params![number]).await?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let mut record = from_row(first)?;
    for row in &rows {
        if let Some(image) = images::from_joined_row(row)? {
            record.images.push(image);
        }
    }
    Ok(Some(record))
}

/// Stores a new ad; returns its number.
pub async fn insert(
    conn: &mut dyn Conn,
    seller_id: i64,
    ad: &AdWrite,
    status: &str,
    dates: (Option<i64>, Option<i64>),
    now: i64,
) -> Result<i64, DbError> {
    conn.query_one(
        "INSERT INTO advertisements (seller_id, category_id, status, title, description, \
             price_model, attributes, postcode, locale, reserved, show_on_map, start_date, \
             close_date, version, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 1, $14, $14) \
         RETURNING item_number",
        &[
            &[Value::Int(seller_id)][..],
            &content_values(ad, status, dates),
            &[Value::Int(now)],
        ]
        .concat(),
    )
    .await?
    .get("item_number")
}

/// An ad's content and state as both `insert` and `update` bind them, in the order of
/// their columns: category_id, status, title, description, price_model, attributes,
/// postcode, locale, reserved, show_on_map, start_date, close_date.
fn content_values(ad: &AdWrite, status: &str, dates: (Option<i64>, Option<i64>)) -> [Value; 12] {
    [
        Value::Int(ad.category_id),
        Value::from(status),
        Value::from(&ad.title),
        Value::from(&ad.description),
        Value::from(&ad.price_model),
        Value::from(&ad.attributes),
        Value::from(&ad.postcode),
        Value::from(&ad.locale),
        Value::Bool(ad.reserved),
        Value::Bool(ad.show_on_map),
        Value::from(dates.0),
        Value::from(dates.1),
    ]
}

/// The record [`get`] would read right after [`insert`] stored `ad` for `seller`: version
/// 1, no images yet.
pub fn inserted(
    number: i64,
    seller: &User,
    parent_category_id: Option<i64>,
    ad: AdWrite,
    status: &str,
    dates: (Option<i64>, Option<i64>),
) -> AdRecord {
    AdRecord {
        number,
        seller_id: seller.id,
        seller_name: seller.name.clone(),
        seller_phone: seller.phone_number.clone(),
        category_id: ad.category_id,
        parent_category_id,
        status: status.to_owned(),
        rejection_reason: None,
        title: ad.title,
        description: ad.description,
        price_model: ad.price_model,
        attributes: ad.attributes,
        postcode: ad.postcode,
        locale: ad.locale,
        reserved: ad.reserved,
        show_on_map: ad.show_on_map,
        start_date: dates.0,
        close_date: dates.1,
        version: 1,
        images: Vec::new(),
    }
}

/// The record [`get`] would read right after [`update`] stored `ad` over `record`: the
/// next version, the same seller, images and rejection reason.
pub fn updated(
    record: AdRecord,
    parent_category_id: Option<i64>,
    ad: AdWrite,
    status: &str,
    dates: (Option<i64>, Option<i64>),
) -> AdRecord {
    AdRecord {
        category_id: ad.category_id,
        parent_category_id,
        status: status.to_owned(),
        title: ad.title,
        description: ad.description,
        price_model: ad.price_model,
        attributes: ad.attributes,
        postcode: ad.postcode,
        locale: ad.locale,
        reserved: ad.reserved,
        show_on_map: ad.show_on_map,
        start_date: dates.0,
        close_date: dates.1,
        version: record.version + 1,
        ..record
    }
}

/// Replaces the content and state of an ad if it is still at `version`; false if someone
/// changed it meanwhile.
#[allow(clippy::too_many_arguments)]
pub async fn update(
    conn: &mut dyn Conn,
    number: i64,
    version: i64,
    ad: &AdWrite,
    status: &str,
    dates: (Option<i64>, Option<i64>),
    rejection_reason: Option<&str>,
    now: i64,
) -> Result<bool, DbError> {
    let changed = conn
        .execute(
            "UPDATE advertisements SET category_id = $3, status = $4, title = $5, \
             description = $6, price_model = $7, attributes = $8, postcode = $9, \
             locale = $10, reserved = $11, show_on_map = $12, start_date = $13, \
             close_date = $14, rejection_reason = $15, version = version + 1, \
             updated_at = $16 \
             WHERE item_number = $1 AND version = $2",
            &[
                &[Value::Int(number), Value::Int(version)][..],
                &content_values(ad, status, dates),
                &[Value::from(rejection_reason), Value::Int(now)],
            ]
            .concat(),
        )
        .await?;
    Ok(changed == 1)
}

/// Moves an ad to `status` (with its dates and rejection reason) if it is still at
/// `version`; false if someone changed it meanwhile.
pub async fn set_status(
    conn: &mut dyn Conn,
    number: i64,
    version: i64,
    status: &str,
    dates: (Option<i64>, Option<i64>),
    rejection_reason: Option<&str>,
    now: i64,
) -> Result<bool, DbError> {
    Ok(conn
        .execute(
            "UPDATE advertisements SET status = $3, start_date = $4, close_date = $5, \
             rejection_reason = $6, version = version + 1, updated_at = $7 \
         WHERE item_number = $1 AND version = $2",
            params![
                number,
                version,
                status,
                dates.0,
                dates.1,
                rejection_reason,
                now
            ],
        )
        .await?
        == 1)
}

/// A seller's ads whose state at `now` is one of `statuses`, newest first, and how many
/// there are in all. The state at `now` counts an online or paused ad past its
/// `closeDate` as expired, as reads do, even before the expiry sweep wrote it down.
pub async fn by_seller(
    conn: &mut dyn Conn,
    seller_id: i64,
    statuses: &[&str],
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<(Vec<AdRecord>, i64), DbError> {
    // Placeholders $3.. for the states; the list is short and fixed per request.
    let list: Vec<String> = (0..statuses.len()).map(|i| format!("${}", i + 3)).collect();
    let mut values: Vec<Value> = vec![Value::Int(seller_id), Value::Int(now)];
    values.extend(statuses.iter().map(|s| Value::from(*s)));
    let filter = format!(
        "a.seller_id = $1 AND (CASE WHEN a.status IN ('online', 'paused') AND a.close_date <= $2 \
         THEN 'expired' ELSE a.status END) IN ({})",
        list.join(", ")
    );
    let total = conn
        .query_one(
            &format!("SELECT COUNT(*) AS n FROM advertisements a WHERE {filter}"),
            &values,
        )
        .await?
        .get("n")?;
    let n = values.len();
    values.push(Value::Int(limit));
    values.push(Value::Int(offset));
    let rows = conn
        .query(
            &format!(
                "{SELECT} WHERE {filter} ORDER BY a.item_number DESC LIMIT ${} OFFSET ${}",
                n + 1,
                n + 2
            ),
            &values,
        )
        .await?;
    let mut records: Vec<AdRecord> = rows.iter().map(from_row).collect::<Result<_, _>>()?;
    let numbers: Vec<i64> = records.iter().map(|r| r.number).collect();
    let mut images = images::of_ads(conn, &numbers).await?;
    for record in &mut records {
        record.images = images.remove(&record.number).unwrap_or_default();
    }
    Ok((records, total))
}

/// Writes down the expiry of online and paused ads whose `closeDate` has passed; returns
/// how many expired. (Reads already treat them as expired; see `effective_status`.)
pub async fn expire_due(conn: &mut dyn Conn, now: i64) -> Result<u64, DbError> {
    conn.execute(
        "UPDATE advertisements SET status = 'expired', version = version + 1, updated_at = $1 \
         WHERE status IN ('online', 'paused') AND close_date <= $1",
        params![now],
    )
    .await
}
