//! Searches of title words and tags answered from `search_title_postings` (PostgreSQL,
//! migration 0032): a row per term of each online ad's title and tags, with the ad's area,
//! under the primary key (term, item number). Its ranges are read by index-only scans in
//! item-number order, where the GIN index visits every match's row of `search_docs`.

use super::filter::{AD_AREA_JOIN, AD_AREA_KEY, PLAIN, Part, bind_point, squared_distance};
use super::{Hit, Match, Order, Query, Tier, Walk, hit_of, unswept_matching};
use crate::domain::search::is_category_tag;
use crate::store::{Conn, DbError, Value};

/// The posting `t` is of a term of `terms` (binding them).
fn term_of(terms: &[String], values: &mut Vec<Value>) -> String {
    if let [term] = terms {
        values.push(Value::Text(term.clone()));
        format!("t.term = ${}", values.len())
    } else {
        values.push(Value::TextList(terms.to_vec()));
        format!("t.term = ANY(${}::text[])", values.len())
    }
}

/// The ad `p` holds a term of `terms` (binding them), as a condition the planner may run
/// by merging ranges, or as a hash of all the ads under them.
fn holds(terms: &[String], values: &mut Vec<Value>) -> String {
    exists(&term_of(terms, values))
}

fn exists(term: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM search_title_postings t \
         WHERE t.item_number = p.item_number AND {term})"
    )
}

/// What a query asks of a posting `p` besides its driving term: the ad's area among those
/// within the radius (found beforehand, [`super::prepared`]), and a term of each other
/// group. The driving group is the one of several terms if there is one (a word and its
/// other forms), each of its terms read as a range of its own.
struct Terms<'q> {
    driving: &'q [String],
    /// The parameter of the areas within the radius.
    areas: Option<usize>,
    /// The condition on a posting `t` of each other group ([`term_of`]).
    others: Vec<String>,
}

impl<'q> Terms<'q> {
    /// The group of several terms drives, if there is one.
    fn of(query: &'q Query, values: &mut Vec<Value>) -> Option<Self> {
        let mut groups: Vec<&Vec<String>> = query.words.iter().chain(&query.tags).collect();
        groups.sort_by_key(|group| group.len() == 1);
        Self::first_driving(query, groups, values)
    }

    /// The group of `term` alone drives.
    fn driven_by(query: &'q Query, term: &str, values: &mut Vec<Value>) -> Option<Self> {
        let mut groups: Vec<&Vec<String>> = query.words.iter().chain(&query.tags).collect();
        groups.sort_by_key(|group| !(group.len() == 1 && group[0] == term));
        Self::first_driving(query, groups, values)
    }

    fn first_driving(
        query: &'q Query,
        groups: Vec<&'q Vec<String>>,
        values: &mut Vec<Value>,
    ) -> Option<Self> {
        let (driving, rest) = groups.split_first()?;
        let mut areas = None;
        if let (Some(within), Some(_)) = (&query.areas, query.near.and_then(|near| near.within)) {
            values.push(Value::TextList(within.clone()));
            areas = Some(values.len());
        }
        let others = rest.iter().map(|group| term_of(group, values)).collect();
        Some(Terms {
            driving,
            areas,
            others,
        })
    }

    /// ` AND EXISTS (...)` for each other group.
    fn others_held(&self) -> String {
        self.others
            .iter()
            .map(|term| format!(" AND {}", exists(term)))
            .collect()
    }

    /// ` AND (SELECT ... LIMIT 1) IS NOT NULL` for each other group: a lookup of the ad
    /// under the group's terms, run for each posting of a walk in its order. An `EXISTS`
    /// there was planned as a hash of every ad under the group, read in full before the
    /// walk's first posting (12 ms for a page of `huizen orfa` at a million ads, where
    /// 1,000 postings looked up take 1).
    fn others_looked_up(&self) -> String {
        self.others
            .iter()
            .map(|term| {
                format!(
                    " AND (SELECT 1 FROM search_title_postings t \
                     WHERE t.item_number = p.item_number AND {term} LIMIT 1) IS NOT NULL"
                )
            })
            .collect()
    }

    /// ` AND p.area = ANY(...)` within a radius.
    fn in_areas(&self) -> String {
        self.areas
            .map(|n| format!(" AND p.area = ANY(${n}::text[])"))
            .unwrap_or_default()
    }
}

/// What a page walked in the postings reads besides them: near a point, the ad's area
/// joined and its squared distance (binding the point); the part's condition on the ad's
/// row; the walk's direction.
struct Shape {
    join: String,
    distance: String,
    part: String,
    direction: &'static str,
}

impl Shape {
    fn of(query: &Query, part: Part, values: &mut Vec<Value>) -> Self {
        let (mut join, mut distance) = (String::new(), String::new());
        if let Some(near) = query.near {
            let point = bind_point(near.point, values);
            join.push_str(AD_AREA_JOIN);
            distance = format!(", {} AS squared_metres", squared_distance("l", point));
        }
        let part = match part {
            Part::Plain => format!(" AND {PLAIN}"),
            Part::All | Part::Featured => String::new(),
        };
        let direction = match query.order {
            Order::Oldest => "ASC",
            _ => "DESC",
        };
        Shape {
            join,
            distance,
            part,
            direction,
        }
    }
}

/// The key of the kept total that counts `query`'s words and tags, if one does: a term
/// alone (a word that has no other form, a seller's tag; migration 0038), or a word of one
/// form in a category, its leaf's or its L1's (`fiets c_402`, `fiets p_4`; migration 0044).
fn kept_total_key(query: &Query) -> Option<String> {
    let one = |group: &Vec<String>| match group.as_slice() {
        [term] => Some(term.clone()),
        _ => None,
    };
    match (query.words.as_slice(), query.tags.as_slice()) {
        ([group], []) | ([], [group]) => one(group),
        ([word], [tag]) => {
            let (word, tag) = (one(word)?, one(tag)?);
            is_category_tag(&tag).then(|| format!("{word} {tag}"))
        }
        _ => None,
    }
}

/// How many ads hold `query`'s words and tags in their titles and tags at `now`, from the
/// postings alone, less the few past their close date and not yet swept (found by
/// `close_date`'s index, each held against the terms), within a radius those of the areas
/// within (each row carries its ad's area, and migration 0045 indexes a term's rows by
/// area, so that the planner may read the areas' ranges alone). Without a radius, a term
/// alone or a word in a category is its kept total ([`kept_total_key`]); a group of
/// several terms alone is its ranges joined in full. Else the group of several terms
/// drives, if there is one ([`Query::counted_from_title_postings`]): the ads under each of
/// its terms, each counted once, under the first of the group's terms it holds (so that
/// the union of `mooie | mooi` is counted from two ranges of the index rather than made
/// distinct: 20 ms against 60 at a million ads); each other group, of one term, is an
/// `EXISTS`, which the planner runs by merging ranges or by looking each ad up, from its
/// statistics of the terms.
pub(super) async fn count(conn: &mut dyn Conn, query: &Query, now: i64) -> Result<i64, DbError> {
    let backend = conn.backend();
    let Some((condition, expression)) = (Match { query, backend }).condition(Tier::Title, 2) else {
        return Ok(0);
    };
    let within = query.near.and_then(|near| near.within).is_some();
    if let (Some(key), false) = (kept_total_key(query), within) {
        return conn
            .query_one(
                &format!(
                    "SELECT CAST(COALESCE((SELECT SUM(n) FROM search_term_counts \
                                           WHERE term = $3), 0) AS BIGINT) \
                     - ({}) AS n",
                    unswept_matching(backend, &condition)
                ),
                &[Value::Int(now), Value::Text(expression), Value::Text(key)],
            )
            .await?
            .get("n");
    }
    let mut values = vec![Value::Int(now), Value::Text(expression)];
    let Some(terms) = Terms::of(query, &mut values) else {
        return Ok(0);
    };
    let docs_in_areas = terms
        .areas
        .map(|n| format!(" AND {AD_AREA_KEY} = ANY(${n}::text[])"))
        .unwrap_or_default();
    let matching = if terms.others.is_empty() && terms.driving.len() > 1 {
        // A group alone (a word and its other forms): its terms' ranges joined in full,
        // each read once; an ad under several terms is one row of the join (54 ms for
        // `garantie | garant` at a million ads, 136,000 ads, where the sum below hashed
        // the larger range to take the ads of the second term out of it, 100 ms).
        let mut joined = String::new();
        for (n, term) in terms.driving.iter().enumerate() {
            values.push(Value::Text(term.clone()));
            let range = format!(
                "(SELECT p.item_number FROM search_title_postings p WHERE p.term = ${}{}) t{n}",
                values.len(),
                terms.in_areas(),
            );
            joined = if n == 0 {
                range
            } else {
                format!("{joined} FULL JOIN {range} USING (item_number)")
            };
        }
        format!("(SELECT COUNT(*) FROM {joined})")
    } else {
        let mut parts = Vec::with_capacity(terms.driving.len());
        for (n, term) in terms.driving.iter().enumerate() {
            values.push(Value::Text(term.clone()));
            let mut sql = format!(
                "(SELECT COUNT(*) FROM search_title_postings p WHERE p.term = ${}",
                values.len()
            );
            sql.push_str(&terms.in_areas());
            if n > 0 {
                sql.push_str(" AND NOT ");
                sql.push_str(&holds(&terms.driving[..n], &mut values));
            }
            sql.push_str(&terms.others_held());
            sql.push(')');
            parts.push(sql);
        }
        parts.join(" + ")
    };
    conn.query_one(
        &format!(
            "SELECT {matching} - (SELECT COUNT(*) FROM search_docs d \
             WHERE d.close_date <= $1 AND {condition}{docs_in_areas}) AS n"
        ),
        &values,
    )
    .await?
    .get("n")
}

/// A page of `query`'s ads of one part (all, or those not featured), newest or oldest
/// first, walked in the postings of its one group of terms in item-number order
/// ([`Query::paged_from_title_postings`]): each term's range from its end until the page
/// is met, an ad kept when its area is within the radius (read from the index) and it is
/// open and of the part (its row). Only where many ads match ([`Query::many_matches`]): a
/// page of 30 is then met within about 30 x (ads under the term / matches) postings, where
/// the GIN index finds every match's row and sorts them (a common word within 25 km: 5,000
/// rows, 35-55 ms at a million ads). Each term is walked apart, for the first `offset +
/// limit` ads under it, and their union made distinct and cut: the page's ads are among
/// these.
pub(super) async fn page(
    conn: &mut dyn Conn,
    query: &Query,
    part: Part,
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<Hit>, DbError> {
    let mut values = vec![Value::Int(now)];
    let Some(terms) = Terms::of(query, &mut values) else {
        return Ok(Vec::new());
    };
    // One group only (`Query::paged_from_title_postings`): no other group to hold.
    debug_assert!(terms.others.is_empty());
    let Shape {
        join,
        distance,
        part,
        direction,
    } = Shape::of(query, part, &mut values);
    values.push(Value::Int(offset + limit));
    let reach = values.len();
    let mut branches = Vec::with_capacity(terms.driving.len());
    for term in terms.driving {
        values.push(Value::Text(term.clone()));
        branches.push(format!(
            "(SELECT p.item_number{distance} FROM search_title_postings p \
             JOIN search_docs d ON d.item_number = p.item_number{join} \
             WHERE p.term = ${}{} \
             AND (d.close_date IS NULL OR d.close_date > $1){part} \
             ORDER BY p.item_number {direction} LIMIT ${reach})",
            values.len(),
            terms.in_areas(),
        ));
    }
    values.push(Value::Int(limit));
    values.push(Value::Int(offset));
    let squared = if distance.is_empty() {
        ""
    } else {
        ", squared_metres"
    };
    let sql = format!(
        "SELECT item_number{squared} FROM ({}) u ORDER BY item_number {direction} \
         LIMIT ${} OFFSET ${}",
        branches.join(" UNION "),
        values.len() - 1,
        values.len()
    );
    conn.query(&sql, &values)
        .await?
        .iter()
        .map(|row| hit_of(row, !distance.is_empty()))
        .collect()
}

/// A page of `query`'s ads of one part (all, or those not featured), newest or oldest
/// first, walked in the postings of one term ([`Query::walk`]) in item-number order, at
/// most `walk.most` of them: an ad kept when it holds a term of each other group (looked
/// up in the postings), its area is within the radius (read from the index) and it is
/// open and of the part (its row). None when the walk stopped at its most before the page
/// was met: the page is then read as without it.
pub(super) async fn walked_page(
    conn: &mut dyn Conn,
    query: &Query,
    walk: Walk<'_>,
    part: Part,
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<Option<Vec<Hit>>, DbError> {
    let mut values = vec![Value::Int(now)];
    let Some(terms) = Terms::driven_by(query, walk.term, &mut values) else {
        return Ok(Some(Vec::new()));
    };
    let Shape {
        join,
        distance,
        part,
        direction,
    } = Shape::of(query, part, &mut values);
    values.push(Value::Text(walk.term.to_owned()));
    values.push(Value::Int(walk.most));
    values.push(Value::Int(limit));
    values.push(Value::Int(offset));
    let n = values.len();
    // The walk's postings are cut to its most before the other conditions, so that it
    // reads no more index entries than that, whatever they hold.
    let sql = format!(
        "SELECT p.item_number{distance} FROM \
         (SELECT w.item_number, w.area FROM search_title_postings w WHERE w.term = ${} \
          ORDER BY w.item_number {direction} LIMIT ${}) p \
         JOIN search_docs d ON d.item_number = p.item_number{join} \
         WHERE (d.close_date IS NULL OR d.close_date > $1){part}{}{} \
         ORDER BY p.item_number {direction} LIMIT ${} OFFSET ${}",
        n - 3,
        n - 2,
        terms.in_areas(),
        terms.others_looked_up(),
        n - 1,
        n,
    );
    let hits = conn
        .query(&sql, &values)
        .await?
        .iter()
        .map(|row| hit_of(row, !distance.is_empty()))
        .collect::<Result<Vec<Hit>, DbError>>()?;
    let stopped_short = walk.postings > walk.most && (hits.len() as i64) < limit;
    Ok((!stopped_short).then_some(hits))
}
