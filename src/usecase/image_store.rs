//! Which image store a server may use: the one the database's images are in. Replicas on
//! one PostgreSQL database must share one store (S3, or one folder they all mount). One
//! with a folder of its own answered 201 for images that the others could not find, whose
//! blob requests they answered 404, and whose rendition jobs they took and dropped as
//! images without an original. The store keeps an id of itself (`Blobs::mark`), the
//! database records it (migration 0061), and a server whose store holds another id, or
//! none while the database has one, does not start.

use crate::images::blobs::{BlobError, Blobs};
use crate::oauth::secret;
use crate::store::{Db, DbError, images};

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
    #[error(
        "the image store (`{found}`) holds images, and this database none: it is another \
         database's store, whose images this server would delete as strays. Start it with \
         its own store (SOUK_S3_BUCKET, or SOUK_DATA_DIR), or with that store's database"
    )]
    AnotherDatabasesStore { found: String },
    #[error(transparent)]
    Blobs(#[from] BlobError),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Makes sure that `blobs` is the store the database's images are in: on the first start
/// with this database, marks the store (unless it bears an id already) and records its
/// id; after, refuses a store that bears another id, or none.
pub async fn own_store(db: &Db, blobs: &Blobs) -> Result<(), StoreError> {
    let recorded = db.read(|conn| Box::pin(images::store_id(conn))).await?;
    match (recorded, blobs.store_id().await?) {
        (Some(recorded), Some(marked)) if marked == recorded => Ok(()),
        (Some(recorded), Some(marked)) => Err(not_the_databases(recorded, &marked)),
        // The first server marked its store before it recorded it: a store without a mark
        // is another (a folder of this server's own).
        (Some(recorded), None) => Err(StoreError::NotTheDatabasesStore {
            recorded,
            found: "one without an id (a folder of this server's own?)".into(),
        }),
        (None, marked) => first_start(db, blobs, marked).await,
    }
}

/// The first start with this database. The store is marked first (created only if absent:
/// of servers starting at once on one store, one mark stays), then its id recorded (one
/// record stays): a server whose store's id is not the one recorded has a store of its
/// own. Stopped between the two, the next start finds the store marked and adopts it.
async fn first_start(db: &Db, blobs: &Blobs, marked: Option<String>) -> Result<(), StoreError> {
    let id = match marked {
        // A store in use: adopted by a database that holds images (kept before migration
        // 0061, or restored), or when it holds nothing but its mark; else it holds another
        // database's images, which this server's upkeep would delete as strays.
        Some(marked) => {
            if !holds_images(db).await? && blobs.holds_files().await? {
                return Err(StoreError::AnotherDatabasesStore { found: marked });
            }
            marked
        }
        None => blobs.mark(&secret::new_token()).await?,
    };
    let recorded = record(db, id.clone()).await?;
    if recorded == id {
        Ok(())
    } else {
        Err(not_the_databases(recorded, &id))
    }
}

async fn holds_images(db: &Db) -> Result<bool, DbError> {
    db.read(|conn| Box::pin(images::any(conn))).await
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
