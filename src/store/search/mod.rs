//! Full-text search over `search_docs`, the online ads (docs/design/search.md section 5).
//!
//! Both backends index the same words and tags (made in Rust, `domain::search`), and order
//! by integers only (tier, price, item number), so that they answer the same ads in the
//! same order. The match expression is the one text that differs: an FTS5 `MATCH` on
//! SQLite, a `tsquery` on PostgreSQL; [`Match`] writes both.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::domain::places::Point;
pub use crate::domain::search::request::NumberRange;
use crate::domain::search::text::is_index_word;

use super::{Backend, Conn, DbError, Value};

mod facets;
mod filter;
mod page;
mod postings;
mod radius;
mod terms;
mod totals;

pub use facets::{FacetCounts, facet_counts};
pub use totals::fold_counts;

use filter::{AD_AREA_KEY, Part, areas_within, bind_point, filter};
use page::page_of;
use radius::RadiusAreas;
use terms::Match;

/// The order of the results; ties (equal prices) go newest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Tier (every word in the title first), then ads at the top of the day, then newest
    /// placed (or bumped) first.
    Newest,
    /// Tier, then oldest first.
    Oldest,
    /// Lowest price first; ads without a price last.
    PriceAscending,
    /// Highest price first; ads without a price last.
    PriceDescending,
    /// Nearest to `Query::near` first; ads whose postcode has no location last.
    NearestFirst,
    /// Farthest from `Query::near` first; ads whose postcode has no location last.
    FarthestFirst,
}

/// Distances from a point (docs/design/search.md section 6): equirectangular at the point's
/// latitude, `dy = (lat - lat0) * M`, `dx = (lon - lon0) * M * cos(lat0)`, within 0.1% of
/// the great-circle distance over this range. Computed by the database alone (SQLite here
/// has no square root, so it is compared and ordered squared), so that the radius filter,
/// the order and the distance shown come from one computation and cannot disagree, on
/// either backend: the same IEEE arithmetic on the same doubles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Near {
    pub point: Point,
    /// Only ads at most this many metres away.
    pub within: Option<i64>,
}

/// What to find, as the store runs it: groups of terms that must all match (a group
/// matches when any of its members does), and row filters.
#[derive(Clone, Debug)]
pub struct Query {
    /// Word groups (stems), matched in the title, or in the title or description.
    pub words: Vec<Vec<String>>,
    /// Tag groups (`c_101`, `[a_fuel_petrol, a_fuel_diesel]`), matched in the tags.
    pub tags: Vec<Vec<String>>,
    /// Only ads of this (leaf) category, found by `search_docs_category_price`: a category
    /// searched without words, with or without a price range.
    pub category: Option<i64>,
    /// Words may be found in the description too (tier 1, after the title matches).
    pub search_description: bool,
    pub price_from: Option<i64>,
    pub price_to: Option<i64>,
    pub with_images: bool,
    pub near: Option<Near>,
    pub number_ranges: Vec<NumberRange>,
    /// Only these ads (the alert worker holds a batch of changed ads against a search).
    pub among: Option<Vec<i64>>,
    /// Set by [`run`] from the count, not by callers: how many ads match, which tells
    /// whether walking the ads in order finds a page sooner than sorting them all
    /// ([`Query::many_matches`], [`Query::walk`]).
    pub matches: Option<i64>,
    /// Set by this module on PostgreSQL, not by callers: the keys of the areas within the
    /// radius, found before the search ([`prepared`]).
    pub areas: Option<Vec<String>>,
    /// Set by [`prepared`] on PostgreSQL, not by callers: the kept totals of the terms of
    /// its groups, when a page may walk their postings ([`Query::may_walk_postings`]).
    pub term_totals: Option<HashMap<String, i64>>,
    /// Set by [`prepared`], not by callers: the kept totals it read, those of the forms of
    /// its one word and of their pairs among them, when the titles' count of that word may
    /// come from them ([`Query::one_title_word`], [`totals::one_word_count`]).
    pub title_word_totals: Option<HashMap<String, i64>>,
    /// Set by [`prepared`], not by callers: made ready to run.
    pub prepared: bool,
    pub order: Order,
    pub offset: i64,
    pub limit: i64,
}

impl Query {
    /// Whether it filters the rows by more than terms and a radius: a category, a price,
    /// images, numbers or a batch of ads.
    fn filters_rows(&self) -> bool {
        self.category.is_some()
            || self.price_from.is_some()
            || self.price_to.is_some()
            || self.with_images
            || !self.number_ranges.is_empty()
            || self.among.is_some()
    }

    /// Whether its words and tags are the whole of its filter: then the full-text index
    /// alone knows which ads match (less those past their close date, not yet swept).
    fn only_terms(&self) -> bool {
        !self.filters_rows() && self.near.is_none()
    }

    /// Its point and radius, when the radius is the whole of its filter.
    fn only_radius(&self) -> Option<(Point, i64)> {
        let near = self.near?;
        let metres = near.within?;
        let only = !self.filters_rows() && self.words.is_empty() && self.tags.is_empty();
        only.then_some((near.point, metres))
    }

    /// Its point and radius, when terms and the radius are the whole of its filter.
    fn only_terms_and_radius(&self) -> Option<(Point, i64)> {
        let near = self.near?;
        let metres = near.within?;
        let terms = !self.words.is_empty() || !self.tags.is_empty();
        (terms && !self.filters_rows()).then_some((near.point, metres))
    }

    /// Its one group of words, when that is the whole of its filter and a search counts
    /// its matches in the titles (all of them, or the first tier, [`run`]): that count may
    /// come from the kept totals ([`totals::one_word_count`]).
    fn one_title_word(&self) -> Option<&[String]> {
        let titles_counted = !self.search_description || self.in_tiers();
        match (
            self.words.as_slice(),
            self.tags.is_empty(),
            self.only_terms(),
        ) {
            ([group], true, true) if titles_counted => Some(group),
            _ => None,
        }
    }

    /// Whether its results come in two tiers, the title matches before those found in the
    /// description alone ([`run`]): words searched in the description too, newest or
    /// oldest first.
    fn in_tiers(&self) -> bool {
        !self.words.is_empty()
            && self.search_description
            && matches!(self.order, Order::Newest | Order::Oldest)
    }

    /// Whether [`postings::count`] counts it (PostgreSQL): terms alone, within a
    /// radius or not, in the titles and tags, with at most one group of several terms,
    /// which drives the count. An `EXISTS` of a group of several terms is planned as a hash
    /// of every ad under them, and two such groups came to more than the GIN index's count
    /// (100 ms against 57 for two common words at a million ads, where one word in 198,000
    /// titles takes 17 ms against 135, and with a second word of one term 26 ms).
    fn counted_from_title_postings(&self, tier: Tier) -> bool {
        let groups = || self.words.iter().chain(&self.tags);
        let radius = self.near.and_then(|near| near.within);
        !self.filters_rows()
            && (radius.is_none() || self.areas.is_some())
            && (tier == Tier::Title || self.words.is_empty())
            && groups().next().is_some()
            && groups().filter(|group| group.len() > 1).count() <= 1
    }

    /// Whether a page of it that is not the featured ads is walked in the postings of its
    /// terms (PostgreSQL, [`postings::page`]): one group of terms alone in the titles and
    /// tags (a word, with its other forms), within a radius or not, newest or oldest
    /// first, when many ads match or the walk is expected to be short
    /// ([`WALK_ALONE_EXPECTED_AT_MOST`]). With a second group, see [`Query::walk`].
    fn paged_from_title_postings(&self) -> bool {
        let radius = self.near.and_then(|near| near.within);
        let groups = || self.words.iter().chain(&self.tags);
        let walk_is_short = || {
            self.expected_walk(groups().flatten())
                .is_some_and(|postings| postings <= WALK_ALONE_EXPECTED_AT_MOST)
        };
        (self.many_matches() || walk_is_short())
            && !self.filters_rows()
            && !self.search_description
            && (radius.is_none() || self.areas.is_some())
            && self.words.len() + self.tags.len() == 1
            && matches!(self.order, Order::Newest | Order::Oldest)
    }

    /// So many ads match that walking the ads in order finds a page sooner than sorting
    /// them all (on SQLite within a radius, on PostgreSQL in the postings of the title
    /// terms).
    fn many_matches(&self) -> bool {
        self.matches.is_some_and(|n| n >= MANY_MATCHES)
    }

    /// Whether a page of it may walk its postings though fewer than [`MANY_MATCHES`] ads
    /// match (PostgreSQL), so that [`prepared`] reads its terms' kept totals, from which
    /// the walk's length is expected ([`Query::expected_walk`]): terms alone in the titles
    /// and tags, newest or oldest first, with several groups ([`Query::walk`]) or within a
    /// radius ([`Query::paged_from_title_postings`]).
    fn may_walk_postings(&self) -> bool {
        let radius = self.near.and_then(|near| near.within);
        !self.filters_rows()
            && !self.search_description
            && (radius.is_none() || self.areas.is_some())
            && matches!(self.order, Order::Newest | Order::Oldest)
            && (self.words.len() + self.tags.len() > 1 || radius.is_some())
    }

    /// How many postings of `terms` a walk is expected to read to meet the page, where
    /// the matches lie evenly along them: the page's `offset + limit` ads times their
    /// postings per match. None unless the matches are counted and the terms' totals read.
    fn expected_walk<'a>(&self, terms: impl Iterator<Item = &'a String>) -> Option<i64> {
        let totals = self.term_totals.as_ref()?;
        let matches = self.matches.filter(|n| *n > 0)?;
        let postings: i64 = terms.map(|t| totals.get(t).copied().unwrap_or(0)).sum();
        Some((self.offset + self.limit).saturating_mul(postings) / matches)
    }

    /// The walk of a page in the postings of the rarest of its groups of one term, each ad
    /// looked up in the other groups ([`postings::walked_page`]), when it has several
    /// groups and the walk is expected ([`Query::expected_walk`]) to meet the page within
    /// [`WALK_EXPECTED_AT_MOST`] postings. Where the matches do not lie evenly (they are
    /// old ones), the walk gives up at four times what was expected, and the page is read
    /// as without it.
    fn walk(&self) -> Option<Walk<'_>> {
        if !self.may_walk_postings() || self.words.len() + self.tags.len() < 2 {
            return None;
        }
        let totals = self.term_totals.as_ref()?;
        let (term, postings) = self
            .words
            .iter()
            .chain(&self.tags)
            .filter_map(|group| match group.as_slice() {
                [term] => Some((term, totals.get(term).copied().unwrap_or(0))),
                _ => None,
            })
            .min_by_key(|(_, n)| *n)?;
        let expected = self.expected_walk(std::iter::once(term))?;
        (expected <= WALK_EXPECTED_AT_MOST).then(|| Walk {
            term,
            postings,
            most: (4 * expected).max(WALK_AT_LEAST),
        })
    }

    /// Whether it filters nothing: every online ad matches.
    fn unfiltered(&self) -> bool {
        self.only_terms() && self.words.is_empty() && self.tags.is_empty()
    }
}

/// A walk of a page in the postings of one term ([`Query::walk`]).
#[derive(Clone, Copy, Debug)]
struct Walk<'q> {
    term: &'q str,
    /// How many postings the term has (its kept total).
    postings: i64,
    /// How many of them the walk reads at most.
    most: i64,
}

/// The postings a walk with lookups ([`Query::walk`]) is expected to read at most: each
/// costs a lookup of the ad in each other group (at a million ads, a page of `nette
/// weinig`, 10,000 matches of 84,000 ads under `wein`, 0.5 ms walked where the GIN index
/// read every match's row in 23 ms).
const WALK_EXPECTED_AT_MOST: i64 = 2_000;

/// The postings a walk with lookups may read at the least before it gives up: a few
/// hundred cost less than a millisecond, and spare a page whose matches lie a little
/// unevenly the index's read of them all.
const WALK_AT_LEAST: i64 = 200;

/// The postings a walk of one group alone ([`Query::paged_from_title_postings`]) is
/// expected to read at most, where fewer than [`MANY_MATCHES`] ads match (within a radius):
/// the index holds each ad's area, so a posting outside costs no lookup, and a walk that
/// reads them all costs less than the GIN index's read of every match's row (at a million
/// ads, a page of `speelgoed` within 5 km, of 5,800 ads, 0.3 ms walked against 20 ms).
const WALK_ALONE_EXPECTED_AT_MOST: i64 = 20_000;

/// A page of results, in order, and how many match in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub total: i64,
    pub hits: Vec<Hit>,
}

/// One result: the ad, and its distance in whole metres when the query is `near` a point
/// (none for an ad whose postcode has no location).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub number: i64,
    pub distance: Option<i64>,
}

/// Which of an ad's texts the words must be in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// Every word in the title.
    Title,
    /// Every word in the title or the description.
    Anywhere,
    /// Anywhere, but not every word in the title.
    DescriptionOnly,
}

/// `query` made ready to run: each word's group cut to the forms a search of the titles
/// needs ([`totals::title_forms`]), and on PostgreSQL the areas within its radius found
/// ([`Query::areas`]; SQLite's planner runs the subquery of [`filter`] well). As it is when
/// made ready already. [`run`], [`matching`] and [`facet_counts`] call it; a caller that
/// runs several of them on one query calls it first, to do this once.
pub async fn prepared<'q>(
    conn: &mut dyn Conn,
    query: &'q Query,
) -> Result<Cow<'q, Query>, DbError> {
    if query.prepared {
        return Ok(Cow::Borrowed(query));
    }
    let within = query.near.and_then(|near| near.within.map(|m| (near, m)));
    let areas = match (conn.backend(), within) {
        (Backend::Postgres, Some((near, metres))) => {
            let mut values = Vec::new();
            let point = bind_point(near.point, &mut values);
            let within = areas_within(point, metres, &mut values);
            Some(
                conn.column(&format!("{within} ORDER BY 1"), &values)
                    .await?,
            )
        }
        _ => None,
    };
    let mut prepared = Query {
        areas,
        prepared: true,
        ..query.clone()
    };
    // One read of the kept totals: those the cut of the groups needs, those of a word
    // alone, whose count in the titles they may give ([`totals::one_word_count`]), and on
    // PostgreSQL, where a page may walk the postings, each term's
    // ([`Query::expected_walk`]).
    let walks = conn.backend() == Backend::Postgres && prepared.may_walk_postings();
    let mut keys = totals::title_form_keys(&prepared);
    let one_word = prepared.one_title_word().is_some();
    if let Some(group) = prepared.one_title_word() {
        keys.extend(totals::group_keys(group));
    }
    if walks {
        keys.extend(
            prepared
                .words
                .iter()
                .chain(&prepared.tags)
                .flatten()
                .cloned(),
        );
    }
    let kept = totals::kept_totals(conn, keys).await?;
    prepared.words = totals::title_forms(&prepared, &kept);
    if one_word {
        prepared.title_word_totals = Some(kept.clone());
    }
    if walks {
        prepared.term_totals = Some(kept);
    }
    Ok(Cow::Owned(prepared))
}

async fn count(conn: &mut dyn Conn, query: &Query, tier: Tier, now: i64) -> Result<i64, DbError> {
    let backend = conn.backend();
    if query.unfiltered() {
        // Every online ad: the kept total (migration 0027; on PostgreSQL 0033, a sum of
        // changes) less those past their close date and not yet swept (found by
        // `close_date`'s index).
        return conn
            .query_one(
                "SELECT CAST((SELECT SUM(n) FROM search_docs_total) AS BIGINT) \
                 - (SELECT COUNT(*) FROM search_docs d WHERE d.close_date <= $1) AS n",
                &[Value::Int(now)],
            )
            .await?
            .get("n");
    }
    if let Some((point, metres)) = query.only_radius() {
        // Every online ad within a radius: the kept totals of the areas within (migration
        // 0028; on PostgreSQL 0034, sums of changes), less those past their close date and
        // not yet swept (found by `search_docs_area`, which ends with the close date).
        let mut values = vec![Value::Int(now)];
        let within = match &query.areas {
            Some(areas) => {
                values.push(Value::TextList(areas.clone()));
                format!("= ANY(${}::text[])", values.len())
            }
            None => {
                let point = bind_point(point, &mut values);
                format!("IN ({})", areas_within(point, metres, &mut values))
            }
        };
        return conn
            .query_one(
                &format!(
                    "SELECT CAST((SELECT COALESCE(SUM(c.n), 0) FROM search_area_counts c \
                                  WHERE c.area {within}) AS BIGINT) \
                     - (SELECT COUNT(*) FROM search_docs d \
                        WHERE {AD_AREA_KEY} {within} AND d.close_date <= $1) AS n"
                ),
                &values,
            )
            .await?
            .get("n");
    }
    if let Some(total) = totals::one_word_count(conn, query, tier, now).await? {
        return Ok(total);
    }
    if let (Backend::Sqlite, true, Some((condition, expression))) = (
        backend,
        query.only_terms(),
        Match { query, backend }.condition(tier, 2),
    ) {
        return count_matches(conn, &condition, expression, now).await;
    }
    if let (Backend::Sqlite, Some((point, metres)), Some((condition, expression))) = (
        backend,
        query.only_terms_and_radius(),
        Match { query, backend }.condition(tier, 2),
    ) {
        // Words within a radius, counted one of three ways:
        // - FTS5 alone, each ad's area, district and region terms of its tags (migrations
        //   0031 and 0039, [`RadiusAreas::terms`]): the words' lists and those of the areas
        //   within, read in order. Whenever the areas come to few enough terms: at a million
        //   ads, over R2's 102 searches of words within a radius one at a time, 603 ms in
        //   all this way against 835 ms when a word in fewer titles than a twentieth of the
        //   ads within was counted from its matches (below) and 622 ms below a two-hundredth
        //   (a word in 2,293 titles within 5 km: 4.4 ms against 9.8; a rare word's matches
        //   are few row lookups, but each at a place of its own in a large index);
        // - else, when the words match no more ads than the radius holds, their matches in
        //   item-number order, each one's area looked up in `search_docs_item_area`
        //   (migration 0029);
        // - else [`filter`]'s: every ad within by `search_docs_area`, kept if in the words'
        //   match set, made once.
        let areas = RadiusAreas::find(conn, point, metres).await?;
        let within_radius = areas.ads();
        if within_radius == 0 {
            return Ok(0);
        }
        if let Some(terms) = areas.terms() {
            let expression = format!("({expression}) AND {{tags}}: ({})", terms.join(" OR "));
            return count_matches(conn, &condition, expression, now).await;
        }
        // Which of the other two depends only on whether the words match more ads than
        // the radius holds: their matches are counted up to there.
        let matches: i64 = conn
            .query_one(
                &format!(
                    "SELECT COUNT(*) AS n FROM \
                     (SELECT 1 FROM search_fts WHERE {condition} LIMIT $3)"
                ),
                &[
                    Value::Int(now),
                    Value::Text(expression.clone()),
                    Value::Int(within_radius + 1),
                ],
            )
            .await?
            .get("n")?;
        if matches <= within_radius {
            let mut values = vec![Value::Int(now), Value::Text(expression)];
            let point = bind_point(point, &mut values);
            let within = areas_within(point, metres, &mut values);
            return conn
                .query_one(
                    &format!(
                        "SELECT COUNT(*) AS n FROM search_fts CROSS JOIN search_docs d \
                         INDEXED BY search_docs_item_area ON d.item_number = search_fts.rowid \
                         WHERE {condition} AND (+d.close_date IS NULL OR +d.close_date > $1) \
                         AND +{AD_AREA_KEY} IN ({within})"
                    ),
                    &values,
                )
                .await?
                .get("n");
        }
    }
    if backend == Backend::Postgres && query.counted_from_title_postings(tier) {
        return postings::count(conn, query, now).await;
    }
    let filter = filter(query, backend, tier, Part::All, now, false);
    conn.query_one(
        &format!("SELECT COUNT(*) AS n{}", filter.from_where),
        &filter.values,
    )
    .await?
    .get("n")
}

/// How many ads match an FTS5 expression (`condition` binds it as `$2`) at `now`: FTS5
/// counts its matches without reading a row, less the few that are past their close date
/// and not yet swept ([`unswept_matching`]). Joining every match's row for its close date
/// cost 70 ms for a word in 60,000 of 300,000 ads.
async fn count_matches(
    conn: &mut dyn Conn,
    condition: &str,
    expression: String,
    now: i64,
) -> Result<i64, DbError> {
    let unswept = unswept_matching(Backend::Sqlite, condition);
    conn.query_one(
        &format!("SELECT (SELECT COUNT(*) FROM search_fts WHERE {condition}) - ({unswept}) AS n"),
        &[Value::Int(now), Value::Text(expression)],
    )
    .await?
    .get("n")
}

/// The statement that counts the ads past their close date (`$1`) and not yet swept that
/// match `condition` (of [`Match::condition`], its expression bound as `$2`): found by
/// `close_date`'s index, each held against the expression. A count from the index or from
/// kept totals takes them off, as the rows they count still hold these ads.
fn unswept_matching(backend: Backend, condition: &str) -> String {
    match backend {
        Backend::Sqlite => format!(
            "SELECT COUNT(*) FROM search_docs d WHERE d.close_date <= $1 \
             AND EXISTS (SELECT 1 FROM search_fts WHERE {condition} \
                         AND search_fts.rowid = d.item_number)"
        ),
        Backend::Postgres => {
            format!("SELECT COUNT(*) FROM search_docs d WHERE d.close_date <= $1 AND {condition}")
        }
    }
}

/// A hit of a page's row: its `item_number`, and its distance from `squared_metres` when
/// the page is `measured` from a point.
fn hit_of(row: &super::Row, measured: bool) -> Result<Hit, DbError> {
    let squared: Option<f64> = if measured {
        row.get("squared_metres")?
    } else {
        None
    };
    Ok(Hit {
        number: row.get("item_number")?,
        // Rounded: an ad within the radius never shows more than the radius.
        distance: squared.map(|s| s.sqrt().round() as i64),
    })
}

/// SQLite: the statements that hand FTS5 the index changes queued by the triggers of
/// `search_docs` (migration 0047). The writer runs them before each commit; a write job
/// that searches runs them before it reads, or it would not find the ads that it or an
/// earlier job of its batch changed.
pub(super) const WRITE_PENDING_INDEX: [&str; 2] = [
    "INSERT INTO search_fts (search_fts, rowid, title_words, body_words, tags) \
     SELECT command, item_number, title_words, body_words, tags FROM search_fts_pending \
     ORDER BY seq",
    "DELETE FROM search_fts_pending",
];

/// Which of the ads `query.among` match `query` at `now` (its words in the title, or
/// anywhere with `search_description`), in item-number order; order and page are ignored.
/// Runs in a write job (saved-search alerts), where it sees the job's own changes.
pub async fn matching(conn: &mut dyn Conn, query: &Query, now: i64) -> Result<Vec<i64>, DbError> {
    if query.among.as_ref().is_some_and(Vec::is_empty) {
        return Ok(Vec::new());
    }
    if conn.backend() == Backend::Sqlite {
        for sql in WRITE_PENDING_INDEX {
            conn.execute(sql, &[]).await?;
        }
    }
    let query = &prepared(conn, query).await?;
    let tier = if query.search_description {
        Tier::Anywhere
    } else {
        Tier::Title
    };
    let filter = filter(query, conn.backend(), tier, Part::All, now, false);
    conn.column(
        &format!(
            "SELECT d.item_number{} ORDER BY d.item_number",
            filter.from_where
        ),
        &filter.values,
    )
    .await
}

/// Where at least this many ads match, a page newest or oldest first walks the ads in
/// order ([`Query::many_matches`]): a page of 30 is met within about 30 x ads walked /
/// matches rows of the walk.
const MANY_MATCHES: i64 = 1_000;

fn with_matches(query: &Query, total: i64) -> Query {
    Query {
        matches: Some(total),
        ..query.clone()
    }
}

/// The page of `query` at `now` (ads past their close date are left out even before the
/// expiry sweep), and the exact count.
pub async fn run(conn: &mut dyn Conn, query: &Query, now: i64) -> Result<Page, DbError> {
    let query = &prepared(conn, query).await?;
    if !query.in_tiers() {
        // One tier: the title only, or (sorted by price) title and description alike.
        let tier = if query.search_description {
            Tier::Anywhere
        } else {
            Tier::Title
        };
        let total = count(conn, query, tier, now).await?;
        let query = &with_matches(query, total);
        let hits = if query.offset < total {
            page_of(conn, query, tier, now, query.offset, query.limit).await?
        } else {
            Vec::new()
        };
        return Ok(Page { total, hits });
    }
    // Title matches first, then the description-only ones: the page takes tier 0 from
    // `offset` while it lasts, then tier 1 from where the page has reached.
    let in_title = count(conn, query, Tier::Title, now).await?;
    let total = count(conn, query, Tier::Anywhere, now).await?;
    let query = &with_matches(query, total);
    let mut page = Vec::new();
    if query.offset < in_title {
        page = page_of(conn, query, Tier::Title, now, query.offset, query.limit).await?;
    }
    let missing = query.limit - page.len() as i64;
    if missing > 0 && query.offset + (page.len() as i64) < total {
        let from = (query.offset - in_title).max(0);
        page.extend(page_of(conn, query, Tier::DescriptionOnly, now, from, missing).await?);
    }
    Ok(Page { total, hits: page })
}
