//! The operator's `souk ads` commands: each runs one moderation use case in a write of its
//! own.

use crate::domain::advertisement::{AdStatus, ItemId};
use crate::store::Db;
use crate::usecase::moderation;

pub use crate::usecase::moderation::ModerationError;

/// Rejects an ad; the seller sees `reason`.
pub async fn reject(db: &Db, item: ItemId, reason: &str, now: i64) -> Result<(), ModerationError> {
    let reason = reason.to_owned();
    db.write(move |conn| {
        Box::pin(async move {
            moderation::reject(conn, item, &reason, now).await?;
            Ok(())
        })
    })
    .await
}

/// Restores a rejected ad; returns the state it is in now.
pub async fn restore(db: &Db, item: ItemId, now: i64) -> Result<AdStatus, ModerationError> {
    db.write(move |conn| {
        Box::pin(async move { Ok(moderation::restore(conn, item, now).await?.status) })
    })
    .await
}
