//! What images become (migration 0012): renditions, the content-addressed blobs they point
//! at (with reference counts), and the durable jobs that make them. The bytes live in the
//! object store (`images::blobs`); these rows say which bytes exist and who needs them.

use std::sync::LazyLock;

use super::images::ImageHolder;
use super::record::record;
use super::{Conn, DbError, Record, Value};
use crate::domain::image::{Format, ImageStatus, Size};
use crate::params;

record! {
    /// One rendition of an image, with its blob's type and length.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct RenditionRecord in "r" {
        pub size: Size,
        pub format: Format,
        pub width: i64,
        pub height: i64,
        pub sha256: String,
        pub content_type: String = "b.content_type",
        pub bytes: i64 = "b.bytes",
    }
}

static OF_SIZE_HELD: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {}, i.status, {} FROM images i \
         JOIN advertisements a ON a.item_number = i.item_number \
         LEFT JOIN image_renditions r ON r.media_id = i.media_id AND r.size = $2 \
         LEFT JOIN image_blobs b ON b.sha256 = r.sha256 \
         WHERE i.media_id = $1 ORDER BY r.format",
        ImageHolder::COLUMNS,
        RenditionRecord::COLUMNS
    )
});

/// An image's renditions in `size` with what decides who may see them, in one statement
/// (a blob answer's only query): its ad's holder, its status, and the renditions (none
/// while it is processing). `None` if there is no such image.
pub async fn of_size_held(
    conn: &mut dyn Conn,
    media_id: &str,
    size: Size,
) -> Result<Option<(ImageHolder, ImageStatus, Vec<RenditionRecord>)>, DbError> {
    let mut rows = conn
        .query(&OF_SIZE_HELD, params![media_id, size.as_str()])
        .await?
        .into_iter();
    let Some(mut first) = rows.next() else {
        return Ok(None);
    };
    let holder: ImageHolder = first.read()?;
    let status: ImageStatus = first.take()?;
    let mut found = Vec::new();
    if !first.next_is_null() {
        found.push(first.read()?);
    }
    for mut row in rows {
        // The holder and the image's status repeat on every row: read once, above.
        row.skip(ImageHolder::WIDTH + 1);
        found.push(row.read()?);
    }
    Ok(Some((holder, status, found)))
}

/// A rendition made, about to be recorded.
#[derive(Clone, Debug)]
pub struct NewRendition {
    pub size: Size,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub sha256: String,
    pub bytes: usize,
}

/// How long a blob is held ([`hold_blobs`], [`claim_unreferenced`]): far longer than
/// writing its bytes and recording a rendition, or deleting them, take.
pub const BLOB_HOLD_SECS: i64 = 3600;

/// Registers each blob of `renditions`, held until [`BLOB_HOLD_SECS`] from `now` (a new one
/// with refs 0), before its bytes are written: no sweep claims it until then, and
/// [`record`] refers only to a blob still registered. Fails if one is being deleted (its
/// bytes must not be written now: the job runs again later). A blob that no rendition
/// comes to refer to is swept once its hold ends.
pub async fn hold_blobs(
    conn: &mut dyn Conn,
    renditions: &[NewRendition],
    now: i64,
) -> Result<(), RecordError> {
    for rendition in renditions {
        let held = conn
            .query_opt(
                "INSERT INTO image_blobs (sha256, content_type, bytes, refs, held_until) \
                 VALUES ($1, $2, $3, 0, $4) \
                 ON CONFLICT (sha256) DO UPDATE SET held_until = excluded.held_until \
                 WHERE image_blobs.refs >= 0 RETURNING sha256",
                params![
                    rendition.sha256.as_str(),
                    rendition.format.content_type(),
                    rendition.bytes as i64,
                    now + BLOB_HOLD_SECS
                ],
            )
            .await?;
        if held.is_none() {
            return Err(RecordError::BlobBeingDeleted);
        }
    }
    Ok(())
}

/// What recording renditions did.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    /// The renditions are the image's now.
    Done,
    /// The image is gone, or another worker recorded this phase already: nothing to do
    /// (the blobs are held unreferenced, so a sweep frees them when the hold ends).
    NoJob,
}

/// Why renditions could not be recorded: the transaction must roll back.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A blob is being deleted right now, or was deleted since it was held: try again
    /// later.
    #[error("a blob is being deleted")]
    BlobBeingDeleted,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Records the renditions of one phase of `media_id`'s job in the caller's transaction:
/// the job must still be in `phase` (else [`Recorded::NoJob`]); each blob, held by
/// [`hold_blobs`] before its bytes were written, gains a reference and needs its hold no
/// more. The caller then moves the job on. On an error the caller's transaction must
/// roll back (return the error from `Db::write`).
///
/// The job's row is held until the transaction ends ([`hold_job`]): a removal of the image
/// ends its job before it removes renditions, so it either waits for these and removes
/// them too, or ended the job first and nothing is recorded.
pub async fn record(
    conn: &mut dyn Conn,
    media_id: &str,
    phase: Format,
    renditions: &[NewRendition],
) -> Result<Recorded, RecordError> {
    hold_job(conn, media_id).await?;
    let job = conn
        .query_opt(
            "SELECT media_id FROM image_jobs WHERE media_id = $1 AND phase = $2",
            params![media_id, phase.as_str()],
        )
        .await?;
    if job.is_none() {
        return Ok(Recorded::NoJob);
    }
    for rendition in renditions {
        let referenced = conn
            .execute(
                "UPDATE image_blobs SET refs = refs + 1, held_until = 0 \
                 WHERE sha256 = $1 AND refs >= 0",
                params![rendition.sha256.as_str()],
            )
            .await?;
        if referenced == 0 {
            return Err(RecordError::BlobBeingDeleted);
        }
        conn.execute(
            "INSERT INTO image_renditions (media_id, size, format, width, height, sha256) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            params![
                media_id,
                rendition.size.as_str(),
                rendition.format.as_str(),
                i64::from(rendition.width),
                i64::from(rendition.height),
                rendition.sha256.as_str()
            ],
        )
        .await?;
    }
    Ok(Recorded::Done)
}

/// Holds `media_id`'s job row, if it has one, until the transaction ends (`lock_row`).
async fn hold_job(conn: &mut dyn Conn, media_id: &str) -> Result<(), DbError> {
    conn.lock_row(
        "SELECT media_id FROM image_jobs WHERE media_id = $1",
        media_id,
    )
    .await
}

/// Removes the renditions of `media_id` and their blob references (a blob left with none is
/// swept: [`claim_unreferenced`]).
pub async fn remove_all(conn: &mut dyn Conn, media_id: &str) -> Result<(), DbError> {
    let blobs: Vec<String> = conn
        .column(
            "DELETE FROM image_renditions WHERE media_id = $1 RETURNING sha256",
            params![media_id],
        )
        .await?;
    for sha256 in blobs {
        conn.execute(
            "UPDATE image_blobs SET refs = refs - 1 WHERE sha256 = $1 AND refs > 0",
            params![sha256],
        )
        .await?;
    }
    Ok(())
}

/// Claims up to `limit` blobs for deletion: those nothing references nor holds (refs 0),
/// and those whose earlier claim ran out (a sweep that stopped). A claim sets refs -1, so
/// that from now on none can be referenced, and holds the blob for [`BLOB_HOLD_SECS`], so
/// that no other sweep takes it over meanwhile. The caller deletes their bytes, then
/// [`forget`]s them.
pub async fn claim_unreferenced(
    conn: &mut dyn Conn,
    now: i64,
    limit: i64,
) -> Result<Vec<String>, DbError> {
    conn.column(
        "UPDATE image_blobs SET refs = -1, held_until = $2 WHERE sha256 IN \
         (SELECT sha256 FROM image_blobs WHERE refs <= 0 AND held_until <= $1 LIMIT $3) \
         AND refs <= 0 AND held_until <= $1 \
         RETURNING sha256",
        params![now, now + BLOB_HOLD_SECS, limit],
    )
    .await
}

/// Drops the row of a blob whose bytes were deleted.
pub async fn forget(conn: &mut dyn Conn, sha256: &str) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM image_blobs WHERE sha256 = $1 AND refs = -1",
        params![sha256],
    )
    .await
}

/// How many references a blob has (None: no such blob); for tests and the seed.
pub async fn references(conn: &mut dyn Conn, sha256: &str) -> Result<Option<i64>, DbError> {
    Ok(conn
        .column(
            "SELECT refs FROM image_blobs WHERE sha256 = $1",
            params![sha256],
        )
        .await?
        .into_iter()
        .next())
}

/// Rendition rows per statement in [`add_many`] (six parameters each, well under both
/// backends' limits).
const RENDITIONS_PER_STATEMENT: usize = 1000;

/// Gives many images renditions whose bytes are stored already, in bulk (`souk seed`: a few
/// blobs shared by every seeded image): `(media_id, rendition)` rows, and each blob's
/// reference count raised once by the number of rows that use it. Each blob must be held
/// ([`hold_blobs`]) or referenced already; else it fails as [`record`] does, and the
/// caller's transaction must roll back.
pub async fn add_many(
    conn: &mut dyn Conn,
    renditions: &[(String, NewRendition)],
) -> Result<(), RecordError> {
    let mut uses: Vec<(&NewRendition, i64)> = Vec::new();
    for (_, rendition) in renditions {
        match uses.iter_mut().find(|(r, _)| r.sha256 == rendition.sha256) {
            Some((_, count)) => *count += 1,
            None => uses.push((rendition, 1)),
        }
    }
    for (rendition, count) in &uses {
        let referenced = conn
            .execute(
                "UPDATE image_blobs SET refs = refs + $2, held_until = 0 \
                 WHERE sha256 = $1 AND refs >= 0",
                params![rendition.sha256.as_str(), *count],
            )
            .await?;
        if referenced == 0 {
            return Err(RecordError::BlobBeingDeleted);
        }
    }
    for chunk in renditions.chunks(RENDITIONS_PER_STATEMENT) {
        let values: Vec<Value> = chunk
            .iter()
            .flat_map(|(media_id, r)| {
                [
                    Value::from(media_id),
                    Value::from(r.size.as_str()),
                    Value::from(r.format.as_str()),
                    Value::Int(i64::from(r.width)),
                    Value::Int(i64::from(r.height)),
                    Value::from(&r.sha256),
                ]
            })
            .collect();
        conn.execute(
            &format!(
                "INSERT INTO image_renditions (media_id, size, format, width, height, sha256) \
                 VALUES {}",
                super::placeholders(chunk.len(), 6)
            ),
            &values,
        )
        .await?;
    }
    Ok(())
}

/// A job claimed by a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub media_id: String,
    pub phase: Format,
    pub original_key: String,
    /// Including this one.
    pub attempts: i64,
}

/// Queues the making of `media_id`'s renditions from the original at `original_key`.
pub async fn enqueue(
    conn: &mut dyn Conn,
    media_id: &str,
    original_key: &str,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "INSERT INTO image_jobs (media_id, phase, original_key, created_at) VALUES ($1, $2, $3, $4)",
        params![media_id, Format::Jpeg.as_str(), original_key, now],
    )
    .await
}

/// Claims the oldest job whose lease ran out (or that never had one) until `until`. One
/// statement on both backends; on PostgreSQL two replicas racing for the same row both
/// re-check `claimed_until` after the row lock, so only one gets it (the other finds none
/// this time and asks again).
pub async fn claim(conn: &mut dyn Conn, now: i64, until: i64) -> Result<Option<Job>, DbError> {
    let row = conn
        .query_opt(
            "UPDATE image_jobs SET claimed_until = $2, attempts = attempts + 1 \
             WHERE media_id = (SELECT media_id FROM image_jobs WHERE claimed_until <= $1 \
                               ORDER BY claimed_until, created_at LIMIT 1) \
               AND claimed_until <= $1 \
             RETURNING media_id, phase, original_key, attempts",
            params![now, until],
        )
        .await?;
    let Some(mut row) = row else {
        return Ok(None);
    };
    Ok(Some(Job {
        media_id: row.take()?,
        phase: row.take()?,
        original_key: row.take()?,
        attempts: row.take()?,
    }))
}

/// Gives every lease up (SQLite at start-up: one process, so no lease is anyone's now).
pub async fn release_all(conn: &mut dyn Conn) -> Result<u64, DbError> {
    conn.execute("UPDATE image_jobs SET claimed_until = 0", &[])
        .await
}

/// Moves a job from its JPEG phase to its WebP phase, which the same worker goes on with
/// under its lease.
pub async fn to_webp_phase(conn: &mut dyn Conn, media_id: &str) -> Result<(), DbError> {
    conn.run(
        "UPDATE image_jobs SET phase = $2, attempts = 0 WHERE media_id = $1",
        params![media_id, Format::Webp.as_str()],
    )
    .await
}

/// Ends a job; its original's key, which the caller deletes (None if there was no job).
pub async fn finish(conn: &mut dyn Conn, media_id: &str) -> Result<Option<String>, DbError> {
    Ok(conn
        .column(
            "DELETE FROM image_jobs WHERE media_id = $1 RETURNING original_key",
            params![media_id],
        )
        .await?
        .into_iter()
        .next())
}

/// Every job's original key (to tell which originals are still needed).
pub async fn pending(conn: &mut dyn Conn) -> Result<Vec<(String, Format)>, DbError> {
    let rows = conn
        .query(
            "SELECT media_id, phase FROM image_jobs ORDER BY created_at",
            &[],
        )
        .await?;
    rows.into_iter()
        .map(|mut row| Ok((row.take()?, row.take()?)))
        .collect()
}
