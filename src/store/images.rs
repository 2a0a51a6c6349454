//! Images of advertisements, as stored: each describes its original; `store::renditions`
//! holds what they become.
//! Queries name the table `images i`, as the columns of [`ImageRecord`] do.

use std::collections::HashMap;

use super::record::record;
use super::{Conn, DbError, Record, Row, Value};
use crate::domain::advertisement::{AdStatus, effective_status};
use crate::domain::image::ImageStatus;
use crate::params;

record! {
    /// One image of an ad: its original's description.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ImageRecord in "i" {
        pub media_id: String,
        /// 1 for the first image of the ad (the deprecated `imageId`).
        pub position: i64,
        pub status: ImageStatus,
        pub content_type: String,
        pub width: i64,
        pub height: i64,
        pub bytes: i64,
        pub sha256: String,
    }
}

/// The image in the next columns of a row of an ad joined with its images, if the row has
/// one (a LEFT JOIN without a match gives NULLs).
pub(super) fn joined(row: &mut Row) -> Result<Option<ImageRecord>, DbError> {
    if row.next_is_null() {
        return Ok(None);
    }
    row.read().map(Some)
}

/// The images of several ads (a page), in order, by ad.
pub async fn of_ads(
    conn: &mut dyn Conn,
    item_numbers: &[i64],
) -> Result<HashMap<i64, Vec<ImageRecord>>, DbError> {
    let mut by_ad: HashMap<i64, Vec<ImageRecord>> = HashMap::new();
    if item_numbers.is_empty() {
        return Ok(by_ad);
    }
    let values: Vec<Value> = item_numbers.iter().map(|n| Value::Int(*n)).collect();
    let rows = conn
        .query(
            &format!(
                "SELECT i.item_number, {} FROM images i WHERE i.item_number IN ({}) \
                 ORDER BY i.item_number, i.position",
                ImageRecord::COLUMNS,
                super::numbered(1, item_numbers.len())
            ),
            &values,
        )
        .await?;
    for mut row in rows {
        let item_number: i64 = row.take()?;
        by_ad.entry(item_number).or_default().push(row.read()?);
    }
    Ok(by_ad)
}

/// The columns of an image row and their values, in one order for both inserts.
const INSERT_COLUMNS: &str = "item_number, media_id, position, status, content_type, width, height, bytes, sha256, \
     created_at";

fn insert_values(item_number: i64, image: &ImageRecord, now: i64) -> [Value; 10] {
    [
        Value::Int(item_number),
        Value::from(&image.media_id),
        Value::Int(image.position),
        Value::from(image.status.as_str()),
        Value::from(&image.content_type),
        Value::Int(image.width),
        Value::Int(image.height),
        Value::Int(image.bytes),
        Value::from(&image.sha256),
        Value::Int(now),
    ]
}

/// Stores the metadata of images of one ad.
pub async fn insert(
    conn: &mut dyn Conn,
    item_number: i64,
    images: &[ImageRecord],
    now: i64,
) -> Result<(), DbError> {
    for image in images {
        conn.execute(
            &format!(
                "INSERT INTO images ({INSERT_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            ),
            &insert_values(item_number, image, now),
        )
        .await?;
    }
    Ok(())
}

/// Stores the images of many ads in one statement (`souk seed`): `(item_number, image)`.
pub async fn insert_many(
    conn: &mut dyn Conn,
    images: &[(i64, ImageRecord)],
    now: i64,
) -> Result<(), DbError> {
    if images.is_empty() {
        return Ok(());
    }
    let values: Vec<Value> = images
        .iter()
        .flat_map(|(item_number, image)| insert_values(*item_number, image, now))
        .collect();
    conn.run(
        &format!(
            "INSERT INTO images ({INSERT_COLUMNS}) VALUES {}",
            super::placeholders(images.len(), 10)
        ),
        &values,
    )
    .await
}

record! {
    /// What decides who may see an image: its ad's number, seller and status, read from
    /// the ad's row and nothing else (an image answer needs no more of the ad).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct ImageHolder in "a" {
        pub item_number: i64,
        pub seller_id: i64,
        /// As written; [`ImageHolder::status_at`] is the state a reader sees.
        pub status: AdStatus,
        pub close_date: Option<i64>,
    }
}

impl ImageHolder {
    pub fn status_at(&self, now: i64) -> AdStatus {
        effective_status(self.status, self.close_date, now)
    }
}

/// An image and what decides who may see it, in one statement.
pub async fn get_held(
    conn: &mut dyn Conn,
    media_id: &str,
) -> Result<Option<(ImageHolder, ImageRecord)>, DbError> {
    let row = conn
        .query_opt(
            &format!(
                "SELECT {}, {} FROM images i JOIN advertisements a ON a.item_number = i.item_number \
                 WHERE i.media_id = $1",
                ImageHolder::COLUMNS,
                ImageRecord::COLUMNS
            ),
            params![media_id],
        )
        .await?;
    match row {
        None => Ok(None),
        Some(mut row) => Ok(Some((row.read()?, row.read()?))),
    }
}

/// The images of one ad, in order.
pub async fn of_ad(conn: &mut dyn Conn, item_number: i64) -> Result<Vec<ImageRecord>, DbError> {
    conn.records(
        &format!(
            "SELECT {} FROM images i WHERE i.item_number = $1 ORDER BY i.position",
            ImageRecord::COLUMNS
        ),
        params![item_number],
    )
    .await
}

/// Marks an image whose renditions exist `available`.
pub async fn set_available(conn: &mut dyn Conn, media_id: &str) -> Result<(), DbError> {
    conn.run(
        "UPDATE images SET status = $2 WHERE media_id = $1",
        params![media_id, ImageStatus::Available.as_str()],
    )
    .await
}

/// Removes an image row (its renditions and job go with `store::renditions`); false if
/// there was none.
pub async fn delete(conn: &mut dyn Conn, media_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .execute("DELETE FROM images WHERE media_id = $1", params![media_id])
        .await?
        == 1)
}

/// Numbers an ad's images 1, 2, ... again in their order, after some were removed, so that
/// `imageId` stays the position from 1. The caller holds the ad (`ads::lock`).
pub async fn close_gaps(conn: &mut dyn Conn, item_number: i64) -> Result<(), DbError> {
    let images = of_ad(conn, item_number).await?;
    if images.iter().zip(1..).all(|(image, n)| image.position == n) {
        return Ok(());
    }
    let order: Vec<String> = images.into_iter().map(|image| image.media_id).collect();
    reorder(conn, item_number, &order).await
}

/// Puts an ad's images in the order of `media_ids` (every one of its images, each once),
/// numbering them from 1. Positions go negative first, so that no two rows ever share a
/// position on the way.
pub async fn reorder(
    conn: &mut dyn Conn,
    item_number: i64,
    media_ids: &[String],
) -> Result<(), DbError> {
    conn.execute(
        "UPDATE images SET position = -position WHERE item_number = $1",
        params![item_number],
    )
    .await?;
    for (index, media_id) in media_ids.iter().enumerate() {
        conn.execute(
            "UPDATE images SET position = $3 WHERE item_number = $1 AND media_id = $2",
            params![item_number, media_id.as_str(), index as i64 + 1],
        )
        .await?;
    }
    Ok(())
}

/// Whether the database holds any image.
pub async fn any(conn: &mut dyn Conn) -> Result<bool, DbError> {
    let found: Vec<i64> = conn.column("SELECT 1 FROM images LIMIT 1", &[]).await?;
    Ok(!found.is_empty())
}

/// The id of the image store this database's images are in, once a server recorded one
/// (migration 0061).
pub async fn store_id(conn: &mut dyn Conn) -> Result<Option<String>, DbError> {
    let ids: Vec<String> = conn
        .column("SELECT store_id FROM image_store WHERE only_row = 1", &[])
        .await?;
    Ok(ids.into_iter().next())
}

/// Records `id` as the image store's unless one is recorded already; returns the one
/// recorded (of servers starting at once, the first to commit wins).
pub async fn record_store_id(conn: &mut dyn Conn, id: &str) -> Result<String, DbError> {
    conn.run(
        "INSERT INTO image_store (only_row, store_id) VALUES (1, $1) \
         ON CONFLICT (only_row) DO NOTHING",
        params![id],
    )
    .await?;
    store_id(conn)
        .await?
        .ok_or_else(|| DbError::Other("the image store's id was not recorded".into()))
}
