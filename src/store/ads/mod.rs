//! Advertisements as stored.

use std::sync::LazyLock;

use crate::domain::advertisement::{AdContent, AdStatus, Dates, effective_status};
use crate::domain::feature::Effect;
use crate::domain::locale::Locale;
use crate::domain::search::AdTerms;
use crate::params;

mod expiry;
mod search_terms;

pub use expiry::expire_due;
pub use search_terms::{outdate_search_terms, set_search_terms, with_search_before};

use super::images::{self, ImageRecord};
use super::record::record;
use super::users::User;
use super::{Conn, DbError, Record, Value};

record! {
    /// An advertisement row with what its representation needs of its seller (queries name
    /// the tables `advertisements a`, `users u`: see [`FROM`]).
    #[derive(Clone, Debug, PartialEq)]
    pub struct AdRecord in "a" {
        pub number: i64 = "a.item_number",
        pub seller_id: i64,
        pub seller_name: String = "u.name",
        pub seller_phone: Option<String> = "u.phone_number",
        pub category_id: i64,
        /// The L1 parent of the leaf category, which the database keeps on the ad (triggers
        /// of migration 0048: on insert, on a change of category, and when an import moves
        /// the category). Joined from `categories` at each read instead, it cost PostgreSQL
        /// about 6% of its CPU per R1 request.
        pub parent_category_id: Option<i64>,
        /// As written; [`AdRecord::status_at`] is the state a reader sees.
        pub status: AdStatus,
        pub rejection_reason: Option<String>,
        pub title: String,
        pub description: String,
        /// JSON text.
        pub price_model: String,
        /// JSON text (an object).
        pub attributes: String,
        pub postcode: String,
        /// The place of the postcode in `locations`, by the rule of `locations::find` (the
        /// whole postcode's row, else its area's; six characters are Dutch); `None` where
        /// the table has neither. Kept on the ad (`locations::place_of`): written with its
        /// postcode, and brought up to date by a locations import in the import's own
        /// transaction, so an import shows at once. Looked up at each read, it was half of
        /// the time PostgreSQL took to read a search's page of ads.
        pub city_name: Option<String> = "a.place",
        pub locale: Locale,
        pub reserved: bool,
        pub show_on_map: bool,
        pub start_date: Option<i64>,
        pub close_date: Option<i64>,
        pub version: i64,
        /// Until when each kind of feature lasts (`domain::feature::Effect`).
        pub top_until: Option<i64>,
        pub bumped_until: Option<i64>,
        pub sticker_until: Option<i64>,
        pub url_until: Option<i64>,
        pub homepage_until: Option<i64>,
        /// The order of the insertion fee this draft waits for (see `usecase::orders`).
        pub awaiting_order: Option<i64>,
        /// The seller's website (shown to others while the `url` feature runs).
        pub website_url: Option<String>,
        ..
        /// In the ad's order.
        pub images: Vec<ImageRecord>,
    }
}

impl AdRecord {
    /// The ad's state at `now`: the stored one, except that an online or paused ad past its
    /// `closeDate` is expired already (the sweep writes that down later).
    pub fn status_at(&self, now: i64) -> AdStatus {
        effective_status(self.status, self.close_date, now)
    }

    /// Until when `effect` lasts (it may have passed).
    pub fn feature_until(&self, effect: Effect) -> Option<i64> {
        match effect {
            Effect::Bump => self.bumped_until,
            Effect::Top => self.top_until,
            Effect::Sticker => self.sticker_until,
            Effect::Url => self.url_until,
            Effect::Homepage => self.homepage_until,
        }
    }

    /// The features' effects that run at `now`.
    pub fn running_effects(&self, now: i64) -> impl Iterator<Item = Effect> + '_ {
        Effect::ALL
            .into_iter()
            .filter(move |effect| self.feature_until(*effect).is_some_and(|until| until > now))
    }

    pub fn dates(&self) -> Dates {
        Dates {
            start: self.start_date,
            close: self.close_date,
        }
    }
}

/// The tables of an [`AdRecord`].
const FROM: &str = " FROM advertisements a JOIN users u ON u.user_id = a.seller_id";

/// One ad with its images: a row per image, or one row with NULL image columns.
static GET_WITH_IMAGES: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {}, {}{FROM} LEFT JOIN images i ON i.item_number = a.item_number \
         WHERE a.item_number = $1 ORDER BY i.position",
        AdRecord::COLUMNS,
        ImageRecord::COLUMNS
    )
});

/// One ad with its images, in one statement (one round trip on PostgreSQL): a row per
/// image, or one row with no image.
pub async fn get(conn: &mut dyn Conn, number: i64) -> Result<Option<AdRecord>, DbError> {
    let mut rows = conn
        .query(&GET_WITH_IMAGES, params![number])
        .await?
        .into_iter();
    let Some(mut first) = rows.next() else {
        return Ok(None);
    };
    let mut record: AdRecord = first.read()?;
    record.images.extend(images::joined(&mut first)?);
    for mut row in rows {
        row.skip(AdRecord::WIDTH);
        record.images.extend(images::joined(&mut row)?);
    }
    Ok(Some(record))
}

/// The writable content of an ad, ready for storage.
#[derive(Clone, Debug)]
pub struct AdWrite {
    pub category_id: i64,
    pub title: String,
    pub description: String,
    /// JSON text.
    pub price_model: String,
    /// JSON text (an object).
    pub attributes: String,
    pub postcode: String,
    pub locale: Locale,
    pub reserved: bool,
    pub show_on_map: bool,
    pub website_url: Option<String>,
    /// What search finds the ad by.
    pub search: AdTerms,
}

impl AdWrite {
    /// Checked content as it is stored: the price model and attributes as JSON text, and
    /// the words and tags search finds it by (which name its seller and L1 category).
    pub fn from_content(
        content: &AdContent,
        seller_id: i64,
        parent_category_id: Option<i64>,
    ) -> AdWrite {
        AdWrite {
            search: AdTerms::of(content, seller_id, parent_category_id),
            category_id: content.category_id,
            title: content.title.clone(),
            description: content.description.clone(),
            price_model: content.price_model.to_json().to_string(),
            attributes: serde_json::Value::Object(content.attributes.clone()).to_string(),
            postcode: content.postcode.clone(),
            locale: content.locale,
            reserved: content.reserved,
            show_on_map: content.show_on_map,
            website_url: content.website_url.clone(),
        }
    }
}

/// A new ad: its seller, content, state and dates.
#[derive(Clone, Debug)]
pub struct NewAd {
    pub seller_id: i64,
    pub content: AdWrite,
    pub status: AdStatus,
    pub dates: Dates,
}

/// The columns `insert` and `insert_many` fill, in the order of [`new_ad_values`].
const INSERT_COLUMNS: &str = "seller_id, category_id, status, title, description, price_model, \
                              attributes, postcode, locale, reserved, show_on_map, start_date, \
                              close_date, price_cents, search_title, search_body, search_tags, \
                              search_version, website_url, version, created_at, updated_at";
const INSERT_WIDTH: usize = 22;
/// The parameter of [`INSERT_COLUMNS`] that binds `postcode` (`$8`).
const POSTCODE_PARAMETER: usize = 8;

fn new_ad_values(ad: &NewAd, now: i64) -> Vec<Value> {
    let mut values = Vec::with_capacity(INSERT_WIDTH);
    values.push(Value::Int(ad.seller_id));
    values.extend(content_values(&ad.content, ad.status, ad.dates));
    values.extend([Value::Int(1), Value::Int(now), Value::Int(now)]);
    values
}

/// An ad's content and state as inserts and updates bind them, in the order of their
/// columns: category_id, status, title, description, price_model, attributes, postcode,
/// locale, reserved, show_on_map, start_date, close_date, price_cents, search_title,
/// search_body, search_tags, search_version, website_url.
fn content_values(ad: &AdWrite, status: AdStatus, dates: Dates) -> [Value; 18] {
    [
        Value::Int(ad.category_id),
        Value::from(status.as_str()),
        Value::from(&ad.title),
        Value::from(&ad.description),
        Value::from(&ad.price_model),
        Value::from(&ad.attributes),
        Value::from(&ad.postcode),
        Value::from(ad.locale.as_str()),
        Value::Bool(ad.reserved),
        Value::Bool(ad.show_on_map),
        Value::from(dates.start),
        Value::from(dates.close),
        Value::from(ad.search.price_cents),
        Value::from(&ad.search.title_words),
        Value::from(&ad.search.body_words),
        Value::from(&ad.search.tags),
        Value::Int(ad.search.version),
        Value::from(ad.website_url.as_deref()),
    ]
}

/// Stores a new ad; returns its number and the place of its postcode as stored with it
/// (`AdRecord::city_name`), looked up by the same statement.
pub async fn insert(
    conn: &mut dyn Conn,
    ad: &NewAd,
    now: i64,
) -> Result<(i64, Option<String>), DbError> {
    let row = conn
        .query_one(
            &format!(
                "INSERT INTO advertisements ({INSERT_COLUMNS}, place) VALUES ({}, {}) \
                 RETURNING item_number, place",
                super::numbered(1, INSERT_WIDTH),
                // The parameter's type said, for PostgreSQL to infer it in `length()`.
                super::locations::place_of(&format!("CAST(${POSTCODE_PARAMETER} AS TEXT)"))
            ),
            &new_ad_values(ad, now),
        )
        .await?;
    Ok((row.get("item_number")?, row.get("place")?))
}

/// Sets the place of each of the ads `numbers` from its postcode
/// ([`super::locations::place_of`]) after a many-row INSERT, in a statement of its own:
/// written into each row of that INSERT, the lookups opened a cursor each, and SQLite walks
/// the open cursors of a table at each open (`souk seed` of 100,000 ads on SQLite 36 to 39
/// s without, 47 to 52 with them there).
async fn set_places(conn: &mut dyn Conn, numbers: &[i64]) -> Result<(), DbError> {
    let values: Vec<Value> = numbers.iter().map(|n| Value::Int(*n)).collect();
    conn.run(
        &format!(
            "UPDATE advertisements SET place = {} WHERE item_number IN ({})",
            super::locations::place_of("advertisements.postcode"),
            super::numbered(1, numbers.len())
        ),
        &values,
    )
    .await
}

/// Stores many new ads in one statement (`souk seed`); returns their numbers in the order
/// of `ads`.
pub async fn insert_many(
    conn: &mut dyn Conn,
    ads: &[NewAd],
    now: i64,
) -> Result<Vec<i64>, DbError> {
    let values: Vec<Value> = ads.iter().flat_map(|ad| new_ad_values(ad, now)).collect();
    let mut numbers: Vec<i64> = conn
        .query(
            &format!(
                "INSERT INTO advertisements ({INSERT_COLUMNS}) VALUES {} RETURNING item_number",
                super::placeholders(ads.len(), INSERT_WIDTH)
            ),
            &values,
        )
        .await?
        .iter()
        .map(|row| row.get("item_number"))
        .collect::<Result<_, _>>()?;
    // The rows come back in no promised order; the numbers were handed out in the order of
    // the VALUES.
    numbers.sort_unstable();
    set_places(conn, &numbers).await?;
    Ok(numbers)
}

/// The record [`get`] would read right after [`insert`] stored `ad` for `seller`: version
/// 1, no images yet.
pub fn inserted(
    number: i64,
    seller: &User,
    parent_category_id: Option<i64>,
    city_name: Option<String>,
    ad: NewAd,
) -> AdRecord {
    let NewAd {
        content,
        status,
        dates,
        ..
    } = ad;
    AdRecord {
        number,
        seller_id: seller.id,
        seller_name: seller.name.clone(),
        seller_phone: seller.phone_number.clone(),
        category_id: content.category_id,
        parent_category_id,
        status,
        rejection_reason: None,
        title: content.title,
        description: content.description,
        price_model: content.price_model,
        attributes: content.attributes,
        postcode: content.postcode,
        city_name,
        locale: content.locale,
        reserved: content.reserved,
        show_on_map: content.show_on_map,
        start_date: dates.start,
        close_date: dates.close,
        version: 1,
        top_until: None,
        bumped_until: None,
        sticker_until: None,
        url_until: None,
        homepage_until: None,
        awaiting_order: None,
        website_url: content.website_url,
        images: Vec::new(),
    }
}

/// The record [`get`] would read right after [`update`] stored `ad` over `record`: the
/// next version, the same seller, images and rejection reason.
pub fn updated(
    record: AdRecord,
    parent_category_id: Option<i64>,
    city_name: Option<String>,
    ad: AdWrite,
    status: AdStatus,
    dates: Dates,
) -> AdRecord {
    AdRecord {
        category_id: ad.category_id,
        parent_category_id,
        status,
        title: ad.title,
        description: ad.description,
        price_model: ad.price_model,
        attributes: ad.attributes,
        postcode: ad.postcode,
        city_name,
        locale: ad.locale,
        reserved: ad.reserved,
        show_on_map: ad.show_on_map,
        website_url: ad.website_url,
        start_date: dates.start,
        close_date: dates.close,
        version: record.version + 1,
        ..record
    }
}

/// Replaces the content and state of an ad if it is still at `version`, and returns the
/// place of its postcode as stored with it (`AdRecord::city_name`); `None` if someone
/// changed the ad meanwhile. The rejection reason stays.
pub async fn update(
    conn: &mut dyn Conn,
    record: &AdRecord,
    ad: &AdWrite,
    status: AdStatus,
    dates: Dates,
    now: i64,
) -> Result<Option<Option<String>>, DbError> {
    let rows = conn
        .query(
            &format!(
                "UPDATE advertisements SET category_id = $3, status = $4, title = $5, \
                 description = $6, price_model = $7, attributes = $8, postcode = $9, \
                 locale = $10, reserved = $11, show_on_map = $12, start_date = $13, \
                 close_date = $14, price_cents = $15, search_title = $16, search_body = $17, \
                 search_tags = $18, search_version = $19, website_url = $20, \
                 version = version + 1, updated_at = $21, place = {} \
                 WHERE item_number = $1 AND version = $2 RETURNING place",
                super::locations::place_of("CAST($9 AS TEXT)")
            ),
            &[
                &[Value::Int(record.number), Value::Int(record.version)][..],
                &content_values(ad, status, dates),
                &[Value::Int(now)],
            ]
            .concat(),
        )
        .await?;
    rows.first().map(|row| row.get("place")).transpose()
}

/// Moves an ad to `status` with `rejection_reason` if it is still at the version of
/// `record`; false if someone changed it meanwhile. The dates stay. A rejection keeps the
/// state it came from (`status_before_rejection`, for a restore; a second rejection keeps
/// the first one's).
pub async fn set_status(
    conn: &mut dyn Conn,
    record: &AdRecord,
    status: AdStatus,
    rejection_reason: Option<&str>,
    now: i64,
) -> Result<bool, DbError> {
    Ok(conn
        .execute(
            "UPDATE advertisements SET status = $3, rejection_reason = $4, \
             status_before_rejection = CASE WHEN $3 <> 'rejected' THEN NULL \
             WHEN status = 'rejected' THEN status_before_rejection ELSE status END, \
             version = version + 1, updated_at = $5 \
             WHERE item_number = $1 AND version = $2",
            params![
                record.number,
                record.version,
                status.as_str(),
                rejection_reason,
                now
            ],
        )
        .await?
        == 1)
}

/// Renews an ad: its `closeDate` becomes `close`, and an expired ad comes back online,
/// whether the minute's sweep has stored it `expired` yet or it is still stored running
/// past its old date (`effective_status`); a paused one that has not expired stays paused.
pub async fn renew(conn: &mut dyn Conn, number: i64, close: i64, now: i64) -> Result<(), DbError> {
    conn.run(
        &format!(
            "UPDATE advertisements SET close_date = $2, \
             status = CASE WHEN status = 'expired' \
                             OR (status IN ({}) AND close_date <= $3) \
                           THEN 'online' ELSE status END, \
             version = version + 1, updated_at = $3 WHERE item_number = $1",
            running_states()
        ),
        params![number, close, now],
    )
    .await
}

/// Holds ad `number`'s row until the transaction ends (see [`super::users::lock`]): for a
/// change computed from what the ad holds now (a renewal from its close date, an image
/// numbered after the last), read after this.
pub async fn lock(conn: &mut dyn Conn, number: i64) -> Result<(), DbError> {
    conn.lock_row(
        "SELECT item_number FROM advertisements WHERE item_number = $1",
        number,
    )
    .await
}

/// Marks draft `number` as waiting for the payment of its insertion order `order`, or, with
/// `None`, as waiting for none.
pub async fn set_awaiting_order(
    conn: &mut dyn Conn,
    number: i64,
    order: Option<i64>,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "UPDATE advertisements SET awaiting_order = $2, version = version + 1, updated_at = $3 \
         WHERE item_number = $1",
        params![number, order, now],
    )
    .await
}

/// Publishes draft `number` with `dates` (its insertion fee is paid). A draft that an
/// operator rejected while it waited for its fee stays rejected, and is published for
/// the restore: the state it comes back to is online, for these dates.
pub async fn publish(
    conn: &mut dyn Conn,
    number: i64,
    dates: Dates,
    now: i64,
) -> Result<(), DbError> {
    conn.run(
        "UPDATE advertisements SET \
             status = CASE WHEN status = $6 THEN $2 ELSE status END, \
             status_before_rejection = CASE WHEN status = $7 THEN $2 \
                 ELSE status_before_rejection END, \
             start_date = $3, close_date = $4, \
             awaiting_order = NULL, version = version + 1, updated_at = $5 \
         WHERE item_number = $1 \
           AND (status = $6 OR (status = $7 AND awaiting_order IS NOT NULL))",
        params![
            number,
            AdStatus::Online.as_str(),
            dates.start,
            dates.close,
            now,
            AdStatus::Draft.as_str(),
            AdStatus::Rejected.as_str()
        ],
    )
    .await
}

/// Sets until when a feature's effect lasts on ad `number`. A bump also ranks the ad
/// after every ad placed so far (search sorts it by that rank while the bump lasts).
pub async fn set_feature_until(
    conn: &mut dyn Conn,
    number: i64,
    effect: Effect,
    until: i64,
    now: i64,
) -> Result<(), DbError> {
    let set = match effect {
        Effect::Top => "top_until = $2",
        Effect::Bump => {
            "bumped_until = $2, bump_rank = (SELECT MAX(item_number) FROM advertisements)"
        }
        Effect::Sticker => "sticker_until = $2",
        Effect::Url => "url_until = $2",
        Effect::Homepage => "homepage_until = $2",
    };
    conn.run(
        &format!(
            "UPDATE advertisements SET {set}, version = version + 1, updated_at = $3 \
             WHERE item_number = $1"
        ),
        params![number, until, now],
    )
    .await
}

/// The state a rejected ad was in before its rejection (None for an ad rejected before
/// Souk kept it, or one not rejected).
pub async fn status_before_rejection(
    conn: &mut dyn Conn,
    number: i64,
) -> Result<Option<AdStatus>, DbError> {
    let text: Option<Option<String>> = conn
        .column(
            "SELECT status_before_rejection FROM advertisements WHERE item_number = $1",
            params![number],
        )
        .await?
        .into_iter()
        .next();
    Ok(text.flatten().as_deref().and_then(AdStatus::parse))
}

/// `'online', 'paused'`: the states whose `closeDate` runs, as an SQL list.
fn running_states() -> String {
    AdStatus::RUNNING
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The state of the ad `a` at the time in the parameter `now`: `effective_status` in SQL,
/// for filters that run in the database.
fn effective_status_sql(now: &str) -> String {
    format!(
        "(CASE WHEN a.status IN ({}) AND a.close_date <= {now} THEN '{}' ELSE a.status END)",
        running_states(),
        AdStatus::Expired.as_str()
    )
}

/// A seller's ads whose state at `now` is one of `statuses`, newest first, and how many
/// there are in all. The state at `now` counts an online or paused ad past its
/// `closeDate` as expired, as reads do, even before the expiry sweep wrote it down.
pub async fn by_seller(
    conn: &mut dyn Conn,
    seller_id: i64,
    statuses: &[AdStatus],
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<(Vec<AdRecord>, i64), DbError> {
    // Placeholders $3.. for the states; the list is short and fixed per request.
    let mut values: Vec<Value> = vec![Value::Int(seller_id), Value::Int(now)];
    values.extend(statuses.iter().map(|s| Value::from(s.as_str())));
    let filter = format!(
        "a.seller_id = $1 AND {} IN ({})",
        effective_status_sql("$2"),
        super::numbered(3, statuses.len())
    );
    let total = conn
        .query_one(
            &format!("SELECT COUNT(*) AS n FROM advertisements a WHERE {filter}"),
            &values,
        )
        .await?
        .get("n")?;
    let n = values.len();
    values.push(Value::Int(limit));
    values.push(Value::Int(offset));
    let sql = format!(
        "SELECT {}{FROM} WHERE {filter} ORDER BY a.item_number DESC LIMIT ${} OFFSET ${}",
        AdRecord::COLUMNS,
        n + 1,
        n + 2
    );
    let mut records: Vec<AdRecord> = conn.records(&sql, &values).await?;
    let numbers: Vec<i64> = records.iter().map(|r| r.number).collect();
    let mut images = images::of_ads(conn, &numbers).await?;
    for record in &mut records {
        record.images = images.remove(&record.number).unwrap_or_default();
    }
    Ok((records, total))
}

/// The ads `numbers` (with their images), in the order of `numbers`; numbers of ads that do
/// not exist are left out.
pub async fn by_numbers(conn: &mut dyn Conn, numbers: &[i64]) -> Result<Vec<AdRecord>, DbError> {
    if numbers.is_empty() {
        return Ok(Vec::new());
    }
    let values: Vec<Value> = numbers.iter().map(|n| Value::Int(*n)).collect();
    let sql = format!(
        "SELECT {}{FROM} WHERE a.item_number IN ({})",
        AdRecord::COLUMNS,
        super::numbered(1, numbers.len())
    );
    let mut records: Vec<AdRecord> = conn.records(&sql, &values).await?;
    let mut images = images::of_ads(conn, numbers).await?;
    for record in &mut records {
        record.images = images.remove(&record.number).unwrap_or_default();
    }
    records.sort_by_key(|r| numbers.iter().position(|n| *n == r.number));
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_postcode_parameter_is_the_postcode_column() {
        let columns: Vec<&str> = INSERT_COLUMNS.split(',').map(str::trim).collect();
        assert_eq!(columns.len(), INSERT_WIDTH);
        assert_eq!(columns[POSTCODE_PARAMETER - 1], "postcode");
    }
}
