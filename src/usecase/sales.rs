//! Sales under an advertisement: recording, completing and cancelling transactions and
//! who may see them; phone calls that partners confirm; the ad's statistics.

use crate::domain::advertisement::{AdStatus, ItemId};
use crate::domain::hook::EventType;
use crate::domain::sale::{
    Call, CallRequest, Party, SaleRequest, TransactionStatus, check_call, check_sale, may_finish,
    named_buyer,
};
use crate::store::ads::AdRecord;
use crate::store::transactions::{self, Counter, Statistics, Transaction};
use crate::store::{Conn, ads, users};

use super::advertisements::{existing, own_existing};
use super::{Conflict, Error, Thing, events};

/// Records a sale of `seller`'s ad `item` from what the client sent (`request`: see
/// [`Error::Request`]); the transaction takes the ad's next number.
pub async fn record<R>(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    request: Result<SaleRequest, R>,
    now: i64,
) -> Result<Transaction, Error<R>> {
    // Held before it is read: on PostgreSQL a deletion that commits meanwhile is read, and
    // the deleted ad records no sale.
    ads::lock(conn, item.number()).await?;
    let ad = ad_for_transactions(conn, item, seller, now).await?;
    if ad.status_at(now) == AdStatus::Deleted {
        // Its sales stay readable; a deleted ad makes no new ones.
        return Err(Error::NotFound(Thing::Advertisement));
    }
    if ad.seller_id != seller {
        return Err(Error::Forbidden);
    }
    let request = request.map_err(Error::Request)?;
    let buyer_exists = match named_buyer(&request, seller) {
        Some(buyer) => users::get(conn, buyer).await?.is_some(),
        None => false,
    };
    let sale = check_sale(&request, seller, buyer_exists)?;
    let transaction = transactions::insert(conn, ad.number, &sale, now).await?;
    let event = events::transaction(EventType::TransactionCreated, seller, &transaction);
    events::record(conn, event, now).await?;
    Ok(transaction)
}

/// The transactions of ad `item` that `user` may see, newest first: all of them to the
/// seller, a buyer's own to the buyer, none to anyone else (forbidden).
pub async fn transactions_of(
    conn: &mut dyn Conn,
    item: ItemId,
    user: i64,
    now: i64,
) -> Result<Vec<Transaction>, Error> {
    let ad = ad_for_transactions(conn, item, user, now).await?;
    let only = (ad.seller_id != user).then_some(user);
    let listed = transactions::list(conn, ad.number, only).await?;
    if only.is_some() && listed.is_empty() {
        // Neither the seller nor a buyer of this ad.
        return Err(Error::Forbidden);
    }
    Ok(listed)
}

/// One transaction of ad `item`, to its seller or its buyer.
pub async fn transaction(
    conn: &mut dyn Conn,
    item: ItemId,
    id: i64,
    user: i64,
    now: i64,
) -> Result<Transaction, Error> {
    let (_, transaction, _) = visible_transaction(conn, item, id, user, now).await?;
    Ok(transaction)
}

/// Moves a created transaction to `to` (completed or cancelled) for `user`, where
/// [`may_finish`] allows it.
pub async fn finish(
    conn: &mut dyn Conn,
    item: ItemId,
    id: i64,
    user: i64,
    to: TransactionStatus,
    now: i64,
) -> Result<Transaction, Error> {
    let (party, transaction, ad) = visible_transaction(conn, item, id, user, now).await?;
    if !may_finish(party, to) {
        return Err(Error::Forbidden);
    }
    if !transactions::finish(conn, transaction.item_number, id, to, now).await? {
        // Finished before this read, or by another request since (PostgreSQL): named as
        // it is now.
        let status = transactions::get(conn, transaction.item_number, id)
            .await?
            .map_or(transaction.status, |now| now.status);
        return Err(Error::Conflict(Conflict::Finished(status)));
    }
    let finished = Transaction {
        status: to,
        ..transaction
    };
    let event = events::transaction(EventType::TransactionUpdated, ad.seller_id, &finished);
    events::record(conn, event, now).await?;
    Ok(finished)
}

/// A phone call a partner confirmed, as kept.
#[derive(Debug)]
pub struct CallConfirmed {
    pub item: ItemId,
    pub call: Call,
}

/// Keeps a phone call about ad `item` that the partner `client_id` confirms (`request`: see
/// [`Error::Request`]); it counts as a phone click. Only online ads take calls: any other
/// is not found, before anything about the request.
pub async fn confirm_call<R>(
    conn: &mut dyn Conn,
    client_id: &str,
    item: ItemId,
    request: Result<CallRequest, R>,
    now: i64,
) -> Result<CallConfirmed, Error<R>> {
    let ad = existing(conn, item, now).await?;
    if ad.status_at(now) != AdStatus::Online {
        return Err(Error::NotFound(Thing::Advertisement));
    }
    let call = check_call(&request.map_err(Error::Request)?)?;
    transactions::insert_upcall(conn, ad.number, client_id, &call, now).await?;
    transactions::count(conn, Counter::PhoneClicks, &[(ad.number, 1)]).await?;
    events::record(conn, events::upcall(&ad, client_id, &call), now).await?;
    Ok(CallConfirmed { item, call })
}

/// The counters of `user`'s ad `item` as written (the views a replica counted and did not
/// write yet are the caller's to add).
pub async fn statistics(
    conn: &mut dyn Conn,
    item: ItemId,
    user: i64,
    now: i64,
) -> Result<Statistics, Error> {
    let ad = own_existing(conn, user, item, now).await?;
    Ok(transactions::statistics(conn, ad.number).await?)
}

/// The ad behind a transaction request of `user`: not found if it is unknown, or if it is
/// not online and `user` has no part in it (neither its seller nor the buyer of one of its
/// transactions), so that a draft's existence does not leak. A buyer keeps seeing their
/// transactions, finishing and reviewing them, after the seller paused, closed or deleted
/// the ad: a seller who deletes a sold ad does not take the buyer's review away.
async fn ad_for_transactions<R>(
    conn: &mut dyn Conn,
    item: ItemId,
    user: i64,
    now: i64,
) -> Result<AdRecord, Error<R>> {
    let ad = ads::get(conn, item.number())
        .await?
        .ok_or(Error::NotFound(Thing::Advertisement))?;
    if ad.status_at(now) != AdStatus::Online
        && ad.seller_id != user
        && transactions::list(conn, ad.number, Some(user))
            .await?
            .is_empty()
    {
        return Err(Error::NotFound(Thing::Advertisement));
    }
    Ok(ad)
}

/// A transaction, its ad and the part `user` has in it: the seller and the buyer see it, others
/// are forbidden (or not found, for an ad that is not online: see [`ad_for_transactions`]).
/// Only the seller learns that a transaction does not exist: to anyone else one that is
/// not theirs is forbidden whether it exists or not, so that they cannot count the sales.
pub(super) async fn visible_transaction<R>(
    conn: &mut dyn Conn,
    item: ItemId,
    id: i64,
    user: i64,
    now: i64,
) -> Result<(Party, Transaction, AdRecord), Error<R>> {
    let ad = ad_for_transactions(conn, item, user, now).await?;
    let transaction = transactions::get(conn, ad.number, id).await?;
    match transaction {
        Some(transaction) if ad.seller_id == user => Ok((Party::Seller, transaction, ad)),
        Some(transaction) if transaction.buyer_id == user => Ok((Party::Buyer, transaction, ad)),
        None if ad.seller_id == user => Err(Error::NotFound(Thing::Transaction)),
        _ => Err(Error::Forbidden),
    }
}
