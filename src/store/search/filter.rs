//! One tier's `FROM ... WHERE ...` in each backend's words: the terms, the row filters, the
//! radius, the featured part, and the order.

use super::{Match, NumberRange, Order, Query, Tier};
use crate::domain::places::Point;
use crate::store::{Backend, Value};

/// Metres per degree of latitude (and of longitude at the equator) on a sphere of the
/// earth's mean radius, 6,371,000 m x pi / 180.
pub(super) const METRES_PER_DEGREE: f64 = 111_195.0;

/// The row of `locations` an ad is measured from: its postcode's area (a Dutch postcode's
/// four digits, a Belgian postcode itself; six characters are Dutch, as for `cityName`).
/// Areas are all the shipped data has a point for, so every ad of a known area has one.
pub(super) const AD_AREA_JOIN: &str = " LEFT JOIN locations l \
    ON l.country = CASE WHEN length(d.postcode) = 6 THEN 'NL' ELSE 'BE' END \
    AND l.postcode = substr(d.postcode, 1, 4)";

/// An ad's area as one value, `NL1097` or `BE9000` (its postcode's country and area, as
/// [`AD_AREA_JOIN`] reads them), indexed by `search_docs_area`: the same expression as the
/// index's, which the planners match by its text.
pub(super) const AD_AREA_KEY: &str = "(CASE WHEN length(d.postcode) = 6 THEN 'NL' || substr(d.postcode, 1, 4) \
    ELSE 'BE' || d.postcode END)";

/// The same key of a row `a` of `locations` that is an area (a four-character postcode).
pub(super) const LOCATION_AREA_KEY: &str =
    "CASE WHEN a.country = 'NL' THEN 'NL' || a.postcode ELSE 'BE' || a.postcode END";

/// Which of the matching ads a statement reads: in the newest-first order, the featured
/// ones (top of the day, or bumped, at `$1`) are placed among the others in Rust.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    All,
    /// The featured ads: on SQLite those of the terms found in `search_featured_fts`
    /// (migration 0030), without terms the range of `search_docs_featured`; on PostgreSQL
    /// by the partial indexes of the features and, with terms, the partial GIN indexes of
    /// the ads that have had one (migration 0035), as its planner chooses.
    Featured,
    Plain,
}

/// An ad whose top-of-the-day or bump runs at `$1`, in each backend's words. PostgreSQL: each
/// comparison implies its column is not NULL, so each side of the OR can use its partial
/// index (a `COALESCE` could not), and so can the partial indexes of the ads that have had a
/// feature (migrations 0035, 0037 and 0043). SQLite would look each side up in its index
/// and then read every featured ad's row; its words are those of `search_docs_featured`
/// (migration 0026), the first term its partial condition (and that of
/// `search_docs_featured_area`, 0043), the second the expression it is ordered by, so that
/// the featured ads are one range of it, each with what a search holds against it.
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
pub(super) const PLAIN: &str =
    "(COALESCE(d.top_until, 0) <= $1 AND COALESCE(d.bumped_until, 0) <= $1)";

/// One tier's `FROM ... WHERE ...`, its parameters, and (near a point, when `measure` or
/// with a radius) the expression of the squared distance in metres. A count does not
/// measure: PostgreSQL refuses parameters that the statement does not use.
pub(super) struct Filter {
    pub(super) from_where: String,
    pub(super) values: Vec<Value>,
    pub(super) squared_metres: Option<String>,
    /// The ads are read from FTS5's match (SQLite), which gives them by item number
    /// itself: an order by `search_fts.rowid` then needs no sort of every match.
    pub(super) fts_outer: bool,
}

pub(super) fn filter(
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
        Part::Featured => conditions.push(featured(backend).to_owned()),
        Part::Plain => conditions.push(PLAIN.to_owned()),
    }
    let matcher = Match { query, backend };
    let mut fts_outer = false;
    let mut from = match matcher.condition(tier, 2) {
        // The featured ads that hold the terms, from the index of the featured ads' words
        // (its columns are those of `search_fts`, so the expression is the same), each
        // read from the index of the featured ads by item number (migration 0041), which
        // holds what is read of them here, rather than from its row (the planner's choice).
        Some((_, expression)) if part == Part::Featured && backend == Backend::Sqlite => {
            values.push(Value::Text(expression));
            conditions.push(format!("search_featured_fts MATCH ${}", values.len()));
            "search_featured_fts CROSS JOIN search_docs d \
             INDEXED BY search_docs_featured_item ON d.item_number = search_featured_fts.rowid"
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
            crate::store::numbered(first, among.len())
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
            // The areas within the radius, then their ads by `search_docs_area`: no ad is
            // measured to filter. With many ads within, in an order by item number, the
            // unary `+` keeps SQLite from that index, so that it walks the ads in order and
            // stops at the page's end instead of sorting every ad within (PostgreSQL's
            // planner weighs it by its statistics). The featured part goes without the `+`:
            // it reads the featured ads of the areas within from their own index by area
            // (migration 0043), at a million ads 0.2 to 1.4 ms against 0.8 to 2.6 for the
            // range of every featured ad running now in `search_docs_featured`.
            let walk = part != Part::Featured
                && query.many_matches()
                && matches!(query.order, Order::Newest | Order::Oldest)
                && backend == Backend::Sqlite;
            let within = areas_within(point, metres, &mut values);
            conditions.push(format!(
                "{}{AD_AREA_KEY} IN ({within})",
                if walk { "+" } else { "" }
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
pub(super) fn bind_point(point: Point, values: &mut Vec<Value>) -> [usize; 4] {
    values.push(Value::Real(point.latitude));
    values.push(Value::Real(point.longitude));
    values.push(Value::Real(METRES_PER_DEGREE));
    values.push(Value::Real(
        METRES_PER_DEGREE * point.latitude.to_radians().cos(),
    ));
    let n = values.len();
    [n - 3, n - 2, n - 1, n]
}

/// The keys of the areas within `metres` of the point bound as `[lat, lon, ky, kx]`, as a
/// subquery; binds the squared radius and the radius. Within as results show distances:
/// in whole metres, so an area shown at `metres` (up to half a metre more) is within, and
/// one shown a metre further is not. Only the areas in the box around the
/// circle are measured, read by `locations_point` in the box's band of latitude: 302 of
/// the 5,217 areas for 5 km around Rotterdam (on SQLite, where each statement of a search
/// runs the subquery again, R2's searches within a radius at a million ads one at a time
/// took 10.6 ms at the median measuring every area, 4.8 ms this way). The box is a
/// millionth wider than the circle, so that rounding never leaves out an area on its edge.
pub(super) fn areas_within(point: [usize; 4], metres: i64, values: &mut Vec<Value>) -> String {
    let [lat, lon, ky, kx] = point;
    // Shown rounded half away from zero: metres + 0.5 shows as a metre more.
    let shown_as_metres = metres as f64 + 0.5;
    values.push(Value::Real(shown_as_metres * shown_as_metres));
    let squared = values.len();
    values.push(Value::Real(shown_as_metres * 1.000_001 + 0.001));
    let radius = values.len();
    format!(
        "SELECT {LOCATION_AREA_KEY} FROM locations a WHERE length(a.postcode) = 4 AND {} < ${squared} \
         AND a.latitude BETWEEN ${lat} - ${radius} / ${ky} AND ${lat} + ${radius} / ${ky} \
         AND a.longitude BETWEEN ${lon} - ${radius} / ${kx} AND ${lon} + ${radius} / ${kx}",
        squared_distance("a", point),
    )
}

/// The squared distance in metres from the point bound as `[lat, lon, ky, kx]` to the
/// row `l` of `locations` ([`Near`] says how it is computed).
pub(super) fn squared_distance(l: &str, [lat, lon, ky, kx]: [usize; 4]) -> String {
    format!(
        "(({l}.latitude - ${lat}) * ${ky}) * (({l}.latitude - ${lat}) * ${ky}) \
         + (({l}.longitude - ${lon}) * ${kx}) * (({l}.longitude - ${lon}) * ${kx})"
    )
}

/// The SQL value of a numeric attribute of the ad `d` (NULL where the ad has no number
/// under the key), binding the key. The key is bound, never written into the SQL.
pub(super) fn number_of(range: &NumberRange, backend: Backend, values: &mut Vec<Value>) -> String {
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

pub(super) fn order_by(order: Order, squared_metres: Option<&str>, fts_outer: bool) -> String {
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

/// The SQL value of a text attribute of the ad `d` (NULL where it has none), binding the
/// key, as [`number_of`] does for numbers.
pub(super) fn text_of(key: &str, backend: Backend, values: &mut Vec<Value>) -> String {
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
