//! Features: what an ad's category sells and at what price, buying one (into an order, as
//! `usecase::orders` does for a renewal), what was bought, and how long an effect lasts.

use crate::domain::advertisement::{AdStatus, DAY, ItemId};
use crate::domain::feature::{Effect, Feature, Price, PriceList, offers};
use crate::domain::locale::Language;
use crate::domain::order::{ProductKind, PurchaseRequest, check_purchase, vat_included};
use crate::store::ads::AdRecord;
use crate::store::features::{self, Purchased};
use crate::store::orders::NewProduct;
use crate::store::{Conn, DbError};

use super::advertisements::{Reader, own_existing, read};
use super::orders::{self, OrderWithProducts, Till};
use super::{Error, PurchaseRefusal, Thing};

/// A feature as an ad's reader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    pub feature: Feature,
    /// Where the ad's category sells it.
    pub price: Option<Price>,
    /// Sold here and the ad is online: it can be bought now.
    pub available: bool,
    /// Its effect runs now (the three top-of-the-day features share one).
    pub active: bool,
}

/// The features of ad `item` as `reader` may see it (an online ad to anyone, the others to
/// their seller).
pub async fn of_ad(
    conn: &mut dyn Conn,
    item: ItemId,
    reader: Reader,
    now: i64,
) -> Result<Vec<Offer>, Error> {
    let shown = read(conn, item, reader, now).await?;
    let ad = shown.record;
    let online = ad.status_at(now) == AdStatus::Online;
    Ok(priced(conn, &ad)
        .await?
        .into_iter()
        .map(|(feature, price)| Offer {
            feature,
            price,
            available: online && price.is_some(),
            active: ad
                .feature_until(feature.effect())
                .is_some_and(|until| until > now),
        })
        .collect())
}

/// One feature of ad `item` by its name; an unknown name is not found.
pub async fn one_of_ad(
    conn: &mut dyn Conn,
    item: ItemId,
    name: &str,
    reader: Reader,
    now: i64,
) -> Result<Offer, Error> {
    let offers = of_ad(conn, item, reader, now).await?;
    Feature::parse(name)
        .and_then(|feature| offers.into_iter().find(|offer| offer.feature == feature))
        .ok_or(Error::NotFound(Thing::Feature))
}

/// `user` buys the feature `name` for their online ad `item` (`request`: see
/// [`Error::Request`]) at the price its category asks; the effect starts when the order is
/// paid (at once in the sandbox).
pub async fn buy<R>(
    conn: &mut dyn Conn,
    user: i64,
    item: ItemId,
    name: &str,
    request: Result<PurchaseRequest, R>,
    till: Till,
    now: i64,
) -> Result<OrderWithProducts, Error<R>> {
    let ad = own_existing(conn, user, item, now).await?;
    let feature = Feature::parse(name).ok_or(Error::Purchase(PurchaseRefusal::UnknownFeature))?;
    let open_order = check_purchase(&request.map_err(Error::Request)?)?;
    if ad.status_at(now) != AdStatus::Online {
        return Err(Error::Purchase(PurchaseRefusal::FeatureNotAllowed));
    }
    let price = priced(conn, &ad)
        .await?
        .into_iter()
        .find(|(f, _)| *f == feature)
        .and_then(|(_, price)| price)
        .ok_or(Error::Purchase(PurchaseRefusal::FeatureNotAllowed))?;
    let description = match till.language {
        Language::Dutch => format!(
            "{} voor \"{}\" ({item}), {} dagen",
            feature.as_str(),
            ad.title,
            price.days
        ),
        Language::French => format!(
            "{} pour « {} » ({item}), {} jours",
            feature.as_str(),
            ad.title,
            price.days
        ),
    };
    let product = NewProduct {
        kind: ProductKind::Feature,
        feature: Some(feature),
        days: Some(price.days),
        item_number: ad.number,
        description: &description,
        price: price.price,
        vat: vat_included(price.price, till.vat_percent),
    };
    orders::buy(conn, user, open_order, &product, till, now).await
}

/// The features bought for ad `item` and paid, to its seller only.
pub async fn purchased(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    now: i64,
) -> Result<Vec<Purchased>, Error> {
    let ad = own_existing(conn, seller, item, now).await?;
    Ok(features::purchased(conn, ad.number).await?)
}

/// Replaces the price list (the operator's `souk features import`).
pub async fn import(conn: &mut dyn Conn, list: &PriceList) -> Result<(), DbError> {
    features::replace(conn, list).await
}

/// Until when `effect` lasts on `ad` once `days` more are bought at `now`: a bump starts
/// again from now (it ranks the ad again), but never ends before the one it follows would
/// have (a price list may sell the second for fewer days than the first has left); the
/// others add their days to what is left.
pub(super) fn until(ad: &AdRecord, effect: Effect, days: i64, now: i64) -> i64 {
    let left_until = ad.feature_until(effect).unwrap_or(now).max(now);
    match effect {
        Effect::Bump => (now + days * DAY).max(left_until),
        _ => left_until + days * DAY,
    }
}

async fn priced(
    conn: &mut dyn Conn,
    ad: &AdRecord,
) -> Result<Vec<(Feature, Option<Price>)>, DbError> {
    let entries = features::entries_for(conn, ad.category_id, ad.parent_category_id).await?;
    Ok(offers(&entries, ad.category_id, ad.parent_category_id))
}
