//! Image metadata of advertisements, as stored (the bytes come with the images issue).
//! Queries name the table `images i`, as the columns of [`ImageRecord`] do.

use std::collections::HashMap;

use super::record::record;
use super::{Conn, DbError, Record, Row, Value};
use crate::domain::image::ImageStatus;

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
    conn.execute(
        &format!(
            "INSERT INTO images ({INSERT_COLUMNS}) VALUES {}",
            super::placeholders(images.len(), 10)
        ),
        &values,
    )
    .await?;
    Ok(())
}
