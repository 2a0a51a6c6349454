//! Orders: buying a renewal (a feature: `usecase::features`), charging an ad's insertion
//! fee, paying an order and applying what it bought, and who sees an
//! order.
//!
//! A purchase adds a product to an order (a new one, or an open one of the buyer's). Where
//! payment is immediate (the sandbox) the order is paid in the same transaction and each
//! product's effect applied with it; otherwise the order waits in `payment required` until
//! [`pay`] confirms it (today the operator's `souk orders pay`; a payment provider's
//! confirmation would call the same function), and the effect is applied then, again in
//! the transaction that marks the order paid. So a paid order without its effect, or an
//! effect without its paid order, cannot be committed.

use crate::domain::advertisement::{AdStatus, DAY, Dates, ItemId, renew_possible};
use crate::domain::hook::EventType;
use crate::domain::locale::Language;
use crate::domain::order::{
    OrderStatus, ProductKind, PurchaseRequest, check_purchase, vat_included,
};
use crate::store::ads::AdRecord;
use crate::store::orders::{self, NewProduct, Order, Product};
use crate::store::{Conn, ads, categories, users};

use super::advertisements::{own_existing, running_days};
use super::{Conflict, Error, PurchaseRefusal, Thing, events, features};

/// How this deployment takes payment, and its VAT.
#[derive(Clone, Copy, Debug)]
pub struct Till {
    /// The sandbox: every order is paid at once.
    pub pays_at_once: bool,
    pub vat_percent: u32,
    pub language: Language,
}

/// An order with its products.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderWithProducts {
    pub order: Order,
    pub products: Vec<Product>,
}

impl OrderWithProducts {
    /// The order's price: its products' together.
    pub fn price(&self) -> i64 {
        self.products.iter().map(|p| p.price).sum()
    }
}

/// `user` renews their ad `item` (`request`: see [`Error::Request`]): in its renewal window
/// or its grace period only; the price is the category's insertion fee.
pub async fn renew<R>(
    conn: &mut dyn Conn,
    user: i64,
    item: ItemId,
    request: Result<PurchaseRequest, R>,
    till: Till,
    now: i64,
) -> Result<OrderWithProducts, Error<R>> {
    // The owner's renewals take turns (only the owner renews): of two at once, the second
    // reads the close date the first moved, past the window, instead of charging for a
    // second period. The user's row, not the ad's: a payment holds its order before its
    // ads (`settle`), and a renewal into an open order holds that order later.
    users::lock(conn, user).await?;
    let ad = own_existing(conn, user, item, now).await?;
    let open_order = check_purchase(&request.map_err(Error::Request)?)?;
    // In production the close date moves only once the order is paid: a second renewal
    // meanwhile would pass the window check on the old date, and pay for a second period.
    if let Some(order) = orders::unpaid_renewal(conn, ad.number).await? {
        return Err(Error::Conflict(Conflict::RenewalAwaitingPayment(order)));
    }
    // The window is judged on the ad as read after the renewals: a payment that committed
    // between the first read and that one (PostgreSQL reads each statement afresh) has
    // moved the close date, which the first read did not see.
    let ad = own_existing(conn, user, item, now).await?;
    if !renew_possible(ad.status_at(now), ad.close_date, now) {
        return Err(Error::Purchase(PurchaseRefusal::NotRenewable));
    }
    let fees = categories::get(conn, ad.category_id)
        .await?
        .and_then(|category| category.leaf)
        .map(|leaf| leaf.fees)
        .ok_or(Error::NotFound(Thing::Advertisement))?;
    let description = match till.language {
        Language::Dutch => format!(
            "Verlenging van \"{}\" ({item}) met {} dagen",
            ad.title, fees.running_days
        ),
        Language::French => format!(
            "Prolongation de « {} » ({item}) de {} jours",
            ad.title, fees.running_days
        ),
    };
    let product = NewProduct {
        kind: ProductKind::Renewal,
        feature: None,
        days: Some(fees.running_days),
        item_number: ad.number,
        description: &description,
        price: fees.insertion_fee,
        vat: vat_included(fees.insertion_fee, till.vat_percent),
    };
    buy(conn, user, open_order, &product, till, now).await
}

/// Charges the insertion fee (`fee`, above 0) of `seller`'s draft `ad`, which is to go
/// online for the first time, in a new order. Paid at once (the sandbox), the order
/// publishes the ad in this transaction; otherwise the draft names the order it waits for.
pub(super) async fn charge_insertion<R>(
    conn: &mut dyn Conn,
    seller: i64,
    ad: &AdRecord,
    fee: i64,
    running_days: i64,
    till: Till,
    now: i64,
) -> Result<OrderWithProducts, Error<R>> {
    let item = ItemId::from_number(ad.number);
    let description = match till.language {
        Language::Dutch => format!("Plaatsing van \"{}\" ({item})", ad.title),
        Language::French => format!("Insertion de « {} » ({item})", ad.title),
    };
    let product = NewProduct {
        kind: ProductKind::Insertion,
        feature: None,
        days: Some(running_days),
        item_number: ad.number,
        description: &description,
        price: fee,
        vat: vat_included(fee, till.vat_percent),
    };
    let order = buy(conn, seller, None, &product, till, now).await?;
    if order.order.status != OrderStatus::Paid {
        ads::set_awaiting_order(conn, ad.number, Some(order.order.id), now).await?;
    }
    Ok(order)
}

/// Adds `product` to `user`'s open order `open_order`, or to a new one, and pays for it
/// where payment is immediate or there is nothing to pay; the order as it is then.
pub(super) async fn buy<R>(
    conn: &mut dyn Conn,
    user: i64,
    open_order: Option<i64>,
    product: &NewProduct<'_>,
    till: Till,
    now: i64,
) -> Result<OrderWithProducts, Error<R>> {
    let order = match open_order {
        Some(id) => {
            let order = orders::get_for_update(conn, id)
                .await?
                .filter(|order| order.buyer_id == user)
                .ok_or(Error::Purchase(PurchaseRefusal::UnknownOrder))?;
            if !order.status.is_open() {
                return Err(Error::Purchase(PurchaseRefusal::OrderNotOpen));
            }
            order.id
        }
        None => orders::create(conn, user, OrderStatus::PaymentRequired, now).await?,
    };
    orders::add_product(conn, order, product).await?;
    // An order of price 0 (a renewal in a category without fee) has nothing to wait for:
    // no payment of it would ever be confirmed.
    if till.pays_at_once || with_products(conn, order).await?.price() == 0 {
        // An insertion fee is charged by placing or publishing the ad, which tells of the
        // ad itself.
        let tell = product.kind != ProductKind::Insertion;
        settle(conn, order, now, tell).await?;
    }
    Ok(with_products(conn, order).await?)
}

/// A payment of another sum than the order's price, which is `due` (cents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmountDiffers {
    pub due: i64,
}

/// Confirms the payment of `amount` cents for order `id` and applies what it bought, in
/// the caller's transaction: the operator's command, and the seam where a payment
/// provider's confirmation plugs in. The amount must be the order's price now: an open
/// order takes products until it is paid, so one added after the buyer paid (or while the
/// operator looked) would otherwise be settled by a payment that never covered it.
pub async fn pay(
    conn: &mut dyn Conn,
    id: i64,
    amount: i64,
    now: i64,
) -> Result<OrderWithProducts, Error<AmountDiffers>> {
    let order = orders::get_for_update(conn, id)
        .await?
        .ok_or(Error::NotFound(Thing::Order))?;
    if order.status != OrderStatus::PaymentRequired && order.status != OrderStatus::New {
        return Err(Error::Purchase(PurchaseRefusal::OrderNotOpen));
    }
    // Products are added under the order's lock, held here: the price cannot change
    // between this read and the settlement.
    let due = with_products(conn, id).await?.price();
    if due != amount {
        return Err(Error::Request(AmountDiffers { due }));
    }
    settle(conn, id, now, true).await?;
    with_products(conn, id).await.map_err(Error::Db)
}

/// Refuses the open order `id`, whose payment did not come (the operator says so, as it
/// confirms a payment; later a payment provider): the order is `refused`, and none of its
/// products takes effect. A draft that waited for it waits no more (publishing it charges
/// its fee anew, in a new order), and a renewal of its ads may be bought again.
pub async fn refuse(conn: &mut dyn Conn, id: i64, now: i64) -> Result<OrderWithProducts, Error> {
    let order = orders::get_for_update(conn, id)
        .await?
        .ok_or(Error::NotFound(Thing::Order))?;
    if order.status != OrderStatus::PaymentRequired && order.status != OrderStatus::New {
        return Err(Error::Purchase(PurchaseRefusal::OrderNotOpen));
    }
    orders::set_refused(conn, id).await?;
    let mut waiting: Vec<i64> = orders::products(conn, id)
        .await?
        .iter()
        .filter(|product| product.kind == ProductKind::Insertion)
        .map(|product| product.item_number)
        .collect();
    // In the order of their numbers, as a payment locks them.
    waiting.sort_unstable();
    waiting.dedup();
    for number in waiting {
        ads::lock(conn, number).await?;
        let Some(before) = ads::get(conn, number).await? else {
            continue;
        };
        // A draft deleted while it waited is told of no more.
        if before.awaiting_order != Some(id) || before.status == AdStatus::Deleted {
            continue;
        }
        ads::set_awaiting_order(conn, number, None, now).await?;
        tell_updated(conn, &before, now).await?;
    }
    Ok(with_products(conn, id).await?)
}

/// Order `id` with its products, to its buyer; to anyone else it does not exist.
pub async fn of_buyer(
    conn: &mut dyn Conn,
    buyer: i64,
    id: i64,
) -> Result<OrderWithProducts, Error> {
    let found = with_products(conn, id).await;
    match found {
        Ok(order) if order.order.buyer_id == buyer => Ok(order),
        Ok(_) | Err(crate::store::DbError::NotFound) => Err(Error::NotFound(Thing::Order)),
        Err(e) => Err(Error::Db(e)),
    }
}

/// Marks the order paid and applies each product's effect, ad by ad in the order of their
/// numbers (so that two payments that hold the same ads lock them in the same order and
/// cannot deadlock), each ad's products in the order they were bought. With `tell`, each
/// ad a product changed gets its `advertisement.updated` event.
async fn settle(
    conn: &mut dyn Conn,
    id: i64,
    now: i64,
    tell: bool,
) -> Result<(), crate::store::DbError> {
    orders::set_paid(conn, id, now).await?;
    let mut products = orders::products(conn, id).await?;
    products.sort_by_key(|product| product.item_number);
    // Each changed ad as it was before its first product, told of once after its last.
    let mut changed: Vec<AdRecord> = Vec::new();
    for product in products {
        let Some(before) = apply(conn, &product, now).await? else {
            continue;
        };
        if changed.last().is_none_or(|ad| ad.number != before.number) {
            changed.push(before);
        }
    }
    if !tell {
        return Ok(());
    }
    for before in changed {
        tell_updated(conn, &before, now).await?;
    }
    Ok(())
}

/// Records the `advertisement.updated` event of the ad that was `before`, as it is now.
async fn tell_updated(
    conn: &mut dyn Conn,
    before: &AdRecord,
    now: i64,
) -> Result<(), crate::store::DbError> {
    if let Some(after) = ads::get(conn, before.number).await? {
        let event = events::advertisement(
            EventType::AdvertisementUpdated,
            &after,
            after.status_at(now),
            Some(before.status_at(now)),
        );
        events::record(conn, event, now).await?;
    }
    Ok(())
}

/// What a paid product does, to the ad as it is once this transaction holds it: two
/// renewals (or features) paid at the same moment each add their days. Returns the ad as
/// it was if the product changed it.
async fn apply(
    conn: &mut dyn Conn,
    product: &Product,
    now: i64,
) -> Result<Option<AdRecord>, crate::store::DbError> {
    ads::lock(conn, product.item_number).await?;
    let Some(ad) = ads::get(conn, product.item_number).await? else {
        return Ok(None);
    };
    if ad.status == AdStatus::Deleted {
        return Ok(None);
    }
    // An insertion or a renewal runs for the days of its category when it was bought;
    // one bought before the days were kept with it, for its category's days now.
    let running_days = match product.days {
        Some(days) => days,
        None => {
            let category = categories::get(conn, ad.category_id).await?;
            running_days(category.and_then(|c| c.leaf).map(|leaf| leaf.fees).as_ref())
        }
    };
    match (product.kind, product.feature) {
        // A draft that waits for it goes online now, for its category's running days; one
        // rejected while it waited is published for its restore.
        (ProductKind::Insertion, _)
            if matches!(ad.status, AdStatus::Draft | AdStatus::Rejected) =>
        {
            ads::publish(conn, ad.number, Dates::published(now, running_days), now).await?
        }
        (ProductKind::Insertion, _) => return Ok(None),
        (ProductKind::Renewal, _) => {
            // From the old date while it runs; from now once it has passed (an expired ad
            // renewed in its grace period gets a whole period).
            let from = ad.close_date.unwrap_or(now).max(now);
            ads::renew(conn, ad.number, from + running_days * DAY, now).await?
        }
        (ProductKind::Feature, Some(feature)) => {
            let days = product.days.unwrap_or(1);
            let effect = feature.effect();
            ads::set_feature_until(
                conn,
                ad.number,
                effect,
                features::until(&ad, effect, days, now),
                now,
            )
            .await?
        }
        // The table's CHECK gives every feature product its feature.
        (ProductKind::Feature, None) => return Ok(None),
    }
    Ok(Some(ad))
}

async fn with_products(
    conn: &mut dyn Conn,
    id: i64,
) -> Result<OrderWithProducts, crate::store::DbError> {
    let order = orders::get(conn, id)
        .await?
        .ok_or(crate::store::DbError::NotFound)?;
    let products = orders::products(conn, id).await?;
    Ok(OrderWithProducts { order, products })
}
