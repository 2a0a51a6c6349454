//! A page of one tier newest first: the featured ads and the others read apart and merged.

use super::filter::{AD_AREA_JOIN, Filter, Part, bind_point, filter, order_by, squared_distance};
use super::{Hit, Order, Query, Tier, hit_of, postings};
use crate::store::{Backend, Conn, DbError, Value};

/// Where an ad sorts newest first: top of the day first, then by date, a bumped ad's date
/// being its bump (its rank: the last item number then, and after that ad).
type Rank = (bool, i64, bool, i64);

/// Hits that are not featured: each ranks by its item number.
fn unranked(hits: Vec<Hit>) -> Vec<(Hit, Rank)> {
    hits.into_iter()
        .map(|hit| (hit, (false, hit.number, false, hit.number)))
        .collect()
}

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
    if part != Part::Featured
        && conn.backend() == Backend::Postgres
        && query.paged_from_title_postings()
    {
        let hits = postings::page(conn, query, part, now, offset, limit).await?;
        return Ok(unranked(hits));
    }
    if let (true, Backend::Postgres, Some(walk)) =
        (part != Part::Featured, conn.backend(), query.walk())
        && let Some(hits) =
            postings::walked_page(conn, query, walk, part, now, offset, limit).await?
    {
        return Ok(unranked(hits));
    }
    let featured = part == Part::Featured;
    // The featured part near a point measures the ads of its page only, once it is cut:
    // within a radius it holds every featured ad there (361 within 5 km of Groningen at a
    // million seeded ads), and each measure looks up the point of its area.
    let measure_after = featured.then_some(query.near).flatten();
    let Filter {
        from_where,
        mut values,
        squared_metres,
        fts_outer,
    } = filter(
        query,
        conn.backend(),
        tier,
        part,
        now,
        measure_after.is_none(),
    );
    values.push(Value::Int(limit));
    values.push(Value::Int(offset));
    let (limit_at, offset_at) = (values.len() - 1, values.len());
    let squared_metres = match measure_after {
        Some(near) => Some(squared_distance("l", bind_point(near.point, &mut values))),
        None => squared_metres,
    };
    let distance_column = squared_metres
        .as_deref()
        .map(|squared| format!(", {squared} AS squared_metres"))
        .unwrap_or_default();
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
    let sql = if measure_after.is_some() {
        format!(
            "SELECT d.item_number{distance_column}{rank_columns} \
             FROM (SELECT d.item_number, d.postcode{rank_columns}{from_where} \
                   ORDER BY {order} LIMIT ${limit_at} OFFSET ${offset_at}) d{AD_AREA_JOIN} \
             ORDER BY {order}"
        )
    } else {
        format!(
            "SELECT d.item_number{distance_column}{rank_columns}{from_where} \
             ORDER BY {order} LIMIT ${limit_at} OFFSET ${offset_at}"
        )
    };
    conn.query(&sql, &values)
        .await?
        .iter()
        .map(|row| {
            let hit = hit_of(row, squared_metres.is_some())?;
            let number = hit.number;
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
            Ok((hit, rank))
        })
        .collect()
}

/// A page of one tier in the query's order. Newest first, the featured ads of the tier
/// (few, found by their own indexes: [`Part::Featured`]) are merged into the others, which
/// keep their fast order by item number; the merge reads the first `offset + limit` of each.
pub(super) async fn page_of(
    conn: &mut dyn Conn,
    query: &Query,
    tier: Tier,
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<Hit>, DbError> {
    let featured = if query.order == Order::Newest {
        ranked_hits(conn, query, tier, Part::Featured, now, 0, offset + limit).await?
    } else {
        Vec::new()
    };
    if featured.is_empty() {
        let all = ranked_hits(conn, query, tier, Part::All, now, offset, limit).await?;
        return Ok(all.into_iter().map(|(hit, _)| hit).collect());
    }
    let reach = offset + limit;
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
