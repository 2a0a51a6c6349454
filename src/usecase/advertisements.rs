//! Advertisements: placing, changing (a replacement or a JSON Patch), deleting and reading
//! one, and the lists of a seller's own ads and of a user's online ads.

use serde_json::{Map, Value, json};

use crate::domain::advertisement::{
    Actor, AdContent, AdStatus, Dates, ItemId, ModelType, PriceBefore, READ_ONLY_FIELDS, Stored,
    category_closed, check_content, may_transition, named_category, new_ad_status, publishes,
    requested_status,
};
use crate::domain::category::{CategoryStatus, Fees};
use crate::domain::field_error::FieldError;
use crate::domain::hook::EventType;
use crate::domain::locale::{Locale, Text};
use crate::store::ads::{self, AdRecord, AdWrite, NewAd};
use crate::store::users::User;
use crate::store::{Conn, DbError, categories, images, renditions, users};

use super::events;
use super::orders::{self, Till};
use super::{Conflict, Error, Thing};

/// How long ads run in a category that does not say (none: every leaf says).
const DEFAULT_RUNNING_DAYS: i64 = 28;

/// How long an ad runs in a leaf category of these fees; in a category that is no leaf
/// (any more), [`DEFAULT_RUNNING_DAYS`].
pub(super) fn running_days(fees: Option<&Fees>) -> i64 {
    fees.map_or(DEFAULT_RUNNING_DAYS, |fees| fees.running_days)
}

/// Where ads are placed: the region (its locale for new ads), and how an insertion fee
/// is paid.
#[derive(Clone, Copy, Debug)]
pub struct Market {
    pub region: Locale,
    pub till: Till,
}

/// A new ad, as stored.
#[derive(Debug)]
pub struct Placed {
    pub record: AdRecord,
}

/// Places an ad for `seller` from the body a client sent (`body`: see [`Error::Request`]):
/// online unless it asks to be a draft, in an open leaf category.
pub async fn place<R>(
    conn: &mut dyn Conn,
    seller: i64,
    body: Result<Map<String, Value>, R>,
    market: Market,
    now: i64,
) -> Result<Placed, Error<R>> {
    let Market { region, till } = market;
    let Some(user) = users::get(conn, seller).await?.filter(User::is_confirmed) else {
        return Err(Error::NotConfirmed);
    };
    let body = body.map_err(Error::Request)?;
    let status = requested_status(&body).and_then(new_ad_status);
    let checked = checked_content(conn, &body, region, None).await;
    let (status, checked) = match status {
        Ok(status) => (status, checked?),
        Err(error) => return Err(with_content_errors(error, checked)),
    };
    // A fee to pay: a draft until its order is paid (at once in the sandbox).
    let charged = status == AdStatus::Online && checked.insertion_fee > 0;
    let status = if charged { AdStatus::Draft } else { status };
    let dates = match status {
        AdStatus::Online => Dates::published(now, checked.running_days),
        _ => Dates::default(),
    };
    let ad = NewAd {
        seller_id: seller,
        content: AdWrite::from_content(&checked.content, seller, checked.parent_category_id),
        status,
        dates,
    };
    let (number, city_name) = ads::insert(conn, &ad, now).await?;
    // Everything a read would find is at hand: no round trip to read it back.
    let record = ads::inserted(number, &user, checked.parent_category_id, city_name, ad);
    let record = if charged {
        charged_insertion(conn, seller, record, &checked, till, now).await?
    } else {
        record
    };
    let event = events::advertisement(
        EventType::AdvertisementCreated,
        &record,
        record.status_at(now),
        None,
    );
    events::record(conn, event, now).await?;
    Ok(Placed { record })
}

/// Charges the insertion fee of `record`, a draft that is to go online, for its category's
/// running days, and reads it again (published, or waiting for its order).
async fn charged_insertion<R>(
    conn: &mut dyn Conn,
    seller: i64,
    record: AdRecord,
    checked: &Checked,
    till: Till,
    now: i64,
) -> Result<AdRecord, Error<R>> {
    let (fee, days) = (checked.insertion_fee, checked.running_days);
    orders::charge_insertion(conn, seller, &record, fee, days, till, now).await?;
    ads::get(conn, record.number)
        .await?
        .ok_or(Error::NotFound(Thing::Advertisement))
}

/// What a seller asks to change.
pub enum Edit {
    /// The writable members, as PUT sends them (read-only members are ignored).
    Replace(Map<String, Value>),
    /// An RFC 6902 JSON Patch of the writable members.
    Patch(json_patch::Patch),
}

/// A changed ad: as stored now, and the state it was in before.
#[derive(Debug)]
pub struct Changed {
    pub record: AdRecord,
    pub from: AdStatus,
    /// Whether the change removed the ad's images (it deleted the ad): the caller calls
    /// `usecase::images::forget_removed` once the change has committed.
    pub removed_images: bool,
}

/// Changes `seller`'s ad `item` if `precondition` accepts the ad as it is (HTTP's
/// `If-Match`): its content, checked against its category, and its state where the
/// lifecycle allows. A write that raced this one is [`Error::Changed`], never lost.
pub async fn change<R>(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    edit: Result<Edit, R>,
    precondition: impl FnOnce(&AdRecord) -> bool + Send,
    market: Market,
    now: i64,
) -> Result<Changed, Error<R>> {
    let Market { region, till } = market;
    let record = own_ad(conn, seller, item, now).await?;
    if record.status_at(now) == AdStatus::Deleted {
        return Err(Error::NotFound(Thing::Advertisement));
    }
    if !precondition(&record) {
        return Err(Error::Changed);
    }
    let body = match edit.map_err(Error::Request)? {
        Edit::Replace(body) => body,
        Edit::Patch(patch) => patched(&record, &patch, now)?,
    };
    let body: Map<String, Value> = body
        .into_iter()
        .filter(|(key, _)| !READ_ONLY_FIELDS.contains(&key.as_str()))
        .collect();
    let attributes = match serde_json::from_str::<Value>(&record.attributes) {
        Ok(Value::Object(attributes)) => attributes,
        _ => Map::new(),
    };
    let stored = Stored {
        category_id: record.category_id,
        attributes: &attributes,
        price: price_before(&record),
    };
    let current = record.status_at(now);
    let wanted = match requested_status(&body) {
        Ok(wanted) => wanted.unwrap_or(current),
        Err(error) => {
            let checked = checked_content(conn, &body, region, Some(stored)).await;
            return Err(with_content_errors(error, checked));
        }
    };
    if !may_transition(current, wanted, Actor::Seller) {
        return Err(Error::Conflict(Conflict::Transition {
            from: current,
            to: wanted,
        }));
    }
    let checked = checked_content(conn, &body, region, Some(stored)).await?;
    let publishing = publishes(current, wanted);
    if publishing && !checked.category_open {
        // Publishing places the ad: a closed category takes no new ones.
        return Err(category_closed().into());
    }
    if let Some(order) = record.awaiting_order.filter(|_| publishing) {
        return Err(Error::Conflict(Conflict::AwaitingPayment(order)));
    }
    if let Some(order) = record.awaiting_order
        && checked.content.category_id != record.category_id
    {
        // The order charges the fee of the ad's category: paid, it would publish the ad in
        // another, whose fee may be higher.
        return Err(Error::Conflict(Conflict::CategoryAwaitingPayment(order)));
    }
    // Publishing where the category charges: a draft until the fee's order is paid.
    let charged = publishing && checked.insertion_fee > 0;
    let (wanted, publishing) = if charged {
        (AdStatus::Draft, false)
    } else {
        (wanted, publishing)
    };
    let dates = if publishing {
        Dates::published(now, checked.running_days)
    } else {
        record.dates()
    };
    let write = AdWrite::from_content(&checked.content, seller, checked.parent_category_id);
    let Some(city) = ads::update(conn, &record, &write, wanted, dates, now).await? else {
        return Err(Error::Changed);
    };
    // Everything a read would find is at hand: no round trip to read it back.
    let parent = checked.parent_category_id;
    let record = ads::updated(record, parent, city, write, wanted, dates);
    let mut record = if charged {
        charged_insertion(conn, seller, record, &checked, till, now).await?
    } else {
        record
    };
    let removed_images = wanted == AdStatus::Deleted;
    if removed_images {
        record.images.clear();
        remove_images(conn, record.number, now).await?;
    }
    let event_type = if removed_images {
        EventType::AdvertisementDeleted
    } else {
        EventType::AdvertisementUpdated
    };
    let status = record.status_at(now);
    let event = events::advertisement(event_type, &record, status, Some(current));
    events::record(conn, event, now).await?;
    Ok(Changed {
        record,
        from: current,
        removed_images,
    })
}

/// What a deletion did.
#[derive(Debug)]
pub enum Deleted {
    /// The ad, as it was before. Its images went too: the caller calls
    /// `usecase::images::forget_removed` once the deletion has committed.
    Now { before: Box<AdRecord> },
    /// It was deleted before (deleting is idempotent).
    Already,
}

/// Deletes `seller`'s ad `item` if `precondition` accepts it as it is.
pub async fn delete(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    precondition: impl FnOnce(&AdRecord) -> bool + Send,
    now: i64,
) -> Result<Deleted, Error> {
    // Held first: of two deletions at once (a retry after a timeout), the second then
    // reads the ad deleted (204 again), not a version gone stale (412 on PostgreSQL).
    ads::lock(conn, item.number()).await?;
    let record = own_ad(conn, seller, item, now).await?;
    if record.status_at(now) == AdStatus::Deleted {
        return Ok(Deleted::Already);
    }
    if !precondition(&record) {
        return Err(Error::Changed);
    }
    if !ads::set_status(conn, &record, AdStatus::Deleted, None, now).await? {
        return Err(Error::Changed);
    }
    remove_images(conn, record.number, now).await?;
    let event = events::advertisement(
        EventType::AdvertisementDeleted,
        &record,
        AdStatus::Deleted,
        Some(record.status_at(now)),
    );
    events::record(conn, event, now).await?;
    Ok(Deleted::Now {
        before: Box::new(record),
    })
}

/// How many ads one expiry write takes at most: a backlog (after a stop) is written down
/// in several, so other writes are not held up.
pub const EXPIRY_BATCH: i64 = 500;

/// The system's transition: writes down as expired up to [`EXPIRY_BATCH`] running ads
/// whose close date has passed, each with its `advertisement.updated` event; returns how
/// many.
pub async fn expire_due(conn: &mut dyn Conn, now: i64) -> Result<usize, DbError> {
    let expired = ads::expire_due(conn, now, EXPIRY_BATCH).await?;
    for before in &expired {
        let event = events::advertisement(
            EventType::AdvertisementUpdated,
            before,
            AdStatus::Expired,
            Some(before.status),
        );
        events::record(conn, event, now).await?;
    }
    Ok(expired.len())
}

/// Removes the images of an ad being deleted, in its transaction: a deleted ad is shown to
/// no one, ever again, so its images would only take room. Read after the ad's row was
/// written (and locked), so an image added meanwhile goes too.
async fn remove_images(conn: &mut dyn Conn, item_number: i64, now: i64) -> Result<(), DbError> {
    let found = images::of_ad(conn, item_number).await?;
    let media_ids: Vec<&str> = found.iter().map(|i| i.media_id.as_str()).collect();
    renditions::remove_images(conn, &media_ids, now).await
}

/// Who reads an ad: the user of a user token (none for a client token), and whether the
/// token may read a user's private fields (scope `read`).
#[derive(Clone, Copy, Debug)]
pub struct Reader {
    pub user: Option<i64>,
    pub private: bool,
}

/// An ad as a reader may see it.
#[derive(Debug)]
pub struct Shown {
    pub record: AdRecord,
    /// The seller, with `read`: every state, and what only the seller sees.
    pub in_full: bool,
    /// Read by someone other than its seller: a view to count.
    pub is_view: bool,
}

/// Reads an ad: online ones to anyone, the others to their seller only (with `read`, as
/// every private field); a deleted ad to no one.
pub async fn read(
    conn: &mut dyn Conn,
    item: ItemId,
    reader: Reader,
    now: i64,
) -> Result<Shown, Error> {
    let record = ads::get(conn, item.number())
        .await?
        .ok_or(Error::NotFound(Thing::Advertisement))?;
    let by_seller = reader.user == Some(record.seller_id);
    let in_full = by_seller && reader.private;
    let status = record.status_at(now);
    if status == AdStatus::Deleted || (status != AdStatus::Online && !in_full) {
        return Err(Error::NotFound(Thing::Advertisement));
    }
    Ok(Shown {
        record,
        in_full,
        is_view: !by_seller,
    })
}

/// A page of ads and how many there are in all.
#[derive(Debug)]
pub struct AdPage {
    pub records: Vec<AdRecord>,
    pub total: i64,
}

/// A seller's own ads in `statuses` (see `domain::advertisement::listed_statuses`), newest
/// first.
pub async fn sellers_ads(
    conn: &mut dyn Conn,
    seller: i64,
    statuses: &[AdStatus],
    (offset, limit): (i64, i64),
    now: i64,
) -> Result<AdPage, Error> {
    let (records, total) = ads::by_seller(conn, seller, statuses, now, offset, limit).await?;
    Ok(AdPage { records, total })
}

/// The online ads of a user, newest first.
pub async fn online_ads_of(
    conn: &mut dyn Conn,
    user: i64,
    (offset, limit): (i64, i64),
    now: i64,
) -> Result<AdPage, Error> {
    if users::get(conn, user).await?.is_none() {
        return Err(Error::NotFound(Thing::User));
    }
    let (records, total) =
        ads::by_seller(conn, user, &[AdStatus::Online], now, offset, limit).await?;
    Ok(AdPage { records, total })
}

/// The ad `item`, unless it does not exist or is deleted.
pub(super) async fn existing<R>(
    conn: &mut dyn Conn,
    item: ItemId,
    now: i64,
) -> Result<AdRecord, Error<R>> {
    ads::get(conn, item.number())
        .await?
        .filter(|ad| ad.status_at(now) != AdStatus::Deleted)
        .ok_or(Error::NotFound(Thing::Advertisement))
}

/// What a caller without a part in someone else's ad gets: [`Error::Forbidden`] for an
/// online ad, which anyone may know of, and [`Error::NotFound`] for any other, so that the
/// existence of a draft or a paused ad does not leak (docs/LIFECYCLE.md).
pub(super) fn outsider<R>(record: &AdRecord, now: i64) -> Error<R> {
    if record.status_at(now) == AdStatus::Online {
        Error::Forbidden
    } else {
        Error::NotFound(Thing::Advertisement)
    }
}

/// The ad `item` of `seller`, deleted or not; someone else's ad is what an [`outsider`]
/// gets.
async fn own_ad<R>(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    now: i64,
) -> Result<AdRecord, Error<R>> {
    let record = ads::get(conn, item.number())
        .await?
        .ok_or(Error::NotFound(Thing::Advertisement))?;
    owned_by(record, seller, now)
}

/// The ad `item` of `seller`, not deleted; someone else's ad is what an [`outsider`] gets.
pub(super) async fn own_existing<R>(
    conn: &mut dyn Conn,
    seller: i64,
    item: ItemId,
    now: i64,
) -> Result<AdRecord, Error<R>> {
    owned_by(existing(conn, item, now).await?, seller, now)
}

/// `record` if `seller` is its seller; for anyone else, what an [`outsider`] gets.
fn owned_by<R>(record: AdRecord, seller: i64, now: i64) -> Result<AdRecord, Error<R>> {
    if record.seller_id == seller {
        Ok(record)
    } else {
        Err(outsider(&record, now))
    }
}

/// Content checked against its category, and what the category says about it.
struct Checked {
    content: AdContent,
    running_days: i64,
    /// What the category charges for an ad's first publication (cents; 0: nothing).
    insertion_fee: i64,
    parent_category_id: Option<i64>,
    category_open: bool,
}

/// Checks content against its category, read in the same transaction; `stored` is what an
/// update starts from.
/// `error` (the requested status's) with the field errors of the content's check: every
/// problem of a request at once (docs/API.md).
fn with_content_errors<C, R>(error: FieldError, content: Result<C, Error<R>>) -> Error<R> {
    match content {
        Err(Error::Invalid(mut errors)) => {
            errors.insert(0, error);
            Error::Invalid(errors)
        }
        Err(other) => other,
        Ok(_) => error.into(),
    }
}

async fn checked_content<R>(
    conn: &mut dyn Conn,
    body: &Map<String, Value>,
    region: Locale,
    stored: Option<Stored<'_>>,
) -> Result<Checked, Error<R>> {
    let category = match named_category(body) {
        Some(id) => categories::get_held(conn, id).await?,
        None => None,
    };
    let content = check_content(body, category.as_ref(), region, stored)?;
    let parent_category_id = category.as_ref().and_then(|c| c.parent_id);
    let category_open = category
        .as_ref()
        .is_some_and(|c| c.status == CategoryStatus::Open);
    let fees = category.and_then(|c| c.leaf).map(|leaf| leaf.fees);
    let running_days = running_days(fees.as_ref());
    let insertion_fee = fees.as_ref().map_or(0, |fees| fees.insertion_fee);
    Ok(Checked {
        content,
        running_days,
        insertion_fee,
        parent_category_id,
        category_open,
    })
}

/// The ad's `reserved` flag and stored model type, which a change is compared with.
fn price_before(record: &AdRecord) -> PriceBefore {
    let model_type = serde_json::from_str::<Value>(&record.price_model)
        .ok()
        .and_then(|model| model.get("modelType")?.as_str().and_then(ModelType::parse));
    PriceBefore {
        reserved: record.reserved,
        model_type,
    }
}

/// The body a JSON Patch makes of the ad's writable members.
fn patched<R>(
    record: &AdRecord,
    patch: &json_patch::Patch,
    now: i64,
) -> Result<Map<String, Value>, Error<R>> {
    let mut view = writable_view(record, now);
    apply_patch(&mut view, patch)?;
    match view {
        Value::Object(map) => Ok(map),
        _ => Err(patch_refused("the advertisement must stay a JSON object".to_owned()).into()),
    }
}

/// The members a client may send back: what a patch applies to.
fn writable_view(record: &AdRecord, now: i64) -> Value {
    let mut view = json!({
        "title": record.title,
        "description": record.description,
        "categoryId": record.category_id,
        "status": record.status_at(now).as_str(),
        "locale": record.locale.as_str(),
        "reserved": record.reserved,
        "showOnMap": record.show_on_map,
        "websiteUrl": record.website_url,
        "priceModel": serde_json::from_str::<Value>(&record.price_model).unwrap_or(Value::Null),
        "location": {"postcode": record.postcode},
    });
    if let Ok(Value::Object(attributes)) = serde_json::from_str::<Value>(&record.attributes) {
        for (key, value) in attributes {
            view[key] = value;
        }
    }
    view
}

/// The most operations one patch may hold: far beyond what an edit of an ad needs.
pub const PATCH_MAX_OPERATIONS: usize = 100;
/// The most a patched advertisement may weigh as JSON: far beyond any valid ad, and a
/// bound on what `copy` operations, each of which may double the document, can build.
pub const PATCHED_MAX_BYTES: usize = 1 << 20;
/// The deepest a patched advertisement may nest: far beyond any valid ad (whose members
/// nest two deep). Checked after every operation, so that one operation, which at most
/// doubles the depth (`copy`) or adds a parsed value's (at most 128), never builds a
/// document deep enough that cloning, dropping or writing it (each recursive) overflows
/// the stack, which would abort the process.
pub const PATCHED_MAX_DEPTH: usize = 32;

/// RFC 6902, with the original's allowance: `replace` of a member absent when the operation
/// comes acts as `add`. Applied to `view`, a copy of the ad that a failure leaves half patched: the caller
/// drops it.
fn apply_patch(view: &mut Value, patch: &json_patch::Patch) -> Result<(), FieldError> {
    if patch.0.len() > PATCH_MAX_OPERATIONS {
        return Err(patch_refused(format!(
            "{} operations; at most {PATCH_MAX_OPERATIONS}",
            patch.0.len()
        )));
    }
    for (index, operation) in patch.0.iter().enumerate() {
        let operation = match operation {
            json_patch::PatchOperation::Replace(replace)
                if view.pointer(replace.path.as_str()).is_none() =>
            {
                json_patch::PatchOperation::Add(json_patch::AddOperation {
                    path: replace.path.clone(),
                    value: replace.value.clone(),
                })
            }
            other => other.clone(),
        };
        let copies = matches!(operation, json_patch::PatchOperation::Copy(_));
        // Without undo: json_patch::patch panics where it cannot undo a failed `move`.
        json_patch::patch_unsafe(view, std::slice::from_ref(&operation)).map_err(|e| {
            let json_patch::PatchError { path, kind, .. } = e;
            patch_refused(format!(
                "operation '/{index}' failed at path '{path}': {kind}"
            ))
        })?;
        if deeper_than(view, PATCHED_MAX_DEPTH) {
            return Err(patch_refused(format!(
                "the patched advertisement nests deeper than {PATCHED_MAX_DEPTH} levels"
            )));
        }
        if copies && serde_json::to_vec(view).map_or(true, |v| v.len() > PATCHED_MAX_BYTES) {
            return Err(patch_refused(format!(
                "the patched advertisement is over {PATCHED_MAX_BYTES} bytes"
            )));
        }
    }
    Ok(())
}

/// Whether `value` nests deeper than `most` arrays and objects; without recursion, as the
/// value may be too deep for it.
fn deeper_than(value: &Value, most: usize) -> bool {
    let mut pending = vec![(value, 0)];
    while let Some((value, depth)) = pending.pop() {
        let inner = depth + 1;
        match value {
            Value::Array(items) if depth < most => pending.extend(items.iter().map(|v| (v, inner))),
            Value::Object(members) if depth < most => {
                pending.extend(members.values().map(|v| (v, inner)));
            }
            Value::Array(_) | Value::Object(_) => return true,
            _ => {}
        }
    }
    false
}

fn patch_refused(why: String) -> FieldError {
    FieldError::new(
        "patch",
        "patch-failed",
        Text::new(
            format!("de patch kan niet worden toegepast: {why}"),
            format!("le patch ne peut pas être appliqué : {why}"),
        ),
    )
}
