//! `GET /v1/search`: full-text search over the online ads (docs/design/search.md section
//! 8). The query string parses into `domain::search::request::SearchRequest`; the use case
//! runs it; the answer is a page of advertisements under `svc:search-result`.

use axum::extract::RawQuery;
use serde_json::{Map, Value, json};

use crate::domain::field_error::names_field;
use crate::domain::search::request::{MAX_DISTANCE, REACHABLE, Refusal, SearchRequest};
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Embedded, Hal, Rel, Resource};
use crate::usecase::search;

use super::ads::json::{AdJson, AdPageJson};
use super::api::{Api, get};
use super::extract::Context;
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let boolean = || json!({"type": "string", "enum": ["true", "false"]});
    let id = || json!({"type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX});
    let cents = || json!({"type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX});
    api.resource(
        get("/search", "search")
            .tag("Search")
            .authenticated()
            .summary("Search the online advertisements")
            .description("Every word of `query` must match (Dutch and French word forms and accents do not matter). Results whose title holds every word come first, then (with `searchDescription=true`) those that need the description, each group newest first; `sortBy=price` orders by price (ascending unless `sortOrder=descending`; ads without a price last); `sortBy=location` by distance from `postCode` (nearest first unless `sortOrder=descending`; ads whose postcode has no known place last; equal distances newest first). Filters: `categoryId` (L1 or leaf), `sellerId`, `locale`, `withImages`, `price.from`/`price.to` (cents, of the asking price or minimal bid), `postCode` with `distance` (metres), and with `categoryId` each searchable LIST or STRING attribute of the category as `<key>=value1,value2` (any of) and each searchable NUMBER or DOUBLE attribute as `<key>.from`/`<key>.to` (inclusive). With `postCode` each result carries `distance`: whole metres between the postcodes' areas (a Dutch postcode's four digits, a Belgian postcode). `totalCount` is exact; at most the first 5,000 results are reachable: `limit` 1 to 200 (default 30) and `offset + limit` at most 5,000, else 400 `pagination-invalid`. Any other problem, an unknown parameter included, is 400 `validation-failure` with every field error.")
            .query_param("query", json!({"type": "string", "maxLength": 100}), "The words to find (at most 8 after stop words).")
            .query_param("categoryId", id(), "An L1 or leaf category.")
            .query_param("withImages", boolean(), "Only ads with images (default false).")
            .query_param("searchDescription", boolean(), "Find the words in the description too (default false).")
            .query_param("sellerId", id(), "Only this seller's ads.")
            .query_param("postCode", json!({"type": "string", "maxLength": 10}), "A Dutch (`1234AB`) or Belgian (`1234`) postcode that distances are measured from; one whose area Souk does not know is a field error.")
            .query_param("distance", json!({"type": "integer", "minimum": 1, "maximum": MAX_DISTANCE}), "Only ads at most this many metres from `postCode` (which it needs).")
            .query_param("sortBy", json!({"type": "string", "enum": ["default", "location", "price"]}), "Default: every word in the title first, then newest first. `location` needs `postCode`.")
            .query_param("sortOrder", json!({"type": "string", "enum": ["ascending", "descending"]}), "Descending for `default`, ascending for `location` and `price` unless given.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": REACHABLE - 1}), "Default 0.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 200}), "Default 30.")
            .query_param("locale", json!({"type": "string", "enum": ["nl-NL", "nl-BE", "fr-BE"]}), "Only ads in this locale.")
            .query_param("price.from", cents(), "Lowest price in cents.")
            .query_param("price.to", cents(), "Highest price in cents.")
            .query_param("facets", boolean(), "Add `facets` (ours, default false): how many matching ads each category holds (leaves, and each L1 category as the sum of its leaves) and, with `categoryId`, each value of the category's searchable LIST attributes; each list by descending count.")
            .ok(200, "A page of results", "SearchResults")
            .errors(&[ValidationFailure, PaginationInvalid]),
        run,
    )
}

/// The query string's pairs, decoded.
fn pairs(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The links of a page: `self`, `first`, `prev`, `next` and `last` with the request's own
/// parameters (never the caller's `access_token`), each a page that may be asked for
/// (`offset + limit` within the reachable).
fn links(hal: &Hal, pairs: &[(String, String)], request: &SearchRequest, total: i64) -> Value {
    let path = hal.path("/search");
    let kept: Vec<&(String, String)> = pairs
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "offset" | "limit" | "_links" | "access_token"))
        .collect();
    let href = |offset: i64, limit: i64| {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &kept {
            query.append_pair(k, v);
        }
        query.append_pair("offset", &offset.to_string());
        query.append_pair("limit", &limit.to_string());
        json!({"href": format!("{path}?{}", query.finish())})
    };
    // A page that starts at `offset` within the reachable results, shortened to end there.
    let page = |offset: i64| href(offset, request.limit.min(REACHABLE - offset));
    let (offset, limit) = (request.offset, request.limit);
    let reachable = total.min(REACHABLE);
    let last = if reachable == 0 {
        0
    } else {
        (reachable - 1) / limit * limit
    };
    let mut map = Map::new();
    map.insert("self".into(), href(offset, limit));
    map.insert(
        "describedby".into(),
        json!({"href": hal.describedby(Resource::SearchResults)}),
    );
    map.insert(
        "curies".into(),
        serde_json::to_value(hal.curies()).unwrap_or(Value::Null),
    );
    map.insert("first".into(), page(0));
    if offset > 0 {
        map.insert("prev".into(), page((offset - limit).clamp(0, last)));
    }
    if offset + limit < reachable {
        map.insert("next".into(), page(offset + limit));
    }
    map.insert("last".into(), page(last));
    Value::Object(map)
}

/// A search whose parameters are wrong: every error at once, what the parameters alone
/// show and what only the database can judge (a category, its attributes, a postcode) of
/// the rest, as one `validation-failure`; `pagination-invalid` if only `offset` or
/// `limit` is wrong.
async fn refused(state: &crate::state::AppState, refusal: Refusal) -> ApiError {
    let Refusal {
        mut errors,
        paging,
        request,
    } = refusal;
    // Without the category it meant, the rest's filters cannot be judged: each would be
    // called unknown.
    if names_field(&errors, "categoryId") {
        errors.extend(paging);
        return ApiError::validation(errors);
    }
    let checked = state
        .db
        .read(move |conn| {
            Box::pin(async move { search::check::<std::convert::Infallible>(conn, &request).await })
        })
        .await;
    match checked {
        Ok(()) if errors.is_empty() => ApiError {
            details: paging,
            ..ApiError::new(ErrorCode::PaginationInvalid)
        },
        Ok(()) => {
            errors.extend(paging);
            ApiError::validation(errors)
        }
        Err(crate::usecase::Error::Invalid(found)) => {
            errors.extend(found);
            errors.extend(paging);
            ApiError::validation(errors)
        }
        Err(other) => other.into(),
    }
}

async fn run(Context { state, hal }: Context, RawQuery(query): RawQuery) -> Result<Json, ApiError> {
    let pairs = pairs(query.as_deref());
    let request = match SearchRequest::parse(&pairs) {
        Ok(request) => request,
        Err(refusal) => return Err(refused(&state, refusal).await),
    };
    let now = state.clock.now();
    let found = {
        let request = request.clone();
        state
            .db
            .read_heavy(move |conn| {
                Box::pin(async move {
                    search::run::<std::convert::Infallible>(conn, &request, now).await
                })
            })
            .await?
    };
    let items = found
        .results
        .iter()
        .map(|r| AdJson::new(&hal, &r.record, now, false).search_result(r.distance))
        .collect();
    Ok(Json::ok(AdPageJson {
        links: links(&hal, &pairs, &request, found.total),
        embedded: Embedded::new(hal.rel(Rel::SearchResult), items),
        total_count: found.total,
        offset: request.offset as u64,
        limit: request.limit as u64,
        facets: found.facets.as_ref().map(facets_json),
    }))
}

/// `{categories: [{categoryId, parentId?, count}], attributes: {<key>: [{value, count}]}}`.
fn facets_json(facets: &search::Facets) -> Value {
    let categories: Vec<Value> = facets
        .categories
        .iter()
        .map(|c| {
            let mut one = json!({"categoryId": c.category_id, "count": c.count});
            if let Some(parent) = c.parent_id {
                one["parentId"] = json!(parent);
            }
            one
        })
        .collect();
    let attributes: Map<String, Value> = facets
        .attributes
        .iter()
        .map(|(key, counts)| {
            let values: Vec<Value> = counts
                .iter()
                .map(|(value, count)| json!({"value": value, "count": count}))
                .collect();
            (key.clone(), Value::Array(values))
        })
        .collect();
    json!({"categories": categories, "attributes": attributes})
}
