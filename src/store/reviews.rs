//! Reviews of sellers (migration 0018). The rules are `usecase::reviews`'; here are the
//! queries.

use crate::domain::review::NewReview;
use crate::params;

use super::record::record;
use super::{Conn, DbError, Record};

record! {
    /// A review, with its reviewer's current name.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Review in "r" {
        pub id: i64 = "r.review_id",
        pub seller_id: i64,
        pub reviewer_id: i64,
        pub reviewer_name: String = "u.name",
        pub item_number: i64,
        pub transaction_id: i64,
        pub reason: String,
        pub place: String,
        pub overall_score: i64,
        pub communication: Option<i64>,
        pub accuracy: Option<i64>,
        pub delivery: Option<i64>,
        pub content: String,
        pub created_at: i64,
    }
}

impl Review {
    /// The sub-scores in `Aspect::ALL`'s order.
    pub fn sub_scores(&self) -> [Option<i64>; 3] {
        [self.communication, self.accuracy, self.delivery]
    }
}

/// The tables of a [`Review`].
const FROM: &str = " FROM reviews r JOIN users u ON u.user_id = r.reviewer_id";

/// What a new review is about, besides what its writer said.
pub struct Reviewed<'a> {
    pub seller_id: i64,
    pub reviewer_id: i64,
    pub item_number: i64,
    pub transaction_id: i64,
    pub reason: &'a str,
    pub place: &'a str,
}

/// Stores a review; `None` if the transaction has one already (one statement, so two
/// concurrent reviews of one transaction store one).
pub async fn insert(
    conn: &mut dyn Conn,
    about: &Reviewed<'_>,
    review: &NewReview,
    now: i64,
) -> Result<Option<i64>, DbError> {
    let [communication, accuracy, delivery] = review.sub_scores;
    let row = conn
        .query_opt(
            "INSERT INTO reviews (seller_id, reviewer_id, item_number, transaction_id, reason, \
             place, overall_score, communication, accuracy, delivery, content, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (item_number, transaction_id) DO NOTHING RETURNING review_id",
            params![
                about.seller_id,
                about.reviewer_id,
                about.item_number,
                about.transaction_id,
                about.reason,
                about.place,
                review.overall_score,
                communication,
                accuracy,
                delivery,
                review.content.as_str(),
                now
            ],
        )
        .await?;
    row.map(|row| row.get("review_id")).transpose()
}

/// One review of the seller.
pub async fn get(conn: &mut dyn Conn, seller: i64, id: i64) -> Result<Option<Review>, DbError> {
    conn.record(
        &format!(
            "SELECT {}{FROM} WHERE r.seller_id = $1 AND r.review_id = $2",
            Review::COLUMNS
        ),
        params![seller, id],
    )
    .await
}

/// A page of the seller's reviews, newest first.
pub async fn page(
    conn: &mut dyn Conn,
    seller: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<Review>, DbError> {
    conn.records(
        &format!(
            "SELECT {}{FROM} WHERE r.seller_id = $1 ORDER BY r.review_id DESC LIMIT $2 OFFSET $3",
            Review::COLUMNS
        ),
        params![seller, limit, offset],
    )
    .await
}

/// How many reviews a seller has, and the sums and counts behind the averages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub reviews: i64,
    pub overall_sum: i64,
    /// Per aspect, in `Aspect::ALL`'s order: (sum, how many gave one).
    pub aspects: [(i64, i64); 3],
}

pub async fn totals(conn: &mut dyn Conn, seller: i64) -> Result<Totals, DbError> {
    let row = conn
        .query_one(
            "SELECT COUNT(*) AS n, CAST(COALESCE(SUM(overall_score), 0) AS BIGINT) AS overall, \
             CAST(COALESCE(SUM(communication), 0) AS BIGINT) AS c, COUNT(communication) AS cn, \
             CAST(COALESCE(SUM(accuracy), 0) AS BIGINT) AS a, COUNT(accuracy) AS an, \
             CAST(COALESCE(SUM(delivery), 0) AS BIGINT) AS d, COUNT(delivery) AS dn \
             FROM reviews WHERE seller_id = $1",
            params![seller],
        )
        .await?;
    Ok(Totals {
        reviews: row.get("n")?,
        overall_sum: row.get("overall")?,
        aspects: [
            (row.get("c")?, row.get("cn")?),
            (row.get("a")?, row.get("an")?),
            (row.get("d")?, row.get("dn")?),
        ],
    })
}
