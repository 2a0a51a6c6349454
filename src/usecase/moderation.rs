//! What operators do to advertisements: reject one with a reason the seller sees, and
//! restore it.

use crate::domain::advertisement::{Actor, AdStatus, ItemId, may_transition, restored_status};
use crate::domain::hook::EventType;
use crate::domain::text::is_multiline;
use crate::store::ads::{self, AdRecord};
use crate::store::{Conn, DbError};

use super::events;

/// The longest rejection reason.
pub const REASON_MAX: usize = 500;

#[derive(Debug, thiserror::Error)]
pub enum ModerationError {
    #[error("no advertisement {0}")]
    NotFound(ItemId),
    #[error("{0} is {1}: it cannot be {2}")]
    NotAllowed(ItemId, &'static str, &'static str),
    #[error(
        "the reason must be 1 to {REASON_MAX} characters, without control characters other than line breaks and tabs"
    )]
    BadReason,
    #[error("{0} changed meanwhile: try again")]
    Changed(ItemId),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// An ad an operator moved: as it was before, and the state it is in now.
#[derive(Debug)]
pub struct Moderated {
    pub before: AdRecord,
    pub status: AdStatus,
}

/// Rejects an ad; the seller sees `reason` (trimmed).
pub async fn reject(
    conn: &mut dyn Conn,
    item: ItemId,
    reason: &str,
    now: i64,
) -> Result<Moderated, ModerationError> {
    let reason = reason.trim();
    // The seller reads it in the ad: text of lines, no NUL (PostgreSQL refuses it).
    if reason.is_empty() || reason.chars().count() > REASON_MAX || !is_multiline(reason) {
        return Err(ModerationError::BadReason);
    }
    let record = ad(conn, item).await?;
    let current = record.status_at(now);
    if !may_transition(current, AdStatus::Rejected, Actor::Operator) {
        return Err(ModerationError::NotAllowed(
            item,
            current.as_str(),
            "rejected",
        ));
    }
    moved(conn, record, AdStatus::Rejected, Some(reason), now).await
}

/// Restores a rejected ad to the state it was rejected in, unless its time ran out
/// (`domain::advertisement::restored_status`).
pub async fn restore(
    conn: &mut dyn Conn,
    item: ItemId,
    now: i64,
) -> Result<Moderated, ModerationError> {
    let record = ad(conn, item).await?;
    if record.status != AdStatus::Rejected {
        return Err(ModerationError::NotAllowed(
            item,
            record.status.as_str(),
            "restored",
        ));
    }
    let before = ads::status_before_rejection(conn, record.number).await?;
    let restored = restored_status(before, record.close_date, now);
    moved(conn, record, restored, None, now).await
}

async fn ad(conn: &mut dyn Conn, item: ItemId) -> Result<AdRecord, ModerationError> {
    ads::get(conn, item.number())
        .await?
        .ok_or(ModerationError::NotFound(item))
}

/// Moves the ad to `status` unless someone changed it since it was read.
async fn moved(
    conn: &mut dyn Conn,
    before: AdRecord,
    status: AdStatus,
    reason: Option<&str>,
    now: i64,
) -> Result<Moderated, ModerationError> {
    if !ads::set_status(conn, &before, status, reason, now).await? {
        return Err(ModerationError::Changed(ItemId::from_number(before.number)));
    }
    let previous = before.status_at(now);
    let event = events::advertisement(
        EventType::AdvertisementUpdated,
        &before,
        status,
        Some(previous),
    );
    events::record(conn, event, now).await?;
    Ok(Moderated { before, status })
}
