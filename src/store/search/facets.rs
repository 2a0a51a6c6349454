//! Facets: how many of a search's matches fall in each leaf category and in each value of
//! some attributes.

use super::filter::{Part, filter, text_of};
use super::{Query, Tier, prepared};
use crate::store::{Conn, DbError, FromValue, Row};

/// How many ads that match a query fall in each leaf category, and in each value of some
/// attributes (facets); each list in descending count, then ascending id or value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FacetCounts {
    pub categories: Vec<(i64, i64)>,
    pub attributes: Vec<(String, Vec<(String, i64)>)>,
}

/// The facet counts of `query` at `now` (its order and page ignored): per leaf category,
/// and per text value of each attribute `keys` names.
pub async fn facet_counts(
    conn: &mut dyn Conn,
    query: &Query,
    keys: &[String],
    now: i64,
) -> Result<FacetCounts, DbError> {
    let tier = if query.search_description && !query.words.is_empty() {
        Tier::Anywhere
    } else {
        Tier::Title
    };
    let backend = conn.backend();
    let query = &prepared(conn, query).await?;
    let filter = filter(query, backend, tier, Part::All, now, false);
    let rows = conn
        .query(
            &format!(
                "SELECT d.category_id AS category_id, COUNT(*) AS n{} GROUP BY d.category_id",
                filter.from_where
            ),
            &filter.values,
        )
        .await?;
    let categories: Vec<(i64, i64)> = by_count(grouped(rows, "category_id")?);
    let mut attributes = Vec::with_capacity(keys.len());
    for key in keys {
        let mut values = filter.values.clone();
        let value = text_of(key, backend, &mut values);
        let rows = conn
            .query(
                &format!(
                    "SELECT v, COUNT(*) AS n FROM (SELECT {value} AS v{}) x \
                     WHERE v IS NOT NULL GROUP BY v",
                    filter.from_where
                ),
                &values,
            )
            .await?;
        let counts: Vec<(String, i64)> = by_count(grouped(rows, "v")?);
        attributes.push((key.clone(), counts));
    }
    Ok(FacetCounts {
        categories,
        attributes,
    })
}

/// `(key, n)` of each row of a `GROUP BY`.
fn grouped<K: FromValue>(rows: Vec<Row>, column: &str) -> Result<Vec<(K, i64)>, DbError> {
    rows.into_iter()
        .map(|row| Ok((row.get(column)?, row.get("n")?)))
        .collect()
}

/// Descending count, then ascending key.
fn by_count<K: Ord>(mut counts: Vec<(K, i64)>) -> Vec<(K, i64)> {
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}
