//! What the kept totals of the titles' words answer (SQLite migrations 0040 and 0042,
//! PostgreSQL 0038, 0040 and 0042): how many online ads hold each word in their title, and
//! each pair of a title's words that are likely forms of one word ([`pair_key`]: a word
//! and its stem, `garant garantie`, `steef stevige`, `bruik gebruikt`). From them, without
//! reading the index: which forms of a word's group a search of the titles needs
//! ([`title_forms`]), and the count of a word alone ([`one_word_count`]). And the fold
//! of every kept count's appended changes on PostgreSQL ([`fold_counts`]).

use std::collections::HashMap;

use super::{Match, Query, Tier, unswept_matching};
use crate::store::{Backend, Conn, DbError, Value};

/// The key of the kept total of the titles holding both of two distinct words, when it is
/// kept: when they begin with the same two letters or one is within the other (as the
/// migrations' triggers decide). Its two words, the shorter first (of two as long, the
/// first in byte order), with a space between, which no word holds.
fn pair_key(a: &str, b: &str) -> Option<String> {
    let (first, second) = if (a.len(), a) < (b.len(), b) {
        (a, b)
    } else {
        (b, a)
    };
    let kept = first != second && (opening(first) == opening(second) || second.contains(first));
    kept.then(|| format!("{first} {second}"))
}

/// A word's first two letters (its only one, if it has one): words are ASCII, `[a-z0-9]+`.
fn opening(word: &str) -> &str {
    &word[..word.len().min(2)]
}

/// The keys of the kept totals of pairs of `group`'s forms.
fn pair_keys(group: &[String]) -> impl Iterator<Item = String> + '_ {
    group
        .iter()
        .enumerate()
        .flat_map(move |(i, a)| group[i + 1..].iter().filter_map(move |b| pair_key(a, b)))
}

/// The keys of the kept totals of `group`'s forms and of their pairs.
pub(super) fn group_keys(group: &[String]) -> Vec<String> {
    group.iter().cloned().chain(pair_keys(group)).collect()
}

/// The kept totals of `keys` (terms, pairs of words), those above 0: of the titles' words
/// on SQLite, of the titles' words and the tags on PostgreSQL.
pub(super) async fn kept_totals(
    conn: &mut dyn Conn,
    mut keys: Vec<String>,
) -> Result<HashMap<String, i64>, DbError> {
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let table = match conn.backend() {
        Backend::Sqlite => "search_title_term_counts",
        Backend::Postgres => "search_term_counts",
    };
    let placeholders = crate::store::numbered(1, keys.len());
    let values: Vec<Value> = keys.into_iter().map(Value::Text).collect();
    // On PostgreSQL a key's total is the sum of its rows of changes (migration 0038).
    conn.query(
        &format!(
            "SELECT term, CAST(SUM(n) AS BIGINT) AS n FROM {table} WHERE term IN ({placeholders}) \
             GROUP BY term HAVING SUM(n) > 0"
        ),
        &values,
    )
    .await?
    .iter()
    .map(|row| Ok((row.get("term")?, row.get("n")?)))
    .collect()
}

/// The keys of the kept totals that [`title_forms`] reads: the forms of each of `query`'s
/// word groups of several forms, and their pairs; none with `search_description`.
pub(super) fn title_form_keys(query: &Query) -> Vec<String> {
    if query.search_description {
        return Vec::new();
    }
    query
        .words
        .iter()
        .filter(|group| group.len() > 1)
        .flat_map(|group| group_keys(group))
        .collect()
}

/// The word groups of `query` each cut to the forms a search of the titles needs, from the
/// kept totals of [`title_form_keys`]: those in some title, less a form whose every title
/// holds another form of the group too (the titles with `nette` all hold its stem `net`:
/// the pair's total is `nette`'s), so that a search reads fewer and shorter lists, and on
/// PostgreSQL more groups are one term, which its postings count and page. As they are
/// with `search_description` (the totals are of the titles only). A group in no title is
/// left whole: it matches nothing either way. On SQLite a search reads in one transaction;
/// on PostgreSQL each statement of a search sees the latest commits, so an ad written
/// between this read and the search's own, holding only a form cut here, is found by the
/// searches that start after it (as by any that start after a write).
pub(super) fn title_forms(query: &Query, totals: &HashMap<String, i64>) -> Vec<Vec<String>> {
    if query.search_description {
        return query.words.clone();
    }
    query
        .words
        .iter()
        .map(|group| match group.len() {
            1 => group.clone(),
            _ => forms_needed(group, totals),
        })
        .collect()
}

/// The forms of `group` a search of the titles needs ([`title_forms`]).
fn forms_needed(group: &[String], totals: &HashMap<String, i64>) -> Vec<String> {
    let total = |key: &str| totals.get(key).copied().unwrap_or(0);
    let mut forms: Vec<String> = group.iter().filter(|f| total(f) > 0).cloned().collect();
    if forms.is_empty() {
        return group.to_vec();
    }
    // A form each of whose titles holds another form adds no ad; of two whose titles are
    // the same, the first one dropped leaves the other needed.
    let held_by_another = |forms: &[String], form: &String| {
        forms
            .iter()
            .filter_map(|other| pair_key(form, other))
            .any(|pair| total(&pair) == total(form))
    };
    while let Some(i) = forms.iter().position(|form| held_by_another(&forms, form)) {
        forms.remove(i);
    }
    forms
}

/// The count of a query of one word alone in the titles from the kept totals (read by
/// [`super::prepared`]: [`Query::title_word_totals`]), less the unswept
/// ([`unswept_matching`]), where the index would read every entry of the word's
/// forms (a word in 174,000 titles at a million ads: 6 ms on SQLite, on PostgreSQL a join
/// of the forms' ranges). It answers when the forms of the word's group in titles are one
/// (`mooie`, whose `mooi` is in no title) or two whose pair's total is kept ([`pair_key`]:
/// `garant`, `garantie`): their union is their totals less the total of the titles holding
/// both. None for any other query, and for two forms whose pair is not kept or three forms
/// in titles: what their ads share is kept nowhere.
pub(super) async fn one_word_count(
    conn: &mut dyn Conn,
    query: &Query,
    tier: Tier,
    now: i64,
) -> Result<Option<i64>, DbError> {
    let (Some(group), Tier::Title, Some(totals)) =
        (query.one_title_word(), tier, &query.title_word_totals)
    else {
        return Ok(None);
    };
    let forms: Vec<(&String, i64)> = group
        .iter()
        .filter_map(|form| totals.get(form).map(|n| (form, *n)))
        .collect();
    let total = match forms.as_slice() {
        [] => return Ok(Some(0)),
        [(_, n)] => *n,
        [(a, n), (b, m)] => {
            let Some(pair) = pair_key(a, b) else {
                return Ok(None);
            };
            n + m - totals.get(&pair).copied().unwrap_or(0)
        }
        _ => return Ok(None),
    };
    let backend = conn.backend();
    let Some((condition, expression)) = (Match { query, backend }).condition(tier, 2) else {
        return Ok(None);
    };
    let unswept: i64 = conn
        .query_one(
            &format!("SELECT ({}) AS n", unswept_matching(backend, &condition)),
            &[Value::Int(now), Value::Text(expression)],
        )
        .await?
        .get("n")?;
    Ok(Some(total - unswept))
}

/// On PostgreSQL, folds the changes of the kept counts appended since the last fold (the
/// total, migration 0033, the areas', 0034, the terms' and pairs of words', 0038 and 0040)
/// into a row each, so that a count sums few rows; returns how many rows were folded. Run
/// in a write transaction: a fold deletes the rows it sums in the statement that adds
/// their sum, so that no change is lost or counted twice, and replicas fold one at a time
/// (an advisory lock held until the commit), so that two folds never wait for each
/// other's rows in opposite orders. Nothing to do on SQLite, which keeps a row each.
pub async fn fold_counts(conn: &mut dyn Conn) -> Result<u64, DbError> {
    if conn.backend() == Backend::Sqlite {
        return Ok(0);
    }
    // An arbitrary constant naming "souk search count folds".
    conn.execute("SELECT pg_advisory_xact_lock(7361202612)", &[])
        .await?;
    let mut folded = 0;
    for sql in [
        "WITH folded AS (DELETE FROM search_docs_total RETURNING n), \
         kept AS (INSERT INTO search_docs_total (n) \
                  SELECT SUM(n) FROM folded HAVING COUNT(*) > 0) \
         SELECT COUNT(*) AS n FROM folded",
        "WITH folded AS (DELETE FROM search_area_counts RETURNING area, n), \
         kept AS (INSERT INTO search_area_counts (area, n) \
                  SELECT area, SUM(n) FROM folded GROUP BY area HAVING SUM(n) <> 0) \
         SELECT COUNT(*) AS n FROM folded",
        // Tens of thousands of terms (a tag per seller among them): only those with
        // changes appended since the last fold are rewritten.
        "WITH folded AS (DELETE FROM search_term_counts \
                         WHERE term IN (SELECT term FROM search_term_counts \
                                        GROUP BY term HAVING COUNT(*) > 1 OR SUM(n) = 0) \
                         RETURNING term, n), \
         kept AS (INSERT INTO search_term_counts (term, n) \
                  SELECT term, SUM(n) FROM folded GROUP BY term HAVING SUM(n) <> 0) \
         SELECT COUNT(*) AS n FROM folded",
    ] {
        let rows: i64 = conn.query_one(sql, &[]).await?.get("n")?;
        folded += u64::try_from(rows).unwrap_or(0);
    }
    Ok(folded)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{forms_needed, pair_key};

    fn needed(group: &[&str], totals: &[(&str, i64)]) -> Vec<String> {
        let group: Vec<String> = group.iter().map(|f| (*f).to_owned()).collect();
        let totals: HashMap<String, i64> =
            totals.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect();
        forms_needed(&group, &totals)
    }

    #[test]
    fn pairs_are_kept_for_forms_alike_under_one_key() {
        assert_eq!(
            pair_key("garantie", "garant").as_deref(),
            Some("garant garantie")
        );
        assert_eq!(
            pair_key("stevige", "steef").as_deref(),
            Some("steef stevige")
        );
        assert_eq!(
            pair_key("gebruikt", "bruik").as_deref(),
            Some("bruik gebruikt")
        );
        // As long: byte order.
        assert_eq!(pair_key("norv", "norm").as_deref(), Some("norm norv"));
        assert_eq!(pair_key("e", "reader").as_deref(), Some("e reader"));
        assert_eq!(pair_key("kast", "meubel"), None);
        assert_eq!(pair_key("e", "a"), None);
        assert_eq!(pair_key("kast", "kast"), None);
    }

    #[test]
    fn a_form_whose_titles_all_hold_another_is_not_needed() {
        // Every title with `nette` holds `net`.
        let totals = [("net", 100), ("nette", 60), ("net nette", 60)];
        assert_eq!(needed(&["net", "nette"], &totals), ["net"]);
        assert_eq!(needed(&["nette", "net"], &totals), ["net"]);
        // The same titles: one of the two is enough.
        let same = [("net", 60), ("nette", 60), ("net nette", 60)];
        assert_eq!(needed(&["net", "nette"], &same), ["nette"]);
    }

    #[test]
    fn forms_in_no_title_go_and_forms_with_titles_of_their_own_stay() {
        let totals = [("garant", 21), ("garantie", 135), ("garant garantie", 20)];
        assert_eq!(
            needed(&["garantie", "garant"], &totals),
            ["garantie", "garant"]
        );
        assert_eq!(needed(&["mooie", "mooi"], &[("mooie", 7)]), ["mooie"]);
        // A pair that is not kept: nothing is known of what they share.
        let apart = [("kast", 5), ("meubel", 5)];
        assert_eq!(needed(&["kast", "meubel"], &apart), ["kast", "meubel"]);
        // One within the other, or the same two first letters: their pair is kept.
        let within = [("bruik", 5), ("gebruikt", 4), ("bruik gebruikt", 4)];
        assert_eq!(needed(&["gebruikt", "bruik"], &within), ["bruik"]);
        let opening = [("steef", 3), ("stevige", 3), ("steef stevige", 3)];
        assert_eq!(needed(&["stevige", "steef"], &opening), ["steef"]);
        // In no title: left whole.
        assert_eq!(needed(&["mooie", "mooi"], &[]), ["mooie", "mooi"]);
    }
}
