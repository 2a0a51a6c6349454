//! Full-text search over `search_docs`, the online ads (docs/design/search.md section 5).
//!
//! Both backends index the same words and tags (made in Rust, `domain::search`), and order
//! by integers only (tier, price, item number), so that they answer the same ads in the
//! same order. The match expression is the one text that differs: an FTS5 `MATCH` on
//! SQLite, a `tsquery` on PostgreSQL; [`Match`] writes both.

use std::borrow::Cow;

use crate::domain::places::Point;
pub use crate::domain::search::request::NumberRange;
use crate::domain::search::text::is_index_word;

use super::{Backend, Conn, DbError, Value};

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

/// Metres per degree of latitude (and of longitude at the equator) on a sphere of the
/// earth's mean radius, 6,371,000 m x pi / 180.
const METRES_PER_DEGREE: f64 = 111_195.0;

/// The row of `locations` an ad is measured from: its postcode's area (a Dutch postcode's
/// four digits, a Belgian postcode itself; six characters are Dutch, as for `cityName`).
/// Areas are all the shipped data has a point for, so every ad of a known area has one.
const AD_AREA_JOIN: &str = " LEFT JOIN locations l \
    ON l.country = CASE WHEN length(d.postcode) = 6 THEN 'NL' ELSE 'BE' END \
    AND l.postcode = substr(d.postcode, 1, 4)";

/// An ad's area as one value, `NL1097` or `BE9000` (its postcode's country and area, as
/// [`AD_AREA_JOIN`] reads them), indexed by `search_docs_area`: the same expression as the
/// index's, which the planners match by its text.
const AD_AREA_KEY: &str = "(CASE WHEN length(d.postcode) = 6 THEN 'NL' || substr(d.postcode, 1, 4) \
    ELSE 'BE' || d.postcode END)";

/// The same key of a row `a` of `locations` that is an area (a four-character postcode).
const LOCATION_AREA_KEY: &str =
    "CASE WHEN a.country = 'NL' THEN 'NL' || a.postcode ELSE 'BE' || a.postcode END";

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
    /// Set by [`run`] from the count, not by callers: so many ads are within the radius
    /// that walking the ads newest first finds a page sooner than sorting them all.
    pub many_within: bool,
    /// Set by this module on PostgreSQL, not by callers: the keys of the areas within the
    /// radius, found before the search ([`with_areas`]).
    pub areas: Option<Vec<String>>,
    pub order: Order,
    pub offset: i64,
    pub limit: i64,
}

impl Query {
    /// Whether its words and tags are the whole of its filter: then the full-text index
    /// alone knows which ads match (less those past their close date, not yet swept).
    fn only_terms(&self) -> bool {
        self.category.is_none()
            && self.price_from.is_none()
            && self.price_to.is_none()
            && !self.with_images
            && self.near.is_none()
            && self.number_ranges.is_empty()
            && self.among.is_none()
    }
}

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

/// The full-text part of a query in one backend's language.
struct Match<'q> {
    query: &'q Query,
    backend: Backend,
}

impl Match<'_> {
    /// `(fiets AND (rood OR roug))` / `(fiets & (rood | roug))`.
    fn groups(&self, groups: &[Vec<String>]) -> String {
        let (and, or) = match self.backend {
            Backend::Sqlite => (" AND ", " OR "),
            Backend::Postgres => (" & ", " | "),
        };
        let parts: Vec<String> = groups
            .iter()
            .map(|group| {
                for term in group {
                    // Words are [a-z0-9]+ and tags [a-z0-9_]+: nothing to quote or escape.
                    assert!(
                        is_index_word(&term.replace('_', "")),
                        "not an index term: {term:?}"
                    );
                }
                format!("({})", group.join(or))
            })
            .collect();
        format!("({})", parts.join(and))
    }

    /// The expression for a tier: FTS5 text or a tsquery (with which vector it is held
    /// against, decided in [`Match::condition`]). None when there is nothing to match.
    fn expression(&self, tier: Tier) -> Option<String> {
        let q = self.query;
        if q.words.is_empty() && q.tags.is_empty() {
            return None;
        }
        let words = (!q.words.is_empty()).then(|| self.groups(&q.words));
        let tags = (!q.tags.is_empty()).then(|| self.groups(&q.tags));
        Some(match self.backend {
            Backend::Sqlite => {
                let columns = match tier {
                    Tier::Title => "{title_words}",
                    Tier::Anywhere | Tier::DescriptionOnly => "{title_words body_words}",
                };
                let parts: Vec<String> = [
                    words.map(|w| format!("{columns}: {w}")),
                    tags.map(|t| format!("{{tags}}: {t}")),
                ]
                .into_iter()
                .flatten()
                .collect();
                let all = parts.join(" AND ");
                if tier == Tier::DescriptionOnly {
                    let title = self.expression(Tier::Title)?;
                    format!("({all}) NOT ({title})")
                } else {
                    all
                }
            }
            Backend::Postgres => [words, tags]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" & "),
        })
    }

    /// The tier's condition held against the row's own words (`d.title_words`,
    /// `d.body_words`, `d.tags`: terms separated by spaces, as FTS5 splits them), each term
    /// bound: for a few known ads (the featured part), far cheaper on SQLite than asking
    /// FTS5 about each, which walks the doclists of the expression's every term again.
    /// None when there is nothing to match.
    fn row_condition(&self, tier: Tier, values: &mut Vec<Value>) -> Option<String> {
        let q = self.query;
        if q.words.is_empty() && q.tags.is_empty() {
            return None;
        }
        let title = self.row_groups(&q.words, &["d.title_words"], values);
        let tags = self.row_groups(&q.tags, &["d.tags"], values);
        let in_title = [title, tags.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
        Some(match tier {
            Tier::Title => in_title.join(" AND "),
            Tier::Anywhere | Tier::DescriptionOnly => {
                let anywhere =
                    self.row_groups(&q.words, &["d.title_words", "d.body_words"], values);
                let all = [anywhere, tags].into_iter().flatten().collect::<Vec<_>>();
                if tier == Tier::Anywhere {
                    all.join(" AND ")
                } else {
                    format!(
                        "({}) AND NOT ({})",
                        all.join(" AND "),
                        in_title.join(" AND ")
                    )
                }
            }
        })
    }

    /// Each group: one of its terms in one of `columns`; None without groups.
    fn row_groups(
        &self,
        groups: &[Vec<String>],
        columns: &[&str],
        values: &mut Vec<Value>,
    ) -> Option<String> {
        if groups.is_empty() {
            return None;
        }
        let mut parts = Vec::with_capacity(groups.len());
        for group in groups {
            let mut found = Vec::new();
            for term in group {
                values.push(Value::Text(format!(" {term} ")));
                let n = values.len();
                for column in columns {
                    found.push(format!("instr(' ' || {column} || ' ', ${n}) > 0"));
                }
            }
            parts.push(format!("({})", found.join(" OR ")));
        }
        Some(format!("({})", parts.join(" AND ")))
    }

    /// The SQL condition on `d` (and `f` on SQLite) for a tier, binding the expression
    /// as parameter `$n`; None when there is nothing to match.
    fn condition(&self, tier: Tier, n: usize) -> Option<(String, String)> {
        let expression = self.expression(tier)?;
        let sql = match self.backend {
            Backend::Sqlite => format!("search_fts MATCH ${n}"),
            Backend::Postgres => match tier {
                _ if self.query.words.is_empty() => format!("d.title_terms @@ ${n}::text::tsquery"),
                Tier::Title => format!("d.title_terms @@ ${n}::text::tsquery"),
                Tier::Anywhere => format!("d.all_terms @@ ${n}::text::tsquery"),
                Tier::DescriptionOnly => {
                    format!(
                        "d.all_terms @@ ${n}::text::tsquery AND NOT d.title_terms @@ ${n}::text::tsquery"
                    )
                }
            },
        };
        Some((sql, expression))
    }
}

/// Which of the matching ads a statement reads: in the newest-first order, the featured
/// ones (top of the day, or bumped, at `$1`) are placed among the others in Rust.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    All,
    /// The featured ads, found by the feature columns' partial indexes and each held
    /// against the terms (on SQLite): when they are fewer than the matches.
    Featured,
    /// The featured ads, found among the matches: when the matches are the fewer.
    FeaturedAmongMatches,
    Plain,
}

/// An ad whose top-of-the-day or bump runs at `$1`, in each backend's words. PostgreSQL: each
/// comparison implies its column is not NULL, so each side of the OR can use its partial
/// index (a `COALESCE` could not). SQLite would look each side up in its index and then read
/// every featured ad's row; its words are those of `search_docs_featured` (migration 0026),
/// the first term its partial condition, the second the expression it is ordered by, so
/// that the featured ads are one range of it, each with what a search holds against it.
fn featured(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "(d.top_until IS NOT NULL OR d.bumped_until IS NOT NULL) \
             AND max(coalesce(d.top_until, 0), coalesce(d.bumped_until, 0)) > $1"
        }
        Backend::Postgres => "(d.top_until > $1 OR d.bumped_until > $1)",
    }
}

/// Every other ad: neither runs at `$1` (NULL meaning never bought).
const PLAIN: &str = "(COALESCE(d.top_until, 0) <= $1 AND COALESCE(d.bumped_until, 0) <= $1)";

/// One tier's `FROM ... WHERE ...`, its parameters, and (near a point, when `measure` or
/// with a radius) the expression of the squared distance in metres. A count does not
/// measure: PostgreSQL refuses parameters that the statement does not use.
struct Filter {
    from_where: String,
    values: Vec<Value>,
    squared_metres: Option<String>,
    /// The ads are read from FTS5's match (SQLite), which gives them by item number
    /// itself: an order by `search_fts.rowid` then needs no sort of every match.
    fts_outer: bool,
}

fn filter(
    query: &Query,
    backend: Backend,
    tier: Tier,
    part: Part,
    now: i64,
    measure: bool,
) -> Filter {
    let mut values = vec![Value::Int(now)];
    // Almost every ad in search is open, so the close date never narrows a search: the
    // unary `+` keeps SQLite's planner from its index (every open ad is in it), which it
    // took over the featured part's partial indexes and the radius's area index.
    let open = "(+d.close_date IS NULL OR +d.close_date > $1)";
    let mut conditions = vec![open.to_owned()];
    match part {
        Part::All => {}
        Part::Featured | Part::FeaturedAmongMatches => {
            conditions.push(featured(backend).to_owned())
        }
        Part::Plain => conditions.push(PLAIN.to_owned()),
    }
    let matcher = Match { query, backend };
    let mut fts_outer = false;
    let mut from = match matcher.condition(tier, 2) {
        // The few featured ads are found by their partial indexes, then each held against
        // its own words (`Match::row_condition`).
        Some(_) if part == Part::Featured && backend == Backend::Sqlite => {
            let held = matcher
                .row_condition(tier, &mut values)
                .expect("a condition means terms to hold");
            conditions.push(held);
            "search_docs d"
        }
        // A batch of listed ads (alerts), or a count within a radius: the ads are found by
        // their own index (the primary key; the area index, which holds the close date
        // too) and kept if in the match set, made once; the unary `+` keeps SQLite from
        // looking up every match by its key instead (twice as slow for a common word).
        Some((condition, expression))
            if backend == Backend::Sqlite
                && (query.among.is_some()
                    || (!measure && query.near.is_some_and(|near| near.within.is_some()))) =>
        {
            values.push(Value::Text(expression));
            conditions.push(format!(
                "+d.item_number IN (SELECT rowid FROM search_fts WHERE {condition})"
            ));
            "search_docs d"
        }
        Some((condition, expression)) => {
            values.push(Value::Text(expression));
            conditions.push(condition);
            match backend {
                // CROSS JOIN keeps the FTS5 table outer: it walks its doclist in rowid order.
                Backend::Sqlite => {
                    fts_outer = true;
                    "search_fts CROSS JOIN search_docs d ON d.item_number = search_fts.rowid"
                }
                Backend::Postgres => "search_docs d",
            }
        }
        None => "search_docs d",
    }
    .to_owned();
    if let Some(among) = &query.among {
        let first = values.len() + 1;
        values.extend(among.iter().map(|n| Value::Int(*n)));
        conditions.push(format!(
            "d.item_number IN ({})",
            super::numbered(first, among.len())
        ));
    }
    if let Some(category) = query.category {
        values.push(Value::Int(category));
        conditions.push(format!("d.category_id = ${}", values.len()));
    }
    if let Some(from) = query.price_from {
        values.push(Value::Int(from));
        conditions.push(format!("d.price_cents >= ${}", values.len()));
    }
    if let Some(to) = query.price_to {
        values.push(Value::Int(to));
        conditions.push(format!("d.price_cents <= ${}", values.len()));
    }
    if query.with_images {
        conditions
            .push("EXISTS (SELECT 1 FROM images i WHERE i.item_number = d.item_number)".to_owned());
    }
    for range in &query.number_ranges {
        let number = number_of(range, backend, &mut values);
        for (bound, operator) in [(range.from, ">="), (range.to, "<=")] {
            if let Some(bound) = bound {
                values.push(Value::Real(bound));
                conditions.push(format!("{number} {operator} ${}", values.len()));
            }
        }
    }
    // A count does not measure (PostgreSQL refuses parameters a statement does not use).
    let near = query.near.filter(|near| measure || near.within.is_some());
    let squared_metres = near.and_then(|near| {
        let areas = query
            .areas
            .as_ref()
            .filter(|_| backend == Backend::Postgres);
        if let Some(areas) = areas {
            // The areas found beforehand, as a list: PostgreSQL's planner misjudges how many
            // areas the subquery below finds (9 where 1,144 were), and then looked the
            // words up in their index once per area (105 s for a common word within 50 km).
            // Bound as an array (not a text cast to one), the plan made for the values holds
            // it as a constant, which PostgreSQL looks up in a hash table; a cast array is
            // searched element by element for each ad (10 s for 1,144 areas).
            values.push(Value::TextList(areas.clone()));
            conditions.push(format!("{AD_AREA_KEY} = ANY(${}::text[])", values.len()));
            if !measure {
                return None;
            }
        }
        let point = bind_point(near.point, &mut values);
        let squared = |l: &str| squared_distance(l, point);
        if let (None, Some(metres)) = (areas, near.within) {
            // The areas within the radius (a few thousand rows of `locations` measured),
            // then their ads by `search_docs_area`: no ad is measured to filter. With many
            // ads within, in an order by item number, the unary `+` keeps SQLite from that
            // index, so that it walks the ads in order and stops at the page's end instead
            // of sorting every ad within (PostgreSQL's planner weighs it by its statistics).
            let walk = query.many_within
                && matches!(query.order, Order::Newest | Order::Oldest)
                && backend == Backend::Sqlite;
            values.push(Value::Real((metres as f64) * (metres as f64)));
            conditions.push(format!(
                "{}{AD_AREA_KEY} IN (SELECT {LOCATION_AREA_KEY} FROM locations a \
                 WHERE length(a.postcode) = 4 AND {} <= ${})",
                if walk { "+" } else { "" },
                squared("a"),
                values.len()
            ));
        }
        measure.then(|| {
            from.push_str(AD_AREA_JOIN);
            squared("l")
        })
    });
    Filter {
        from_where: format!(" FROM {from} WHERE {}", conditions.join(" AND ")),
        values,
        squared_metres,
        fts_outer,
    }
}

/// Binds a point's latitude and longitude and the metres per degree of each there; returns
/// their parameter numbers for [`squared_distance`].
fn bind_point(point: Point, values: &mut Vec<Value>) -> [usize; 4] {
    values.push(Value::Real(point.latitude));
    values.push(Value::Real(point.longitude));
    values.push(Value::Real(METRES_PER_DEGREE));
    values.push(Value::Real(
        METRES_PER_DEGREE * point.latitude.to_radians().cos(),
    ));
    let n = values.len();
    [n - 3, n - 2, n - 1, n]
}

/// The squared distance in metres from the point bound as `[lat, lon, ky, kx]` to the
/// row `l` of `locations` ([`Near`] says how it is computed).
fn squared_distance(l: &str, [lat, lon, ky, kx]: [usize; 4]) -> String {
    format!(
        "(({l}.latitude - ${lat}) * ${ky}) * (({l}.latitude - ${lat}) * ${ky}) \
         + (({l}.longitude - ${lon}) * ${kx}) * (({l}.longitude - ${lon}) * ${kx})"
    )
}

/// On PostgreSQL, `query` with the areas within its radius found ([`Query::areas`]); as it
/// is on SQLite, whose planner runs the subquery of [`filter`] well, without a radius, and
/// when they were found already. [`run`], [`matching`] and [`facet_counts`] call it; a
/// caller that runs several of them on one query calls it first, to find the areas once.
pub async fn with_areas<'q>(
    conn: &mut dyn Conn,
    query: &'q Query,
) -> Result<Cow<'q, Query>, DbError> {
    let within = query.near.and_then(|near| near.within.map(|m| (near, m)));
    let (Backend::Postgres, Some((near, metres)), None) = (conn.backend(), within, &query.areas)
    else {
        return Ok(Cow::Borrowed(query));
    };
    let mut values = Vec::new();
    let point = bind_point(near.point, &mut values);
    values.push(Value::Real((metres as f64) * (metres as f64)));
    let areas = conn
        .column(
            &format!(
                "SELECT {LOCATION_AREA_KEY} AS area FROM locations a \
                 WHERE length(a.postcode) = 4 AND {} <= ${} ORDER BY 1",
                squared_distance("a", point),
                values.len()
            ),
            &values,
        )
        .await?;
    Ok(Cow::Owned(Query {
        areas: Some(areas),
        ..query.clone()
    }))
}

/// The SQL value of a numeric attribute of the ad `d` (NULL where the ad has no number
/// under the key), binding the key. The key is bound, never written into the SQL.
fn number_of(range: &NumberRange, backend: Backend, values: &mut Vec<Value>) -> String {
    match backend {
        Backend::Sqlite => {
            // A JSON path with the key quoted: `$."mileage"`; keys are the taxonomy's
            // (letters and digits), checked by the use case.
            values.push(Value::Text(format!("$.\"{}\"", range.key)));
            let path = values.len();
            format!(
                "(CASE WHEN json_type(d.attributes, ${path}) IN ('integer', 'real') \
                 THEN json_extract(d.attributes, ${path}) END)"
            )
        }
        Backend::Postgres => {
            values.push(Value::Text(range.key.clone()));
            let key = values.len();
            format!(
                "(CASE WHEN jsonb_typeof(d.attributes::jsonb -> ${key}::text) = 'number' \
                 THEN (d.attributes::jsonb ->> ${key}::text)::float8 END)"
            )
        }
    }
}

fn order_by(order: Order, squared_metres: Option<&str>, fts_outer: bool) -> String {
    let distance = squared_metres.unwrap_or("NULL");
    // The same order: the join is on `d.item_number = search_fts.rowid`.
    let number = if fts_outer {
        "search_fts.rowid"
    } else {
        "d.item_number"
    };
    match order {
        Order::Newest => format!("{number} DESC"),
        Order::Oldest => format!("{number} ASC"),
        Order::PriceAscending => {
            "(d.price_cents IS NULL), d.price_cents ASC, d.item_number DESC".to_owned()
        }
        Order::PriceDescending => {
            "(d.price_cents IS NULL), d.price_cents DESC, d.item_number DESC".to_owned()
        }
        Order::NearestFirst => {
            format!("(l.latitude IS NULL), {distance} ASC, d.item_number DESC")
        }
        Order::FarthestFirst => {
            format!("(l.latitude IS NULL), {distance} DESC, d.item_number DESC")
        }
    }
}

async fn count(conn: &mut dyn Conn, query: &Query, tier: Tier, now: i64) -> Result<i64, DbError> {
    let backend = conn.backend();
    if let (Backend::Sqlite, true, Some((condition, expression))) = (
        backend,
        query.only_terms(),
        Match { query, backend }.condition(tier, 2),
    ) {
        // Words and tags only: FTS5 counts its matches without reading a row, less the
        // few that are past their close date and not yet swept (found by `close_date`'s
        // index, each held against the words). Joining every match's row for its close
        // date cost 70 ms for a word in 60,000 of 300,000 ads.
        return conn
            .query_one(
                &format!(
                    "SELECT (SELECT COUNT(*) FROM search_fts WHERE {condition}) \
                     - (SELECT COUNT(*) FROM search_docs d WHERE d.close_date <= $1 \
                        AND EXISTS (SELECT 1 FROM search_fts WHERE {condition} \
                                    AND search_fts.rowid = d.item_number)) AS n"
                ),
                &[Value::Int(now), Value::Text(expression)],
            )
            .await?
            .get("n");
    }
    let filter = filter(query, backend, tier, Part::All, now, false);
    conn.query_one(
        &format!("SELECT COUNT(*) AS n{}", filter.from_where),
        &filter.values,
    )
    .await?
    .get("n")
}

async fn hits(
    conn: &mut dyn Conn,
    query: &Query,
    tier: Tier,
    part: Part,
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<Hit>, DbError> {
    Ok(ranked_hits(conn, query, tier, part, now, offset, limit)
        .await?
        .into_iter()
        .map(|(hit, _)| hit)
        .collect())
}

/// Where an ad sorts newest first: top of the day first, then by date, a bumped ad's date
/// being its bump (its rank: the last item number then, and after that ad).
type Rank = (bool, i64, bool, i64);

/// A page of hits, each with its [`Rank`] (read only for the featured part).
async fn ranked_hits(
    conn: &mut dyn Conn,
    query: &Query,
    tier: Tier,
    part: Part,
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<(Hit, Rank)>, DbError> {
    let Filter {
        from_where,
        mut values,
        squared_metres,
        fts_outer,
    } = filter(query, conn.backend(), tier, part, now, true);
    values.push(Value::Int(limit));
    values.push(Value::Int(offset));
    let distance_column = squared_metres
        .as_deref()
        .map(|squared| format!(", {squared} AS squared_metres"))
        .unwrap_or_default();
    let featured = matches!(part, Part::Featured | Part::FeaturedAmongMatches);
    let (rank_columns, order) = if featured {
        (
            ", d.top_until, d.bumped_until, d.bump_rank",
            "(COALESCE(d.top_until, 0) > $1) DESC, \
             CASE WHEN COALESCE(d.bumped_until, 0) > $1 THEN d.bump_rank ELSE d.item_number END DESC, \
             (COALESCE(d.bumped_until, 0) > $1) DESC, d.item_number DESC"
                .to_owned(),
        )
    } else {
        (
            "",
            order_by(query.order, squared_metres.as_deref(), fts_outer),
        )
    };
    let sql = format!(
        "SELECT d.item_number{distance_column}{rank_columns}{from_where} \
         ORDER BY {order} LIMIT ${} OFFSET ${}",
        values.len() - 1,
        values.len()
    );
    conn.query(&sql, &values)
        .await?
        .iter()
        .map(|row| {
            let squared: Option<f64> = match squared_metres {
                Some(_) => row.get("squared_metres")?,
                None => None,
            };
            let number: i64 = row.get("item_number")?;
            let rank = if featured {
                let top: Option<i64> = row.get("top_until")?;
                let bumped: Option<i64> = row.get("bumped_until")?;
                let bump_rank: Option<i64> = row.get("bump_rank")?;
                let bumped = bumped.is_some_and(|until| until > now);
                (
                    top.is_some_and(|until| until > now),
                    bump_rank.filter(|_| bumped).unwrap_or(number),
                    bumped,
                    number,
                )
            } else {
                (false, number, false, number)
            };
            let hit = Hit {
                number,
                // Rounded: an ad within the radius never shows more than the radius.
                distance: squared.map(|s| s.sqrt().round() as i64),
            };
            Ok((hit, rank))
        })
        .collect()
}

/// A page of one tier in the query's order, `matches` being how many ads the tier holds.
/// Newest first, the featured ads of the tier (few: each is found by its index, or among
/// the matches when these are fewer) are merged into the others, which keep their fast
/// order by item number; the merge reads the first `offset + limit` of each.
async fn page_of(
    conn: &mut dyn Conn,
    query: &Query,
    tier: Tier,
    matches: i64,
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<Hit>, DbError> {
    if query.order != Order::Newest {
        return hits(conn, query, tier, Part::All, now, offset, limit).await;
    }
    let reach = offset + limit;
    let featured_part = featured_part(conn, query, matches, now).await?;
    let featured = ranked_hits(conn, query, tier, featured_part, now, 0, reach).await?;
    if featured.is_empty() {
        return hits(conn, query, tier, Part::All, now, offset, limit).await;
    }
    let plain = ranked_hits(conn, query, tier, Part::Plain, now, 0, reach).await?;
    let mut merged = Vec::with_capacity(featured.len() + plain.len());
    let (mut featured, mut plain) = (
        featured.into_iter().peekable(),
        plain.into_iter().peekable(),
    );
    loop {
        let next = match (featured.peek(), plain.peek()) {
            (Some(f), Some(p)) if f.1 >= p.1 => featured.next(),
            (_, Some(_)) => plain.next(),
            (Some(_), None) => featured.next(),
            (None, None) => None,
        };
        match next {
            Some((hit, _)) => merged.push(hit),
            None => break,
        }
    }
    Ok(merged
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .collect())
}

/// How to find the featured ads of a tier with `matches` ads. SQLite holds each featured ad
/// against the terms ([`Part::Featured`]): a few thousand rows read at a million ads, 10 to
/// 20 ms. When the terms are the whole filter, the tier's count is the size of its match
/// set, and a set smaller than the featured ads is cheaper to read through. PostgreSQL's
/// planner makes this choice itself.
async fn featured_part(
    conn: &mut dyn Conn,
    query: &Query,
    matches: i64,
    now: i64,
) -> Result<Part, DbError> {
    let has_terms = !query.words.is_empty() || !query.tags.is_empty();
    if conn.backend() != Backend::Sqlite || !has_terms || !query.only_terms() {
        return Ok(Part::Featured);
    }
    // From `search_docs_featured` alone.
    let featured_ads: i64 = conn
        .query_one(
            &format!(
                "SELECT COUNT(*) AS n FROM search_docs d WHERE {}",
                featured(Backend::Sqlite)
            ),
            &[Value::Int(now)],
        )
        .await?
        .get("n")?;
    Ok(if matches < featured_ads {
        Part::FeaturedAmongMatches
    } else {
        Part::Featured
    })
}

/// Which of the ads `query.among` match `query` at `now` (its words in the title, or
/// anywhere with `search_description`), in item-number order; order and page are ignored.
pub async fn matching(conn: &mut dyn Conn, query: &Query, now: i64) -> Result<Vec<i64>, DbError> {
    if query.among.as_ref().is_some_and(Vec::is_empty) {
        return Ok(Vec::new());
    }
    let query = &with_areas(conn, query).await?;
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
    let query = &with_areas(conn, query).await?;
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
fn grouped<K: super::FromValue>(
    rows: Vec<super::Row>,
    column: &str,
) -> Result<Vec<(K, i64)>, DbError> {
    rows.into_iter()
        .map(|row| Ok((row.get(column)?, row.get("n")?)))
        .collect()
}

/// Descending count, then ascending key.
fn by_count<K: Ord>(mut counts: Vec<(K, i64)>) -> Vec<(K, i64)> {
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

/// The SQL value of a text attribute of the ad `d` (NULL where it has none), binding the
/// key, as [`number_of`] does for numbers.
fn text_of(key: &str, backend: Backend, values: &mut Vec<Value>) -> String {
    match backend {
        Backend::Sqlite => {
            values.push(Value::Text(format!("$.\"{key}\"")));
            let path = values.len();
            format!(
                "(CASE WHEN json_type(d.attributes, ${path}) = 'text' \
                 THEN json_extract(d.attributes, ${path}) END)"
            )
        }
        Backend::Postgres => {
            values.push(Value::Text(key.to_owned()));
            let key = values.len();
            format!(
                "(CASE WHEN jsonb_typeof(d.attributes::jsonb -> ${key}::text) = 'string' \
                 THEN d.attributes::jsonb ->> ${key}::text END)"
            )
        }
    }
}

/// Within a radius holding at least this many ads, a page newest first walks the ads in
/// order (see [`Query::many_within`]): a page of 30 is met within about 30 x ads / within
/// rows of the walk.
const MANY_WITHIN: i64 = 1_000;

fn with_many_within(query: &Query, total: i64) -> Query {
    Query {
        many_within: total >= MANY_WITHIN && query.near.is_some_and(|n| n.within.is_some()),
        ..query.clone()
    }
}

/// The page of `query` at `now` (ads past their close date are left out even before the
/// expiry sweep), and the exact count.
pub async fn run(conn: &mut dyn Conn, query: &Query, now: i64) -> Result<Page, DbError> {
    let query = &with_areas(conn, query).await?;
    let tiers = !query.words.is_empty()
        && query.search_description
        && matches!(query.order, Order::Newest | Order::Oldest);
    if !tiers {
        // One tier: the title only, or (sorted by price) title and description alike.
        let tier = if query.search_description {
            Tier::Anywhere
        } else {
            Tier::Title
        };
        let total = count(conn, query, tier, now).await?;
        let query = &with_many_within(query, total);
        let hits = if query.offset < total {
            page_of(conn, query, tier, total, now, query.offset, query.limit).await?
        } else {
            Vec::new()
        };
        return Ok(Page { total, hits });
    }
    // Title matches first, then the description-only ones: the page takes tier 0 from
    // `offset` while it lasts, then tier 1 from where the page has reached.
    let in_title = count(conn, query, Tier::Title, now).await?;
    let total = count(conn, query, Tier::Anywhere, now).await?;
    let query = &with_many_within(query, total);
    let mut page = Vec::new();
    if query.offset < in_title {
        page = page_of(
            conn,
            query,
            Tier::Title,
            in_title,
            now,
            query.offset,
            query.limit,
        )
        .await?;
    }
    let missing = query.limit - page.len() as i64;
    if missing > 0 && query.offset + (page.len() as i64) < total {
        let from = (query.offset - in_title).max(0);
        let description_only = total - in_title;
        page.extend(
            page_of(
                conn,
                query,
                Tier::DescriptionOnly,
                description_only,
                now,
                from,
                missing,
            )
            .await?,
        );
    }
    Ok(Page { total, hits: page })
}
