//! HAL building blocks: link relations, links, curies, embedded collections and pagination.
//!
//! Every relation Souk emits is a [`Rel`] and every `describedby` target a [`Resource`]:
//! both are closed enums whose documentation pages are generated from the same list, so
//! an emitted rel without a page cannot be written.

use std::fmt::Display;
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

macro_rules! catalogue {
    ($name:ident, $what:literal, $( $variant:ident = ($key:literal, $doc:literal); )+) => {
        #[doc = $what]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $key),+ }
            }

            pub fn documentation(self) -> &'static str {
                match self { $($name::$variant => $doc),+ }
            }

            pub fn parse(text: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|r| r.name() == text)
            }
        }
    };
}

catalogue! { Rel, "A link relation of Souk, emitted as `<prefix>:<name>` and documented at `/docs/rels/<name>`.",
    Advertisements = ("advertisements", "The advertisements collection: the calling user's own ads; POST creates an ad.");
    Categories = ("categories", "The category tree: L1 categories with their L2 children embedded.");
    Users = ("users", "The users collection root, with a templated `item` link to each user.");
    Me = ("me", "The user of the access token (answers 302 to that user's resource).");
    Locations = ("locations", "Look up a location by postcode (templated: `{?postcode}`).");
    Search = ("search", "Full-text search over online advertisements.");
    SearchResult = ("search-result", "One result of a search: an online advertisement, in the results' order, its images embedded once more directly under `advertisement-image`.");
    SavedSearch = ("saved-search", "A saved search of the calling user; in the collection's `_embedded`, each of them, newest first.");
    Owner = ("owner", "The user who owns this resource.");
    Category = ("category", "A category. On an L1 category, `_embedded` holds its L2 children under this rel.");
    CategoryAttributes = ("category-attributes", "The attribute definitions of a leaf (L2) category: which attributes an ad in it carries and how they are checked.");
    CategoryFees = ("category-fees", "The listing fees of a leaf (L2) category: insertion fee and running subscriptions (under construction, subject to change).");
    UserBrands = ("user-brands", "The brands a user sells.");
    Order = ("order", "An order: what a user bought, its status and price, with its products embedded.");
    OrderProducts = ("order-products", "The products of an order (embedded in the order under this rel, each of them; linked from it as a collection).");
    UserReviews = ("user-reviews", "The reviews of a user as a seller, newest first, with the averages of their scores.");
    UserReview = ("user-review", "One review of a seller by the buyer of a completed transaction; in the reviews collection's `_embedded`, each of them, newest first.");
    UserAdvertisements = ("user-advertisements", "The online advertisements of a user.");
    Advertisement = ("advertisement", "An advertisement; in a collection's `_embedded`, each of its items.");
    Seller = ("seller", "The user who placed the advertisement.");
    AdvertisementImages = ("advertisement-images", "The images of an advertisement (embedded in the advertisement; each under `advertisement-image`).");
    AdvertisementImage = ("advertisement-image", "One image of an advertisement, with its own `self` and a link per rendition size.");
    ImageBlob = ("image-blob", "The bytes of an image in one size: templated in an image (`{size}` is small, medium, large or xlarge); in a rendition's meta, that rendition's bytes.");
    ImageMeta = ("image-meta", "The description of an image in one size: width, height, contentType, bytes, sha256 (templated: `{size}` is small, medium, large or xlarge).");
    AdvertisementFeatures = ("advertisement-features", "The paid features that can be bought for the advertisement.");
    AdvertisementPurchasedFeatures = ("advertisement-purchased-features", "The features bought for the advertisement (seller only).");
    AdvertisementFeature = ("advertisement-feature", "One feature of an advertisement; in the features collection's `_embedded`, each of them.");
    AdvertisementPurchasedFeature = ("advertisement-purchased-feature", "One feature bought for an advertisement; in the purchased features collection's `_embedded`, each of them, newest first.");
    BuyFeature = ("buy-feature", "POST `{\"pay\": true}` here to buy the feature (the seller, scope `purchase`); present while the feature can be bought.");
    AdvertisementStatistics = ("advertisement-statistics", "Counts of what happened to the advertisement: views, questions, bids, clicks (seller only).");
    Bids = ("bids", "The bids on the advertisement, highest first (POST here to place one).");
    Bid = ("bid", "One bid on an advertisement; in the bids collection's `_embedded`, each of them, highest first.");
    Bidder = ("bidder", "The user who placed the bid (shown to the advertisement's seller and to the bidder only).");
    AdvertisementTransactions = ("advertisement-transactions", "The transactions (sales) of the advertisement.");
    AdvertisementTransaction = ("advertisement-transaction", "One transaction of an advertisement; in the collection's `_embedded`, each of them, newest first.");
    Buyer = ("buyer", "The user who buys in a transaction.");
    AdvertisementRenew = ("advertisement-renew", "POST here to renew the advertisement (possible in the last 7 days before its closeDate, and after it expired).");
    AdvertisementWebsiteLink = ("advertisement-website-link", "The advertisement's page for people (HTML).");
    Hook = ("hook", "A webhook of the calling client; in the collection's `_embedded`, each of them, oldest first.");
    Event = ("event", "An event for the calling client; in the collection's `_embedded`, each of them, newest first.");
    ChangeEmail = ("change-email", "POST `{\"newEmail\"}` here to change the user's e-mail address; the change takes effect when the user follows the link mailed to the new address.");
}

catalogue! { Resource, "A resource type with a documentation page (`describedby`) at `/docs/resources/<name>`.",
    Root = ("root", "The entry point of the API (`/v1`, `/v2`): links to every top-level resource.");
    CategoryList = ("category-list", "The category tree: `_embedded[\"<prefix>:category\"]` holds the L1 categories, each embedding its L2 children.");
    Category = ("category", "A category: `categoryId`, `name` (in the deployment's locale), `labels` in the three locales, `status` (`open` or `closed`). An L1 category embeds its L2 children; an L2 (leaf) category links to its attributes and fees.");
    CategoryAttributes = ("category-attributes", "The attribute definitions of a leaf category in `fields`: `key`, `label`, `labels`, `type` (STRING, LIST, NUMBER, DOUBLE), `values` and `options` (always present, possibly empty), `minValue`, `maxValue`, `unit` (where they apply), `units`, `mandatory`, `searchable`, `writable`, `updateable`.");
    User = ("user", "A marketplace user: `userId`, `name`, `locale`, `status` (`unconfirmed` until the owner follows the link mailed to them, then `confirmed`), `confirmDate`, `dealerPackage` (`NONE`, `BASIC`, `PLUS`, `PREMIUM`); to the user themself also `email`, `phoneNumber` and `postcode`.");
    UserList = ("user-list", "The users collection root: POST creates an account (client token with scope `create_account`); the templated `item` link leads to each user.");
    Advertisement = ("advertisement", "An advertisement: `itemId` (`m` + digits), `title`, `description`, `categoryId` (a leaf), `status` (draft, online, paused, expired, closed, deleted, rejected; see docs/LIFECYCLE.md), `startDate`, `closeDate`, `renewPossible`, `locale`, `reserved`, `showOnMap`, `websiteUrl` (the seller's site; to others only while the `url` feature runs), `activeFeatures`, `priceModel` (`modelType` and amounts in cents), `location` (`postcode`, `cityName`), `seller`, the category attributes as flat members, `rejectionReason` (seller only), and the images embedded. Carries an `ETag`; PUT, PATCH and DELETE honour `If-Match`.");
    Image = ("image", "An image of an advertisement: `mediaId` (a UUID), `imageId` (its position in the ad from 1; deprecated), `status` (`processing` while its renditions are made, then `available`), a link per size (`small`, `medium`, `large`, `xlarge`) to its bytes, and the templated `image-blob` and `image-meta` links.");
    AdvertisementList = ("advertisement-list", "A page of advertisements: `_embedded[\"<prefix>:advertisement\"]`, `totalCount`, `offset`, `limit`, and `first`/`prev`/`next`/`last` links.");
    Transaction = ("transaction", "A sale of an advertisement: `transactionId` (numbered within the ad: 1, 2, ...), `buyerId`, `amount` and `shippingCosts` (integer cents), `status` (`CREATED`, then `COMPLETED` by the seller or `CANCELLED` by the seller or the buyer).");
    ImageMeta = ("image-meta", "The description of an image in one size (its JPEG): `width`, `height`, `contentType`, `bytes`, `sha256`, and an `image-blob` link to its bytes.");
    ImageList = ("image-list", "The images of an advertisement, in order, under `_embedded[\"<prefix>:advertisement-image\"]`, each with its `self` and `advertisement` links; also what an upload answers (its new images).");
    TransactionList = ("transaction-list", "The transactions of an advertisement, newest first, under `_embedded[\"<prefix>:advertisement-transaction\"]`.");
    Bid = ("bid", "A bid on an advertisement: `bidId` (and `id`, the same value, as the original's examples had it), `amount` (integer cents), `placeDate`, and `bidder`: `{id, nickName}` with a `bidder` link to the seller of the advertisement and to the bidder themself; to anyone else `{nickName}` only, an anonymous label.");
    BidList = ("bid-list", "A page of an advertisement's bids, highest first, under `_embedded[\"<prefix>:bid\"]`, with `totalCount`, `offset`, `limit`, `first`/`prev`/`next`/`last` links, and `minimumNextBid` (the least amount a new bid may have now) while the advertisement takes bids.");
    BidderQuestion = ("bidder-question", "The answer to a seller's question to a bidder: `message` says that it was mailed to the bidder.");
    Statistics = ("statistics", "Counts of what happened to an advertisement: `numberOfViews` (by others than the seller), `numberOfAsqs` (questions), `numberOfBids`, `numberOfUrlClicks`, `numberOfPhoneClicks` (phone calls, including confirmed upcalls), `numberOfFavoriteClicks`.");
    Brands = ("brands", "The brands a user (typically a dealer) sells: `brands`, an array of names in the user's order, possibly empty. The user sets them with PUT `{\"brands\": [...]}`.");
    ChangeEmail = ("change-email", "The answer to an e-mail change: `message` says that a confirmation link went to the new address.");
    Location = ("location", "The location of a postcode: `postcode` (as normalised: `8301AA`, `9000`), `street` (empty where the data has none), `city`, `province`, `provinceShortCode` (the ISO 3166-2 part: `FL`, `VOV`), and a templated `find` link to look up another postcode.");
    SearchResults = ("search-results", "A page of search results: `_embedded[\"<prefix>:search-result\"]` (online advertisements, in the order asked for), `totalCount` (exact), `offset`, `limit`, and `first`/`prev`/`next`/`last` links within the first 5,000 results, which keep the request's parameters.");
    SavedSearch = ("saved-search", "A saved search: `savedSearchId`, `userId`, `searchRequest` (`{query, categoryId, sellerId, filters: {price: {from, to}, postCode, distance, <attributeKey>: [values]}}`, as saved), `alert` (`none`, `immediate` or `daily`), `createdDate`, `updatedDate`; its `search` link runs it.");
    SavedSearchList = ("saved-search-list", "A page of the calling user's saved searches, newest first, under `_embedded[\"<prefix>:saved-search\"]`, with `totalCount`, `offset` and `limit`.");
    Order = ("order", "An order of the calling user: `orderId`, `status` (`new`, `payment required`, `paid`, `refused`, `closed`), `price` and `vat` (integer euro cents, VAT included in `price`; `vat` is the part of it that is VAT), `createdDate`, `paidDate` once paid, and its products embedded under `<prefix>:order-products`.");
    OrderProductList = ("order-product-list", "The products of an order, in the order they were added, under `_embedded[\"<prefix>:order-products\"]`.");
    Feature = ("feature", "A feature of an advertisement: `name` (the original's: `omhoogplaatsen` bumps the ad to the top by date, `dagtopper`, `dagtopper3` and `dagtopper7` put it first in search for 1, 3 or 7 days, `homepaginaAdvertentie`, `url`, `opvalsticker` a sticker on the ad), `price` (integer euro cents, VAT included) and `days` where the ad's category sells it, `available` (sold here and the ad is online), `active` (its effect runs now), and a `buy-feature` link while it is available.");
    FeatureList = ("feature-list", "The features of an advertisement, under `_embedded[\"<prefix>:advertisement-feature\"]`, each as the feature resource.");
    PurchasedFeatureList = ("purchased-feature-list", "The features bought for an advertisement and paid, newest first, under `_embedded[\"<prefix>:advertisement-purchased-feature\"]`: `[{name, purchaseDate}]`.");
    OrderProduct = ("order-product", "A product of an order: `productId` (numbered within the order from 1), `type` (`insertion`, `renewal` or `feature`, with `feature` its name), `description`, `price` and `vat` (integer euro cents, VAT included in `price`), and a link to the advertisement it is for.");
    Review = ("review", "A review of a seller by the buyer of a completed transaction: `reviewId`, `name` (the reviewer's name), `place` (the reviewer's town when they wrote it, empty where unknown), `date`, `reason` (the title of the advertisement the transaction was about), `overallScore` (1 to 5), `content`, `subScores` (`[{key, description, score}]` for the aspects the reviewer scored: `communication`, `accuracy`, `delivery`).");
    ReviewList = ("review-list", "A page of a seller's reviews, newest first, under `_embedded[\"<prefix>:user-review\"]`, with `numberOfReviews` (also as `totalCount`), `averageScore` and `averageSubScores` (`[{key, description, score}]`, one decimal, 0 where there is nothing to average) over all of them, `offset`, `limit` and `first`/`prev`/`next`/`last` links.");
    Hook = ("hook", "A webhook of a client: `hookId`, `url` (where each event is POSTed), `events` (the event types it wants), `active`, `createdDate`, `updatedDate`, and `deliveries`, what it still waits for: `waiting` (how many), `oldestWaitingDate` and `lastFailure` (`{date, reason}`, the image import's error code: `error-status` and the status its URL answered (`error-status 503`), `too-slow`, `not-answering` or `address-refused` (which names neither the address nor its kind)). Its secret, the key of each delivery's signature, is never shown.");
    HookList = ("hook-list", "The calling client's webhooks, oldest first, under `_embedded[\"<prefix>:hook\"]`, with `totalCount` and `maximum` (how many a client may have).");
    Event = ("event", "Something that happened, as a webhook delivery POSTs it: `eventId`, `eventType` (`advertisement.created`, `advertisement.updated`, `advertisement.deleted`, `bid.placed`, `bid.withdrawn`, `transaction.created`, `transaction.updated`, `upcall.confirmed`, `review.created`), `created`, `eventData` (what changed: ids and states), and the resource embedded under its rel as it was then, with a `self` link to it as it is now.");
    EventList = ("event-list", "A page of the events for the calling client, newest first, under `_embedded[\"<prefix>:event\"]`, with `totalCount`, `offset`, `limit` and `first`/`prev`/`next`/`last` links.");
    CategoryFees = ("category-fees", "Under construction, subject to change. The fees of a leaf category in integer euro cents: `insertionFee` (0 where only subscriptions apply), `runningSubscriptions` (`[{durationDays, fee}]`, possibly empty), and Souk's own `runningDays` (how long an ad in the category runs).");
}

/// What every representation needs to write its links: the curie prefix, the public base
/// address and the version prefix of the request. Cheap to clone: the names derived from
/// the configuration are made once per process and shared.
#[derive(Clone, Debug)]
pub struct Hal {
    names: Arc<Names>,
    pub version: &'static str,
}

/// The strings every representation repeats, made once: `<prefix>:<rel>` for every rel,
/// the describedby addresses and the curie template.
#[derive(Debug)]
struct Names {
    prefix: String,
    base_url: String,
    /// Indexed by `Rel as usize`.
    rels: Vec<String>,
    /// Indexed by `Resource as usize`.
    describedby: Vec<String>,
    /// The `curies` array, written as it is into every representation.
    curies: Box<RawValue>,
}

impl Hal {
    pub fn new(prefix: &str, base_url: &str, version: &'static str) -> Hal {
        let names = Names {
            prefix: prefix.to_owned(),
            base_url: base_url.to_owned(),
            rels: Rel::ALL
                .iter()
                .map(|rel| format!("{prefix}:{}", rel.name()))
                .collect(),
            describedby: Resource::ALL
                .iter()
                .map(|resource| format!("{base_url}/docs/resources/{}", resource.name()))
                .collect(),
            curies: serde_json::value::to_raw_value(&json!([{
                "name": prefix,
                "href": format!("{base_url}/docs/rels/{{rel}}"),
                "templated": true,
            }]))
            .expect("a JSON value serializes"),
        };
        Hal {
            names: Arc::new(names),
            version,
        }
    }

    /// The same names under another version prefix.
    pub fn with_version(&self, version: &'static str) -> Hal {
        Hal {
            names: self.names.clone(),
            version,
        }
    }

    pub fn prefix(&self) -> &str {
        &self.names.prefix
    }

    /// The public base address (absolute links: curies, describedby, the website link).
    pub fn base_url(&self) -> &str {
        &self.names.base_url
    }

    /// `<prefix>:<rel>`, as a key in `_links` or `_embedded`.
    pub fn rel(&self, rel: Rel) -> &str {
        &self.names.rels[rel as usize]
    }

    /// A path under the version prefix of the request: `path("/categories")` is
    /// `/v1/categories` for a `/v1` request.
    pub fn path(&self, path: &str) -> String {
        format!("/{}{}", self.version, path)
    }

    /// The absolute address of the documentation page of a resource type.
    pub fn describedby(&self, resource: Resource) -> &str {
        &self.names.describedby[resource as usize]
    }

    /// The `curies` member of `_links`, written without building a tree.
    pub fn curies(&self) -> Curies<'_> {
        Curies(self)
    }

    /// The `curies` member of `_links`, for a `_links` built as a tree.
    pub fn curies_value(&self) -> Value {
        serde_json::to_value(self.curies()).unwrap_or(Value::Null)
    }

    /// `_links` with `self`, `describedby` and `curies`; add more with [`Links::rel`].
    pub fn links(&self, self_path: impl Into<String>, resource: Resource) -> Links<'_> {
        let mut map = Map::new();
        map.insert("self".into(), json!({"href": self_path.into()}));
        map.insert(
            "describedby".into(),
            json!({"href": self.describedby(resource)}),
        );
        map.insert("curies".into(), self.curies_value());
        Links { hal: self, map }
    }
}

/// `[{"name": <prefix>, "href": "<base>/docs/rels/{rel}", "templated": true}]`.
pub struct Curies<'a>(&'a Hal);

impl Serialize for Curies<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.names.curies.serialize(serializer)
    }
}

/// A link, `{"href": ...}`, whose address is written straight into the output from anything
/// that displays (`format_args!` included), so that building a representation allocates no
/// string per link. [`Href::templated`] adds `"templated": true`.
pub struct Href<D> {
    href: D,
    templated: bool,
}

impl<D: Display> Href<D> {
    pub fn new(href: D) -> Self {
        Href {
            href,
            templated: false,
        }
    }

    pub fn templated(href: D) -> Self {
        Href {
            href,
            templated: true,
        }
    }
}

impl<D: Display> Serialize for Href<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1 + usize::from(self.templated)))?;
        map.serialize_entry("href", &Displayed(&self.href))?;
        if self.templated {
            map.serialize_entry("templated", &true)?;
        }
        map.end()
    }
}

/// `{<key>: <items>}`: an `_embedded` member with one relation, for representations
/// written without a `Value` tree.
pub struct Embedded<'a, T> {
    key: &'a str,
    items: T,
}

impl<'a, T: Serialize> Embedded<'a, T> {
    pub fn new(key: &'a str, items: T) -> Self {
        Embedded { key, items }
    }
}

impl<T: Serialize> Serialize for Embedded<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.key, &self.items)?;
        map.end()
    }
}

/// Serializes anything that displays as a JSON string, without an intermediate `String`.
pub struct Displayed<D>(pub D);

impl<D: Display> Serialize for Displayed<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

/// A `_links` object under construction.
pub struct Links<'a> {
    hal: &'a Hal,
    map: Map<String, Value>,
}

impl Links<'_> {
    pub fn rel(mut self, rel: Rel, href: impl Into<String>) -> Self {
        self.map
            .insert(self.hal.rel(rel).to_owned(), json!({"href": href.into()}));
        self
    }

    pub fn templated(mut self, rel: Rel, href: impl Into<String>) -> Self {
        self.map.insert(
            self.hal.rel(rel).to_owned(),
            json!({"href": href.into(), "templated": true}),
        );
        self
    }

    /// A link with an IANA relation name (`up`, `item`, `next`...).
    pub fn plain(mut self, name: &str, href: impl Into<String>) -> Self {
        self.map.insert(name.into(), json!({"href": href.into()}));
        self
    }

    pub fn plain_templated(mut self, name: &str, href: impl Into<String>) -> Self {
        self.map
            .insert(name.into(), json!({"href": href.into(), "templated": true}));
        self
    }

    /// `first`, `prev`, `next` and `last` for a page of `limit` items at `offset` out of
    /// `total`; `path` is the collection's address, which may carry a query of its own (a
    /// filter, which every page keeps).
    pub fn pagination(mut self, path: &str, page: Page, total: u64) -> Self {
        let joint = if path.contains('?') { '&' } else { '?' };
        let href = |offset: u64| format!("{path}{joint}offset={offset}&limit={}", page.limit);
        let limit = page.limit.max(1);
        let last = if total == 0 {
            0
        } else {
            (total - 1) / limit * limit
        };
        self.map.insert("first".into(), json!({"href": href(0)}));
        if page.offset > 0 {
            let prev = page.offset.saturating_sub(limit).min(last);
            self.map.insert("prev".into(), json!({"href": href(prev)}));
        }
        if page.offset + limit < total {
            self.map
                .insert("next".into(), json!({"href": href(page.offset + limit)}));
        }
        self.map.insert("last".into(), json!({"href": href(last)}));
        self
    }

    pub fn build(self) -> Value {
        Value::Object(self.map)
    }
}

/// A requested page of a collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub offset: u64,
    pub limit: u64,
}

impl Page {
    /// `(offset, limit)` as the store takes them (both fit: `parse_page` bounds them).
    pub fn bounds(self) -> (i64, i64) {
        (self.offset as i64, self.limit as i64)
    }
}

/// Removes every `_links` member from a body: clients of the original ask for this with
/// `_links=false`.
pub fn strip_links(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("_links");
            map.values_mut().for_each(strip_links);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_links),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hal() -> Hal {
        Hal::new("mp", "https://souk.example", "v2")
    }

    #[test]
    fn links_follow_prefix_and_version() {
        let hal = hal();
        let links = hal
            .links(hal.path("/categories"), Resource::CategoryList)
            .rel(Rel::Category, "/v2/categories/1")
            .build();
        assert_eq!(links["self"]["href"], "/v2/categories");
        assert_eq!(
            links["describedby"]["href"],
            "https://souk.example/docs/resources/category-list"
        );
        assert_eq!(links["curies"][0]["name"], "mp");
        assert_eq!(
            links["curies"][0]["href"],
            "https://souk.example/docs/rels/{rel}"
        );
        assert_eq!(links["mp:category"]["href"], "/v2/categories/1");
    }

    #[test]
    fn pagination_links() {
        let hal = hal();
        let page = Page {
            offset: 30,
            limit: 30,
        };
        let links = hal
            .links("/v2/x", Resource::Root)
            .pagination("/v2/x", page, 95)
            .build();
        assert_eq!(links["first"]["href"], "/v2/x?offset=0&limit=30");
        assert_eq!(links["prev"]["href"], "/v2/x?offset=0&limit=30");
        assert_eq!(links["next"]["href"], "/v2/x?offset=60&limit=30");
        assert_eq!(links["last"]["href"], "/v2/x?offset=90&limit=30");
        let first = hal
            .links("/v2/x", Resource::Root)
            .pagination(
                "/v2/x",
                Page {
                    offset: 0,
                    limit: 30,
                },
                10,
            )
            .build();
        assert!(first.get("prev").is_none() && first.get("next").is_none());
    }

    #[test]
    fn strips_links_everywhere() {
        let mut body = json!({"_links": {}, "a": 1, "_embedded": {"x": [{"_links": {}, "b": 2}]}});
        strip_links(&mut body);
        assert_eq!(body, json!({"a": 1, "_embedded": {"x": [{"b": 2}]}}));
    }

    #[test]
    fn rel_names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        assert!(Rel::ALL.iter().all(|r| seen.insert(r.name())));
        let mut seen = std::collections::HashSet::new();
        assert!(Resource::ALL.iter().all(|r| seen.insert(r.name())));
    }
}
