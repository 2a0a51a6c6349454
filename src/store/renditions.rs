//! What images become (migration 0012): renditions, the content-addressed blobs they point
//! at (with reference counts), and the durable jobs that make them. The bytes live in the
//! object store (`images::blobs`); these rows say which bytes exist and who needs them.

use std::sync::LazyLock;

use super::images::{self, ImageHolder};
use super::record::record;
use super::{Conn, DbError, Record, Value, numbered};
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
    /// The registration of its blob that [`hold_blobs`] held (0 before): it is recorded
    /// only on that one, not on a row a sweep dropped and another worker registered anew.
    pub generation: i64,
}

/// How long a worker's hold on a blob lasts ([`hold_blobs`]): far longer than writing its
/// bytes and recording a rendition take. A hold that a crash left is over by then.
pub const BLOB_HOLD_SECS: i64 = 3600;

/// How long a sweep's claim on a blob lasts ([`claim_unreferenced`]): longer than deleting
/// its bytes takes; then another sweep takes over what a stopped one left.
pub const CLAIM_HOLD_SECS: i64 = 300;

/// The blobs of `renditions`, each once, in the order every writer locks them (by
/// SHA-256), with how many of the renditions use each and the generation they hold.
fn distinct_blobs<'a>(
    renditions: impl IntoIterator<Item = &'a NewRendition>,
) -> Vec<(&'a NewRendition, i64)> {
    let mut sorted: Vec<&NewRendition> = renditions.into_iter().collect();
    sorted.sort_by(|a, b| a.sha256.cmp(&b.sha256));
    let mut distinct: Vec<(&NewRendition, i64)> = Vec::new();
    for rendition in sorted {
        match distinct.last_mut() {
            Some((last, uses)) if last.sha256 == rendition.sha256 => *uses += 1,
            _ => distinct.push((rendition, 1)),
        }
    }
    distinct
}

/// Registers each blob of `renditions` before its bytes are written, and holds it: a new
/// one with refs 0 and a generation of its own, an existing one counted as held once more
/// (`holds`) until at least [`BLOB_HOLD_SECS`] from `now`. No sweep claims a held blob, and
/// [`record`] refers only to the registration held here, whose generation it sets in
/// `renditions`. Fails if a blob is being deleted: its bytes must not be written now, and
/// the job runs again later.
pub async fn hold_blobs(
    conn: &mut dyn Conn,
    renditions: &mut [NewRendition],
    now: i64,
) -> Result<(), RecordError> {
    let mut generations = Vec::new();
    for (rendition, _) in distinct_blobs(renditions.iter()) {
        let generation: Option<i64> = conn
            .column(
                "INSERT INTO image_blobs \
                 (sha256, content_type, bytes, refs, holds, held_until, generation) \
                 VALUES ($1, $2, $3, 0, 1, $4, $5) \
                 ON CONFLICT (sha256) DO UPDATE SET holds = image_blobs.holds + 1, \
                 held_until = CASE WHEN image_blobs.held_until > excluded.held_until \
                 THEN image_blobs.held_until ELSE excluded.held_until END \
                 WHERE image_blobs.refs >= 0 RETURNING generation",
                params![
                    rendition.sha256.as_str(),
                    rendition.format.content_type(),
                    rendition.bytes as i64,
                    now + BLOB_HOLD_SECS,
                    new_generation()
                ],
            )
            .await?
            .into_iter()
            .next();
        let Some(generation) = generation else {
            return Err(RecordError::BlobBeingDeleted);
        };
        generations.push((rendition.sha256.clone(), generation));
    }
    for rendition in renditions.iter_mut() {
        if let Some((_, generation)) = generations.iter().find(|(s, _)| *s == rendition.sha256) {
            rendition.generation = *generation;
        }
    }
    Ok(())
}

/// A number that tells one registration of a blob from another.
fn new_generation() -> i64 {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    i64::from_le_bytes(bytes)
}

/// What recording renditions did.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    /// The renditions are the image's now.
    Done,
    /// The image is gone, or another worker recorded this phase already: nothing to do
    /// (the holds on the blobs are given back, so a sweep frees those nothing else uses).
    NoJob,
}

/// Why renditions could not be recorded: the transaction must roll back.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A blob is being deleted right now, or the registration held for it is gone (a
    /// sweep deleted it once the hold ran out): try again later.
    #[error("a blob is being deleted")]
    BlobBeingDeleted,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Records the renditions of one phase of `media_id`'s job in the caller's transaction:
/// the job must still be in `phase` (else [`Recorded::NoJob`]); each blob, held by
/// [`hold_blobs`] before its bytes were written, gains its references on the registration
/// held, and the hold is given back. The caller then moves the job on. On an error the
/// caller's transaction must roll back (return the error from `Db::write`).
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
    if !hold_job(conn, media_id, phase).await? {
        release_holds(conn, renditions).await?;
        return Ok(Recorded::NoJob);
    }
    for (rendition, uses) in distinct_blobs(renditions) {
        let referenced = conn
            .execute(
                "UPDATE image_blobs SET refs = refs + $2, holds = holds - 1 \
                 WHERE sha256 = $1 AND generation = $3 AND refs >= 0",
                params![rendition.sha256.as_str(), uses, rendition.generation],
            )
            .await?;
        if referenced == 0 {
            return Err(RecordError::BlobBeingDeleted);
        }
    }
    for rendition in renditions {
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

/// Gives up the holds of [`hold_blobs`] on the blobs of `renditions` that none of them
/// will refer to: a blob nothing else holds or references is then swept at once.
pub async fn release_holds(
    conn: &mut dyn Conn,
    renditions: &[NewRendition],
) -> Result<(), DbError> {
    for (rendition, _) in distinct_blobs(renditions) {
        conn.run(
            "UPDATE image_blobs SET holds = holds - 1 \
             WHERE sha256 = $1 AND generation = $2 AND refs >= 0 AND holds > 0",
            params![rendition.sha256.as_str(), rendition.generation],
        )
        .await?;
    }
    Ok(())
}

/// Holds `media_id`'s job row, if it has one, until the transaction ends (`lock_row`), and
/// tells whether the job is still in `phase`: a worker whose lease ran out finds it moved
/// on, or ended, by the worker that took it over.
pub async fn hold_job(conn: &mut dyn Conn, media_id: &str, phase: Format) -> Result<bool, DbError> {
    conn.lock_row(
        "SELECT media_id FROM image_jobs WHERE media_id = $1",
        media_id,
    )
    .await?;
    let job = conn
        .query_opt(
            "SELECT media_id FROM image_jobs WHERE media_id = $1 AND phase = $2",
            params![media_id, phase.as_str()],
        )
        .await?;
    Ok(job.is_some())
}

/// Removes images in the caller's transaction: their jobs, their renditions' references
/// and their rows. The originals of those still being processed are queued for deletion
/// ([`finish`]): the caller wakes the blob sweeper once the transaction has committed.
///
/// The jobs go first, in media-id order: a rendition worker recording a phase holds its
/// image's job row ([`record`]), so a removal waits for its renditions and
/// removes them too. Both then take blobs in SHA-256 order and the image row last, so
/// they never wait for each other in a circle.
pub async fn remove_images(
    conn: &mut dyn Conn,
    media_ids: &[&str],
    now: i64,
) -> Result<(), DbError> {
    let mut sorted = media_ids.to_vec();
    sorted.sort_unstable();
    for media_id in &sorted {
        finish(conn, media_id, now).await?;
    }
    remove_all(conn, &sorted).await?;
    for media_id in &sorted {
        images::delete(conn, media_id).await?;
    }
    Ok(())
}

/// Removes one image of the ad `item_number` ([`remove_images`]) and moves the ad's later
/// images up ([`images::close_gaps`]). The caller holds the ad (`ads::lock`).
pub async fn remove_image(
    conn: &mut dyn Conn,
    item_number: i64,
    media_id: &str,
    now: i64,
) -> Result<(), DbError> {
    remove_images(conn, &[media_id], now).await?;
    images::close_gaps(conn, item_number).await
}

/// Removes the renditions of `media_ids` and their blob references (a blob left with none
/// is swept: [`claim_unreferenced`]). Blobs are updated in SHA-256 order, as every writer
/// locks them.
pub async fn remove_all(conn: &mut dyn Conn, media_ids: &[&str]) -> Result<(), DbError> {
    let mut blobs: Vec<String> = Vec::new();
    for media_id in media_ids {
        let removed: Vec<String> = conn
            .column(
                "DELETE FROM image_renditions WHERE media_id = $1 RETURNING sha256",
                params![*media_id],
            )
            .await?;
        blobs.extend(removed);
    }
    blobs.sort();
    for run in blobs.chunk_by(|a, b| a == b) {
        conn.execute(
            "UPDATE image_blobs SET refs = refs - $2 WHERE sha256 = $1 AND refs >= $2",
            params![run[0].as_str(), run.len() as i64],
        )
        .await?;
    }
    Ok(())
}

/// Blobs one sweep claimed for deletion, and when its claim runs out (which also tells
/// its claim from a later one).
#[derive(Debug)]
pub struct Claim {
    pub until: i64,
    pub blobs: Vec<String>,
}

/// Claims up to `limit` blobs for deletion: those nothing references nor holds (refs 0,
/// and no hold of [`hold_blobs`] left that has not run out), and those whose earlier claim
/// ran out (a sweep that stopped). A claim sets refs -1, so that from now on none can be
/// held or referenced, and holds the blob for [`CLAIM_HOLD_SECS`], so that no other sweep
/// takes it over meanwhile. The caller deletes their bytes, then [`forget`]s them. On
/// PostgreSQL a blob another transaction has locked is left for the next sweep, so that
/// a claim waits for no one.
pub async fn claim_unreferenced(
    conn: &mut dyn Conn,
    now: i64,
    limit: i64,
) -> Result<Claim, DbError> {
    let skip_locked = conn.skip_locked();
    let until = now + CLAIM_HOLD_SECS;
    let claimable = "refs <= 0 AND (held_until <= $1 OR (refs = 0 AND holds = 0))";
    let blobs = conn
        .column(
            &format!(
                "WITH picked AS \
                 (SELECT sha256 FROM image_blobs WHERE {claimable} LIMIT $3{skip_locked}) \
                 UPDATE image_blobs SET refs = -1, holds = 0, held_until = $2 \
                 WHERE sha256 IN (SELECT sha256 FROM picked) AND {claimable} \
                 RETURNING sha256"
            ),
            params![now, until, limit],
        )
        .await?;
    Ok(Claim { until, blobs })
}

/// Drops the row of a blob whose bytes were deleted under the claim that runs out at
/// `until` (a sweep that stalled past it finds its claim taken over, and drops nothing).
pub async fn forget(conn: &mut dyn Conn, sha256: &str, until: i64) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM image_blobs WHERE sha256 = $1 AND refs = -1 AND held_until = $2",
        params![sha256, until],
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
/// reference count raised once by the number of rows that use it. Each blob must be still
/// registered as [`hold_blobs`] held it; else it fails as [`record`] does, and the
/// caller's transaction must roll back. The holds are left to run out: the seed refers
/// to its blobs batch after batch.
pub async fn add_many(
    conn: &mut dyn Conn,
    renditions: &[(String, NewRendition)],
) -> Result<(), RecordError> {
    for (rendition, uses) in distinct_blobs(renditions.iter().map(|(_, r)| r)) {
        let referenced = conn
            .execute(
                "UPDATE image_blobs SET refs = refs + $2 \
                 WHERE sha256 = $1 AND generation = $3 AND refs >= 0",
                params![rendition.sha256.as_str(), uses, rendition.generation],
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
    /// The end of this worker's lease (`claimed_until`): no other claim of the job has
    /// the same, since a claim takes a job only once the lease before it has ended.
    pub lease_until: i64,
    /// Renders of the job that began and never returned before this claim (migration
    /// 0054).
    pub interrupted_renders: i64,
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
/// statement on both backends; on PostgreSQL a job that another replica is claiming at
/// this moment is passed over for the next, so that replicas with a backlog each take one
/// instead of one finding none and pausing.
pub async fn claim(conn: &mut dyn Conn, now: i64, until: i64) -> Result<Option<Job>, DbError> {
    let row = conn
        .query_opt(
            &format!(
                "UPDATE image_jobs SET claimed_until = $2 \
                 WHERE media_id = (SELECT media_id FROM image_jobs WHERE claimed_until <= $1 \
                                   ORDER BY claimed_until, created_at LIMIT 1{}) \
                   AND claimed_until <= $1 \
                 RETURNING media_id, phase, original_key, interrupted_renders",
                conn.skip_locked()
            ),
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
        lease_until: until,
        interrupted_renders: row.take()?,
    }))
}

/// Counts a render of `job`'s image as begun (migration 0054), if the job is still in
/// its phase and under its lease. Returns how many of its renders have begun without
/// returning, this one included; None if the job has ended, moved on, or been taken over
/// by another worker once this one's lease ran out (which then begins no render of it).
pub async fn begin_render(conn: &mut dyn Conn, job: &Job) -> Result<Option<i64>, DbError> {
    conn.query_opt(
        "UPDATE image_jobs SET interrupted_renders = interrupted_renders + 1 \
         WHERE media_id = $1 AND phase = $2 AND claimed_until = $3 \
         RETURNING interrupted_renders",
        params![job.media_id.as_str(), job.phase.as_str(), job.lease_until],
    )
    .await?
    .map(|mut row| row.take())
    .transpose()
}

/// A render of the job's image returned, whatever it returned: it stopped no process.
pub async fn render_returned(conn: &mut dyn Conn, media_id: &str) -> Result<(), DbError> {
    conn.run(
        "UPDATE image_jobs SET interrupted_renders = 0 WHERE media_id = $1",
        params![media_id],
    )
    .await
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
        "UPDATE image_jobs SET phase = $2 WHERE media_id = $1",
        params![media_id, Format::Webp.as_str()],
    )
    .await
}

/// Ends a job, and queues its original for deletion in the same transaction (migration
/// 0052): returns the original's key, for the caller to delete once the transaction has
/// committed and then [`forget_original`] (None if there was no job). Whatever the caller
/// does not delete, a blob sweep does ([`originals_to_delete`]).
pub async fn finish(
    conn: &mut dyn Conn,
    media_id: &str,
    now: i64,
) -> Result<Option<String>, DbError> {
    let ended: Vec<String> = conn
        .column(
            "DELETE FROM image_jobs WHERE media_id = $1 RETURNING original_key",
            params![media_id],
        )
        .await?;
    let Some(key) = ended.into_iter().next() else {
        return Ok(None);
    };
    conn.run(
        "INSERT INTO original_deletions (original_key, created_at) VALUES ($1, $2) \
         ON CONFLICT (original_key) DO NOTHING",
        params![key.as_str(), now],
    )
    .await?;
    Ok(Some(key))
}

/// Up to `limit` originals queued for deletion, oldest first.
pub async fn originals_to_delete(conn: &mut dyn Conn, limit: i64) -> Result<Vec<String>, DbError> {
    conn.column(
        "SELECT original_key FROM original_deletions ORDER BY created_at, original_key LIMIT $1",
        params![limit],
    )
    .await
}

/// Forgets an original whose bytes are gone.
pub async fn forget_original(conn: &mut dyn Conn, key: &str) -> Result<(), DbError> {
    conn.run(
        "DELETE FROM original_deletions WHERE original_key = $1",
        params![key],
    )
    .await
}

/// Of the originals `keys`, those that a job still needs (their image is being made).
pub async fn originals_in_use(
    conn: &mut dyn Conn,
    keys: &[String],
) -> Result<Vec<String>, DbError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let values: Vec<Value> = keys.iter().map(|key| Value::Text(key.clone())).collect();
    conn.column(
        &format!(
            "SELECT original_key FROM image_jobs WHERE original_key IN ({})",
            numbered(1, keys.len())
        ),
        &values,
    )
    .await
}
