//! What operators do to advertisements from the command line: reject with a reason the
//! seller sees, and restore.

use crate::domain::advertisement::{Actor, AdStatus, ItemId, may_transition};
use crate::store::{Db, DbError, ads};

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

/// Rejects an ad; the seller sees `reason`.
pub async fn reject(db: &Db, item: ItemId, reason: &str, now: i64) -> Result<(), ModerationError> {
    let reason = reason.trim().to_owned();
    // The seller reads it in the ad: text of lines, no NUL (PostgreSQL refuses it).
    if reason.is_empty()
        || reason.chars().count() > REASON_MAX
        || !crate::domain::text::is_multiline(&reason)
    {
        return Err(ModerationError::BadReason);
    }
    db.write(move |conn| {
        Box::pin(async move {
            let record = ads::get(conn, item.number())
                .await?
                .ok_or(ModerationError::NotFound(item))?;
            let current = record.status_at(now);
            if !may_transition(current, AdStatus::Rejected, Actor::Operator) {
                return Err(ModerationError::NotAllowed(
                    item,
                    current.as_str(),
                    "rejected",
                ));
            }
            let dates = (record.start_date, record.close_date);
            if !ads::set_status(
                conn,
                record.number,
                record.version,
                "rejected",
                dates,
                Some(&reason),
                now,
            )
            .await?
            {
                return Err(ModerationError::Changed(item));
            }
            Ok(())
        })
    })
    .await
}

/// Restores a rejected ad: online again if it still has running time, expired if not, a
/// draft if it was never published. Returns the new state.
pub async fn restore(db: &Db, item: ItemId, now: i64) -> Result<AdStatus, ModerationError> {
    db.write(move |conn| {
        Box::pin(async move {
            let record = ads::get(conn, item.number())
                .await?
                .ok_or(ModerationError::NotFound(item))?;
            if record.status != AdStatus::Rejected.as_str() {
                let current = AdStatus::parse(&record.status).unwrap_or(AdStatus::Draft);
                return Err(ModerationError::NotAllowed(
                    item,
                    current.as_str(),
                    "restored",
                ));
            }
            let restored = match record.close_date {
                None => AdStatus::Draft,
                Some(close) if close > now => AdStatus::Online,
                Some(_) => AdStatus::Expired,
            };
            let dates = (record.start_date, record.close_date);
            if !ads::set_status(
                conn,
                record.number,
                record.version,
                restored.as_str(),
                dates,
                None,
                now,
            )
            .await?
            {
                return Err(ModerationError::Changed(item));
            }
            Ok(restored)
        })
    })
    .await
}
