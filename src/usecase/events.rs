//! The transactional outbox: each use case that changes something records its event here,
//! in the same transaction as the change ([`record`]), so that an event exists exactly when
//! its change committed, and a delivery to each hook that wants it is queued with it
//! (`usecase::deliveries` makes them).
//!
//! Who an event is for is decided when it is written: the clients that the users it
//! concerns (an ad's seller; a bid's seller and bidder; a sale's or a review's seller and
//! buyer) have
//! granted access at that moment (a live refresh token), and the client that made the
//! change where it acts for itself (an upcall confirmation). An event for no one is not
//! written.
//!
//! An event carries its resource's members as they were at that moment (a partial HAL
//! representation: its `self` link leads to the whole resource as it is now) and
//! `eventData`, what changed.

use serde_json::{Value, json};

use crate::domain::advertisement::{AdStatus, ItemId};
use crate::domain::hook::EventType;
use crate::domain::sale::Call;
use crate::domain::time::format_timestamp;
use crate::store::ads::AdRecord;
use crate::store::bids::Bid;
use crate::store::reviews::Review;
use crate::store::transactions::Transaction;
use crate::store::{Conn, Db, DbError, events};

/// An event to record: its type, who it concerns, and what it tells.
#[derive(Debug)]
pub struct Event<'a> {
    pub event_type: EventType,
    /// The users whose grants make clients its recipients.
    pub users: Vec<i64>,
    /// The client that made the change for itself, if one did.
    pub acting: Option<&'a str>,
    pub data: Value,
    /// The rel the resource is embedded under, and its path under the version prefix.
    pub rel: &'static str,
    pub path: String,
    pub resource: Value,
}

/// Records `event` in the caller's transaction, with a delivery to every active hook of
/// its recipients that wants its type.
pub async fn record(conn: &mut dyn Conn, event: Event<'_>, now: i64) -> Result<(), DbError> {
    let stored = events::NewEvent {
        event_type: event.event_type.as_str(),
        event_data: event.data.to_string(),
        resource_rel: event.rel,
        resource_path: event.path,
        resource: event.resource.to_string(),
    };
    events::record(conn, &stored, &event.users, event.acting, now).await?;
    Ok(())
}

/// How long an event is kept (readable at `/v1/events`): 30 days, longer than a delivery
/// is tried.
pub const KEEP_SECS: i64 = 30 * 86_400;

/// Events forgotten per write: each takes its recipients and deliveries with it, so a
/// batch is some thousands of rows.
pub const FORGET_BATCH: i64 = 1_000;

/// Forgets the events older than [`KEEP_SECS`] (the hourly upkeep), a batch per write, so
/// that a backlog (the first month of a busy marketplace, a long stop) never holds the
/// writer for long; returns how many went.
pub async fn forget_old(db: &Db, now: i64) -> Result<u64, DbError> {
    let before = now - KEEP_SECS;
    super::in_batches(db, FORGET_BATCH, move |conn| {
        Box::pin(events::forget_before(conn, before, FORGET_BATCH))
    })
    .await
}

/// An event about an ad: placed, changed (from `previous`) or deleted.
pub fn advertisement(
    event_type: EventType,
    ad: &AdRecord,
    status: AdStatus,
    previous: Option<AdStatus>,
) -> Event<'static> {
    let item = ItemId::from_number(ad.number);
    let mut data = json!({
        "itemId": item.to_string(),
        "sellerId": ad.seller_id,
        "status": status.as_str(),
    });
    if let Some(previous) = previous {
        data["previousStatus"] = json!(previous.as_str());
    }
    Event {
        event_type,
        users: vec![ad.seller_id],
        acting: None,
        data,
        rel: "advertisement",
        path: format!("/advertisements/{item}"),
        resource: ad_members(ad, item, status),
    }
}

/// An event about a bid on `seller`'s ad: placed or withdrawn. Its recipients act for the
/// seller or the bidder, who both see who placed it.
pub fn bid(event_type: EventType, seller: i64, bid: &Bid) -> Event<'static> {
    let item = ItemId::from_number(bid.item_number);
    Event {
        event_type,
        users: vec![seller, bid.bidder_id],
        acting: None,
        data: json!({
            "itemId": item.to_string(),
            "bidId": bid.id,
            "amount": bid.amount,
            "bidderId": bid.bidder_id,
        }),
        rel: "bid",
        path: format!("/advertisements/{item}/bids/{}", bid.id),
        resource: json!({
            "bidId": bid.id,
            "id": bid.id,
            "amount": bid.amount,
            "placeDate": format_timestamp(bid.placed_at),
            "bidder": {"id": bid.bidder_id, "nickName": bid.bidder_name},
        }),
    }
}

/// An event about a sale of `seller`'s ad: recorded, completed or cancelled.
pub fn transaction(event_type: EventType, seller: i64, sale: &Transaction) -> Event<'static> {
    let item = ItemId::from_number(sale.item_number);
    let mut users = vec![seller];
    if sale.buyer_id > 0 && sale.buyer_id != seller {
        users.push(sale.buyer_id);
    }
    Event {
        event_type,
        users,
        acting: None,
        data: json!({
            "itemId": item.to_string(),
            "transactionId": sale.id,
            "status": sale.status.as_str(),
            "buyerId": sale.buyer_id,
        }),
        rel: "advertisement-transaction",
        path: format!("/advertisements/{item}/transactions/{}", sale.id),
        resource: json!({
            "transactionId": sale.id,
            "buyerId": sale.buyer_id,
            "amount": sale.amount,
            "shippingCosts": sale.shipping_costs,
            "status": sale.status.as_str(),
            "createdDate": format_timestamp(sale.created_at),
        }),
    }
}

/// A review of a seller by the buyer of a completed sale. Its recipients act for the
/// seller or the buyer, who both see who wrote it.
pub fn review(review: &Review) -> Event<'static> {
    let item = ItemId::from_number(review.item_number);
    Event {
        event_type: EventType::ReviewCreated,
        users: vec![review.seller_id, review.reviewer_id],
        acting: None,
        data: json!({
            "reviewId": review.id,
            "sellerId": review.seller_id,
            "reviewerId": review.reviewer_id,
            "itemId": item.to_string(),
            "transactionId": review.transaction_id,
            "overallScore": review.overall_score,
        }),
        rel: "user-review",
        path: format!("/users/{}/reviews/{}", review.seller_id, review.id),
        resource: Value::Object(super::reviews::members(review)),
    }
}

/// A phone call about `seller`'s ad that the partner `client` confirmed.
pub fn upcall<'a>(ad: &AdRecord, client: &'a str, call: &Call) -> Event<'a> {
    let item = ItemId::from_number(ad.number);
    Event {
        event_type: EventType::UpcallConfirmed,
        users: vec![ad.seller_id],
        acting: Some(client),
        data: json!({
            "itemId": item.to_string(),
            "clientId": client,
            "startTime": format_timestamp(call.start_time),
            "endTime": format_timestamp(call.end_time),
        }),
        rel: "advertisement",
        path: format!("/advertisements/{item}"),
        resource: ad_members(ad, item, AdStatus::Online),
    }
}

/// The members of ad `ad` (`item`) that an event embeds, as it was, in `status`.
fn ad_members(ad: &AdRecord, item: ItemId, status: AdStatus) -> Value {
    json!({
        "itemId": item.to_string(),
        "title": ad.title,
        "categoryId": ad.category_id,
        "status": status.as_str(),
    })
}
