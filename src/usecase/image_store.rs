//! Which image store a server may use: the one the database's images are in. Replicas on
//! one PostgreSQL database must share one store (S3, or one folder they all mount). One
//! with a folder of its own answered 201 for images that the others could not find, whose
//! blob requests they answered 404, and whose rendition jobs they took and dropped as
//! images without an original. The store keeps an id of itself (`Blobs::mark`), the
//! database records it (migration 0061), and a server whose store holds another id, or
//! none while the database has one, does not start.

use std::time::Duration;

use crate::images::blobs::{BlobError, Blobs};
use crate::oauth::secret;
use crate::store::{Db, DbError, images};

/// How long a server that finds the database's id recorded but its store unmarked waits
/// for the server that recorded it to mark the store (both starting at once on one
/// store, for the first time).
const MARK_AWAITED: Duration = Duration::from_secs(5);
const MARK_LOOKS: u32 = 20;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the image store is not the one this database's images are in (the database \
         records the store `{recorded}`, this store is {found}). Every server of one \
         database must use one image store: S3 (SOUK_S3_BUCKET), or one folder all of them \
         share as SOUK_DATA_DIR/images. If this store holds the database's images (they \
         were moved here whole), let the database adopt it: DELETE FROM image_store; \
         then start again (docs/OPERATIONS.md)"
    )]
    NotTheDatabasesStore { recorded: String, found: String },
    #[error(transparent)]
    Blobs(#[from] BlobError),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Makes sure that `blobs` is the store the database's images are in: records its id if
/// the database has none yet (the first server to start with this database), and refuses
/// a store that holds another id, or none while the database records one.
pub async fn own_store(db: &Db, blobs: &Blobs) -> Result<(), StoreError> {
    let marked = blobs.store_id().await?;
    let recorded = match db.read(|conn| Box::pin(images::store_id(conn))).await? {
        Some(recorded) => recorded,
        None => {
            // The first server to start with this database: a store in use keeps its id (a
            // new database for it, restored or made again, adopts it), a new one gets one.
            // Recorded before the store is marked: of servers starting at once, the one
            // whose id the database keeps marks the store, and the others wait for it.
            let candidate = marked.clone().unwrap_or_else(secret::new_token);
            let recorded = record(db, candidate.clone()).await?;
            if recorded == candidate && marked.is_none() {
                blobs.mark(&recorded).await?;
                return Ok(());
            }
            recorded
        }
    };
    match marked {
        Some(marked) if marked == recorded => Ok(()),
        Some(marked) => Err(not_the_databases(recorded, &marked)),
        None => await_mark(blobs, recorded).await,
    }
}

fn not_the_databases(recorded: String, marked: &str) -> StoreError {
    StoreError::NotTheDatabasesStore {
        recorded,
        found: format!("`{marked}`"),
    }
}

async fn record(db: &Db, id: String) -> Result<String, DbError> {
    db.write(move |conn| Box::pin(async move { images::record_store_id(conn, &id).await }))
        .await
}

/// Waits for another server to mark the store with the recorded id: a store that stays
/// unmarked is not the database's (a folder of this server's own).
async fn await_mark(blobs: &Blobs, recorded: String) -> Result<(), StoreError> {
    for _ in 0..MARK_LOOKS {
        tokio::time::sleep(MARK_AWAITED / MARK_LOOKS).await;
        match blobs.store_id().await? {
            Some(marked) if marked == recorded => return Ok(()),
            Some(marked) => return Err(not_the_databases(recorded, &marked)),
            None => {}
        }
    }
    Err(StoreError::NotTheDatabasesStore {
        recorded,
        found: "one without an id (a new store, or a folder of this server's own)".into(),
    })
}
