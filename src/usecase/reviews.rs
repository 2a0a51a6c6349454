//! Reviews: the buyer of a completed transaction reviews its seller, once per transaction;
//! anyone with a token reads a seller's reviews.

use serde_json::{Map, Value};

use crate::domain::advertisement::ItemId;
use crate::domain::places::Postcode;
use crate::domain::review::{ReviewRequest, check_review};
use crate::domain::sale::{Party, TransactionStatus};
use crate::domain::time::format_timestamp;
use crate::store::reviews::{self, Review, Reviewed, Totals};
use crate::store::{Conn, locations, users};

use super::events;
use super::sales::visible_transaction;
use super::{Conflict, Error, Thing};

/// The buyer `reviewer` reviews the seller of transaction `id` of ad `item` (`request`:
/// see [`Error::Request`]). The review is about the ad (its title is the review's reason)
/// and says where the reviewer lives (the town of their postcode, as it is now).
pub async fn write<R>(
    conn: &mut dyn Conn,
    reviewer: i64,
    item: ItemId,
    id: i64,
    request: Result<ReviewRequest, R>,
    now: i64,
) -> Result<Review, Error<R>> {
    let (party, transaction, ad) = visible_transaction(conn, item, id, reviewer, now).await?;
    if party != Party::Buyer {
        return Err(Error::Forbidden);
    }
    if transaction.status != TransactionStatus::Completed {
        return Err(Error::Conflict(Conflict::NotCompleted(transaction.status)));
    }
    let review = check_review(&request.map_err(Error::Request)?)?;
    let place = match users::get(conn, reviewer)
        .await?
        .and_then(|user| user.postcode)
        .as_deref()
        .and_then(Postcode::parse)
    {
        Some(postcode) => locations::find(conn, &postcode)
            .await?
            .map(|location| location.place)
            .unwrap_or_default(),
        None => String::new(),
    };
    let about = Reviewed {
        seller_id: ad.seller_id,
        reviewer_id: reviewer,
        item_number: ad.number,
        transaction_id: transaction.id,
        reason: &ad.title,
        place: &place,
    };
    let id = reviews::insert(conn, &about, &review, now)
        .await?
        .ok_or(Error::Conflict(Conflict::Reviewed))?;
    let review = reviews::get(conn, ad.seller_id, id)
        .await?
        .ok_or(Error::NotFound(Thing::Review))?;
    events::record(conn, events::review(&review), now).await?;
    Ok(review)
}

/// A review's own members, as its representation and its event write them (the links and
/// the sub-scores, described in the reader's language, are the caller's).
pub fn members(review: &Review) -> Map<String, Value> {
    Map::from_iter([
        ("reviewId".to_owned(), review.id.into()),
        ("name".to_owned(), review.reviewer_name.as_str().into()),
        ("place".to_owned(), review.place.as_str().into()),
        (
            "date".to_owned(),
            format_timestamp(review.created_at).into(),
        ),
        ("reason".to_owned(), review.reason.as_str().into()),
        ("overallScore".to_owned(), review.overall_score.into()),
        ("content".to_owned(), review.content.as_str().into()),
    ])
}

/// A page of a seller's reviews, newest first, with the totals over all of them.
pub async fn of_seller(
    conn: &mut dyn Conn,
    seller: i64,
    (offset, limit): (i64, i64),
) -> Result<(Vec<Review>, Totals), Error> {
    known_user(conn, seller).await?;
    let totals = reviews::totals(conn, seller).await?;
    let page = reviews::page(conn, seller, offset, limit).await?;
    Ok((page, totals))
}

/// One review of a seller.
pub async fn one(conn: &mut dyn Conn, seller: i64, id: i64) -> Result<Review, Error> {
    known_user(conn, seller).await?;
    reviews::get(conn, seller, id)
        .await?
        .ok_or(Error::NotFound(Thing::Review))
}

async fn known_user(conn: &mut dyn Conn, id: i64) -> Result<(), Error> {
    users::get(conn, id)
        .await?
        .map(|_| ())
        .ok_or(Error::NotFound(Thing::User))
}
