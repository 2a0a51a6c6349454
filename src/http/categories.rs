//! `/v1/categories`: the tree, one category, and a leaf's attributes and fees.

use serde_json::{Value, json};

use crate::domain::category::{AttributeDefinition, Category};
use crate::domain::locale::Locale;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::state::AppState;
use crate::store::categories;

use super::api::{Api, Operation, get};
use super::extract::{CategoryPath, Context, LeafCategoryPath, Query, parse_id, parse_optional_id};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let categories = |operation: Operation| {
        operation
            .tag("Categories")
            .authenticated()
            .errors(&[ValidationFailure, CategoryNotFound])
    };
    let leaf = |operation: Operation, l2: &'static str| {
        categories(operation)
            .path_param("l1CategoryId", "The L1 category id.")
            .path_param("l2CategoryId", l2)
            .ok_empty(304, "Not modified")
    };
    api.resource(
        categories(get("/categories", "listCategories"))
            .summary("The category tree")
            .description("The L1 categories, each with its L2 children embedded. With `categoryId`, the one category with that id instead. Answers an `ETag` and honours `If-None-Match`.")
            .query_param("categoryId", json!({"type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX}), "Answer this one category (L1 or L2) instead of the tree.")
            .ok(200, "The tree (or the category asked for)", "CategoryList")
            .ok_empty(304, "Not modified since the ETag in If-None-Match"),
        list,
    )
    .resource(
        categories(get("/categories/{categoryId}", "getCategory"))
            .summary("One category")
            .description("An L1 category with its L2 children embedded, or an L2 category by its own id.")
            .path_param("categoryId", "The category id.")
            .ok(200, "The category", "Category")
            .ok_empty(304, "Not modified"),
        one,
    )
    .resource(
        leaf(
            get("/categories/{l1CategoryId}/{l2CategoryId}", "getLeafCategory"),
            "The L2 category id; it must be a child of the L1 category.",
        )
        .summary("A leaf (L2) category")
        .ok(200, "The category", "Category"),
        leaf_category,
    )
    .resource(
        leaf(
            get("/categories/{l1CategoryId}/{l2CategoryId}/attributes", "getCategoryAttributes"),
            "The L2 category id.",
        )
        .summary("The attribute definitions of a leaf category")
        .description("What an advertisement in this category carries as category attributes and how each is checked. `values` and `options` are always arrays, possibly empty.")
        .ok(200, "The attribute definitions", "CategoryAttributes"),
        attributes,
    )
    .resource(
        leaf(
            get("/categories/{l1CategoryId}/{l2CategoryId}/fees", "getCategoryFees"),
            "The L2 category id.",
        )
        .summary("The listing fees of a leaf category (under construction, subject to change)")
        .description("Under construction, subject to change (as in the original). `insertionFee` in euro cents (0 where only subscriptions apply), `runningSubscriptions` (possibly empty), and Souk's `runningDays`.")
        .ok(200, "The fees", "CategoryFees"),
        fees,
    )
}

#[derive(serde::Deserialize)]
struct ListQuery {
    #[serde(rename = "categoryId")]
    category_id: Option<String>,
}

async fn list(
    Context { state, hal }: Context,
    Query(query): Query<ListQuery>,
) -> Result<Json, ApiError> {
    if let Some(id) = parse_optional_id("categoryId", query.category_id.as_deref())? {
        return one_by_id(&state, &hal, id).await;
    }
    let all = state
        .db
        .read(|conn| Box::pin(categories::all(conn)))
        .await?;
    let region = state.config.region;
    let tree: Vec<Value> = all
        .iter()
        .filter(|c| c.parent_id.is_none())
        .map(|l1| {
            let children: Vec<&Category> =
                all.iter().filter(|c| c.parent_id == Some(l1.id)).collect();
            category_json(&hal, region, l1, &children)
        })
        .collect();
    let body = json!({
        "_links": hal.links(hal.path("/categories"), Resource::CategoryList).build(),
        "_embedded": {hal.rel(Rel::Category): tree},
    });
    Ok(Json::ok(body).with_etag())
}

async fn one(
    Context { state, hal }: Context,
    CategoryPath(id): CategoryPath,
) -> Result<Json, ApiError> {
    one_by_id(&state, &hal, id).await
}

async fn one_by_id(state: &AppState, hal: &Hal, id: i64) -> Result<Json, ApiError> {
    let (category, children) = state
        .db
        .read(move |conn| {
            Box::pin(async move {
                let Some(category) = categories::get(conn, id).await? else {
                    return Ok(None);
                };
                let children = if category.parent_id.is_none() {
                    categories::children(conn, id).await?
                } else {
                    Vec::new()
                };
                Ok::<_, ApiError>(Some((category, children)))
            })
        })
        .await?
        .ok_or(ErrorCode::CategoryNotFound)?;
    let children: Vec<&Category> = children.iter().collect();
    let body = category_json(hal, state.config.region, &category, &children);
    Ok(Json::ok(body).with_etag())
}

/// Reads the leaf `l2` and checks that it is a child of `l1`.
async fn read_leaf(state: &AppState, raw_l1: &str, raw_l2: &str) -> Result<Category, ApiError> {
    let l1 = parse_id("l1CategoryId", raw_l1);
    let l2 = parse_id("l2CategoryId", raw_l2);
    let (l1, l2) = match (l1, l2) {
        (Ok(l1), Ok(l2)) => (l1, l2),
        (l1, l2) => {
            // Report both malformed ids at once.
            let details = [l1.err(), l2.err()]
                .into_iter()
                .flatten()
                .flat_map(|e| e.details)
                .collect();
            return Err(ApiError::validation(details));
        }
    };
    state
        .db
        .read(move |conn| Box::pin(async move { categories::get(conn, l2).await }))
        .await?
        .filter(|c| c.parent_id == Some(l1))
        .ok_or_else(|| ErrorCode::CategoryNotFound.into())
}

async fn leaf_category(
    Context { state, hal }: Context,
    LeafCategoryPath(l1, l2): LeafCategoryPath,
) -> Result<Json, ApiError> {
    let category = read_leaf(&state, &l1, &l2).await?;
    let body = category_json(&hal, state.config.region, &category, &[]);
    Ok(Json::ok(body).with_etag())
}

async fn attributes(
    Context { state, hal }: Context,
    LeafCategoryPath(l1, l2): LeafCategoryPath,
) -> Result<Json, ApiError> {
    let category = read_leaf(&state, &l1, &l2).await?;
    let region = state.config.region;
    let fields: Vec<Value> = category
        .leaf
        .iter()
        .flat_map(|leaf| &leaf.attributes)
        .map(|a| attribute_json(a, region))
        .collect();
    Ok(Json::ok(json!({
        "_links": under_leaf(&hal, &category, "/attributes", Resource::CategoryAttributes),
        "fields": fields,
    }))
    .with_etag())
}

async fn fees(
    Context { state, hal }: Context,
    LeafCategoryPath(l1, l2): LeafCategoryPath,
) -> Result<Json, ApiError> {
    let category = read_leaf(&state, &l1, &l2).await?;
    let fees = category
        .leaf
        .as_ref()
        .map(|leaf| &leaf.fees)
        .ok_or(ErrorCode::CategoryNotFound)?;
    Ok(Json::ok(json!({
        "_links": under_leaf(&hal, &category, "/fees", Resource::CategoryFees),
        "insertionFee": fees.insertion_fee,
        "runningSubscriptions": fees.running_subscriptions.iter()
            .map(|s| json!({"durationDays": s.duration_days, "fee": s.fee}))
            .collect::<Vec<_>>(),
        "runningDays": fees.running_days,
    }))
    .with_etag())
}

/// The links of a resource under a leaf category (`tail` is its path there): `up` is the
/// category.
fn under_leaf(hal: &Hal, category: &Category, tail: &str, resource: Resource) -> Value {
    let path = category_path(category);
    hal.links(hal.path(&format!("{path}{tail}")), resource)
        .plain("up", hal.path(&path))
        .build()
}

/// `/categories/{l1}` or `/categories/{l1}/{l2}`, without the version prefix.
fn category_path(category: &Category) -> String {
    match category.parent_id {
        Some(parent) => format!("/categories/{parent}/{}", category.id),
        None => format!("/categories/{}", category.id),
    }
}

fn category_json(hal: &Hal, region: Locale, category: &Category, children: &[&Category]) -> Value {
    let path = category_path(category);
    let mut links = hal.links(hal.path(&path), Resource::Category);
    links = match category.parent_id {
        Some(parent) => links
            .plain("up", hal.path(&format!("/categories/{parent}")))
            .rel(
                Rel::CategoryAttributes,
                hal.path(&format!("{path}/attributes")),
            )
            .rel(Rel::CategoryFees, hal.path(&format!("{path}/fees"))),
        None => links.plain("up", hal.path("/categories")),
    };
    let mut body = json!({
        "_links": links.build(),
        "categoryId": category.id,
        "name": category.labels.get(region),
        "labels": category.labels,
        "status": category.status.as_str(),
    });
    if category.parent_id.is_none() {
        let children: Vec<Value> = children
            .iter()
            .map(|child| category_json(hal, region, child, &[]))
            .collect();
        body["_embedded"] = json!({hal.rel(Rel::Category): children});
    }
    body
}

fn attribute_json(a: &AttributeDefinition, region: Locale) -> Value {
    let mut field = json!({
        "key": a.key,
        "label": a.labels.get(region),
        "labels": a.labels,
        "type": a.kind,
        "values": a.options.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(),
        "options": a.options.iter()
            .map(|o| json!({"key": o.key, "labels": o.labels}))
            .collect::<Vec<_>>(),
        "units": a.units,
        "mandatory": a.mandatory,
        "searchable": a.searchable,
        "writable": a.writable,
        "updateable": a.updateable,
    });
    if let Some(min) = a.min_value {
        field["minValue"] = number(min);
    }
    if let Some(max) = a.max_value {
        field["maxValue"] = number(max);
    }
    if let Some(unit) = &a.unit {
        field["unit"] = json!(unit);
    }
    field
}

/// A bound as JSON: integral values as integers (`2030`, not `2030.0`).
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}
