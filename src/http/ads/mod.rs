//! `/v1/advertisements`: create, read, replace, patch, delete, the seller's list, and a
//! user's online ads. Each handler runs one use case of `usecase::advertisements`;
//! `json` writes the answers.

pub(super) mod json;

pub(crate) use json::image_value;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::access::Caller;
use crate::domain::advertisement::{ItemId, listed_statuses, renew_possible};
use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Embedded, Hal, Page, Rel, Resource};
use crate::state::AppState;
use crate::store::ads::AdRecord;
use crate::usecase::advertisements::{self, AdPage, Deleted, Edit, Market};
use crate::usecase::images;

use super::api::{Api, Operation, delete, get, patch, post, put};
use super::auth::{UserWith, ad_reader, need};
use super::extract::{Context, ItemPath, JsonBody, PatchBody, Query, UserPath, parse_page};
use super::render::{Json, etag_matches_strong, header_list};
use json::{AdJson, AdPageJson};

/// A list of what ad `item` has, at `/advertisements/{item}/{tail}` (its images, its
/// features): its own link and its ad's, and `items` embedded under `rel`.
pub(super) fn list_of_ad(
    hal: &Hal,
    item: ItemId,
    tail: &str,
    (resource, rel): (Resource, Rel),
    items: Vec<Value>,
) -> Value {
    let ad = hal.path(&format!("/advertisements/{item}"));
    json!({
        "_links": hal
            .links(format!("{ad}/{tail}"), resource)
            .rel(Rel::Advertisement, &ad)
            .build(),
        "_embedded": {hal.rel(rel): items},
    })
}

/// What the `status` filter takes: nothing, or statuses but `deleted`, comma-separated,
/// each trimmed of whitespace.
fn status_filter_pattern() -> String {
    // `str::trim`'s whitespace spelled out: JSON Schema's `\s` is ECMAScript's, which differs.
    let space = r"[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*";
    let status = "(draft|online|paused|expired|closed|rejected)";
    format!("^$|^{space}{status}{space}(,{space}{status}{space})*$")
}

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let ads = |operation: Operation| operation.tag("Advertisements").authenticated();
    let one_ad = |operation: Operation| ads(operation).item_param();
    let change = |operation: Operation| {
        one_ad(operation)
            .ok(200, "The advertisement", "Advertisement")
            .errors(&[
                Unauthorized,
                AdvertisementNotFound,
                ConflictingState,
                PreconditionFailed,
            ])
    };
    let page =
        |operation: Operation| operation.ok(200, "A page of advertisements", "AdvertisementList");
    api.resource(
        ads(post("/advertisements", "createAdvertisement"))
            .summary("Place an advertisement (user token, scope `write`, confirmed user)")
            .description("Minimal body: `{title, description, categoryId, location: {postcode}, priceModel: {modelType: \"fixed\", askingPrice}}` plus the category's mandatory attributes, as flat members or as `attributes: [{key, value}]`. Without `status` the ad goes online; `\"status\": \"draft\"` keeps it a draft. Every problem comes back at once as field errors.")
            .body("application/json", "AdvertisementContent")
            .ok(201, "The advertisement (Location: its address)", "Advertisement")
            .errors(&[Unauthorized, UserNotConfirmed]),
        create,
    )
    .resource(
        page(ads(get("/advertisements", "listOwnAdvertisements"))
            .summary("The calling user's own advertisements, newest first")
            .description("Every status but deleted; `status` filters (comma-separated; an unknown status or `deleted` is 400 `validation-failure` on `status`). `offset` (default 0) and `limit` (default 30, at most 100). A client token is 403.")
            .query_param("status", json!({"type": "string", "pattern": status_filter_pattern()}), "Comma-separated statuses.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "Default 0.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 30."))
            .errors(&[ValidationFailure, PaginationInvalid, Unauthorized]),
        list_own,
    )
    .resource(
        one_ad(get("/advertisements/{itemId}", "getAdvertisement"))
            .summary("One advertisement (online ones to anyone, others to the seller)")
            .ok(200, "The advertisement", "Advertisement")
            .ok_empty(304, "Not modified since the ETag in If-None-Match")
            .errors(&[ValidationFailure, AdvertisementNotFound]),
        one,
    )
    .resource(
        change(put("/advertisements/{itemId}", "replaceAdvertisement"))
            .summary("Replace the writable fields (the seller, scope `write`)")
            .description("Read-only fields in the body are ignored, so a client may send back what it read. `status` changes the state where the lifecycle allows it (else 409 `conflicting-state`). `If-Match` with the ETag: 412 on a mismatch. Answers 200 with the representation.")
            .body("application/json", "AdvertisementContent"),
        change_ad::<JsonBody<Map<String, Value>>>,
    )
    .resource(
        change(patch("/advertisements/{itemId}", "patchAdvertisement"))
            .summary("Change an advertisement with a JSON Patch (RFC 6902)")
            .description("`Content-Type: application/json-patch+json`; the patch applies to the representation (`replace` of an absent member acts as `add`). Then as PUT. Answers 200 with the representation.")
            .body("application/json-patch+json", "JsonPatch"),
        change_ad::<PatchBody>,
    )
    .resource(
        one_ad(delete("/advertisements/{itemId}", "deleteAdvertisement"))
            .summary("Delete an advertisement (204; idempotent)")
            .ok_empty(204, "Deleted (or already deleted)")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound, PreconditionFailed]),
        remove,
    )
    .resource(
        page(ads(get("/users/{userId}/advertisements", "listUserAdvertisements"))
            .summary("The online advertisements of a user")
            .description("`limit` at most 100 (default 100) and `offset` a multiple of `limit`, else 400 `pagination-invalid`.")
            .path_param("userId", "The user id.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "A multiple of limit.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 100."))
            .errors(&[ValidationFailure, PaginationInvalid, UserNotFound]),
        list_of_user,
    )
}

/// The ad's strong tag at `now`, for its seller or anyone else: its stored version, and what
/// its body depends on besides (the state, whether it may be renewed, and which features run
/// all change with time alone; the rest with rows beside the ad's own: [`beside_the_row`]).
/// The two bodies differ (the seller's shows more), so their tags do too; only the seller's
/// is ever compared with an `If-Match`.
fn tag(record: &AdRecord, now: i64, for_seller: bool) -> String {
    let status = record.status_at(now);
    let renewable = renew_possible(status, record.close_date, now);
    let running = record
        .running_effects(now)
        .fold(0u8, |bits, effect| bits | 1 << effect as u8);
    format!(
        "{}-{}-{}-{}-{running}-{}{}",
        record.number,
        record.version,
        status.as_str(),
        u8::from(renewable),
        beside_the_row(record),
        if for_seller { "" } else { "-public" }
    )
}

/// A digest of what the body shows that changes without the ad's version: its images
/// (added, removed, reordered, made available), its seller's name and phone number, its
/// place (a locations import) and its category's parent (a taxonomy import). Without it a
/// client that polls for its image to be `available` was answered 304 for good.
fn beside_the_row(record: &AdRecord) -> String {
    let mut digest = Fnv1a::default();
    for image in &record.images {
        digest.write(image.media_id.as_bytes());
        digest.write(&image.position.to_le_bytes());
        digest.write(image.status.as_str().as_bytes());
    }
    for text in [
        Some(record.seller_name.as_str()),
        record.seller_phone.as_deref(),
        record.city_name.as_deref(),
    ] {
        // A marker and a length before each, so that no two lists of texts digest alike.
        digest.write(text.map_or(b"-", |_| b"+"));
        digest.write(&text.unwrap_or_default().len().to_le_bytes());
        digest.write(text.unwrap_or_default().as_bytes());
    }
    digest.write(&record.parent_category_id.unwrap_or(0).to_le_bytes());
    format!("{:016x}", digest.0)
}

/// FNV-1a of 64 bits: the same in every build and replica (std's hasher is not), and cheap
/// on the hottest route (SHA-256 here cost R1 11% more instructions a request). A tag only
/// has to change when the body does; nothing is secret in it.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Whether the request's `If-Match` (if any) accepts the ad as it is at `now`. A value
/// that is not text (bytes outside visible ASCII) names no ETag: it matches nothing.
fn if_match(headers: &HeaderMap, now: i64) -> impl FnOnce(&AdRecord) -> bool + Send + 'static {
    let wanted = header_list(headers, header::IF_MATCH);
    move |record| {
        wanted.is_none_or(|wanted| {
            etag_matches_strong(&wanted, &format!("\"{}\"", tag(record, now, true)))
        })
    }
}

fn respond(
    state: &AppState,
    hal: &Hal,
    record: &AdRecord,
    for_seller: bool,
    created: bool,
) -> Json {
    let now = state.clock.now();
    let body = AdJson::new(hal, record, now, for_seller);
    let json = if created {
        let location = hal.path(&format!(
            "/advertisements/{}",
            ItemId::from_number(record.number)
        ));
        Json::created(location, body)
    } else {
        Json::ok(body)
    };
    json.with_version_tag(&tag(record, now, for_seller))
}

async fn create(
    Context { state, hal }: Context,
    UserWith(seller, _): UserWith<need::Write>,
    body: Result<JsonBody<Map<String, Value>>, ApiError>,
) -> Result<Json, ApiError> {
    let body = body.map(|JsonBody(body)| body);
    let (market, now) = (market(&state), state.clock.now());
    let placed = state
        .db
        .write(move |conn| Box::pin(advertisements::place(conn, seller, body, market, now)))
        .await?;
    Ok(respond(&state, &hal, &placed.record, true, true))
}

fn market(state: &AppState) -> Market {
    Market {
        region: state.config.region,
        till: crate::state::till(&state.config),
    }
}

async fn one(
    Context { state, hal }: Context,
    caller: Caller,
    ItemPath(item): ItemPath,
) -> Result<Json, ApiError> {
    let reader = ad_reader(&caller);
    let now = state.clock.now();
    let shown = state
        .db
        .read(move |conn| Box::pin(advertisements::read(conn, item, reader, now)))
        .await?;
    if shown.is_view {
        state.views.record(shown.record.number);
    }
    Ok(respond(&state, &hal, &shown.record, shown.in_full, false))
}

/// A PUT (`JsonBody`) or a PATCH (`PatchBody`); the body's problems count only once the
/// caller is known to be the seller (see `usecase::Error::Request`).
async fn change_ad<B: Into<Edit>>(
    Context { state, hal }: Context,
    UserWith(seller, _): UserWith<need::Write>,
    ItemPath(item): ItemPath,
    headers: HeaderMap,
    body: Result<B, ApiError>,
) -> Result<Json, ApiError> {
    let edit = body.map(Into::into);
    let (market, now) = (market(&state), state.clock.now());
    let precondition = if_match(&headers, now);
    let changed = state
        .db
        .write(move |conn| {
            Box::pin(advertisements::change(
                conn,
                seller,
                item,
                edit,
                precondition,
                market,
                now,
            ))
        })
        .await?;
    if changed.removed_images {
        images::forget_removed(&state.sweeps);
    }
    Ok(respond(&state, &hal, &changed.record, true, false))
}

impl From<JsonBody<Map<String, Value>>> for Edit {
    fn from(JsonBody(body): JsonBody<Map<String, Value>>) -> Edit {
        Edit::Replace(body)
    }
}

impl From<PatchBody> for Edit {
    fn from(PatchBody(patch): PatchBody) -> Edit {
        Edit::Patch(patch)
    }
}

async fn remove(
    State(state): State<AppState>,
    UserWith(seller, _): UserWith<need::Write>,
    ItemPath(item): ItemPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let now = state.clock.now();
    let precondition = if_match(&headers, now);
    let deleted = state
        .db
        .write(move |conn| {
            Box::pin(advertisements::delete(
                conn,
                seller,
                item,
                precondition,
                now,
            ))
        })
        .await?;
    if let Deleted::Now { .. } = deleted {
        images::forget_removed(&state.sweeps);
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
struct ListQuery {
    status: Option<String>,
    offset: Option<String>,
    limit: Option<String>,
}

fn page_json(hal: &Hal, path: &str, ads: &AdPage, page: Page, now: i64, for_seller: bool) -> Json {
    let items = ads
        .records
        .iter()
        .map(|r| AdJson::new(hal, r, now, for_seller))
        .collect();
    Json::ok(AdPageJson {
        links: hal
            .links(path, Resource::AdvertisementList)
            .pagination(path, page, ads.total as u64)
            .build(),
        embedded: Embedded::new(hal.rel(Rel::Advertisement), items),
        total_count: ads.total,
        offset: page.offset,
        limit: page.limit,
        facets: None,
    })
}

async fn list_own(
    Context { state, hal }: Context,
    UserWith(seller, _): UserWith<need::Read>,
    Query(query): Query<ListQuery>,
) -> Result<Json, ApiError> {
    let page = parse_page(query.offset.as_deref(), query.limit.as_deref(), 30, 100)?;
    let statuses =
        listed_statuses(query.status.as_deref()).map_err(|e| ApiError::validation(vec![e]))?;
    // The filter stays on every page's link.
    let path = match query.status.as_deref() {
        Some(status) => {
            let status: String = form_urlencoded::byte_serialize(status.as_bytes()).collect();
            hal.path(&format!("/advertisements?status={status}"))
        }
        None => hal.path("/advertisements"),
    };
    let now = state.clock.now();
    let ads = state
        .db
        .read(move |conn| {
            Box::pin(async move {
                advertisements::sellers_ads(conn, seller, &statuses, page.bounds(), now).await
            })
        })
        .await?;
    Ok(page_json(&hal, &path, &ads, page, now, true))
}

async fn list_of_user(
    Context { state, hal }: Context,
    UserPath(user): UserPath,
    Query(query): Query<ListQuery>,
) -> Result<Json, ApiError> {
    let page = parse_page(query.offset.as_deref(), query.limit.as_deref(), 100, 100)?;
    if page.offset % page.limit != 0 {
        let mut error = ApiError::new(ErrorCode::PaginationInvalid);
        error.details = vec![
            FieldError::new(
                "offset",
                "not-a-multiple-of-limit",
                Text::new(
                    "moet een veelvoud van limit zijn",
                    "doit être un multiple de limit",
                ),
            )
            .with_value(page.offset),
        ];
        return Err(error);
    }
    let now = state.clock.now();
    let ads = state
        .db
        .read(move |conn| {
            Box::pin(advertisements::online_ads_of(
                conn,
                user,
                page.bounds(),
                now,
            ))
        })
        .await?;
    let path = hal.path(&format!("/users/{user}/advertisements"));
    Ok(page_json(&hal, &path, &ads, page, now, false))
}

#[cfg(test)]
mod tests {
    use super::Fnv1a;

    /// The published test vectors of FNV-1a, 64 bits: the tags stay the same in every build.
    #[test]
    fn the_digest_is_fnv_1a() {
        let of = |text: &str| {
            let mut digest = Fnv1a::default();
            digest.write(text.as_bytes());
            digest.0
        };
        assert_eq!(of(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(of("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(of("foobar"), 0x8594_4171_f739_67e8);
    }
}
