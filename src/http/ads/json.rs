//! The advertisement as JSON, written member by member from its stored record.
//!
//! `GET /v1/advertisements/{itemId}` is the hottest route (R1 in performance.md). Built as a
//! `serde_json::Value` tree, its body cost as much CPU as the database read: a map insert
//! and a string per member, a walk to serialize the tree and another to drop it. Here every
//! member goes straight to the output: links from `format_args!`, the stored `priceModel`
//! and attribute values as the JSON text they are kept in.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::value::RawValue;

use crate::domain::advertisement::{AdStatus, ItemId, renew_possible};
use crate::domain::image::Size;
use crate::domain::time::Timestamp;
use crate::hal::{Displayed, Embedded, Hal, Href, Rel, Resource};
use crate::store::ads::AdRecord;
use crate::store::images::ImageRecord;

/// An advertisement as its seller (`for_seller`) or anyone else sees it at `now`.
pub struct AdJson<'a> {
    hal: &'a Hal,
    record: &'a AdRecord,
    status: AdStatus,
    now: i64,
    for_seller: bool,
    /// A search result: its images are embedded once more, directly.
    search_result: bool,
    /// Metres from the postcode a search was given (search results only).
    distance: Option<i64>,
}

impl<'a> AdJson<'a> {
    pub fn new(hal: &'a Hal, record: &'a AdRecord, now: i64, for_seller: bool) -> Self {
        AdJson {
            hal,
            record,
            status: record.status_at(now),
            now,
            for_seller,
            search_result: false,
            distance: None,
        }
    }

    /// A search result, with its distance when the search had a postcode.
    pub fn search_result(self, distance: Option<i64>) -> Self {
        AdJson {
            search_result: true,
            distance,
            ..self
        }
    }
}

/// Two strings written one after the other: a link made of a base made once (`/v1/advertisements/m123`)
/// and a fixed tail (`/features`), without `format!` machinery per link.
struct Joined<'a>(&'a str, &'a str);

impl std::fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)?;
        f.write_str(self.1)
    }
}

impl Serialize for AdJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let record = self.record;
        let item = ItemId::from_number(record.number).to_string();
        let path = format!("/{}/advertisements/{item}", self.hal.version);
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(
            "_links",
            &AdLinks {
                ad: self,
                item: &item,
                path: &path,
            },
        )?;
        map.serialize_entry("itemId", &item)?;
        map.serialize_entry("title", &record.title)?;
        map.serialize_entry("description", &record.description)?;
        map.serialize_entry("categoryId", &record.category_id)?;
        map.serialize_entry("status", self.status.as_str())?;
        map.serialize_entry("startDate", &record.start_date.map(Timestamp))?;
        map.serialize_entry("closeDate", &record.close_date.map(Timestamp))?;
        map.serialize_entry(
            "renewPossible",
            &renew_possible(self.status, record.close_date, self.now),
        )?;
        map.serialize_entry("locale", record.locale.as_str())?;
        map.serialize_entry("reserved", &record.reserved)?;
        map.serialize_entry("showOnMap", &record.show_on_map)?;
        // The seller always sees the address; others while the `url` feature runs.
        if let Some(url) = &record.website_url
            && (self.for_seller || record.url_until.is_some_and(|until| until > self.now))
        {
            map.serialize_entry("websiteUrl", url)?;
        }
        map.serialize_entry("priceModel", &stored_json(&record.price_model))?;
        map.serialize_entry(
            "location",
            &Location {
                postcode: &record.postcode,
                city_name: record.city_name.as_deref(),
            },
        )?;
        map.serialize_entry(
            "seller",
            &Seller {
                seller_id: record.seller_id,
                seller_name: &record.seller_name,
                phone_number: record.seller_phone.as_deref(),
                accept_paypal: false,
                show_email: false,
            },
        )?;
        // The category's attributes are members of the ad itself (their keys cannot be any
        // of the members above: the taxonomy check refuses such keys).
        for (key, value) in stored_attributes(&record.attributes) {
            map.serialize_entry(key, value)?;
        }
        if self.for_seller && self.status == AdStatus::Rejected {
            map.serialize_entry("rejectionReason", &record.rejection_reason)?;
        }
        map.serialize_entry(
            "activeFeatures",
            &ActiveFeatures {
                record,
                now: self.now,
            },
        )?;
        if self.for_seller && record.awaiting_order.is_some() {
            map.serialize_entry("awaitingPayment", &true)?;
        }
        if let Some(distance) = self.distance {
            map.serialize_entry("distance", &distance)?;
        }
        map.serialize_entry(
            "_embedded",
            &AdEmbedded {
                images: AdImages {
                    hal: self.hal,
                    path: &path,
                    images: &record.images,
                },
                search_result: self.search_result,
            },
        )?;
        map.end()
    }
}

/// The names of the features whose effect runs (`Effect::name`).
struct ActiveFeatures<'a> {
    record: &'a AdRecord,
    now: i64,
}

impl Serialize for ActiveFeatures<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.record.running_effects(self.now).map(|e| e.name()))
    }
}

struct AdLinks<'a> {
    ad: &'a AdJson<'a>,
    item: &'a str,
    path: &'a str,
}

impl Serialize for AdLinks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (hal, record, path) = (self.ad.hal, self.ad.record, self.path);
        let version = hal.version;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("self", &Href::new(path))?;
        map.serialize_entry(
            "describedby",
            &Href::new(hal.describedby(Resource::Advertisement)),
        )?;
        map.serialize_entry("curies", &hal.curies())?;
        let category = hal.rel(Rel::Category);
        match record.parent_category_id {
            Some(parent) => map.serialize_entry(
                category,
                &Href::new(format_args!(
                    "/{version}/categories/{parent}/{}",
                    record.category_id
                )),
            )?,
            None => map.serialize_entry(
                category,
                &Href::new(format_args!("/{version}/categories/{}", record.category_id)),
            )?,
        }
        map.serialize_entry(
            hal.rel(Rel::Seller),
            &Href::new(format_args!("/{version}/users/{}", record.seller_id)),
        )?;
        for (rel, tail) in [
            (Rel::AdvertisementFeatures, "/features"),
            (Rel::AdvertisementPurchasedFeatures, "/purchased-features"),
            (Rel::AdvertisementImages, "/images"),
            (Rel::AdvertisementStatistics, "/statistics"),
            (Rel::Bids, "/bids"),
            (Rel::AdvertisementTransactions, "/transactions"),
            (Rel::AdvertisementRenew, "/renew"),
        ] {
            map.serialize_entry(hal.rel(rel), &Href::new(Joined(path, tail)))?;
        }
        if let Some(order) = record.awaiting_order.filter(|_| self.ad.for_seller) {
            map.serialize_entry(
                hal.rel(Rel::Order),
                &Href::new(format_args!("/{version}/orders/{order}")),
            )?;
        }
        map.serialize_entry(
            hal.rel(Rel::AdvertisementWebsiteLink),
            &WebsiteLink {
                href: Displayed(format_args!("{}/a/{}", hal.base_url(), self.item)),
                kind: "text/html",
            },
        )?;
        map.end()
    }
}

#[derive(Serialize)]
#[serde(bound = "D: std::fmt::Display")]
struct WebsiteLink<D: std::fmt::Display> {
    href: Displayed<D>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    postcode: &'a str,
    city_name: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Seller<'a> {
    seller_id: i64,
    seller_name: &'a str,
    phone_number: Option<&'a str>,
    accept_paypal: bool,
    show_email: bool,
}

/// An ad's `_embedded`: its images collection; in a search result, the images again as a
/// list of their own (`<prefix>:advertisement-image`), where the original's search results
/// carried them.
struct AdEmbedded<'a> {
    images: AdImages<'a>,
    search_result: bool,
}

impl Serialize for AdEmbedded<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let hal = self.images.hal;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(hal.rel(Rel::AdvertisementImages), &self.images)?;
        if self.search_result {
            map.serialize_entry(hal.rel(Rel::AdvertisementImage), &self.images.list())?;
        }
        map.end()
    }
}

/// The embedded images collection: `{_links: {self}, _embedded: {<image rel>: [...]}}`.
struct AdImages<'a> {
    hal: &'a Hal,
    path: &'a str,
    images: &'a [ImageRecord],
}

impl Serialize for AdImages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry(
            "_links",
            &SelfLink {
                link: Href::new(Joined(self.path, "/images")),
            },
        )?;
        map.serialize_entry(
            "_embedded",
            &Embedded::new(self.hal.rel(Rel::AdvertisementImage), self.list()),
        )?;
        map.end()
    }
}

impl AdImages<'_> {
    fn list(&self) -> Vec<ImageJson<'_>> {
        self.images
            .iter()
            .map(|image| ImageJson {
                hal: self.hal,
                image,
            })
            .collect()
    }
}

#[derive(Serialize)]
#[serde(bound = "D: std::fmt::Display")]
struct SelfLink<D: std::fmt::Display> {
    #[serde(rename = "self")]
    link: Href<D>,
}

/// An image as embedded in its ad, as a JSON tree (for the image routes, which add links).
pub(crate) fn image_value(hal: &Hal, image: &ImageRecord) -> serde_json::Value {
    serde_json::to_value(ImageJson { hal, image }).unwrap_or_default()
}

/// An image as embedded in its ad: its own `self`, a link per size to the bytes, and the
/// templated links to any size's bytes and description.
struct ImageJson<'a> {
    hal: &'a Hal,
    image: &'a ImageRecord,
}

impl Serialize for ImageJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("_links", &ImageLinks(self))?;
        map.serialize_entry("mediaId", &self.image.media_id)?;
        map.serialize_entry("imageId", &self.image.position)?;
        map.serialize_entry("status", self.image.status.as_str())?;
        map.end()
    }
}

struct ImageLinks<'a>(&'a ImageJson<'a>);

impl Serialize for ImageLinks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ImageJson { hal, image } = self.0;
        let base = format!("/{}/images/{}", hal.version, image.media_id);
        let mut map = serializer.serialize_map(Some(Size::ALL.len() + 4))?;
        map.serialize_entry("self", &Href::new(&base))?;
        for size in Size::ALL {
            let tail = match size {
                Size::Small => "/small/blob",
                Size::Medium => "/medium/blob",
                Size::Large => "/large/blob",
                Size::Xlarge => "/xlarge/blob",
            };
            map.serialize_entry(size.as_str(), &Href::new(Joined(&base, tail)))?;
        }
        map.serialize_entry(
            hal.rel(Rel::ImageBlob),
            &Href::templated(Joined(&base, "/{size}/blob")),
        )?;
        map.serialize_entry(
            hal.rel(Rel::ImageMeta),
            &Href::templated(Joined(&base, "/{size}/meta")),
        )?;
        map.serialize_entry("describedby", &Href::new(hal.describedby(Resource::Image)))?;
        map.end()
    }
}

/// A JSON text Souk stored itself, written as it is; `null` if it is somehow not JSON.
fn stored_json(text: &str) -> Option<&RawValue> {
    let parsed = serde_json::from_str::<&RawValue>(text);
    if let Err(e) = &parsed {
        tracing::error!(error = %e, "a stored JSON column does not parse");
    }
    parsed.ok()
}

/// The members of the stored attributes object, each value as the JSON text it is kept in.
/// Keys are lowerCamelCase ASCII (the taxonomy check), so they borrow from the text.
fn stored_attributes(text: &str) -> BTreeMap<&str, &RawValue> {
    serde_json::from_str(text).unwrap_or_else(|e| {
        tracing::error!(error = %e, "stored advertisement attributes do not parse");
        BTreeMap::new()
    })
}

/// A page of advertisements: `{_links, _embedded: {<advertisement rel>: [...]}, totalCount,
/// offset, limit}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdPageJson<'a> {
    #[serde(rename = "_links")]
    pub links: serde_json::Value,
    #[serde(rename = "_embedded")]
    pub embedded: Embedded<'a, Vec<AdJson<'a>>>,
    pub total_count: i64,
    pub offset: u64,
    pub limit: u64,
    /// Search's facets, when asked for (`facets=true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facets: Option<serde_json::Value>,
}
