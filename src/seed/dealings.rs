//! What seeded users did with some of the seeded ads: bids on bidding ads, completed
//! sales reviewed by their buyers, and features their sellers bought (paid orders). Each goes through the use case the API calls, so the
//! seed keeps every rule (who may bid, by how much, who reviews what).

use serde_json::json;

use crate::domain::advertisement::ItemId;
use crate::domain::bid::{BidRequest, minimum_bid};
use crate::domain::feature::Feature;
use crate::domain::order::PurchaseRequest;
use crate::domain::review::ReviewRequest;
use crate::domain::sale::{SaleRequest, TransactionStatus};
use crate::store::Conn;
use crate::usecase::orders::Till;
use crate::usecase::{self, PurchaseRefusal, bids, features, reviews, sales};

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
    /// The seller buys a feature for it (where its category sells it).
    Promotion { feature: Feature },
}

/// The features seeded sellers buy.
pub const PROMOTIONS: [Feature; 3] = [
    Feature::Omhoogplaatsen,
    Feature::Dagtopper7,
    Feature::Opvalsticker,
];

/// What reviewers write, by score from 1 to 5.
pub const REVIEWS: [&str; 5] = [
    "Niet zoals beschreven, en slecht bereikbaar.",
    "Het kon beter: de levering duurde lang.",
    "Redelijk: het klopte, maar de communicatie was traag.",
    "Goede verkoper, vlot contact.",
    "Alles perfect: snel geleverd en precies zoals beschreven.",
];

/// Does the dealings of ads already stored (`number`, its seller, what happens); orders
/// are paid at `till`'s VAT (seeded orders are paid at once, production or not: they are
/// demo history, not money owed).
pub async fn apply(
    conn: &mut dyn Conn,
    dealings: Vec<(i64, i64, Dealing)>,
    till: Till,
    now: i64,
) -> Result<(), usecase::Error> {
    let till = Till {
        pays_at_once: true,
        ..till
    };
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
            Dealing::Promotion { feature } => {
                let request = PurchaseRequest {
                    pay: Some(json!(true)),
                    order_id: None,
                };
                let bought =
                    features::buy(conn, seller, item, feature.as_str(), Ok(request), till, now)
                        .await;
                match bought {
                    // An operator's price list may not sell it in this category.
                    Err(usecase::Error::Purchase(PurchaseRefusal::FeatureNotAllowed)) => {}
                    other => {
                        other?;
                    }
                }
            }
        }
    }
    Ok(())
}
