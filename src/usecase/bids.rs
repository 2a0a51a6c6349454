//! Bids on an advertisement: placing one under the rules of `domain::bid`, the list and
//! one bid as a reader may see them, withdrawing or removing one, and the seller's
//! question to a bidder.
//!
//! Who sees a bidder's identity: the ad's seller and the bidder themself; anyone else sees
//! the amount and the date of a bid, not who placed it ([`Shown::identified`]).

use crate::domain::advertisement::{AdStatus, ItemId, ModelType, PriceModel};
use crate::domain::bid::minimum_bid;
use crate::domain::bid::{BidRequest, Question, QuestionRequest, check_bid, check_question};
use crate::domain::hook::EventType;
use crate::domain::locale::{Language, euros};
use crate::mail::Mail;
use crate::store::Conn;
use crate::store::ads::{self, AdRecord};
use crate::store::bids::{self, Bid};
use crate::store::transactions::{self, Counter};
use crate::store::users::{self, User};

use super::advertisements::{existing, outsider};
use super::{Conflict, Error, Thing, events, mail_queue};

/// A bid as one reader may see it.
#[derive(Clone, Debug)]
pub struct Shown {
    pub bid: Bid,
    /// The reader is the ad's seller or the bidder: the bidder's id and name may show.
    pub identified: bool,
}

/// Whether `reader` may know who placed a bid of `bidder` on `seller`'s ad.
fn identifies(seller: i64, bidder: i64, reader: Option<i64>) -> bool {
    reader.is_some_and(|reader| reader == seller || reader == bidder)
}

fn shown(bid: Bid, seller: i64, reader: Option<i64>) -> Shown {
    let identified = identifies(seller, bid.bidder_id, reader);
    Shown { bid, identified }
}

/// Places a bid of `bidder` on ad `item` (`request`: see [`Error::Request`]). Only a
/// confirmed user bids, never on their own ad, only on an online ad whose price model is
/// `bidding`, and at least [`minimum_bid`]. Concurrent bids on one ad are checked one at a
/// time (`store::bids::count_and_lock`), so two bids never both beat the same highest.
pub async fn place<R>(
    conn: &mut dyn Conn,
    bidder: i64,
    item: ItemId,
    request: Result<BidRequest, R>,
    now: i64,
) -> Result<Shown, Error<R>> {
    let Some(user) = users::get(conn, bidder).await?.filter(User::is_confirmed) else {
        return Err(Error::NotConfirmed);
    };
    // Held before it is read: on PostgreSQL a seller's change (closed, paused, another
    // price model) that commits meanwhile is then read, not bid past.
    ads::lock(conn, item.number()).await?;
    let ad = existing(conn, item, now).await?;
    if ad.seller_id == bidder {
        // A seller bidding up their own ad would mislead the other bidders.
        return Err(Error::Forbidden);
    }
    if ad.status_at(now) != AdStatus::Online {
        return Err(Error::NotFound(Thing::Advertisement));
    }
    let Some(minimal_bid) = minimal_bid(&ad) else {
        return Err(Error::Conflict(Conflict::NoBidding));
    };
    let request = request.map_err(Error::Request)?;
    bids::count_and_lock(conn, ad.number).await?;
    let highest = bids::highest(conn, ad.number).await?;
    let minimum = minimum_bid(minimal_bid, highest);
    let amount = check_bid(&request, minimum, minimum == minimal_bid.max(1))?;
    let id = bids::insert(conn, ad.number, bidder, amount, now).await?;
    let bid = Bid {
        id,
        item_number: ad.number,
        bidder_id: bidder,
        bidder_name: user.name,
        amount,
        placed_at: now,
    };
    let event = events::bid(EventType::BidPlaced, ad.seller_id, &bid);
    events::record(conn, event, now).await?;
    Ok(shown(bid, ad.seller_id, Some(bidder)))
}

/// The ad's minimal bid, if its price model is `bidding`.
fn minimal_bid(ad: &AdRecord) -> Option<i64> {
    let stored = serde_json::from_str(&ad.price_model).ok()?;
    let model = PriceModel::parse(Some(&stored)).ok()?;
    (model.model_type == ModelType::Bidding).then(|| model.minimal_bid.unwrap_or(0))
}

/// A page of an ad's bids.
#[derive(Debug)]
pub struct BidPage {
    pub bids: Vec<Shown>,
    pub total: i64,
    /// The least amount a new bid may have now (none: the ad takes no bids).
    pub minimum_next: Option<i64>,
}

/// The bids of ad `item`, highest first, as `reader` (the user of a token with `read`, if
/// any) may see them.
pub async fn list(
    conn: &mut dyn Conn,
    item: ItemId,
    reader: Option<i64>,
    (offset, limit): (i64, i64),
    now: i64,
) -> Result<BidPage, Error> {
    let ad = visible_ad(conn, item, reader, now).await?;
    let listed = bids::page(conn, ad.number, offset, limit).await?;
    let minimum_next = minimal_bid(&ad)
        .filter(|_| ad.status_at(now) == AdStatus::Online)
        .map(|minimal| minimum_bid(minimal, listed.highest));
    Ok(BidPage {
        total: listed.total,
        bids: listed
            .bids
            .into_iter()
            .map(|bid| shown(bid, ad.seller_id, reader))
            .collect(),
        minimum_next,
    })
}

/// One bid of ad `item`, as `reader` may see it.
pub async fn one(
    conn: &mut dyn Conn,
    item: ItemId,
    id: i64,
    reader: Option<i64>,
    now: i64,
) -> Result<Shown, Error> {
    let ad = visible_ad(conn, item, reader, now).await?;
    let bid = bids::get(conn, ad.number, id)
        .await?
        .ok_or(Error::NotFound(Thing::Bid))?;
    Ok(shown(bid, ad.seller_id, reader))
}

/// Deletes a bid: its bidder withdraws it, or the ad's seller removes it; anyone else is
/// forbidden. Returns the bid as it was.
pub async fn withdraw(
    conn: &mut dyn Conn,
    item: ItemId,
    id: i64,
    user: i64,
    now: i64,
) -> Result<Shown, Error> {
    let ad = visible_ad(conn, item, Some(user), now).await?;
    let bid = bids::get(conn, ad.number, id)
        .await?
        .ok_or(Error::NotFound(Thing::Bid))?;
    if !identifies(ad.seller_id, bid.bidder_id, Some(user)) {
        return Err(Error::Forbidden);
    }
    if !bids::delete(conn, ad.number, id).await? {
        // Withdrawn meanwhile by the other party.
        return Err(Error::NotFound(Thing::Bid));
    }
    let event = events::bid(EventType::BidWithdrawn, ad.seller_id, &bid);
    events::record(conn, event, now).await?;
    Ok(shown(bid, ad.seller_id, Some(user)))
}

/// A question of the seller to a bidder, mailed to the bidder.
#[derive(Debug)]
pub struct Asked {
    pub ad: AdRecord,
    pub bid: Bid,
    pub bidder: User,
    pub question: Question,
}

/// The seller of ad `item` asks the bidder of bid `id` a question (`request`: see
/// [`Error::Request`]): it is queued as mail to the bidder (its links start with
/// `base_url`), and counts in the ad's statistics as a question (`numberOfAsqs`).
pub async fn ask<R>(
    conn: &mut dyn Conn,
    item: ItemId,
    id: i64,
    seller: i64,
    request: Result<QuestionRequest, R>,
    base_url: &str,
    now: i64,
) -> Result<Asked, Error<R>> {
    let ad = existing(conn, item, now).await?;
    if ad.seller_id != seller {
        return Err(outsider(&ad, now));
    }
    let bid = bids::get(conn, ad.number, id)
        .await?
        .ok_or(Error::NotFound(Thing::Bid))?;
    let question = check_question(&request.map_err(Error::Request)?)?;
    let bidder = users::get(conn, bid.bidder_id)
        .await?
        .ok_or(Error::NotFound(Thing::Bid))?;
    transactions::count(conn, Counter::Asqs, &[(ad.number, 1)]).await?;
    let asked = Asked {
        ad,
        bid,
        bidder,
        question,
    };
    mail_queue::post(conn, &question_mail(base_url, item, &asked), now).await?;
    Ok(asked)
}

/// The ad behind a bid request of `reader`: not found if it is deleted, or if it is not
/// online and `reader` has no part in it (neither its seller nor one of its bidders), so
/// that a draft's existence does not leak; a bidder keeps seeing their bids after the ad
/// went offline.
async fn visible_ad(
    conn: &mut dyn Conn,
    item: ItemId,
    reader: Option<i64>,
    now: i64,
) -> Result<AdRecord, Error> {
    let ad = existing(conn, item, now).await?;
    if ad.status_at(now) == AdStatus::Online {
        return Ok(ad);
    }
    let takes_part = match reader {
        Some(user) => user == ad.seller_id || bids::has_bid(conn, ad.number, user).await?,
        None => false,
    };
    if takes_part {
        Ok(ad)
    } else {
        Err(Error::NotFound(Thing::Advertisement))
    }
}

/// The mail to the bidder, in the bidder's language: the ad, the bid, the seller's name,
/// message and phone number. The bidder's address is never shown to the seller.
fn question_mail(base_url: &str, item: ItemId, asked: &Asked) -> Mail {
    let Asked {
        ad,
        bid,
        bidder,
        question,
    } = asked;
    let page = format!("{base_url}/a/{item}");
    let language = bidder.locale.language();
    let amount = euros(language, bid.amount);
    let (subject, intro, phone_line) = match language {
        Language::Dutch => (
            format!("Vraag over je bod op \"{}\"", ad.title),
            format!(
                "{} heeft een vraag over je bod van {amount} op \"{}\" ({page}):",
                ad.seller_name, ad.title
            ),
            question
                .phone_number
                .as_ref()
                .map(|phone| format!("Je kunt de verkoper bellen op {phone}.")),
        ),
        Language::French => (
            format!("Question sur votre offre pour « {} »", ad.title),
            format!(
                "{} a une question sur votre offre de {amount} pour « {} » ({page}) :",
                ad.seller_name, ad.title
            ),
            question
                .phone_number
                .as_ref()
                .map(|phone| format!("Vous pouvez appeler le vendeur au {phone}.")),
        ),
    };
    let mut body = format!("{intro}\n\n{}\n", question.message);
    if let Some(line) = phone_line {
        body.push('\n');
        body.push_str(&line);
        body.push('\n');
    }
    Mail {
        to: bidder.email.as_str().to_owned(),
        subject,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::identifies;

    #[test]
    fn only_the_seller_and_the_bidder_see_who_bid() {
        assert!(identifies(1, 2, Some(1)));
        assert!(identifies(1, 2, Some(2)));
        assert!(!identifies(1, 2, Some(3)));
        assert!(!identifies(1, 2, None));
    }
}
