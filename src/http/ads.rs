//! `/v1/advertisements`: create, read, replace, patch, delete, the seller's list, and a
//! user's online ads.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::domain::advertisement::{
    Actor, AdContent, AdStatus, ItemId, READ_ONLY_FIELDS, Stored, category_closed, check_content,
    may_transition,
};
use crate::domain::category::CategoryStatus;
use crate::domain::field_error::FieldError;
use crate::domain::locale::{Locale, Text};
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Embedded, Hal, Page, Rel, Resource};
use crate::oauth::scope::Scope;
use crate::store::ads::{self, AdRecord, AdWrite};
use crate::store::{Conn, categories, users};

use super::ad_json::{AdJson, AdPageJson};
use super::api::{Api, delete, get, patch, post, put};
use super::auth::{Caller, UserWith, need};
use super::extract::{ApiVersion, JsonBody, PatchBody, parse_id, parse_page};
use super::render::{Json, etag_matches_strong};

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let writes = [
        ValidationFailure,
        InvalidJson,
        IncorrectContentType,
        Unauthorized,
        AdvertisementNotFound,
        ConflictingState,
        PreconditionFailed,
    ];
    api.resource(
        post("/advertisements", "createAdvertisement")
            .tag("Advertisements")
            .summary("Place an advertisement (user token, scope `write`, confirmed user)")
            .description("Minimal body: `{title, description, categoryId, location: {postcode}, priceModel: {modelType: \"fixed\", askingPrice}}` plus the category's mandatory attributes, as flat members or as `attributes: [{key, value}]`. Without `status` the ad goes online; `\"status\": \"draft\"` keeps it a draft. Every problem comes back at once as field errors.")
            .authenticated()
            .ok(201, "The advertisement (Location: its address)", "Advertisement")
            .errors(&[ValidationFailure, InvalidJson, IncorrectContentType, Unauthorized, UserNotConfirmed]),
        create,
    )
    .resource(
        get("/advertisements", "listOwnAdvertisements")
            .tag("Advertisements")
            .summary("The calling user's own advertisements, newest first")
            .description("Every status but deleted; `status` filters (comma-separated; an unknown status or `deleted` is 400 `validation-failure` on `status`). `offset` (default 0) and `limit` (default 30, at most 100). A client token is 403.")
            .authenticated()
            .query_param("status", json!({"type": "string"}), "Comma-separated statuses.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "Default 0.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 30.")
            .ok(200, "A page of advertisements", "AdvertisementList")
            .errors(&[ValidationFailure, PaginationInvalid, Unauthorized]),
        list_own,
    )
    .resource(
        get("/advertisements/{itemId}", "getAdvertisement")
            .tag("Advertisements")
            .summary("One advertisement (online ones to anyone, others to the seller)")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok(200, "The advertisement", "Advertisement")
            .ok_empty(304, "Not modified since the ETag in If-None-Match")
            .errors(&[ValidationFailure, AdvertisementNotFound]),
        one,
    )
    .resource(
        put("/advertisements/{itemId}", "replaceAdvertisement")
            .tag("Advertisements")
            .summary("Replace the writable fields (the seller, scope `write`)")
            .description("Read-only fields in the body are ignored, so a client may send back what it read. `status` changes the state where the lifecycle allows it (else 409 `conflicting-state`). `If-Match` with the ETag: 412 on a mismatch. Answers 200 with the representation.")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok(200, "The advertisement", "Advertisement")
            .errors(&writes),
        replace,
    )
    .resource(
        patch("/advertisements/{itemId}", "patchAdvertisement")
            .tag("Advertisements")
            .summary("Change an advertisement with a JSON Patch (RFC 6902)")
            .description("`Content-Type: application/json-patch+json`; the patch applies to the representation (`replace` of an absent member acts as `add`). Then as PUT. Answers 200 with the representation.")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok(200, "The advertisement", "Advertisement")
            .errors(&writes),
        patch_ad,
    )
    .resource(
        delete("/advertisements/{itemId}", "deleteAdvertisement")
            .tag("Advertisements")
            .summary("Delete an advertisement (204; idempotent)")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok_empty(204, "Deleted (or already deleted)")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound, PreconditionFailed]),
        remove,
    )
    .resource(
        get("/users/{userId}/advertisements", "listUserAdvertisements")
            .tag("Advertisements")
            .summary("The online advertisements of a user")
            .description("`limit` at most 100 (default 100) and `offset` a multiple of `limit`, else 400 `pagination-invalid`.")
            .authenticated()
            .path_param("userId", "The user id.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "A multiple of limit.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 100.")
            .ok(200, "A page of advertisements", "AdvertisementList")
            .errors(&[ValidationFailure, PaginationInvalid, UserNotFound]),
        list_of_user,
    )
}

pub(super) fn parse_item(raw: &str) -> Result<ItemId, ApiError> {
    ItemId::parse(raw).ok_or_else(|| {
        ApiError::validation(vec![
            FieldError::new(
                "itemId",
                "invalid-item-id",
                Text::new(
                    "moet `m` gevolgd door cijfers zijn",
                    "doit être `m` suivi de chiffres",
                ),
            )
            .with_value(raw),
        ])
    })
}

/// The ETag: the version, and the state at `now` (expiry changes it without a write).
fn tag(record: &AdRecord, now: i64) -> String {
    format!(
        "{}-{}-{}",
        record.number,
        record.version,
        record.status_at(now).as_str()
    )
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
    json.with_version_tag(&tag(record, now))
}

fn to_write(content: &AdContent) -> AdWrite {
    AdWrite {
        category_id: content.category_id,
        title: content.title.clone(),
        description: content.description.clone(),
        price_model: content.price_model.to_json().to_string(),
        attributes: Value::Object(content.attributes.clone()).to_string(),
        postcode: content.postcode.clone(),
        locale: content.locale.as_str().to_owned(),
        reserved: content.reserved,
        show_on_map: content.show_on_map,
    }
}

/// The requested `status` of a body, if any.
fn requested_status(body: &Map<String, Value>) -> Result<Option<AdStatus>, ApiError> {
    match body.get("status") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_str()
            .and_then(AdStatus::parse)
            .map(Some)
            .ok_or_else(|| {
                ApiError::validation(vec![
                    FieldError::new(
                        "status",
                        "invalid-value",
                        Text::new("is geen bekende status", "n'est pas un statut connu"),
                    )
                    .with_value(value.clone()),
                ])
            }),
    }
}

/// Content checked against its category, and what the category says about it.
struct Checked {
    content: AdContent,
    running_days: i64,
    parent_category_id: Option<i64>,
    category_open: bool,
}

/// Checks content against its category (read in the same transaction); `stored` is what
/// an update starts from.
async fn checked_content(
    conn: &mut dyn Conn,
    body: &Map<String, Value>,
    region: Locale,
    stored: Option<Stored<'_>>,
) -> Result<Checked, ApiError> {
    let category_id = body.get("categoryId").and_then(|v| match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    });
    let category = match category_id {
        Some(id) => categories::get(conn, id).await?,
        None => None,
    };
    let content =
        check_content(body, category.as_ref(), region, stored).map_err(ApiError::validation)?;
    let parent_category_id = category.as_ref().and_then(|c| c.parent_id);
    let category_open = category
        .as_ref()
        .is_some_and(|c| c.status == CategoryStatus::Open);
    let running_days = category
        .and_then(|c| c.leaf)
        .map_or(28, |leaf| leaf.fees.running_days);
    Ok(Checked {
        content,
        running_days,
        parent_category_id,
        category_open,
    })
}

/// The state a new ad starts in: online without `status`, else online or draft.
fn new_status(body: &Map<String, Value>) -> Result<AdStatus, ApiError> {
    match requested_status(body)? {
        None | Some(AdStatus::Online) => Ok(AdStatus::Online),
        Some(AdStatus::Draft) => Ok(AdStatus::Draft),
        Some(other) => Err(ApiError::validation(vec![
            FieldError::new(
                "status",
                "invalid-value",
                Text::new(
                    "een nieuwe advertentie is online of draft",
                    "une nouvelle annonce est online ou draft",
                ),
            )
            .with_value(other.as_str()),
        ])),
    }
}

async fn create(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(seller, _): UserWith<need::Write>,
    body: Result<JsonBody<Map<String, Value>>, ApiError>,
) -> Result<Json, ApiError> {
    // Read here, off the writer; its problems count only once the seller may publish.
    let request = body.and_then(|JsonBody(body)| {
        let status = new_status(&body)?;
        Ok((body, status))
    });
    let region = state.config.region;
    let now = state.clock.now();
    let record = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                let Some(user) = users::get(conn, seller).await?.filter(|u| u.confirmed) else {
                    return Err(ApiError::new(ErrorCode::UserNotConfirmed));
                };
                let (body, status) = request?;
                let checked = checked_content(conn, &body, region, None).await?;
                let dates = match status {
                    AdStatus::Online => (Some(now), Some(now + checked.running_days * 86_400)),
                    _ => (None, None),
                };
                let write = to_write(&checked.content);
                let number = ads::insert(conn, seller, &write, status.as_str(), dates, now).await?;
                // Everything a read would find is at hand: no round trip to read it back.
                Ok(ads::inserted(
                    number,
                    &user,
                    checked.parent_category_id,
                    write,
                    status.as_str(),
                    dates,
                ))
            })
        })
        .await?;
    Ok(respond(&state, &state.hal(version), &record, true, true))
}

async fn one(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    caller: Caller,
    Path(raw): Path<String>,
) -> Result<Json, ApiError> {
    let item = parse_item(&raw)?;
    let record = state
        .db
        .read(move |conn| Box::pin(async move { ads::get(conn, item.number()).await }))
        .await?
        .ok_or(ErrorCode::AdvertisementNotFound)?;
    let now = state.clock.now();
    let is_seller = caller.user_id == Some(record.seller_id);
    // What only the seller sees (other states than online, the rejection reason) needs
    // `read`, as every private field does.
    let sees_all = is_seller && caller.scopes.contains(Scope::Read);
    let status = record.status_at(now);
    if status == AdStatus::Deleted || (status != AdStatus::Online && !sees_all) {
        return Err(ErrorCode::AdvertisementNotFound.into());
    }
    if !is_seller {
        state.views.record(record.number);
    }
    Ok(respond(
        &state,
        &state.hal(version),
        &record,
        sees_all,
        false,
    ))
}

/// What a PUT or a PATCH asks for; a body's problems count only once the caller is known
/// to be the seller.
enum Change {
    Replace(Result<JsonBody<Map<String, Value>>, ApiError>),
    Patch(Result<PatchBody, ApiError>),
}

/// The fields a client may send back; what a patch applies to.
fn writable_view(record: &AdRecord, now: i64) -> Value {
    let mut view = json!({
        "title": record.title,
        "description": record.description,
        "categoryId": record.category_id,
        "status": record.status_at(now).as_str(),
        "locale": record.locale,
        "reserved": record.reserved,
        "showOnMap": record.show_on_map,
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

/// RFC 6902, with the original's allowance: `replace` of an absent member acts as `add`.
fn apply_patch(view: &mut Value, patch: &json_patch::Patch) -> Result<(), ApiError> {
    let operations: Vec<json_patch::PatchOperation> = patch
        .0
        .iter()
        .map(|operation| match operation {
            json_patch::PatchOperation::Replace(replace)
                if view.pointer(replace.path.as_str()).is_none() =>
            {
                json_patch::PatchOperation::Add(json_patch::AddOperation {
                    path: replace.path.clone(),
                    value: replace.value.clone(),
                })
            }
            other => other.clone(),
        })
        .collect();
    json_patch::patch(view, &operations).map_err(|e| {
        ApiError::validation(vec![FieldError::new(
            "patch",
            "patch-failed",
            Text::new(
                format!("de patch kan niet worden toegepast: {e}"),
                format!("le patch ne peut pas être appliqué : {e}"),
            ),
        )])
    })
}

fn check_if_match(headers: &HeaderMap, record: &AdRecord, now: i64) -> Result<(), ApiError> {
    match headers.get(header::IF_MATCH).and_then(|v| v.to_str().ok()) {
        Some(wanted) if !etag_matches_strong(wanted, &format!("\"{}\"", tag(record, now))) => {
            Err(ErrorCode::PreconditionFailed.into())
        }
        _ => Ok(()),
    }
}

/// What a caller without a part in someone else's ad gets: 403 `unauthorized` for an
/// online ad, which anyone may know of, and 404 `advertisement-not-found` for any other, so
/// that the existence of a draft or a paused ad does not leak (docs/LIFECYCLE.md).
pub(super) fn outsider(record: &AdRecord, now: i64) -> ApiError {
    if record.status_at(now) == AdStatus::Online {
        ErrorCode::Unauthorized.into()
    } else {
        ErrorCode::AdvertisementNotFound.into()
    }
}

/// Reads the ad for a change by `seller`: 404 if it is gone or not visible, 403 if it is
/// someone else's online ad.
async fn ad_for_change(
    conn: &mut dyn Conn,
    item: ItemId,
    seller: i64,
    now: i64,
) -> Result<AdRecord, ApiError> {
    let record = ads::get(conn, item.number())
        .await?
        .ok_or(ErrorCode::AdvertisementNotFound)?;
    if record.seller_id != seller {
        return Err(outsider(&record, now));
    }
    if record.status_at(now) == AdStatus::Deleted {
        return Err(ErrorCode::AdvertisementNotFound.into());
    }
    Ok(record)
}

async fn change(
    state: AppState,
    version: &'static str,
    seller: i64,
    raw: String,
    headers: HeaderMap,
    change: Change,
) -> Result<Json, ApiError> {
    let item = parse_item(&raw)?;
    let region = state.config.region;
    let now = state.clock.now();
    let record = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                let record = ad_for_change(conn, item, seller, now).await?;
                check_if_match(&headers, &record, now)?;
                let body = match change {
                    Change::Replace(body) => body?.0,
                    Change::Patch(patch) => {
                        let PatchBody(patch) = patch?;
                        let mut view = writable_view(&record, now);
                        apply_patch(&mut view, &patch)?;
                        match view {
                            Value::Object(map) => map,
                            _ => return Err(ApiError::new(ErrorCode::ValidationFailure)),
                        }
                    }
                };
                let body: Map<String, Value> = body
                    .into_iter()
                    .filter(|(k, _)| !READ_ONLY_FIELDS.contains(&k.as_str()))
                    .collect();
                let current = record.status_at(now);
                let wanted = requested_status(&body)?.unwrap_or(current);
                if !may_transition(current, wanted, Actor::Seller) {
                    return Err(ApiError::new(ErrorCode::ConflictingState).with_message(
                        Text::new(
                            format!(
                                "Van `{}` naar `{}` is geen toegestane overgang",
                                current.as_str(),
                                wanted.as_str()
                            ),
                            format!(
                                "Passer de `{}` à `{}` n'est pas permis",
                                current.as_str(),
                                wanted.as_str()
                            ),
                        ),
                    ));
                }
                let attributes = match serde_json::from_str::<Value>(&record.attributes) {
                    Ok(Value::Object(attributes)) => attributes,
                    _ => Map::new(),
                };
                let stored = Stored {
                    category_id: record.category_id,
                    attributes: &attributes,
                };
                let Checked {
                    content,
                    running_days,
                    parent_category_id,
                    category_open,
                } = checked_content(conn, &body, region, Some(stored)).await?;
                let publishing = current == AdStatus::Draft && wanted == AdStatus::Online;
                if publishing && !category_open {
                    // Publishing places the ad: a closed category takes no new ones.
                    return Err(ApiError::validation(vec![category_closed()]));
                }
                let dates = if publishing {
                    (Some(now), Some(now + running_days * 86_400))
                } else {
                    (record.start_date, record.close_date)
                };
                let stored = if wanted == current && current == AdStatus::Expired {
                    "expired"
                } else {
                    wanted.as_str()
                };
                let write = to_write(&content);
                if !ads::update(
                    conn,
                    record.number,
                    record.version,
                    &write,
                    stored,
                    dates,
                    record.rejection_reason.as_deref(),
                    now,
                )
                .await?
                {
                    return Err(ErrorCode::PreconditionFailed.into());
                }
                // Everything a read would find is at hand: no round trip to read it back.
                Ok(ads::updated(
                    record,
                    parent_category_id,
                    write,
                    stored,
                    dates,
                ))
            })
        })
        .await?;
    Ok(respond(&state, &state.hal(version), &record, true, false))
}

async fn replace(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(seller, _): UserWith<need::Write>,
    Path(raw): Path<String>,
    headers: HeaderMap,
    body: Result<JsonBody<Map<String, Value>>, ApiError>,
) -> Result<Json, ApiError> {
    change(state, version, seller, raw, headers, Change::Replace(body)).await
}

async fn patch_ad(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(seller, _): UserWith<need::Write>,
    Path(raw): Path<String>,
    headers: HeaderMap,
    body: Result<PatchBody, ApiError>,
) -> Result<Json, ApiError> {
    change(state, version, seller, raw, headers, Change::Patch(body)).await
}

async fn remove(
    State(state): State<AppState>,
    UserWith(seller, _): UserWith<need::Write>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let item = parse_item(&raw)?;
    let now = state.clock.now();
    state
        .db
        .write(move |conn| {
            Box::pin(async move {
                let Some(record) = ads::get(conn, item.number()).await? else {
                    return Err(ApiError::new(ErrorCode::AdvertisementNotFound));
                };
                if record.seller_id != seller {
                    return Err(outsider(&record, now));
                }
                if record.status_at(now) == AdStatus::Deleted {
                    return Ok(());
                }
                check_if_match(&headers, &record, now)?;
                let dates = (record.start_date, record.close_date);
                if !ads::set_status(
                    conn,
                    record.number,
                    record.version,
                    "deleted",
                    dates,
                    None,
                    now,
                )
                .await?
                {
                    return Err(ErrorCode::PreconditionFailed.into());
                }
                Ok(())
            })
        })
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
struct ListQuery {
    status: Option<String>,
    offset: Option<String>,
    limit: Option<String>,
}

fn page_json(
    hal: &Hal,
    path: &str,
    records: &[AdRecord],
    total: i64,
    page: Page,
    now: i64,
    for_seller: bool,
) -> Json {
    let items = records
        .iter()
        .map(|r| AdJson::new(hal, r, now, for_seller))
        .collect();
    Json::ok(AdPageJson {
        links: hal
            .links(path, Resource::AdvertisementList)
            .pagination(path, page, total as u64)
            .build(),
        embedded: Embedded::new(hal.rel(Rel::Advertisement), items),
        total_count: total,
        offset: page.offset,
        limit: page.limit,
    })
}

async fn list_own(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(seller, _): UserWith<need::Read>,
    Query(query): Query<ListQuery>,
) -> Result<Json, ApiError> {
    let page = parse_page(query.offset.as_deref(), query.limit.as_deref(), 30, 100)?;
    let statuses: Vec<&'static str> = match query.status.as_deref().filter(|s| !s.is_empty()) {
        None => AdStatus::ALL
            .iter()
            .filter(|s| **s != AdStatus::Deleted)
            .map(|s| s.as_str())
            .collect(),
        // Deleted ads are gone for everyone, their seller included: no list shows them.
        Some(list) => list
            .split(',')
            .map(|s| AdStatus::parse(s.trim()).filter(|s| *s != AdStatus::Deleted))
            .map(|s| s.map(AdStatus::as_str))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                ApiError::validation(vec![
                    FieldError::new(
                        "status",
                        "invalid-value",
                        Text::new(
                            "bevat een onbekende status of `deleted` (verwijderde advertenties staan in geen lijst)",
                            "contient un statut inconnu ou `deleted` (les annonces supprimées ne figurent dans aucune liste)",
                        ),
                    )
                    .with_value(list),
                ])
            })?,
    };
    let now = state.clock.now();
    let (records, total) = state
        .db
        .read(move |conn| {
            Box::pin(async move {
                ads::by_seller(
                    conn,
                    seller,
                    &statuses,
                    now,
                    page.offset as i64,
                    page.limit as i64,
                )
                .await
            })
        })
        .await?;
    let hal = state.hal(version);
    Ok(page_json(
        &hal,
        &hal.path("/advertisements"),
        &records,
        total,
        page,
        now,
        true,
    ))
}

async fn list_of_user(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    Path(raw): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Json, ApiError> {
    let user = parse_id("userId", &raw)?;
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
    let (records, total) = state
        .db
        .read(move |conn| {
            Box::pin(async move {
                if users::get(conn, user).await?.is_none() {
                    return Ok(None);
                }
                ads::by_seller(
                    conn,
                    user,
                    &["online"],
                    now,
                    page.offset as i64,
                    page.limit as i64,
                )
                .await
                .map(Some)
            })
        })
        .await?
        .ok_or(ErrorCode::UserNotFound)?;
    let hal = state.hal(version);
    let path = hal.path(&format!("/users/{user}/advertisements"));
    Ok(page_json(&hal, &path, &records, total, page, now, false))
}
