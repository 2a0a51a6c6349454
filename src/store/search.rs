//! Full-text search over `search_docs`, the online ads (docs/design/search.md section 5).
//!
//! Both backends index the same words and tags (made in Rust, `domain::search`), and order
//! by integers only (tier, price, item number), so that they answer the same ads in the
//! same order. The match expression is the one text that differs: an FTS5 `MATCH` on
//! SQLite, a `tsquery` on PostgreSQL; [`Match`] writes both.

use crate::domain::search::text::is_index_word;

use super::{Backend, Conn, DbError, Value};

/// The order of the results; ties (equal prices) go newest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Tier (every word in the title first), then newest placed first.
    Newest,
    /// Tier, then oldest first.
    Oldest,
    /// Lowest price first; ads without a price last.
    PriceAscending,
    /// Highest price first; ads without a price last.
    PriceDescending,
}

/// What to find, as the store runs it: groups of terms that must all match (a group
/// matches when any of its members does), and row filters.
#[derive(Clone, Debug)]
pub struct Query {
    /// Word groups (stems), matched in the title, or in the title or description.
    pub words: Vec<Vec<String>>,
    /// Tag groups (`c_101`, `[a_fuel_petrol, a_fuel_diesel]`), matched in the tags.
    pub tags: Vec<Vec<String>>,
    /// Words may be found in the description too (tier 1, after the title matches).
    pub search_description: bool,
    pub price_from: Option<i64>,
    pub price_to: Option<i64>,
    pub with_images: bool,
    pub order: Order,
    pub offset: i64,
    pub limit: i64,
}

/// A page of results: the item numbers in order, and how many match in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub total: i64,
    pub numbers: Vec<i64>,
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

/// One tier's `FROM ... WHERE ...` and its parameters.
fn from_where(query: &Query, backend: Backend, tier: Tier, now: i64) -> (String, Vec<Value>) {
    let mut values = vec![Value::Int(now)];
    let mut conditions = vec!["(d.close_date IS NULL OR d.close_date > $1)".to_owned()];
    let matcher = Match { query, backend };
    let from = match matcher.condition(tier, 2) {
        Some((condition, expression)) => {
            values.push(Value::Text(expression));
            conditions.push(condition);
            match backend {
                // CROSS JOIN keeps the FTS5 table outer: it walks its doclist in rowid order.
                Backend::Sqlite => {
                    "search_fts CROSS JOIN search_docs d ON d.item_number = search_fts.rowid"
                }
                Backend::Postgres => "search_docs d",
            }
        }
        None => "search_docs d",
    };
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
    (
        format!(" FROM {from} WHERE {}", conditions.join(" AND ")),
        values,
    )
}

fn order_by(order: Order) -> &'static str {
    match order {
        Order::Newest => "d.item_number DESC",
        Order::Oldest => "d.item_number ASC",
        Order::PriceAscending => "(d.price_cents IS NULL), d.price_cents ASC, d.item_number DESC",
        Order::PriceDescending => "(d.price_cents IS NULL), d.price_cents DESC, d.item_number DESC",
    }
}

async fn count(conn: &mut dyn Conn, query: &Query, tier: Tier, now: i64) -> Result<i64, DbError> {
    let (from_where, values) = from_where(query, conn.backend(), tier, now);
    conn.query_one(&format!("SELECT COUNT(*) AS n{from_where}"), &values)
        .await?
        .get("n")
}

async fn numbers(
    conn: &mut dyn Conn,
    query: &Query,
    tier: Tier,
    now: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<i64>, DbError> {
    let (from_where, mut values) = from_where(query, conn.backend(), tier, now);
    values.push(Value::Int(limit));
    values.push(Value::Int(offset));
    let sql = format!(
        "SELECT d.item_number{from_where} ORDER BY {} LIMIT ${} OFFSET ${}",
        order_by(query.order),
        values.len() - 1,
        values.len()
    );
    conn.column(&sql, &values).await
}

/// The page of `query` at `now` (ads past their close date are left out even before the
/// expiry sweep), and the exact count.
pub async fn run(conn: &mut dyn Conn, query: &Query, now: i64) -> Result<Page, DbError> {
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
        let numbers = if query.offset < total {
            numbers(conn, query, tier, now, query.offset, query.limit).await?
        } else {
            Vec::new()
        };
        return Ok(Page { total, numbers });
    }
    // Title matches first, then the description-only ones: the page takes tier 0 from
    // `offset` while it lasts, then tier 1 from where the page has reached.
    let in_title = count(conn, query, Tier::Title, now).await?;
    let total = count(conn, query, Tier::Anywhere, now).await?;
    let mut page = Vec::new();
    if query.offset < in_title {
        page = numbers(conn, query, Tier::Title, now, query.offset, query.limit).await?;
    }
    let missing = query.limit - page.len() as i64;
    if missing > 0 && query.offset + (page.len() as i64) < total {
        let from = (query.offset - in_title).max(0);
        page.extend(numbers(conn, query, Tier::DescriptionOnly, now, from, missing).await?);
    }
    Ok(Page {
        total,
        numbers: page,
    })
}
