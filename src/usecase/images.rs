//! The images of an ad: adding (uploaded or fetched bytes), reading, deleting and
//! reordering them. Adding stores each original in the object store and, in one
//! transaction, the image rows (`processing`) and their rendition jobs; the rendition
//! workers (`usecase::renditions`) do the rest.
//!
//! Unlike the other use cases these take the [`Db`] and the [`Blobs`] rather than one
//! connection: an upload writes bytes to the object store around its transaction, and the
//! SQLite writer waits for nothing but the database.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use crate::clock::Clock;
use crate::domain::advertisement::{AdStatus, ItemId};
use crate::domain::field_error::FieldError;
use crate::domain::image::media_id;
use crate::domain::image::{ImageStatus, Size};
use crate::domain::locale::Text;
use crate::images::blobs::{Blobs, sha256_hex};
use crate::images::check::{self, Checked, Limits, Refusal};
use crate::store::images::{self as stored, ImageHolder, ImageRecord};
use crate::store::renditions::{self, RenditionRecord};
use crate::store::{Conn, Db, DbError};
use crate::store::{ads, alerts};

use super::advertisements::{Reader, own_existing};
use super::{Error, Thing, UploadRefusal, Wake};

/// One file to add: its bytes, the content type its sender gave (if it named one), and the
/// input it came in (`file`, `files[2]`, `urls[0]`), which errors name.
#[derive(Clone, Debug)]
pub struct Upload {
    pub bytes: Bytes,
    pub content_type: Option<String>,
    pub field: String,
}

/// The bounds of adding images.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    pub max_images: usize,
    pub limits: Limits,
}

/// The images just added, in order, and the ad's images now.
#[derive(Debug)]
pub struct Added {
    pub item: ItemId,
    pub added: Vec<ImageRecord>,
}

/// Adds `uploads` to `seller`'s ad `item` (after its images, or instead of them with
/// `replace_all`, in one transaction). Every file is checked first; on any refusal, or
/// any failure, nothing is stored: no row, no bytes. `uploads` is the caller's reading of
/// the request (see [`Error::Request`]), reported only once the caller is the seller.
#[allow(clippy::too_many_arguments)] // the request's parts, each needed once
pub async fn add<R: Send + 'static>(
    db: &Db,
    blobs: &Blobs,
    seller: i64,
    item: ItemId,
    uploads: Result<Vec<Upload>, R>,
    replace_all: bool,
    rules: Rules,
    clock: &Clock,
    sweeps: &Wake,
) -> Result<Added, Error<R>> {
    let now = clock.now();
    check_seller(db, seller, item, now).await?;
    let uploads = uploads.map_err(Error::Request)?;
    if uploads.is_empty() {
        return Err(FieldError::missing("image").into());
    }
    // Every header read and every file hashed: for a large upload (24 files of up to
    // 20 MiB) a second or more of work, done on a blocking thread rather than on a runtime
    // worker that other requests wait for.
    let examined = super::on_blocking_thread(move || {
        let checked = check_all(&uploads, rules.limits);
        let hashes: Vec<String> = match &checked {
            Ok(_) => uploads
                .iter()
                .map(|upload| sha256_hex(&upload.bytes))
                .collect(),
            Err(_) => Vec::new(),
        };
        (uploads, checked, hashes)
    })
    .await;
    let Some((uploads, checked, hashes)) = examined else {
        return Err(Error::Db(DbError::Unavailable(
            "the server is stopping".into(),
        )));
    };
    let checked = checked?;
    let mut new_images = Vec::with_capacity(uploads.len());
    let mut stored_keys = Vec::with_capacity(uploads.len());
    for ((upload, checked), sha256) in uploads.iter().zip(&checked).zip(hashes) {
        let media_id = new_media_id(now);
        let key = match blobs.put_original(&media_id, upload.bytes.clone()).await {
            Ok(key) => key,
            Err(e) => {
                forget_originals(blobs, &stored_keys).await;
                return Err(Error::Db(DbError::Unavailable(e.to_string())));
            }
        };
        stored_keys.push(key.clone());
        new_images.push((
            ImageRecord {
                media_id,
                position: 0,
                status: ImageStatus::Processing,
                content_type: checked.kind.content_type().to_owned(),
                width: i64::from(checked.width),
                height: i64::from(checked.height),
                bytes: upload.bytes.len() as i64,
                sha256,
            },
            key,
        ));
    }
    let written = db
        .write(move |conn| {
            Box::pin(async move {
                record_added(conn, seller, item, new_images, replace_all, rules, now).await
            })
        })
        .await;
    match written {
        Ok(added) => {
            if replace_all {
                forget_removed(sweeps);
            }
            Ok(Added { item, added })
        }
        // The images may have been recorded (PostgreSQL lost the connection at COMMIT and
        // could not be asked since): their originals stay, for the renditions if so; if
        // not, the hourly sweep of stray originals deletes them.
        Err(e @ Error::Db(DbError::OutcomeUnknown(_))) => Err(e),
        Err(e) => {
            forget_originals(blobs, &stored_keys).await;
            Err(e)
        }
    }
}

/// Whether `seller` may add images to their ad `item`: `NotFound` or `Forbidden` if not.
/// Callers check this before doing anything on the caller's behalf (fetching URLs makes
/// Souk connect somewhere).
pub async fn check_seller<R: Send + 'static>(
    db: &Db,
    seller: i64,
    item: ItemId,
    now: i64,
) -> Result<(), Error<R>> {
    db.read(move |conn| {
        Box::pin(async move { own_existing::<R>(conn, seller, item, now).await.map(|_| ()) })
    })
    .await
}

/// Checks every file; all refusals at once.
fn check_all<R>(uploads: &[Upload], limits: Limits) -> Result<Vec<Checked>, Error<R>> {
    let mut checked = Vec::with_capacity(uploads.len());
    let mut refused = Vec::new();
    let mut kind = UploadRefusal::Invalid;
    for upload in uploads {
        match check::check(&upload.bytes, upload.content_type.as_deref(), limits) {
            Ok(ok) => checked.push(ok),
            Err(refusal) => {
                kind = match (&refusal, kind) {
                    (Refusal::TooLarge { .. }, _) | (_, UploadRefusal::TooLarge) => {
                        UploadRefusal::TooLarge
                    }
                    (Refusal::Unsupported(_), _) | (_, UploadRefusal::Unsupported) => {
                        UploadRefusal::Unsupported
                    }
                    _ => UploadRefusal::Invalid,
                };
                refused.push(refusal.field_error(&upload.field));
            }
        }
    }
    if refused.is_empty() {
        Ok(checked)
    } else {
        Err(Error::Upload(kind, refused))
    }
}

fn new_media_id(now: i64) -> String {
    let mut random = [0u8; 10];
    getrandom::fill(&mut random).expect("the operating system's random source");
    let unix_ms = u64::try_from(now).unwrap_or(0) * 1000 + u64::from(random[9]);
    media_id(unix_ms, random)
}

/// The transaction of an upload: the seller's ad still there, the cap kept, the old images
/// gone with `replace_all`, the new ones and their jobs in. Returns the new images.
async fn record_added<R>(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    new_images: Vec<(ImageRecord, String)>,
    replace_all: bool,
    rules: Rules,
    now: i64,
) -> Result<Vec<ImageRecord>, Error<R>> {
    // Held first: two uploads at once would number their images after the same last one.
    ads::lock(conn, item.number()).await?;
    let ad = own_existing(conn, seller, item, now).await?;
    let mut last_position = ad.images.iter().map(|i| i.position).max().unwrap_or(0);
    if replace_all {
        let media_ids: Vec<&str> = ad.images.iter().map(|i| i.media_id.as_str()).collect();
        renditions::remove_images(conn, &media_ids, now).await?;
        last_position = 0;
    }
    let kept = if replace_all { 0 } else { ad.images.len() };
    if kept + new_images.len() > rules.max_images {
        return Err(too_many(rules.max_images, kept).into());
    }
    let mut added = Vec::with_capacity(new_images.len());
    for (mut image, key) in new_images {
        last_position += 1;
        image.position = last_position;
        stored::insert(conn, ad.number, std::slice::from_ref(&image), now).await?;
        renditions::enqueue(conn, &image.media_id, &key, now).await?;
        added.push(image);
    }
    if ad.images.is_empty() && !added.is_empty() {
        // An ad with images now matches searches `withImages`: news to their alerts.
        alerts::queue(conn, ad.number).await?;
    }
    Ok(added)
}

fn too_many(max: usize, kept: usize) -> FieldError {
    FieldError::new(
        "image",
        "too-many-images",
        Text::new(
            format!("een advertentie heeft hoogstens {max} afbeeldingen (nu {kept})"),
            format!("une annonce a au plus {max} images (actuellement {kept})"),
        ),
    )
    .with_value(max as i64)
}

/// Finishes a removal of images once its transaction has committed: wakes the blob
/// sweeper, which frees their blobs and deletes the originals of those still being made
/// (queued by the removal's transaction), off the request. What a stopped replica was
/// woken for, the hourly upkeep of any replica sweeps.
pub fn forget_removed(sweeps: &Wake) {
    sweeps.wake();
}

/// Deletes the originals of an upload that was not recorded (a failure only leaves bytes
/// behind).
async fn forget_originals(blobs: &Blobs, keys: &[String]) {
    for key in keys {
        if let Err(e) = blobs.delete_original(key).await {
            tracing::warn!(error = %e, key, "cannot delete an image original");
        }
    }
}

/// How many blobs one sweep frees at most.
const SWEEP_MOST: usize = 500;

/// How long deleting one blob's bytes may take: well within its claim
/// (`renditions::CLAIM_HOLD_SECS`), so that no other sweep takes the blob over, and no
/// worker writes its bytes anew, while they are being deleted.
const BLOB_DELETE_SECS: u64 = 60;

/// Deletes the originals queued for deletion ([`delete_queued_originals`]) and frees the
/// blobs nothing references nor holds any more ([`free_unreferenced_blobs`]): after a
/// deletion, and in the upkeep for what a crash left and for blobs whose holds ran out.
pub async fn sweep(db: &Db, blobs: &Blobs, clock: &Clock) {
    delete_queued_originals(db, blobs).await;
    free_unreferenced_blobs(db, blobs, clock).await;
}

/// Deletes the originals that the transactions ending their jobs queued
/// (`store::renditions::finish`) and that no one deleted since: of images removed while
/// being made, and of any job whose worker stopped before it deleted the original itself.
/// Deleting an original twice is harmless, so sweeps of two replicas need no claim here.
/// The first original that cannot be deleted ends this part of the sweep.
async fn delete_queued_originals(db: &Db, blobs: &Blobs) {
    let limit = SWEEP_MOST as i64;
    let queued = db
        .read(move |conn| Box::pin(renditions::originals_to_delete(conn, limit)))
        .await;
    let keys = match queued {
        Ok(keys) => keys,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the originals to delete");
            return;
        }
    };
    for key in keys {
        if !deleted_in_time(blobs.delete_original(&key), &key).await {
            return;
        }
        let forgotten = db
            .write(move |conn| {
                Box::pin(async move { renditions::forget_original(conn, &key).await })
            })
            .await;
        if let Err(e) = forgotten {
            tracing::warn!(error = %e, "cannot forget a deleted original; a later sweep retries");
        }
    }
}

/// How old an original that no job needs must be to count as a stray: an upload records
/// its originals' jobs within its request, well within this.
const STRAY_AFTER_SECS: i64 = 3600;

/// Deletes the originals that no job needs and that are too old to belong to an upload
/// still being recorded: left by an upload that stopped between storing its files and
/// recording its images (a crash, or a failure whose own deletion failed too). Only
/// originals being made are kept, so the listing is short. Also the files that a local
/// store's writes left when cut short ([`Blobs::delete_interrupted_writes`]). In the hourly
/// upkeep.
pub async fn delete_stray_originals(db: &Db, blobs: &Blobs, clock: &Clock) {
    let before = clock.now() - STRAY_AFTER_SECS;
    match blobs.delete_interrupted_writes(before).await {
        Ok(deleted) => {
            for path in deleted {
                tracing::info!(path, "deleted a file that a write cut short left");
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot delete what cut-short writes left"),
    }
    let stored = match blobs.originals_stored_before(before).await {
        Ok(keys) => keys,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list the originals");
            return;
        }
    };
    for some in stored.chunks(SWEEP_MOST) {
        let keys = some.to_vec();
        let in_use = db
            .read(move |conn| {
                Box::pin(async move { renditions::originals_in_use(conn, &keys).await })
            })
            .await;
        let in_use: std::collections::HashSet<String> = match in_use {
            Ok(keys) => keys.into_iter().collect(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read which originals are in use");
                return;
            }
        };
        for key in some.iter().filter(|key| !in_use.contains(*key)) {
            if !deleted_in_time(blobs.delete_original(key), key).await {
                return;
            }
            tracing::info!(key, "deleted an original that no upload recorded");
        }
    }
}

/// Whether `deletion` (of the object `name`) succeeded within [`BLOB_DELETE_SECS`]; if
/// not, says so in the log: the sweep ends there, and a later one retries.
async fn deleted_in_time(
    deletion: impl std::future::Future<Output = Result<(), crate::images::blobs::BlobError>>,
    name: &str,
) -> bool {
    let limit = std::time::Duration::from_secs(BLOB_DELETE_SECS);
    match tokio::time::timeout(limit, deletion).await {
        Ok(Ok(())) => true,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, name, "cannot delete from the object store; a later sweep retries");
            false
        }
        Err(_) => {
            tracing::warn!(
                name,
                "deleting from the object store took too long; a later sweep retries"
            );
            false
        }
    }
}

/// Frees the blobs nothing references nor holds any more
/// (`store::renditions::claim_unreferenced`). Each blob is claimed just before its bytes
/// are deleted, and the deletion is given up before the claim could run out. The first
/// blob that cannot be deleted ends the sweep (the object store is likely unwell): it
/// stays claimed until its claim runs out, and a later sweep tries again.
async fn free_unreferenced_blobs(db: &Db, blobs: &Blobs, clock: &Clock) {
    for _ in 0..SWEEP_MOST {
        let now = clock.now();
        let claimed = db
            .write(move |conn| {
                Box::pin(async move { renditions::claim_unreferenced(conn, now, 1).await })
            })
            .await;
        let claim = match claimed {
            Ok(claim) => claim,
            Err(e) => {
                tracing::warn!(error = %e, "cannot claim unreferenced blobs");
                return;
            }
        };
        let Some(sha256) = claim.blobs.into_iter().next() else {
            return;
        };
        if !deleted_in_time(blobs.delete_blob(&sha256), &sha256).await {
            return;
        }
        let until = claim.until;
        let forgotten = db
            .write(move |conn| {
                Box::pin(async move { renditions::forget(conn, &sha256, until).await })
            })
            .await;
        if let Err(e) = forgotten {
            tracing::warn!(error = %e, "cannot forget a deleted blob; a later sweep retries");
        }
    }
}

/// Whether `reader` may see an ad of `seller` in `status` (as it is now): online ones
/// anyone, others their seller with `read`.
fn visible(seller: i64, status: AdStatus, reader: Reader) -> bool {
    status == AdStatus::Online
        || (status != AdStatus::Deleted && reader.private && reader.user == Some(seller))
}

/// The images of an ad the reader may see, in order.
pub async fn of_ad(
    conn: &mut dyn Conn,
    item: ItemId,
    reader: Reader,
    now: i64,
) -> Result<Vec<ImageRecord>, Error> {
    let record = ads::get(conn, item.number())
        .await?
        .filter(|ad| visible(ad.seller_id, ad.status_at(now), reader))
        .ok_or(Error::NotFound(Thing::Advertisement))?;
    Ok(record.images)
}

/// An image the reader may see, and its ad's item id.
pub async fn one(
    conn: &mut dyn Conn,
    media_id: &str,
    reader: Reader,
    now: i64,
) -> Result<(ItemId, ImageRecord), Error> {
    let (holder, image) = stored::get_held(conn, media_id)
        .await?
        .filter(|(ad, _)| visible(ad.seller_id, ad.status_at(now), reader))
        .ok_or(Error::NotFound(Thing::Image))?;
    Ok((ItemId::from_number(holder.item_number), image))
}

/// What a rendition request finds.
#[derive(Debug)]
pub enum Rendition {
    Ready(Renditions),
    /// Its renditions are still being made.
    NotReady,
}

/// An image's renditions in one size, every format there is (JPEG first); shared with
/// [`RenditionLookups`], not copied.
#[derive(Clone, Debug)]
pub struct Renditions(Held);

impl std::ops::Deref for Renditions {
    type Target = [RenditionRecord];
    fn deref(&self) -> &[RenditionRecord] {
        &self.0.1
    }
}

/// An image found available in one size: its holder, and its renditions there.
type Held = Arc<(ImageHolder, Vec<RenditionRecord>)>;

/// How long [`RenditionLookups`] trusts a lookup: the bound on a change made by another
/// process (a replica, `souk` on the command line) reaching this one's blob answers, as
/// `access::CACHE_SECONDS` bounds a revoked token's.
pub const LOOKUP_SECONDS: i64 = 5;
/// Entries kept before the cache starts over (bounds memory under requests for many images).
const LOOKUP_ENTRIES: usize = 100_000;

/// This process's recent lookups of an available image's renditions in one size with its
/// holder: a blob answer's only query, so that a busy picture is read from the database
/// once, not once per download. A lookup is trusted for at most [`LOOKUP_SECONDS`], and
/// only while this process has finished no write since it was made (any write may change an
/// ad's status or its images): a change made here shows at once, one made elsewhere within
/// that bound. Who may see the image is decided afresh for each request, at its time and
/// for its reader; images still processing are never kept, so a rendition made elsewhere
/// shows at once too.
#[derive(Default)]
pub struct RenditionLookups {
    /// By media id (looked up by `&str`, without making a key), one slot per size.
    entries: Mutex<HashMap<String, [Option<Lookup>; Size::ALL.len()]>>,
}

struct Lookup {
    at: i64,
    writes: u64,
    held: Held,
}

fn slot(size: Size) -> usize {
    Size::ALL
        .iter()
        .position(|s| *s == size)
        .expect("every size is in Size::ALL")
}

impl RenditionLookups {
    fn get(&self, media_id: &str, size: Size, writes: u64, now: i64) -> Option<Held> {
        let entries = self.entries.lock();
        let lookup = entries.get(media_id)?[slot(size)].as_ref()?;
        (lookup.writes == writes && now - lookup.at < LOOKUP_SECONDS).then(|| lookup.held.clone())
    }

    fn put(&self, media_id: String, size: Size, writes: u64, now: i64, held: Held) {
        let mut entries = self.entries.lock();
        if entries.len() >= LOOKUP_ENTRIES {
            entries.clear();
        }
        entries.entry(media_id).or_default()[slot(size)] = Some(Lookup {
            at: now,
            writes,
            held,
        });
    }
}

/// The renditions of an image the reader may see, in `size`.
pub async fn rendition(
    db: &Db,
    lookups: &RenditionLookups,
    media_id: String,
    size: Size,
    reader: Reader,
    now: i64,
) -> Result<Rendition, Error> {
    // Read before the lookup: a write finishing meanwhile makes the entry stale at once.
    let writes = db.writes();
    let held = match lookups.get(&media_id, size, writes, now) {
        Some(held) => held,
        None => {
            let key = media_id.clone();
            let found = db
                .read(move |conn| {
                    Box::pin(async move { renditions::of_size_held(conn, &key, size).await })
                })
                .await?
                .ok_or(Error::NotFound(Thing::Image))?;
            match found {
                (ad, ImageStatus::Processing, _) => {
                    return if visible(ad.seller_id, ad.status_at(now), reader) {
                        Ok(Rendition::NotReady)
                    } else {
                        Err(Error::NotFound(Thing::Image))
                    };
                }
                // Available without renditions: an image seeded before Souk made them.
                (_, _, found) if found.is_empty() => return Err(Error::NotFound(Thing::Image)),
                (ad, _, found) => {
                    let held = Arc::new((ad, found));
                    lookups.put(media_id, size, writes, now, held.clone());
                    held
                }
            }
        }
    };
    if !visible(held.0.seller_id, held.0.status_at(now), reader) {
        return Err(Error::NotFound(Thing::Image));
    }
    Ok(Rendition::Ready(Renditions(held)))
}

/// Deletes one image of the seller's ad; its blobs go once nothing else uses them.
pub async fn delete(
    db: &Db,
    seller: i64,
    media_id: String,
    clock: &Clock,
    sweeps: &Wake,
) -> Result<(), Error> {
    let now = clock.now();
    db.write(move |conn| {
        Box::pin(async move {
            let (ad, _) = stored::get_held(conn, &media_id)
                .await?
                .ok_or(Error::NotFound(Thing::Image))?;
            // Held first, as an upload holds it: the images after this one move up.
            ads::lock(conn, ad.item_number).await?;
            // Read again under the lock: a deletion or a replacement that held the ad
            // first may have removed the image since (PostgreSQL), which is then gone.
            if stored::get_held(conn, &media_id).await?.is_none() {
                return Err(Error::NotFound(Thing::Image));
            }
            let item = ItemId::from_number(ad.item_number);
            match own_existing(conn, seller, item, now).await {
                Ok(_) => Ok(renditions::remove_image(conn, ad.item_number, &media_id, now).await?),
                // An image of someone else's online ad is 403, like the ad; of an ad
                // not shown, as unknown as a missing one.
                Err(Error::NotFound(_)) => Err(Error::NotFound(Thing::Image)),
                Err(other) => Err(other),
            }
        })
    })
    .await?;
    forget_removed(sweeps);
    Ok(())
}

/// Puts the seller's ad's images in the order given: every one of its images, each once
/// (`mediaIds`); positions become 1, 2, ... in that order.
pub async fn reorder<R>(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    order: Result<Vec<String>, R>,
    now: i64,
) -> Result<Vec<ImageRecord>, Error<R>> {
    // Held first, as an upload holds it: an image added between this read of the ad's
    // images and the renumbering would be turned negative and never numbered again.
    ads::lock(conn, item.number()).await?;
    let ad = own_existing(conn, seller, item, now).await?;
    // A media id is read in either case, as in a path.
    let order: Vec<String> = order
        .map_err(Error::Request)?
        .iter()
        .map(|id| id.to_ascii_lowercase())
        .collect();
    let mut given = order.clone();
    given.sort();
    let mut have: Vec<String> = ad.images.iter().map(|i| i.media_id.clone()).collect();
    have.sort();
    if given != have {
        return Err(FieldError::new(
            "mediaIds",
            "not-the-images",
            Text::new(
                "moet elke afbeelding van de advertentie precies één keer noemen",
                "doit nommer chaque image de l'annonce exactement une fois",
            ),
        )
        .into());
    }
    stored::reorder(conn, ad.number, &order).await?;
    Ok(stored::of_ad(conn, ad.number).await?)
}
