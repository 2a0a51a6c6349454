//! `/v1/savedsearches`: a user's saved searches. Each handler runs one use case of
//! `usecase::saved_searches`; the representation links to the search it saves.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::domain::search::saved::{MAX_PER_USER, SavedRequest, SavedSearchInput};
use crate::domain::time::format_timestamp;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::store::saved_searches::SavedSearch;
use crate::usecase::saved_searches;

use super::api::{Api, Operation, delete, get, post, put};
use super::auth::{UserWith, need};
use super::extract::{Context, JsonBody, PageQuery, Query, SavedSearchPath};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let saved = |operation: Operation| operation.tag("Search").authenticated();
    let one = |operation: Operation| {
        saved(operation)
            .path_param("savedSearchId", "The saved search.")
            .errors(&[ValidationFailure, Unauthorized, SavedsearchNotFound])
    };
    const BODY: &str = "Body `{searchRequest, alert}`: `searchRequest` is the original's shape, `{query, categoryId, sellerId, filters: {price: {from, to}, postCode, distance, <attributeKey>: [values]}}` (Souk also takes `withImages`, `searchDescription` and `locale`, and a numeric attribute's range as `<attributeKey>: {from, to}`), checked as `GET /v1/search` checks its parameters; field errors name the member's path (`searchRequest.filters.price.from`). `alert` (ours): `none` (the default), `immediate` or `daily`. At most 100 saved searches per user.";
    api.resource(
        saved(post("/savedsearches", "createSavedSearch"))
            .summary("Save a search (a user token with scope `write`)")
            .description(BODY)
            .body("application/json", "SavedSearchInput")
            .ok(
                201,
                "The saved search (Location: its address)",
                "SavedSearch",
            )
            .errors(&[Unauthorized]),
        create,
    )
    .resource(
        saved(get("/savedsearches", "listSavedSearches"))
            .summary("The caller's saved searches, newest first (scope `read`)")
            .description("`offset` (default 0) and `limit` (default and at most 100, as many as a user may keep: without them the list is whole), else 400 `pagination-invalid`.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "Default 0.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 100.")
            .ok(200, "A page of the saved searches", "SavedSearchList")
            .errors(&[Unauthorized, ValidationFailure, PaginationInvalid]),
        list,
    )
    .resource(
        one(get("/savedsearches/{savedSearchId}", "getSavedSearch"))
            .summary("One saved search (its owner, scope `read`)")
            .description(
                "Someone else's saved search is `savedsearch-not-found`, as an unknown one is.",
            )
            .ok(200, "The saved search", "SavedSearch"),
        one_saved,
    )
    .resource(
        one(put("/savedsearches/{savedSearchId}", "replaceSavedSearch"))
            .summary("Replace a saved search (its owner, scope `write`)")
            .description(BODY)
            .body("application/json", "SavedSearchInput")
            .ok(200, "The saved search", "SavedSearch"),
        replace,
    )
    .resource(
        one(delete(
            "/savedsearches/{savedSearchId}",
            "deleteSavedSearch",
        ))
        .summary("Delete a saved search (its owner, scope `write`)")
        .ok_empty(204, "Deleted"),
        remove,
    )
}

fn saved_json(hal: &Hal, saved: &SavedSearch) -> Value {
    let path = hal.path(&format!("/savedsearches/{}", saved.id));
    let search = match saved.request.as_str() {
        "" => hal.path("/search"),
        query => format!("{}?{query}", hal.path("/search")),
    };
    json!({
        "_links": hal
            .links(path, Resource::SavedSearch)
            .rel(Rel::Search, search)
            .rel(Rel::Owner, hal.path(&format!("/users/{}", saved.user_id)))
            .build(),
        "savedSearchId": saved.id,
        "userId": saved.user_id,
        "searchRequest": SavedRequest::json_of(&saved.request),
        "alert": saved.alert.as_str(),
        "createdDate": format_timestamp(saved.created_at),
        "updatedDate": format_timestamp(saved.updated_at),
    })
}

async fn create(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Write>,
    body: Result<JsonBody<SavedSearchInput>, ApiError>,
) -> Result<Json, ApiError> {
    let input = body.map(|JsonBody(input)| input);
    let now = state.clock.now();
    let saved = state
        .db
        .write(move |conn| Box::pin(saved_searches::create(conn, user, input, now)))
        .await?;
    let location = hal.path(&format!("/savedsearches/{}", saved.id));
    Ok(Json::created(location, saved_json(&hal, &saved)))
}

/// A page of the caller's saved searches. A user keeps at most
/// [`MAX_PER_USER`], so they are read whole and the page is cut here.
async fn list(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    Query(query): Query<PageQuery>,
) -> Result<Json, ApiError> {
    let most = MAX_PER_USER as u64;
    let page = query.page(most, most)?;
    let listed = state
        .db
        .read(move |conn| Box::pin(saved_searches::of_user(conn, user)))
        .await?;
    let skipped = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let items: Vec<Value> = listed
        .iter()
        .skip(skipped)
        .take(page.limit as usize)
        .map(|s| saved_json(&hal, s))
        .collect();
    let path = hal.path("/savedsearches");
    Ok(Json::ok(json!({
        "_links": hal
            .links(&path, Resource::SavedSearchList)
            .pagination(&path, page, listed.len() as u64)
            .build(),
        "_embedded": {hal.rel(Rel::SavedSearch): items},
        "totalCount": listed.len(),
        "offset": page.offset,
        "limit": page.limit,
    })))
}

async fn one_saved(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    SavedSearchPath(id): SavedSearchPath,
) -> Result<Json, ApiError> {
    let saved = state
        .db
        .read(move |conn| Box::pin(saved_searches::get(conn, user, id)))
        .await?;
    Ok(Json::ok(saved_json(&hal, &saved)))
}

async fn replace(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Write>,
    SavedSearchPath(id): SavedSearchPath,
    body: Result<JsonBody<SavedSearchInput>, ApiError>,
) -> Result<Json, ApiError> {
    let input = body.map(|JsonBody(input)| input);
    let now = state.clock.now();
    let saved = state
        .db
        .write(move |conn| Box::pin(saved_searches::replace(conn, user, id, input, now)))
        .await?;
    Ok(Json::ok(saved_json(&hal, &saved)))
}

async fn remove(
    Context { state, .. }: Context,
    UserWith(user, _): UserWith<need::Write>,
    SavedSearchPath(id): SavedSearchPath,
) -> Result<Response, ApiError> {
    state
        .db
        .write(move |conn| Box::pin(saved_searches::delete(conn, user, id)))
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
