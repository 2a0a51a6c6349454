//! Making an image's renditions: one durable job (`store::renditions`), claimed under a
//! lease, in two phases. The JPEG phase decodes the original, makes the four JPEG sizes,
//! writes their bytes, and in one transaction records them and marks the image
//! `available`; the WebP phase follows at once with the resized pixels still in memory (or,
//! after a crash, decodes again). The original is deleted when both are done: it may carry
//! a GPS position. An original that does not decode, or is gone, removes its image in the
//! JPEG phase; in the WebP phase the image keeps its JPEG renditions.
//!
//! A crash at any point leaves the job claimed until its lease runs out; then a worker
//! (of any replica) does it again. Nothing is visible before its transaction commits, and
//! rendition bytes are content-addressed, so doing a phase twice is harmless. An image
//! whose render is what stops the process is given up after a few tries
//! ([`counted_render`]), as one that does not decode is.

use crate::clock::Clock;
use crate::domain::image::{Format, Size};
use crate::images::blobs::{BlobError, Blobs, sha256_hex};
use crate::images::render::{self, Rendered, Resized};
use crate::store::renditions::{self, Job, NewRendition, RecordError, Recorded};
use crate::store::{Db, DbError, images};

/// What running a job came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Ran {
    /// There was no job to claim.
    Idle,
    /// A job was done (or found moot, or put back for later).
    Worked,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Blob(#[from] BlobError),
    #[error("the rendition thread stopped: {0}")]
    Thread(String),
}

/// Claims the next due job and does it: `lease` in seconds.
pub async fn run_next(
    db: &Db,
    blobs: &Blobs,
    clock: &Clock,
    lease: i64,
    turns: &RenderTurns,
) -> Result<Ran, RunError> {
    let now = clock.now();
    let job = db
        .write(move |conn| Box::pin(async move { renditions::claim(conn, now, now + lease).await }))
        .await?;
    let Some(job) = job else {
        return Ok(Ran::Idle);
    };
    run(db, blobs, job, clock, turns).await?;
    Ok(Ran::Worked)
}

async fn run(
    db: &Db,
    blobs: &Blobs,
    job: Job,
    clock: &Clock,
    turns: &RenderTurns,
) -> Result<(), RunError> {
    let original = match blobs.get_original(&job.original_key).await {
        Ok(bytes) => bytes,
        Err(BlobError::NotFound) => {
            tracing::warn!(media_id = job.media_id, phase = %job.phase.as_str(), "an image's original is gone");
            return unrenderable(db, blobs, &job, clock).await;
        }
        Err(e) => return Err(e.into()),
    };
    let largest = Size::Xlarge.longest_side();
    let phase = job.phase;
    let made = counted_render(db, &job, turns, move || {
        let resized = render::resize(&render::decode(&original, largest)?)?;
        let made = render::encode(&resized, phase)?;
        Ok((resized, made))
    })
    .await?;
    let (resized, made) = match made {
        Rendering::Done(made) => made,
        Rendering::Failed(error) => {
            tracing::warn!(media_id = job.media_id, phase = %phase.as_str(), error, "an image does not decode");
            return unrenderable(db, blobs, &job, clock).await;
        }
        Rendering::Moot => return Ok(()),
    };
    if !record(db, blobs, &job, phase, made, clock).await? || phase == Format::Webp {
        return Ok(());
    }
    webp_phase(db, blobs, &job, resized, clock, turns).await
}

/// The WebP phase right after the JPEG one, from the sizes already made.
async fn webp_phase(
    db: &Db,
    blobs: &Blobs,
    job: &Job,
    resized: Vec<Resized>,
    clock: &Clock,
    turns: &RenderTurns,
) -> Result<(), RunError> {
    // Its JPEG render returned: nothing of it was cut short.
    let job = &Job {
        phase: Format::Webp,
        interrupted_renders: 0,
        ..job.clone()
    };
    let made = counted_render(db, job, turns, move || {
        render::encode(&resized, Format::Webp)
    })
    .await?;
    let failure = match made {
        Rendering::Done(made) => {
            record(db, blobs, job, Format::Webp, made, clock).await?;
            return Ok(());
        }
        Rendering::Failed(error) => error,
        Rendering::Moot => return Ok(()),
    };
    // JPEG worked, so the encoder fails on these sizes, and would at every try: the image
    // keeps its JPEG renditions, as when its original is lost in this phase.
    tracing::error!(
        media_id = job.media_id,
        error = failure,
        "cannot encode WebP"
    );
    unrenderable(db, blobs, job, clock).await
}

/// After this many renders of an image that never returned, its job gives the image up.
const MOST_INTERRUPTED_RENDERS: i64 = 3;

/// Whose turn it is to render in this process. A process that dies takes every render
/// under way with it, and each of their jobs counts one render cut short: the one image
/// to blame is not known. So a job with a render cut short renders alone, while no other
/// render of this process runs; if the process dies again then, that job is the cause.
/// The other images cut short render alone once each, return, and count from 0 again.
#[derive(Default)]
pub struct RenderTurns {
    turns: tokio::sync::RwLock<()>,
    /// Set by a stop ([`RenderTurns::last`]): a turn given after it renders nothing.
    closing: std::sync::atomic::AtomicBool,
}

/// A worker's turn to render: beside others, or alone.
enum Turn<'a> {
    Beside(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'a, ()>),
    Alone(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'a, ()>),
}

impl RenderTurns {
    /// A turn to render, alone or beside others; none once the process is stopping (a
    /// worker that queued for its turn before the stop must not begin a render after it).
    async fn turn(&self, alone: bool) -> Option<Turn<'_>> {
        let turn = if alone {
            Turn::Alone(self.turns.write().await)
        } else {
            Turn::Beside(self.turns.read().await)
        };
        (!self.closing.load(std::sync::atomic::Ordering::SeqCst)).then_some(turn)
    }

    /// Waits for the renders under way to return, and lets no other begin while the
    /// guard lives (a stop): a render cut off by the process's exit would count against
    /// its image as one that stopped the process, and three stops would give a good image
    /// up.
    pub async fn last(&self) -> tokio::sync::RwLockWriteGuard<'_, ()> {
        self.closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.turns.write().await
    }
}

/// What a render came to.
enum Rendering<T> {
    Done(T),
    /// The image cannot be rendered, and would not be at the next try.
    Failed(String),
    /// The job has ended or moved on meanwhile: it is no longer this worker's.
    Moot,
}

/// Runs `render` for `job` (in the phase the job is in once its JPEGs exist, WebP) on a
/// blocking thread, in its turn ([`RenderTurns`]), counted (migration 0054): begun in the
/// job's row, and back to 0 once it returns; a job whose lease another worker has taken
/// over is not rendered. A render that never returned stopped the process: a codec library that
/// aborts, or the OOM killer. After [`MOST_INTERRUPTED_RENDERS`] of them the image is
/// failed without a render, as one that does not decode is, instead of stopping the
/// process at every lease for ever. An outage of the blob store or the database meets the
/// worker before or after a render, so it does not count.
async fn counted_render<T: Send + 'static>(
    db: &Db,
    job: &Job,
    turns: &RenderTurns,
    render: impl FnOnce() -> Result<T, render::DecodeError> + Send + 'static,
) -> Result<Rendering<T>, RunError> {
    let Some(_turn) = turns.turn(job.interrupted_renders > 0).await else {
        // The process is stopping: the job waits for its lease, or the next start.
        return Ok(Rendering::Moot);
    };
    let (claimed, phase) = (job.clone(), job.phase);
    let begun = db
        .write(move |conn| Box::pin(async move { renditions::begin_render(conn, &claimed).await }))
        .await?;
    let Some(begun) = begun else {
        return Ok(Rendering::Moot);
    };
    if begun > MOST_INTERRUPTED_RENDERS {
        tracing::error!(
            media_id = job.media_id,
            phase = %phase.as_str(),
            "renders of an image stopped the process {} times: it is given up",
            begun - 1
        );
        return Ok(Rendering::Failed(
            "its renders stopped the process".to_owned(),
        ));
    }
    let rendered = match tokio::task::spawn_blocking(render).await {
        Ok(Ok(made)) => Rendering::Done(made),
        Ok(Err(e)) => Rendering::Failed(e.to_string()),
        // A codec that panics on these bytes would panic at every try: the image is as
        // unrenderable as one that fails cleanly, not a job to run for ever.
        Err(e) if e.is_panic() => Rendering::Failed("rendering panicked".to_owned()),
        Err(e) => return Err(RunError::Thread(e.to_string())),
    };
    let media_id = job.media_id.clone();
    db.write(move |conn| {
        Box::pin(async move { renditions::render_returned(conn, &media_id).await })
    })
    .await?;
    Ok(rendered)
}

/// Writes rendered bytes to blob storage, each under its SHA-256, and returns what the
/// database records of them. Each blob is held first (`renditions::hold_blobs`), so that
/// no sweep deletes the bytes before a rendition refers to them. Storing a blob again is
/// harmless: its name is its content. None if a blob is being deleted: nothing was
/// written, and the caller tries again later.
pub async fn store_blobs(
    db: &Db,
    blobs: &Blobs,
    made: Vec<Rendered>,
    now: i64,
) -> Result<Option<Vec<NewRendition>>, RunError> {
    let mut new: Vec<NewRendition> = made
        .iter()
        .map(|rendition| NewRendition {
            size: rendition.size,
            format: rendition.format,
            width: rendition.width,
            height: rendition.height,
            sha256: sha256_hex(&rendition.bytes),
            bytes: rendition.bytes.len(),
            generation: 0,
        })
        .collect();
    let holding = db
        .write(move |conn| {
            Box::pin(async move {
                renditions::hold_blobs(conn, &mut new, now).await?;
                Ok::<_, RecordError>(new)
            })
        })
        .await;
    let new = match holding {
        Ok(new) => new,
        Err(RecordError::BlobBeingDeleted) => return Ok(None),
        Err(RecordError::Db(e)) => return Err(e.into()),
    };
    for (rendition, stored) in made.into_iter().zip(&new) {
        if let Err(e) = blobs.put_blob(&stored.sha256, rendition.bytes.into()).await {
            // No rendition will refer to these: the sweep may free them at once. Should
            // this fail too, the holds run out on their own.
            let released = db
                .write(move |conn| {
                    Box::pin(async move { renditions::release_holds(conn, &new).await })
                })
                .await;
            if let Err(e) = released {
                tracing::warn!(error = %e, "cannot give back the holds on blobs");
            }
            return Err(e.into());
        }
    }
    Ok(Some(new))
}

/// Writes the renditions' bytes, then records them in one transaction and moves the job
/// on (the image `available` after JPEG; the job done and the original deleted after
/// WebP). False if the job was not there any more, or must wait.
async fn record(
    db: &Db,
    blobs: &Blobs,
    job: &Job,
    phase: Format,
    made: Vec<Rendered>,
    clock: &Clock,
) -> Result<bool, RunError> {
    // The lease runs out, and the job runs again once the blob is gone.
    let Some(new) = store_blobs(db, blobs, made, clock.now()).await? else {
        return Ok(false);
    };
    let (media_id, now) = (job.media_id.clone(), clock.now());
    let recorded = db
        .write(move |conn| {
            Box::pin(async move {
                let recorded = renditions::record(conn, &media_id, phase, &new).await?;
                if recorded != Recorded::Done {
                    return Ok(None);
                }
                let original = match phase {
                    Format::Jpeg => {
                        images::set_available(conn, &media_id).await?;
                        renditions::to_webp_phase(conn, &media_id).await?;
                        None
                    }
                    Format::Webp => renditions::finish(conn, &media_id, now).await?,
                };
                Ok::<_, RecordError>(Some(original))
            })
        })
        .await;
    match recorded {
        Ok(Some(original)) => {
            if let Some(key) = original {
                forget_original(db, blobs, key).await?;
            }
            Ok(true)
        }
        Ok(None) => {
            // The image went meanwhile, or the worker that took over this job's lease
            // recorded the phase first: the holds were given back, and blobs nothing else
            // uses go now.
            crate::usecase::images::sweep(db, blobs, clock).await;
            Ok(false)
        }
        // The lease runs out, and the job runs again once the blob is gone.
        Err(RecordError::BlobBeingDeleted) => Ok(false),
        Err(RecordError::Db(e)) => Err(e.into()),
    }
}

/// What becomes of an image whose original is gone or does not decode. Before its JPEG
/// renditions exist, the image goes ([`drop_image`]). After, clients may already show it:
/// it stays, with JPEG renditions only (served where WebP is asked for), and the job ends.
async fn unrenderable(db: &Db, blobs: &Blobs, job: &Job, clock: &Clock) -> Result<(), RunError> {
    if job.phase == Format::Jpeg {
        return drop_image(db, blobs, job, clock).await;
    }
    tracing::warn!(
        media_id = job.media_id,
        "the image keeps its JPEG renditions only"
    );
    let (media_id, now) = (job.media_id.clone(), clock.now());
    let original = db
        .write(move |conn| {
            Box::pin(async move {
                // Unless a worker that took the job over has ended it meanwhile.
                if !renditions::hold_job(conn, &media_id, Format::Webp).await? {
                    return Ok(None);
                }
                renditions::finish(conn, &media_id, now).await
            })
        })
        .await?;
    if let Some(key) = original {
        forget_original(db, blobs, key).await?;
    }
    Ok(())
}

/// Removes the image of `job`, whose original is gone or cannot become renditions (the
/// API then answers 404), if the job is still where this worker found it: a worker whose
/// lease ran out may find the original gone because the one that took the job over
/// finished it, and the image is then whole.
pub async fn drop_image(db: &Db, blobs: &Blobs, job: &Job, clock: &Clock) -> Result<(), RunError> {
    let (media_id, phase, now) = (job.media_id.clone(), job.phase, clock.now());
    let dropped = db
        .write(move |conn| {
            Box::pin(async move {
                // The ad is held first, as every writer of its images holds it: the images
                // after this one move up.
                let Some((ad, _)) = images::get_held(conn, &media_id).await? else {
                    return Ok(false);
                };
                crate::store::ads::lock(conn, ad.item_number).await?;
                if !renditions::hold_job(conn, &media_id, phase).await? {
                    return Ok(false);
                }
                renditions::remove_image(conn, ad.item_number, &media_id, now).await?;
                Ok::<_, DbError>(true)
            })
        })
        .await?;
    if dropped {
        // Deletes the original the removal queued first, then the image's other blobs.
        crate::usecase::images::sweep(db, blobs, clock).await;
    }
    Ok(())
}

/// Deletes the original of a job that has ended (queued for deletion in the transaction
/// that ended it: `store::renditions::finish`), then forgets it. If this stops half way,
/// a blob sweep deletes it ([`crate::usecase::images::sweep`]).
async fn forget_original(db: &Db, blobs: &Blobs, key: String) -> Result<(), RunError> {
    blobs.delete_original(&key).await?;
    db.write(move |conn| Box::pin(async move { renditions::forget_original(conn, &key).await }))
        .await?;
    Ok(())
}

/// Gives every job's lease up: at the start of a SQLite server, the one process that
/// could hold them.
pub async fn release_leases(db: &Db) -> Result<u64, DbError> {
    db.write(|conn| Box::pin(async move { renditions::release_all(conn).await }))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stop's last turn waits for the render under way; a worker that queued for its
    /// turn before the stop gets it after the render, but renders nothing.
    #[tokio::test]
    async fn a_stop_waits_for_the_render_under_way_and_lets_none_begin() {
        let turns = std::sync::Arc::new(RenderTurns::default());
        let rendering = turns.turn(false).await.expect("a turn before the stop");
        let queued = tokio::spawn({
            let turns = turns.clone();
            async move { turns.turn(true).await.is_some() }
        });
        let short = std::time::Duration::from_millis(50);
        tokio::time::sleep(short).await;
        let last = tokio::spawn({
            let turns = turns.clone();
            async move {
                let _last = turns.last().await;
            }
        });
        tokio::time::sleep(short).await;
        assert!(!last.is_finished(), "a render is under way");
        drop(rendering);
        let rendered = tokio::time::timeout(short, queued).await.unwrap().unwrap();
        assert!(
            !rendered,
            "the queued worker renders nothing after the stop"
        );
        tokio::time::timeout(short, last).await.unwrap().unwrap();
    }
}
