//! Bids under an advertisement: place, list (highest first), read, withdraw or remove, and
//! the seller's question to a bidder. Each handler runs one use case of `usecase::bids`.

use serde_json::{Value, json};

use crate::access::Caller;
use crate::domain::advertisement::ItemId;
use crate::domain::bid::{BidRequest, QuestionRequest};
use crate::domain::locale::Language;
use crate::domain::time::format_timestamp;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::oauth::scope::Scope;
use crate::state::AppState;
use crate::usecase::bids::{self, Shown};

use super::api::{Api, Operation, delete, get, post};
use super::auth::{UserWith, need};
use super::extract::{BidPath, Context, ItemPath, JsonBody, PageQuery, Query};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let under_ad = |operation: Operation| operation.tag("Bids").authenticated().item_param();
    let one = |operation: Operation| {
        under_ad(operation)
            .path_param("bidId", "The bid's id.")
            .errors(&[ValidationFailure, AdvertisementNotFound, BidNotFound])
    };
    api.resource(
        under_ad(post("/advertisements/{itemId}/bids", "placeBid"))
            .summary("Place a bid (a confirmed user, scope `write`, not on one's own ad)")
            .description("Body `{\"amount\": cents}`, an integer from 1 to 1,000,000,000. Only online ads whose price model is `bidding` take bids (409 `conflicting-state` for another model). Every bid must be at least the ad's `minimalBid` (`below-minimal-bid`); every later bid must also beat the highest by at least 1% of it and at least 1 euro (`minimumNextBid` of the list says how much that is): else 400 `validation-failure` with `below-minimal-bid` or `not-above-highest-bid` on `amount`. Bidding on one's own ad is 403. Answers 201 with the bid.")
            .body("application/json", "NewBid")
            .ok(201, "The bid (Location: its address)", "Bid")
            .errors(&[Unauthorized, UserNotConfirmed, AdvertisementNotFound, ConflictingState]),
        place,
    )
    .resource(
        under_ad(get("/advertisements/{itemId}/bids", "listBids"))
            .summary("The ad's bids, highest first")
            .description("`offset` (default 0) and `limit` (default 30, at most 100), else 400 `pagination-invalid`. The bidder's identity shows to the ad's seller and to the bidder (a token with `read`); to anyone else `bidder` is an anonymous label. An ad that is not online shows its bids only to its seller and its bidders.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "Default 0.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 30.")
            .ok(200, "A page of bids", "BidList")
            .errors(&[ValidationFailure, PaginationInvalid, AdvertisementNotFound]),
        list,
    )
    .resource(
        one(get("/advertisements/{itemId}/bids/{bidId}", "getBid"))
            .summary("One bid (the bidder's identity as in the list)")
            .ok(200, "The bid", "Bid"),
        one_bid,
    )
    .resource(
        one(delete("/advertisements/{itemId}/bids/{bidId}", "deleteBid"))
            .summary("Withdraw a bid (its bidder) or remove it (the ad's seller), scope `write`")
            .description("Answers 200 with the bid as it was, as the original did; a bid that is gone is 404 `bid-not-found`. Nothing of a deleted bid is kept; `numberOfBids` of the statistics still counts it (it counts bids placed).")
            .ok(200, "The bid, now deleted", "Bid")
            .errors(&[Unauthorized]),
        withdraw,
    )
    .resource(
        one(post("/advertisements/{itemId}/bids/{bidId}/actions/ask-bidder-question", "askBidderQuestion"))
            .summary("The seller asks the bidder a question (scope `write`), by mail")
            .description("Body `{message, phoneNumber}`: `message` 1 to 2,000 characters, `phoneNumber` optional (a number the bidder may call the seller on). The question is mailed to the bidder and counts in the ad's statistics (`numberOfAsqs`). Answers 200.")
            .body("application/json", "BidderQuestion")
            .ok(200, "The question was mailed", "BidderQuestionSent")
            .errors(&[Unauthorized]),
        ask,
    )
}

fn bid_json(state: &AppState, hal: &Hal, item: ItemId, shown: &Shown) -> Value {
    let ad = hal.path(&format!("/advertisements/{item}"));
    let bid = &shown.bid;
    let mut links = hal
        .links(format!("{ad}/bids/{}", bid.id), Resource::Bid)
        .rel(Rel::Advertisement, &ad);
    let bidder = if shown.identified {
        links = links.rel(Rel::Bidder, hal.path(&format!("/users/{}", bid.bidder_id)));
        json!({"id": bid.bidder_id, "nickName": bid.bidder_name})
    } else {
        let anonymous = match state.config.region.language() {
            Language::Dutch => "Anonieme bieder",
            Language::French => "Enchérisseur anonyme",
        };
        json!({"nickName": anonymous})
    };
    json!({
        "_links": links.build(),
        "bidId": bid.id,
        "id": bid.id,
        "amount": bid.amount,
        "placeDate": format_timestamp(bid.placed_at),
        "bidder": bidder,
    })
}

/// The user whose identity rules apply to a reader: the user of a token with `read`.
fn reader(caller: &Caller) -> Option<i64> {
    caller
        .user_id
        .filter(|_| caller.scopes.contains(Scope::Read))
}

/// A bid as the caller who placed or deleted it sees it in the answer: under the readers'
/// rule, so a token without `read` learns no bidder's identity from a write either.
fn as_answered(caller: &Caller, mut shown: Shown) -> Shown {
    shown.identified &= reader(caller).is_some();
    shown
}

async fn place(
    Context { state, hal }: Context,
    UserWith(bidder, _): UserWith<need::Write>,
    caller: Caller,
    ItemPath(item): ItemPath,
    body: Result<JsonBody<BidRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let now = state.clock.now();
    let placed = state
        .db
        .write(move |conn| Box::pin(bids::place(conn, bidder, item, request, now)))
        .await?;
    let placed = as_answered(&caller, placed);
    let location = hal.path(&format!("/advertisements/{item}/bids/{}", placed.bid.id));
    Ok(Json::created(
        location,
        bid_json(&state, &hal, item, &placed),
    ))
}

async fn list(
    Context { state, hal }: Context,
    caller: Caller,
    ItemPath(item): ItemPath,
    Query(query): Query<PageQuery>,
) -> Result<Json, ApiError> {
    let page = query.page(30, 100)?;
    let (reader, now) = (reader(&caller), state.clock.now());
    let listed = state
        .db
        .read(move |conn| Box::pin(bids::list(conn, item, reader, page.bounds(), now)))
        .await?;
    let ad = hal.path(&format!("/advertisements/{item}"));
    let path = format!("{ad}/bids");
    let items: Vec<Value> = listed
        .bids
        .iter()
        .map(|shown| bid_json(&state, &hal, item, shown))
        .collect();
    let mut body = json!({
        "_links": hal
            .links(&path, Resource::BidList)
            .pagination(&path, page, listed.total as u64)
            .rel(Rel::Advertisement, &ad)
            .build(),
        "_embedded": {hal.rel(Rel::Bid): items},
        "totalCount": listed.total,
        "offset": page.offset,
        "limit": page.limit,
    });
    if let Some(minimum) = listed.minimum_next {
        body["minimumNextBid"] = json!(minimum);
    }
    Ok(Json::ok(body))
}

async fn one_bid(
    Context { state, hal }: Context,
    caller: Caller,
    BidPath(item, id): BidPath,
) -> Result<Json, ApiError> {
    let (reader, now) = (reader(&caller), state.clock.now());
    let shown = state
        .db
        .read(move |conn| Box::pin(bids::one(conn, item, id, reader, now)))
        .await?;
    Ok(Json::ok(bid_json(&state, &hal, item, &shown)))
}

async fn withdraw(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Write>,
    caller: Caller,
    BidPath(item, id): BidPath,
) -> Result<Json, ApiError> {
    let now = state.clock.now();
    let withdrawn = state
        .db
        .write(move |conn| Box::pin(bids::withdraw(conn, item, id, user, now)))
        .await?;
    let withdrawn = as_answered(&caller, withdrawn);
    Ok(Json::ok(bid_json(&state, &hal, item, &withdrawn)))
}

async fn ask(
    Context { state, hal }: Context,
    UserWith(seller, _): UserWith<need::Write>,
    BidPath(item, id): BidPath,
    body: Result<JsonBody<QuestionRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let (base_url, now) = (hal.base_url().to_owned(), state.clock.now());
    state
        .db
        .write(move |conn| {
            Box::pin(
                async move { bids::ask(conn, item, id, seller, request, &base_url, now).await },
            )
        })
        .await?;
    state.mail.wake();
    // The answer is the seller's, in the deployment's language as every answer (the mail
    // is in the bidder's).
    let bid = hal.path(&format!("/advertisements/{item}/bids/{id}"));
    let message = match state.config.region.language() {
        Language::Dutch => "De vraag is naar de bieder gemaild.",
        Language::French => "La question a été envoyée par e-mail à l'enchérisseur.",
    };
    Ok(Json::ok(json!({
        "_links": hal
            .links(format!("{bid}/actions/ask-bidder-question"), Resource::BidderQuestion)
            .rel(Rel::Bid, &bid)
            .build(),
        "message": message,
    })))
}
