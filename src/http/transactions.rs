//! Under an advertisement: transactions (sales), upcall confirmations and statistics. Each
//! handler runs one use case of `usecase::sales`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::domain::advertisement::ItemId;
use crate::domain::sale::{CallRequest, SaleRequest, TransactionStatus};
use crate::domain::time::format_timestamp;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::state::AppState;
use crate::store::transactions::Transaction;
use crate::usecase::sales;

use super::api::{Api, Operation, get, post};
use super::auth::{ClientWith, UserWith, need};
use super::extract::{Context, ItemPath, JsonBody, TransactionPath};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let under_ad = |operation: Operation, tag| operation.tag(tag).authenticated().item_param();
    let one = |operation: Operation| {
        under_ad(operation, "Transactions")
            .path_param("transactionId", "The transaction's number within the ad.")
            .ok(200, "The transaction", "Transaction")
            .errors(&[
                ValidationFailure,
                Unauthorized,
                AdvertisementNotFound,
                TransactionNotFound,
            ])
    };
    let transition = |path, id, summary| {
        one(post(path, id))
            .summary(summary)
            .errors(&[ConflictingState])
    };
    let get_about_ad = |path, id, tag| {
        under_ad(get(path, id), tag).errors(&[
            ValidationFailure,
            Unauthorized,
            AdvertisementNotFound,
        ])
    };
    let post_about_ad = |path, id, tag| {
        under_ad(post(path, id), tag).errors(&[Unauthorized, AdvertisementNotFound])
    };
    api.resource(
        post_about_ad("/advertisements/{itemId}/transactions", "createTransaction", "Transactions")
            .summary("Record a sale (the seller, scope `write`)")
            .description("Body `{buyerId, amount, shippingCosts}`: a user and two non-negative integer amounts in cents. Answers 201 with status `CREATED`; the original documented this under `/v2`.")
            .body("application/json", "NewTransaction")
            .ok(201, "The transaction", "Transaction"),
        create,
    )
    .resource(
        get_about_ad("/advertisements/{itemId}/transactions", "listTransactions", "Transactions")
            .summary("The ad's transactions, newest first (the seller: all; a buyer: theirs)")
            .ok(200, "The transactions", "TransactionList"),
        list,
    )
    .resource(
        one(get("/advertisements/{itemId}/transactions/{transactionId}", "getTransaction"))
            .summary("One transaction (the seller or its buyer, scope `read`)"),
        one_transaction,
    )
    .resource(
        transition(
            "/advertisements/{itemId}/transactions/{transactionId}/actions/complete",
            "completeTransaction",
            "Mark a transaction COMPLETED (the seller)",
        ),
        finish::<Complete>,
    )
    .resource(
        transition(
            "/advertisements/{itemId}/transactions/{transactionId}/actions/cancel",
            "cancelTransaction",
            "Mark a transaction CANCELLED (the seller or the buyer)",
        ),
        finish::<Cancel>,
    )
    .resource(
        post_about_ad("/advertisements/{itemId}/upcall-confirmations", "confirmUpcall", "Advertisements")
            .summary("Report a phone call about an ad (client token with scope `confirm_upcall`)")
            .description("Body `{callerPhoneNumber, calleePhoneNumber, startTime, endTime}`, all required strings; times ISO 8601 with an offset, `endTime` not before `startTime`. Answers 201 with no body; the call counts in the ad's statistics as a phone click. Only online ads take calls: any other is 404, as is an unknown one, whatever the body.")
            .body("application/json", "UpcallConfirmation")
            .ok_empty(201, "Recorded"),
        upcall,
    )
    .resource(
        get_about_ad("/advertisements/{itemId}/statistics", "getAdvertisementStatistics", "Advertisements")
            .summary("What happened to an ad (the seller, scope `read`)")
            .ok(200, "The statistics", "Statistics"),
        statistics,
    )
}

fn transaction_json(hal: &Hal, item: ItemId, t: &Transaction) -> Value {
    let ad = hal.path(&format!("/advertisements/{item}"));
    json!({
        "_links": hal
            .links(format!("{ad}/transactions/{}", t.id), Resource::Transaction)
            .rel(Rel::Advertisement, &ad)
            .rel(Rel::Buyer, hal.path(&format!("/users/{}", t.buyer_id)))
            .build(),
        "transactionId": t.id,
        "buyerId": t.buyer_id,
        "amount": t.amount,
        "shippingCosts": t.shipping_costs,
        "status": t.status.as_str(),
        "createdDate": format_timestamp(t.created_at),
    })
}

async fn create(
    Context { state, hal }: Context,
    UserWith(seller, _): UserWith<need::Write>,
    ItemPath(item): ItemPath,
    body: Result<JsonBody<SaleRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let now = state.clock.now();
    let transaction = state
        .db
        .write(move |conn| Box::pin(sales::record(conn, seller, item, request, now)))
        .await?;
    let body = transaction_json(&hal, item, &transaction);
    let location = hal.path(&format!(
        "/advertisements/{item}/transactions/{}",
        transaction.id
    ));
    Ok(Json::created(location, body))
}

async fn list(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    ItemPath(item): ItemPath,
) -> Result<Json, ApiError> {
    let now = state.clock.now();
    let listed = state
        .db
        .read(move |conn| Box::pin(sales::transactions_of(conn, item, user, now)))
        .await?;
    let path = hal.path(&format!("/advertisements/{item}/transactions"));
    let items: Vec<Value> = listed
        .iter()
        .map(|t| transaction_json(&hal, item, t))
        .collect();
    let mut links = hal.links(&path, Resource::TransactionList).build();
    links.as_object_mut().map(|l| l.remove("describedby"));
    Ok(Json::ok(json!({
        "_links": links,
        "_embedded": {hal.rel(Rel::AdvertisementTransaction): items},
    })))
}

async fn one_transaction(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    TransactionPath(item, id): TransactionPath,
) -> Result<Json, ApiError> {
    let now = state.clock.now();
    let transaction = state
        .db
        .read(move |conn| Box::pin(sales::transaction(conn, item, id, user, now)))
        .await?;
    Ok(Json::ok(transaction_json(&hal, item, &transaction)))
}

/// Where an action takes a transaction: `finish::<Complete>` and `finish::<Cancel>`.
trait Target {
    const TO: TransactionStatus;
}

struct Complete;
impl Target for Complete {
    const TO: TransactionStatus = TransactionStatus::Completed;
}

struct Cancel;
impl Target for Cancel {
    const TO: TransactionStatus = TransactionStatus::Cancelled;
}

/// Completes (the seller) or cancels (the seller or the buyer) a created transaction.
async fn finish<T: Target>(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Write>,
    TransactionPath(item, id): TransactionPath,
) -> Result<Json, ApiError> {
    let now = state.clock.now();
    let transaction = state
        .db
        .write(move |conn| Box::pin(sales::finish(conn, item, id, user, T::TO, now)))
        .await?;
    Ok(Json::ok(transaction_json(&hal, item, &transaction)))
}

async fn upcall(
    State(state): State<AppState>,
    ClientWith(client, _): ClientWith<need::ConfirmUpcall>,
    ItemPath(item): ItemPath,
    body: Result<JsonBody<CallRequest>, ApiError>,
) -> Result<Response, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let now = state.clock.now();
    state
        .db
        .write(move |conn| {
            Box::pin(async move { sales::confirm_call(conn, &client, item, request, now).await })
        })
        .await?;
    Ok(StatusCode::CREATED.into_response())
}

async fn statistics(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    ItemPath(item): ItemPath,
) -> Result<Json, ApiError> {
    let now = state.clock.now();
    let mut counts = state
        .db
        .read(move |conn| Box::pin(sales::statistics(conn, item, user, now)))
        .await?;
    // Views this replica has counted but not written yet: a read does no write.
    counts.views += state.views.pending(item.number());
    let ad = hal.path(&format!("/advertisements/{item}"));
    Ok(Json::ok(json!({
        "_links": hal.links(format!("{ad}/statistics"), Resource::Statistics).rel(Rel::Advertisement, &ad).build(),
        "numberOfViews": counts.views,
        "numberOfAsqs": counts.asqs,
        "numberOfBids": counts.bids,
        "numberOfUrlClicks": counts.url_clicks,
        "numberOfPhoneClicks": counts.phone_clicks,
        "numberOfFavoriteClicks": counts.favorite_clicks,
    })))
}
