//! The search terms that advertisements carry (the index follows them by trigger): made
//! again where they are outdated (`usecase::search::reindex_outdated`).

use crate::domain::search::AdTerms;
use crate::params;

use super::{AdRecord, FROM};
use crate::store::{Conn, DbError, Record};

/// Up to `limit` ads whose search terms were made by a tokenizer older than `version`
/// (without their images, which search terms do not need).
pub async fn with_search_before(
    conn: &mut dyn Conn,
    version: i64,
    limit: i64,
) -> Result<Vec<AdRecord>, DbError> {
    conn.records(
        &format!(
            "SELECT {}{FROM} WHERE a.search_version < $1 ORDER BY a.item_number LIMIT $2",
            AdRecord::COLUMNS
        ),
        params![version, limit],
    )
    .await
}

/// Marks the search terms of the ads of `category` as made by no tokenizer, so that
/// [`with_search_before`] returns them to be made again; until then they are out of the
/// index (the triggers index only ads with terms). Returns how many.
pub async fn outdate_search_terms(conn: &mut dyn Conn, category: i64) -> Result<u64, DbError> {
    conn.execute(
        "UPDATE advertisements SET search_version = 0 \
         WHERE category_id = $1 AND search_version > 0",
        params![category],
    )
    .await
}

/// Stores an ad's search terms (the index follows by trigger), made with `parent` as its
/// category's parent, unless terms of their version were stored since they were read (a
/// change of the ad that came first) or its category moved since (an import: the ad stays
/// outdated, for the next round). Not a change of the ad: its version and ETag stay.
pub async fn set_search_terms(
    conn: &mut dyn Conn,
    number: i64,
    terms: &AdTerms,
    parent: Option<i64>,
) -> Result<(), DbError> {
    conn.run(
        "UPDATE advertisements SET price_cents = $2, search_title = $3, search_body = $4, \
         search_tags = $5, search_version = $6 WHERE item_number = $1 AND search_version < $6 \
         AND COALESCE(parent_category_id, 0) = COALESCE(CAST($7 AS BIGINT), 0)",
        params![
            number,
            terms.price_cents,
            terms.title_words.as_str(),
            terms.body_words.as_str(),
            terms.tags.as_str(),
            terms.version,
            parent
        ],
    )
    .await
}
