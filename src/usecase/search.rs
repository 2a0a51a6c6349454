//! Search over the online ads (docs/design/search.md): the checked request becomes the
//! store's query (words, tags, ranges), and the page's ads are read in one statement.

use serde_json::{Map, Value};

use crate::domain::advertisement::{AdContent, ModelType, PriceModel};
use crate::domain::category::{AttributeDefinition, AttributeType};
use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::search::request::{SearchRequest, SortBy};
use crate::domain::search::text::TOKENIZER_VERSION;
use crate::domain::search::{
    AdTerms, attribute_tag, category_tag, locale_tag, parent_tag, seller_tag,
};
use crate::store::ads::{self, AdRecord};
use crate::store::search::{self, Order, Query};
use crate::store::{Conn, categories};

use super::Error;

/// A page of results, in order, and how many ads match in all.
#[derive(Debug)]
pub struct Found {
    pub records: Vec<AdRecord>,
    pub total: i64,
}

/// The attributes a filter may name: the searchable LIST and STRING attributes of the
/// category (of any of its leaves, for an L1 category).
fn filterable(definitions: &[AttributeDefinition], key: &str) -> bool {
    definitions.iter().any(|d| {
        d.key == key
            && d.searchable
            && matches!(d.kind, AttributeType::List | AttributeType::String)
    })
}

/// The tags every result must carry, one group per filter (a group matches when the ad has
/// any of its tags).
async fn tags<R>(
    conn: &mut dyn Conn,
    request: &SearchRequest,
) -> Result<Vec<Vec<String>>, Error<R>> {
    let mut tags = Vec::new();
    let mut errors = Vec::new();
    let mut definitions = Vec::new();
    if let Some(id) = request.category_id {
        match categories::get(conn, id).await? {
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
        if !filterable(&definitions, key) || group.len() != values.len() {
            errors.push(
                FieldError::new(
                    key.clone(),
                    "unknown-parameter",
                    Text::new(
                        "is geen zoekparameter of doorzoekbaar kenmerk van de categorie",
                        "n'est ni un paramètre de recherche ni un attribut consultable de la catégorie",
                    ),
                )
                .with_value(values.join(",")),
            );
        } else {
            tags.push(group);
        }
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    tags.extend(request.seller_id.map(|id| vec![seller_tag(id)]));
    tags.extend(request.locale.map(|l| vec![locale_tag(l)]));
    Ok(tags)
}

/// Checks what `request` filters on against the database (the category exists, the
/// attributes are the category's searchable ones) as a search does, without running it.
pub async fn check<R>(conn: &mut dyn Conn, request: &SearchRequest) -> Result<(), Error<R>> {
    tags(conn, request).await.map(drop)
}

/// The page of ads `request` asks for at `now`: online ads only, ranked as the design's
/// section 1 says (every word in the title first, then newest first; or by price).
pub async fn run<R>(
    conn: &mut dyn Conn,
    request: &SearchRequest,
    now: i64,
) -> Result<Found, Error<R>> {
    let query = Query {
        words: request.words.groups.clone(),
        tags: tags(conn, request).await?,
        search_description: request.search_description,
        price_from: request.price_from,
        price_to: request.price_to,
        with_images: request.with_images,
        order: match (request.sort_by, request.ascending) {
            (SortBy::Default, false) => Order::Newest,
            (SortBy::Default, true) => Order::Oldest,
            (SortBy::Price, true) => Order::PriceAscending,
            (SortBy::Price, false) => Order::PriceDescending,
        },
        offset: request.offset,
        limit: request.limit,
    };
    let page = search::run(conn, &query, now).await?;
    let records = ads::by_numbers(conn, &page.numbers).await?;
    Ok(Found {
        records,
        total: page.total,
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
    }
}

/// Makes the search terms of up to `limit` ads whose terms an older tokenizer made (or
/// none: ads from before search), so that they are found again; returns how many. Run in
/// batches after start until it answers 0.
pub async fn reindex_outdated(conn: &mut dyn Conn, limit: i64) -> Result<usize, Error> {
    let outdated = ads::with_search_before(conn, TOKENIZER_VERSION, limit).await?;
    for record in &outdated {
        let terms = AdTerms::of(
            &stored_content(record),
            record.seller_id,
            record.parent_category_id,
        );
        ads::set_search_terms(conn, record.number, &terms).await?;
    }
    Ok(outdated.len())
}
