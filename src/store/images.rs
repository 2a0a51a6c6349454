//! Image metadata of advertisements, as stored (the bytes come with the images issue).

use std::collections::HashMap;

use crate::params;

use super::{Conn, DbError, Row, Value};

/// One image of an ad: its original's description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRecord {
    pub media_id: String,
    /// 1 for the first image of the ad (the deprecated `imageId`).
    pub position: i64,
    /// `processing` while the renditions are made, then `available`.
    pub status: String,
    pub content_type: String,
    pub width: i64,
    pub height: i64,
    pub bytes: i64,
    pub sha256: String,
}

const COLUMNS: &str =
    "media_id, item_number, position, status, content_type, width, height, bytes, sha256";

fn from_row(row: &Row) -> Result<ImageRecord, DbError> {
    Ok(ImageRecord {
        media_id: row.get("media_id")?,
        position: row.get("position")?,
        status: row.get("status")?,
        content_type: row.get("content_type")?,
        width: row.get("width")?,
        height: row.get("height")?,
        bytes: row.get("bytes")?,
        sha256: row.get("sha256")?,
    })
}

/// The image of a row of an ad joined with its images (`status` as `image_status`), if the
/// row has one.
pub fn from_joined_row(row: &Row) -> Result<Option<ImageRecord>, DbError> {
    let Some(media_id) = row.get::<Option<String>>("media_id")? else {
        return Ok(None);
    };
    Ok(Some(ImageRecord {
        media_id,
        position: row.get("position")?,
        status: row.get("image_status")?,
        content_type: row.get("content_type")?,
        width: row.get("width")?,
        height: row.get("height")?,
        bytes: row.get("bytes")?,
        sha256: row.get("sha256")?,
    }))
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
    let list: Vec<String> = (1..=item_numbers.len()).map(|i| format!("${i}")).collect();
    let values: Vec<Value> = item_numbers.iter().map(|n| Value::Int(*n)).collect();
    let rows = conn
        .query(
            &format!(
                "SELECT {COLUMNS} FROM images WHERE item_number IN ({}) \
             ORDER BY item_number, position",
                list.join(", ")
            ),
            &values,
        )
        .await?;
    for row in &rows {
        by_ad
            .entry(row.get("item_number")?)
            .or_default()
            .push(from_row(row)?);
    }
    Ok(by_ad)
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
                "INSERT INTO images ({COLUMNS}, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            ),
            params![
                &image.media_id,
                item_number,
                image.position,
                &image.status,
                &image.content_type,
                image.width,
                image.height,
                image.bytes,
                &image.sha256,
                now
            ],
        )
        .await?;
    }
    Ok(())
}
