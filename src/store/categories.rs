//! Categories: the tree as stored, and the import of a taxonomy.

use crate::domain::category::{Category, CategoryStatus, Fees, Leaf};
use crate::domain::taxonomy::{TaxonomyError, check_against_stored};
use crate::params;

use super::{Conn, DbError, Record, Row, TableLock, Value};

/// A category is a record by hand: its labels, subscriptions and attribute definitions are
/// JSON columns, and an L1 category has no leaf columns.
impl Record for Category {
    const COLUMNS: &'static str = "category_id, parent_id, status, labels, insertion_fee, \
                                   running_days, subscriptions, attributes";
    const WIDTH: usize = 8;

    fn read(row: &mut Row) -> Result<Self, DbError> {
        let id = row.take()?;
        let parent_id = row.take()?;
        let status = row.take()?;
        let labels = from_json(&row.take::<String>()?)?;
        let leaf = match row.take::<Option<i64>>()? {
            Some(insertion_fee) => Some(Leaf {
                fees: Fees {
                    insertion_fee,
                    running_days: row.take()?,
                    running_subscriptions: from_json(&row.take::<String>()?)?,
                },
                attributes: from_json(&row.take::<String>()?)?,
            }),
            None => {
                // running_days, subscriptions, attributes: NULL too.
                row.skip(3);
                None
            }
        };
        Ok(Category {
            id,
            parent_id,
            status,
            labels,
            leaf,
        })
    }
}

/// Every category, L1 and L2, each level in file order.
pub async fn all(conn: &mut dyn Conn) -> Result<Vec<Category>, DbError> {
    conn.records(
        &format!(
            "SELECT {} FROM categories ORDER BY position",
            Category::COLUMNS
        ),
        &[],
    )
    .await
}

pub async fn get(conn: &mut dyn Conn, id: i64) -> Result<Option<Category>, DbError> {
    conn.record(
        &format!(
            "SELECT {} FROM categories WHERE category_id = $1",
            Category::COLUMNS
        ),
        params![id],
    )
    .await
}

/// The category `id`, kept as it is until the transaction ends (`Conn::key_share`): an
/// ad's write reads its category so, so that an import that moves the category to another
/// parent waits for the ad, and sees it, or the ad waits for the import, and sees the new
/// parent. Either way the ad's parent and search terms are those of the committed taxonomy.
pub async fn get_held(conn: &mut dyn Conn, id: i64) -> Result<Option<Category>, DbError> {
    let held = conn.key_share();
    conn.record(
        &format!(
            "SELECT {} FROM categories WHERE category_id = $1{held}",
            Category::COLUMNS
        ),
        params![id],
    )
    .await
}

/// The L2 children of an L1 category, in file order.
pub async fn children(conn: &mut dyn Conn, parent_id: i64) -> Result<Vec<Category>, DbError> {
    conn.records(
        &format!(
            "SELECT {} FROM categories WHERE parent_id = $1 ORDER BY position",
            Category::COLUMNS
        ),
        params![parent_id],
    )
    .await
}

pub async fn count(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COUNT(*) AS n FROM categories", &[])
        .await?
        .get("n")
}

/// What an import changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    pub inserted: usize,
    pub updated: usize,
    /// Categories absent from a `replace` import, now closed.
    pub closed: usize,
    /// Ads of categories that moved to another parent: their search terms name the old
    /// parent, so they are marked for re-indexing ([`super::ads::outdate_search_terms`]).
    pub ads_to_reindex: u64,
}

/// Why an import changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The taxonomy does not fit the stored one (`check_against_stored`).
    #[error("{0}")]
    Refused(#[from] TaxonomyError),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Stores the categories of a checked taxonomy: new ids are added, known ids updated.
/// With `replace`, every stored category the taxonomy does not name is closed (not deleted:
/// ads may still point at it). A taxonomy that would change a stored category's level is
/// refused before anything is written. Run it inside one write so a failure changes nothing.
pub async fn import(
    conn: &mut dyn Conn,
    categories: &[Category],
    replace: bool,
    now: i64,
) -> Result<ImportSummary, ImportError> {
    // Another import, or a first start's default load, waits for this one and then reads
    // what it wrote.
    conn.lock_table("categories", TableLock::Writes).await?;
    let mut summary = ImportSummary::default();
    let mut known = Vec::new();
    for row in conn
        .query("SELECT category_id, parent_id FROM categories", &[])
        .await?
    {
        known.push((
            row.get::<i64>("category_id")?,
            row.get::<Option<i64>>("parent_id")?,
        ));
    }
    check_against_stored(categories, &known)?;
    hold_moved(conn, categories, &known).await?;
    let position_base: i64 = conn
        .query_one(
            "SELECT COALESCE(MAX(position), 0) AS p FROM categories",
            &[],
        )
        .await?
        .get("p")?;
    for (i, category) in categories.iter().enumerate() {
        let (insertion_fee, running_days, subscriptions, attributes) = match &category.leaf {
            Some(leaf) => (
                Some(leaf.fees.insertion_fee),
                Some(leaf.fees.running_days),
                Some(to_json(&leaf.fees.running_subscriptions)?),
                Some(to_json(&leaf.attributes)?),
            ),
            None => (None, None, None, None),
        };
        let stored_parent = known.iter().find(|(id, _)| *id == category.id).map(|k| k.1);
        let is_known = stored_parent.is_some();
        // A replace import takes the file's order; an extending import appends new ones.
        let position = if replace || !is_known {
            position_base + 1 + i as i64
        } else {
            -1
        };
        conn.execute(
            "INSERT INTO categories (category_id, parent_id, position, status, labels, \
                 insertion_fee, running_days, subscriptions, attributes, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (category_id) DO UPDATE SET parent_id = excluded.parent_id, \
                 position = CASE WHEN excluded.position < 0 THEN categories.position \
                                 ELSE excluded.position END, \
                 status = excluded.status, labels = excluded.labels, \
                 insertion_fee = excluded.insertion_fee, running_days = excluded.running_days, \
                 subscriptions = excluded.subscriptions, attributes = excluded.attributes, \
                 updated_at = excluded.updated_at",
            params![
                category.id,
                category.parent_id,
                position,
                category.status.as_str(),
                to_json(&category.labels)?,
                insertion_fee,
                running_days,
                subscriptions,
                attributes,
                now
            ],
        )
        .await?;
        match stored_parent {
            Some(parent) if parent != category.parent_id => {
                summary.updated += 1;
                // The ads' parent follows by trigger (migration 0048); their search terms
                // are made in Rust, so they are made again after the import.
                summary.ads_to_reindex +=
                    super::ads::outdate_search_terms(conn, category.id).await?;
            }
            Some(_) => summary.updated += 1,
            None => summary.inserted += 1,
        }
    }
    if replace {
        for (id, _) in known {
            if categories.iter().all(|c| c.id != id) {
                summary.closed += conn
                    .execute(
                        "UPDATE categories SET status = $3, updated_at = $2 \
                         WHERE category_id = $1 AND status <> $3",
                        params![id, now, CategoryStatus::Closed.as_str()],
                    )
                    .await? as usize;
            }
        }
    }
    Ok(summary)
}

/// Holds the stored categories that `categories` gives another parent, before any is
/// written, against the ads' writes that read them (`get_held`): an ad placed or edited in
/// one meanwhile is seen by the import's moves, or sees them. All are taken first, in the
/// order of their ids, so that no ad write, which holds one category, waits in a circle
/// with the import. Nothing on SQLite.
async fn hold_moved(
    conn: &mut dyn Conn,
    categories: &[Category],
    known: &[(i64, Option<i64>)],
) -> Result<(), DbError> {
    let held = conn.hold_keys();
    if held.is_empty() {
        return Ok(());
    }
    let moved: Vec<Value> = categories
        .iter()
        .filter(|c| {
            known
                .iter()
                .any(|(id, parent)| *id == c.id && *parent != c.parent_id)
        })
        .map(|c| Value::Int(c.id))
        .collect();
    if moved.is_empty() {
        return Ok(());
    }
    let ids = super::numbered(1, moved.len());
    conn.query(
        &format!(
            "SELECT category_id FROM categories WHERE category_id IN ({ids}) \
             ORDER BY category_id{held}"
        ),
        &moved,
    )
    .await
    .map(drop)
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, DbError> {
    serde_json::to_string(value).map_err(|e| DbError::Decode(e.to_string()))
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, DbError> {
    serde_json::from_str(text).map_err(|e| DbError::Decode(e.to_string()))
}
