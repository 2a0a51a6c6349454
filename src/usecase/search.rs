//! Search over the online ads (docs/design/search.md): the checked request becomes the
//! store's query (words, tags, ranges), and the page's ads are read in one statement.

use serde_json::{Map, Value};

use crate::domain::advertisement::{AdContent, AdStatus, ModelType, PriceModel};
use crate::domain::category::{AttributeDefinition, AttributeType};
use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::places::{Country, Point, Postcode};
use crate::domain::search::request::{SearchRequest, SortBy};
use crate::domain::search::text::TOKENIZER_VERSION;
use crate::domain::search::{
    AdTerms, attribute_tag, category_tag, locale_tag, parent_tag, seller_tag,
};
use crate::store::ads::{self, AdRecord};
use crate::store::alerts;
use crate::store::search::{self, Near, Order, Query};
use crate::store::{Conn, DbError, categories, locations};

use super::Error;

/// A page of results, in order, how many ads match in all, and the facets when asked.
#[derive(Debug)]
pub struct Found {
    pub results: Vec<SearchResult>,
    pub total: i64,
    pub facets: Option<Facets>,
}

/// How the matching ads fall into categories and values (ours, `facets=true`): counts per
/// category (leaves, and each L1 category as the sum of its leaves) and, when the request
/// names a category, per value of each of its searchable LIST attributes. Each list in
/// descending count, then ascending id or value.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Facets {
    pub categories: Vec<CategoryCount>,
    pub attributes: Vec<(String, Vec<(String, i64)>)>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct CategoryCount {
    pub category_id: i64,
    /// None for an L1 category.
    pub parent_id: Option<i64>,
    pub count: i64,
}

/// One result: the ad, and its distance in metres from the request's postcode (when one
/// was given and the ad's postcode has a location).
#[derive(Debug)]
pub struct SearchResult {
    pub record: AdRecord,
    pub distance: Option<i64>,
}

/// Whether a filter may name `key` as an attribute of one of `kinds`: a searchable
/// attribute of the category (of any of its leaves, for an L1 category).
fn filterable(definitions: &[AttributeDefinition], key: &str, kinds: &[AttributeType]) -> bool {
    definitions
        .iter()
        .any(|d| d.key == key && d.searchable && kinds.contains(&d.kind))
}

/// Value lists filter LIST and STRING attributes (tags); ranges NUMBER and DOUBLE ones.
const VALUE_KINDS: &[AttributeType] = &[AttributeType::List, AttributeType::String];
const RANGE_KINDS: &[AttributeType] = &[AttributeType::Number, AttributeType::Double];

fn unknown_parameter(field: String, value: String) -> FieldError {
    FieldError::new(
        field,
        "unknown-parameter",
        Text::new(
            "is geen zoekparameter of doorzoekbaar kenmerk van de categorie",
            "n'est ni un paramètre de recherche ni un attribut consultable de la catégorie",
        ),
    )
    .with_value(value)
}

/// What the request's filters become in the store's terms.
struct Filters {
    /// The tags every result must carry, one group per filter (a group matches when the ad
    /// has any of its tags).
    tags: Vec<Vec<String>>,
    /// A leaf category searched without words: matched by its id, not its tag.
    category: Option<i64>,
    number_ranges: Vec<crate::domain::search::request::NumberRange>,
    near: Option<Near>,
    /// The searchable LIST attributes of the category (of its leaves, for an L1), for
    /// facets.
    list_keys: Vec<String>,
}

/// The point distances are measured from: the postcode's area's (ads are placed at their
/// area's point too; see `store::search`). None when the table has no such area.
async fn area_point(
    conn: &mut dyn Conn,
    postcode: &Postcode,
) -> Result<Option<Point>, crate::store::DbError> {
    let area = match postcode.country() {
        Country::Netherlands => Postcode::of_country(Country::Netherlands, postcode.area()),
        Country::Belgium => Some(postcode.clone()),
    };
    match area {
        Some(area) => locations::point(conn, &area).await,
        None => Ok(None),
    }
}

async fn filters<R>(conn: &mut dyn Conn, request: &SearchRequest) -> Result<Filters, Error<R>> {
    let mut tags = Vec::new();
    let mut leaf = None;
    let mut errors = Vec::new();
    let mut definitions = Vec::new();
    if let Some(id) = request.category_id {
        match categories::get(conn, id).await? {
            // Without words, the ads of a leaf are found by their category's index (with
            // the price range, and the close date it holds) rather than by the word index;
            // with words, the tag narrows the words' matches within the word index.
            Some(category) if category.parent_id.is_some() && request.words.groups.is_empty() => {
                leaf = Some(id);
                definitions.extend(category.leaf.map(|l| l.attributes).unwrap_or_default());
            }
            Some(category) if category.parent_id.is_some() => {
                tags.push(vec![category_tag(id)]);
                definitions.extend(category.leaf.map(|l| l.attributes).unwrap_or_default());
            }
            Some(_) => {
                tags.push(vec![parent_tag(id)]);
                for leaf in categories::children(conn, id).await? {
                    definitions.extend(leaf.leaf.map(|l| l.attributes).unwrap_or_default());
                }
            }
            None => errors.push(
                FieldError::new(
                    "categoryId",
                    "unknown-category",
                    Text::new("bestaat niet", "n'existe pas"),
                )
                .with_value(id),
            ),
        }
    }
    for (key, values) in &request.attributes {
        let group: Vec<String> = values
            .iter()
            .filter_map(|v| attribute_tag(key, v))
            .collect();
        if !filterable(&definitions, key, VALUE_KINDS) {
            errors.push(unknown_parameter(key.clone(), values.join(",")));
        } else if group.len() != values.len() {
            // A value no ad can hold: without a letter or digit, or free text.
            errors.push(
                FieldError::new(
                    key.clone(),
                    "invalid-value",
                    Text::new(
                        "elke waarde heeft letters of cijfers, en hoogstens 60",
                        "chaque valeur a des lettres ou des chiffres, et au plus 60",
                    ),
                )
                .with_value(values.join(",")),
            );
        } else {
            tags.push(group);
        }
    }
    let mut number_ranges = Vec::new();
    for range in &request.number_ranges {
        if filterable(&definitions, &range.key, RANGE_KINDS) {
            number_ranges.push(range.clone());
        } else {
            for (bound, value) in [("from", range.from), ("to", range.to)] {
                if let Some(value) = value {
                    errors.push(unknown_parameter(
                        format!("{}.{bound}", range.key),
                        value.to_string(),
                    ));
                }
            }
        }
    }
    let mut near = None;
    if let Some(postcode) = &request.postcode {
        match area_point(conn, postcode).await? {
            Some(point) => {
                near = Some(Near {
                    point,
                    within: request.distance,
                })
            }
            None => errors.push(
                FieldError::new(
                    "postCode",
                    "unknown-postcode",
                    Text::new(
                        "is een postcode waarvan de plaats niet bekend is",
                        "est un code postal dont le lieu n'est pas connu",
                    ),
                )
                .with_value(postcode.code()),
            ),
        }
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    tags.extend(request.seller_id.map(|id| vec![seller_tag(id)]));
    tags.extend(request.locale.map(|l| vec![locale_tag(l)]));
    let mut list_keys: Vec<String> = definitions
        .iter()
        .filter(|d| d.searchable && d.kind == AttributeType::List)
        .map(|d| d.key.clone())
        .collect();
    list_keys.sort();
    list_keys.dedup();
    Ok(Filters {
        tags,
        category: leaf,
        number_ranges,
        near,
        list_keys,
    })
}

/// Checks what `request` filters on against the database (the category exists, the
/// attributes are the category's searchable ones) as a search does, without running it.
pub async fn check<R>(conn: &mut dyn Conn, request: &SearchRequest) -> Result<(), Error<R>> {
    filters::<R>(conn, request).await.map(drop)
}

/// The store's query for `request`, checked against the database (see [`check`]).
pub async fn query_of<R>(conn: &mut dyn Conn, request: &SearchRequest) -> Result<Query, Error<R>> {
    Ok(query_and_list_keys(conn, request).await?.0)
}

/// The store's query, and the LIST attributes whose values facets count.
async fn query_and_list_keys<R>(
    conn: &mut dyn Conn,
    request: &SearchRequest,
) -> Result<(Query, Vec<String>), Error<R>> {
    let filters = filters(conn, request).await?;
    let query = Query {
        words: request.words.groups.clone(),
        tags: filters.tags,
        category: filters.category,
        search_description: request.search_description,
        price_from: request.price_from,
        price_to: request.price_to,
        with_images: request.with_images,
        near: filters.near,
        number_ranges: filters.number_ranges,
        among: None,
        matches: None,
        areas: None,
        term_totals: None,
        title_word_totals: None,
        prepared: false,
        order: match (request.sort_by, request.ascending) {
            (SortBy::Default, false) => Order::Newest,
            (SortBy::Default, true) => Order::Oldest,
            (SortBy::Price, true) => Order::PriceAscending,
            (SortBy::Price, false) => Order::PriceDescending,
            (SortBy::Location, true) => Order::NearestFirst,
            (SortBy::Location, false) => Order::FarthestFirst,
        },
        offset: request.offset,
        limit: request.limit,
    };
    Ok((query, filters.list_keys))
}

/// The page of ads `request` asks for at `now`: online ads only, ranked as the design's
/// section 1 says (every word in the title first, then newest first; or by price).
pub async fn run<R>(
    conn: &mut dyn Conn,
    request: &SearchRequest,
    now: i64,
) -> Result<Found, Error<R>> {
    let (query, list_keys) = query_and_list_keys(conn, request).await?;
    // Once for the page and the facets.
    let query = search::prepared(conn, &query).await?;
    let page = search::run(conn, &query, now).await?;
    let facets = if request.facets {
        Some(facets(conn, &query, &list_keys, now).await?)
    } else {
        None
    };
    let numbers: Vec<i64> = page.hits.iter().map(|hit| hit.number).collect();
    // Found by their numbers: one plan serves every page (`PgDb::read_heavy` says what
    // planning them for their values cost).
    conn.keep_plans();
    let records = ads::by_numbers(conn, &numbers).await?;
    // Both reads see one snapshot (`Db::read_heavy`); an ad that the page names and the
    // second read does not find would be left out all the same (by_numbers keeps the
    // order).
    let results = records
        .into_iter()
        .filter(|record| record.status_at(now) == AdStatus::Online)
        .map(|record| SearchResult {
            distance: page
                .hits
                .iter()
                .find(|hit| hit.number == record.number)
                .and_then(|hit| hit.distance),
            record,
        })
        .collect();
    Ok(Found {
        results,
        total: page.total,
        facets,
    })
}

/// The facets of `query`: the store's counts per leaf, with each L1 category's sum.
async fn facets(
    conn: &mut dyn Conn,
    query: &Query,
    list_keys: &[String],
    now: i64,
) -> Result<Facets, crate::store::DbError> {
    let counts = search::facet_counts(conn, query, list_keys, now).await?;
    let parents: std::collections::HashMap<i64, Option<i64>> = categories::all(conn)
        .await?
        .into_iter()
        .map(|c| (c.id, c.parent_id))
        .collect();
    let mut by_category: std::collections::BTreeMap<i64, CategoryCount> = Default::default();
    for (leaf, count) in counts.categories {
        let parent_id = parents.get(&leaf).copied().flatten();
        for (category_id, parent_id) in [(Some(leaf), parent_id), (parent_id, None)] {
            let Some(category_id) = category_id else {
                continue;
            };
            by_category
                .entry(category_id)
                .or_insert(CategoryCount {
                    category_id,
                    parent_id,
                    count: 0,
                })
                .count += count;
        }
    }
    let mut categories: Vec<CategoryCount> = by_category.into_values().collect();
    categories.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.category_id.cmp(&b.category_id))
    });
    Ok(Facets {
        categories,
        attributes: counts.attributes,
    })
}

/// The content of a stored ad, as far as its search terms need it.
fn stored_content(record: &AdRecord) -> AdContent {
    let price_model = serde_json::from_str::<Value>(&record.price_model)
        .ok()
        .and_then(|model| PriceModel::parse(Some(&model)).ok())
        .unwrap_or(PriceModel {
            model_type: ModelType::SeeDescription,
            asking_price: None,
            minimal_bid: None,
            retail_price: None,
        });
    let attributes = match serde_json::from_str::<Value>(&record.attributes) {
        Ok(Value::Object(attributes)) => attributes,
        _ => Map::new(),
    };
    AdContent {
        title: record.title.clone(),
        description: record.description.clone(),
        category_id: record.category_id,
        postcode: record.postcode.clone(),
        price_model,
        attributes,
        locale: record.locale,
        reserved: record.reserved,
        show_on_map: record.show_on_map,
        website_url: record.website_url.clone(),
    }
}

/// Makes the search terms of up to `limit` ads whose terms are outdated (made by an older
/// tokenizer, none: ads from before search, or before their category moved), so that they
/// are found again; returns how many it read. `app::reindex_search` runs it in batches
/// until it answers 0.
pub async fn reindex_outdated(conn: &mut dyn Conn, limit: i64) -> Result<usize, DbError> {
    let outdated = ads::with_search_before(conn, TOKENIZER_VERSION, limit).await?;
    if outdated.is_empty() {
        return Ok(0);
    }
    // The ads did not change: back in search, they are not news to saved searches.
    alerts::pause_queueing(conn).await?;
    for record in &outdated {
        let terms = AdTerms::of(
            &stored_content(record),
            record.seller_id,
            record.parent_category_id,
        );
        ads::set_search_terms(conn, record.number, &terms, record.parent_category_id).await?;
    }
    alerts::resume_queueing(conn).await?;
    Ok(outdated.len())
}
