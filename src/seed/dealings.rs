//! What seeded users did with some of the seeded ads: bids on bidding ads, and completed
//! sales reviewed by their buyers. Each goes through the use case the API calls, so the
//! seed keeps every rule (who may bid, by how much, who reviews what).

use serde_json::json;

use crate::domain::advertisement::ItemId;
use crate::domain::bid::{BidRequest, minimum_bid};
use crate::domain::review::ReviewRequest;
use crate::domain::sale::{SaleRequest, TransactionStatus};
use crate::store::Conn;
use crate::usecase::{self, bids, reviews, sales};

/// One ad in this many has a dealing.
pub const ONE_IN: u64 = 25;

/// What happens to one seeded ad, decided when it is generated.
pub enum Dealing {
    /// Other users bid on it, each the least the rule allows.
    Bids { minimal_bid: i64, bidders: Vec<i64> },
    /// A buyer buys it at its price and reviews the seller.
    Sale {
        buyer: i64,
        price: i64,
        overall_score: i64,
        content: &'static str,
    },
}

/// What reviewers write, by score from 1 to 5.
pub const REVIEWS: [&str; 5] = [
    "Niet zoals beschreven, en slecht bereikbaar.",
    "Het kon beter: de levering duurde lang.",
    "Redelijk: het klopte, maar de communicatie was traag.",
    "Goede verkoper, vlot contact.",
    "Alles perfect: snel geleverd en precies zoals beschreven.",
];

/// Does the dealings of ads already stored (`number`, its seller, what happens).
pub async fn apply(
    conn: &mut dyn Conn,
    dealings: Vec<(i64, i64, Dealing)>,
    now: i64,
) -> Result<(), usecase::Error> {
    for (number, seller, dealing) in dealings {
        let item = ItemId::from_number(number);
        match dealing {
            Dealing::Bids {
                minimal_bid,
                bidders,
            } => {
                let mut highest = None;
                for bidder in bidders {
                    let amount = minimum_bid(minimal_bid, highest);
                    let request = BidRequest {
                        amount: Some(json!(amount)),
                    };
                    bids::place(conn, bidder, item, Ok(request), now).await?;
                    highest = Some(amount);
                }
            }
            Dealing::Sale {
                buyer,
                price,
                overall_score,
                content,
            } => {
                let sale = SaleRequest {
                    buyer_id: Some(json!(buyer)),
                    amount: Some(json!(price)),
                    shipping_costs: Some(json!(0)),
                };
                let sold = sales::record(conn, seller, item, Ok(sale), now).await?;
                let to = TransactionStatus::Completed;
                sales::finish(conn, item, sold.id, seller, to, now).await?;
                let review = ReviewRequest {
                    overall_score: Some(json!(overall_score)),
                    content: Some(json!(content)),
                    sub_scores: Some(json!([{"key": "communication", "score": overall_score}])),
                };
                reviews::write(conn, buyer, item, sold.id, Ok(review), now).await?;
            }
        }
    }
    Ok(())
}
