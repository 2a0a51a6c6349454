//! Under an advertisement: transactions (sales), upcall confirmations and statistics.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::domain::advertisement::{AMOUNT_MAX, AdStatus, ItemId};
use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::time::{format_timestamp, parse_timestamp};
use crate::domain::user::plausible_phone;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::store::ads::{self, AdRecord};
use crate::store::transactions::{self, Counter, Transaction, Upcall};
use crate::store::{Conn, users};

use super::ads::{outsider, parse_item};
use super::api::{Api, get, post};
use super::auth::{ClientWith, UserWith, need};
use super::extract::{ApiVersion, JsonBody, parse_id};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let transition = |path, id, summary| {
        post(path, id)
            .tag("Transactions")
            .summary(summary)
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .path_param("transactionId", "The transaction's number within the ad.")
            .ok(200, "The transaction", "Transaction")
            .errors(&[
                ValidationFailure,
                Unauthorized,
                AdvertisementNotFound,
                TransactionNotFound,
                ConflictingState,
            ])
    };
    api.resource(
        post("/advertisements/{itemId}/transactions", "createTransaction")
            .tag("Transactions")
            .summary("Record a sale (the seller, scope `write`)")
            .description("Body `{buyerId, amount, shippingCosts}`: a user and two non-negative integer amounts in cents. Answers 201 with status `CREATED`; the original documented this under `/v2`.")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok(201, "The transaction", "Transaction")
            .errors(&[ValidationFailure, InvalidJson, IncorrectContentType, Unauthorized, AdvertisementNotFound]),
        create,
    )
    .resource(
        get("/advertisements/{itemId}/transactions", "listTransactions")
            .tag("Transactions")
            .summary("The ad's transactions, newest first (the seller: all; a buyer: theirs)")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok(200, "The transactions", "TransactionList")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound]),
        list,
    )
    .resource(
        get("/advertisements/{itemId}/transactions/{transactionId}", "getTransaction")
            .tag("Transactions")
            .summary("One transaction (the seller or its buyer, scope `read`)")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .path_param("transactionId", "The transaction's number within the ad.")
            .ok(200, "The transaction", "Transaction")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound, TransactionNotFound]),
        one,
    )
    .resource(
        transition(
            "/advertisements/{itemId}/transactions/{transactionId}/actions/complete",
            "completeTransaction",
            "Mark a transaction COMPLETED (the seller)",
        ),
        complete,
    )
    .resource(
        transition(
            "/advertisements/{itemId}/transactions/{transactionId}/actions/cancel",
            "cancelTransaction",
            "Mark a transaction CANCELLED (the seller or the buyer)",
        ),
        cancel,
    )
    .resource(
        post("/advertisements/{itemId}/upcall-confirmations", "confirmUpcall")
            .tag("Advertisements")
            .summary("Report a phone call about an ad (client token with scope `confirm_upcall`)")
            .description("Body `{callerPhoneNumber, calleePhoneNumber, startTime, endTime}`, all required strings; times ISO 8601 with an offset, `endTime` not before `startTime`. Answers 201 with no body; the call counts in the ad's statistics as a phone click. Only online ads take calls: any other is 404, as is an unknown one, whatever the body.")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok_empty(201, "Recorded")
            .errors(&[ValidationFailure, InvalidJson, IncorrectContentType, Unauthorized, AdvertisementNotFound]),
        upcall,
    )
    .resource(
        get("/advertisements/{itemId}/statistics", "getAdvertisementStatistics")
            .tag("Advertisements")
            .summary("What happened to an ad (the seller, scope `read`)")
            .authenticated()
            .name_param("itemId", "`m` followed by digits.")
            .ok(200, "The statistics", "Statistics")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound]),
        statistics,
    )
}

/// The ad, unless it is deleted or does not exist.
async fn existing_ad(conn: &mut dyn Conn, item: ItemId, now: i64) -> Result<AdRecord, ApiError> {
    ads::get(conn, item.number())
        .await?
        .filter(|ad| ad.status_at(now) != AdStatus::Deleted)
        .ok_or_else(|| ErrorCode::AdvertisementNotFound.into())
}

/// The ad behind a transaction request of `user`: 404 if it is gone, or if it is not online
/// and `user` has no part in it (neither its seller nor the buyer of one of its
/// transactions), so that a draft's existence does not leak. A buyer keeps seeing their
/// transactions after the seller paused or closed the ad.
async fn ad_for_transactions(
    conn: &mut dyn Conn,
    item: ItemId,
    user: i64,
    now: i64,
) -> Result<AdRecord, ApiError> {
    let ad = existing_ad(conn, item, now).await?;
    if ad.status_at(now) != AdStatus::Online
        && ad.seller_id != user
        && transactions::list(conn, ad.number, Some(user))
            .await?
            .is_empty()
    {
        return Err(ErrorCode::AdvertisementNotFound.into());
    }
    Ok(ad)
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
        "status": t.status,
        "createdDate": format_timestamp(t.created_at),
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    buyer_id: Option<Value>,
    amount: Option<Value>,
    shipping_costs: Option<Value>,
}

fn field(name: &str, code: &'static str, dutch: &str, french: &str) -> FieldError {
    FieldError::new(name, code, Text::new(dutch, french))
}

/// A non-negative integer amount of cents, or the field error.
fn amount(name: &str, value: Option<&Value>, errors: &mut Vec<FieldError>) -> Option<i64> {
    match value {
        None | Some(Value::Null) => {
            errors.push(field(name, "missing", "is verplicht", "est obligatoire"));
            None
        }
        Some(value) => match value.as_i64() {
            Some(n) if (0..=AMOUNT_MAX).contains(&n) => Some(n),
            _ => {
                errors.push(
                    field(
                        name,
                        "invalid-value",
                        "moet een geheel, niet-negatief bedrag in centen zijn",
                        "doit être un montant entier et positif en centimes",
                    )
                    .with_value(value.clone()),
                );
                None
            }
        },
    }
}

async fn create(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(seller, _): UserWith<need::Write>,
    Path(raw): Path<String>,
    body: Result<JsonBody<CreateBody>, ApiError>,
) -> Result<Json, ApiError> {
    let item = parse_item(&raw)?;
    let now = state.clock.now();
    let transaction = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                let ad = ad_for_transactions(conn, item, seller, now).await?;
                if ad.seller_id != seller {
                    return Err(ApiError::new(ErrorCode::Unauthorized));
                }
                let JsonBody(body) = body?;
                let mut errors = Vec::new();
                let buyer = match body.buyer_id.as_ref() {
                    None | Some(Value::Null) => {
                        errors.push(field(
                            "buyerId",
                            "missing",
                            "is verplicht",
                            "est obligatoire",
                        ));
                        None
                    }
                    // A user id is a positive integer; anything else is not one at all.
                    Some(value) => match value.as_i64().filter(|id| *id > 0) {
                        None => {
                            errors.push(
                                field(
                                    "buyerId",
                                    "invalid-value",
                                    "moet een gebruikersnummer (een positief geheel getal) zijn",
                                    "doit être un numéro d'utilisateur (un nombre entier positif)",
                                )
                                .with_value(value.clone()),
                            );
                            None
                        }
                        Some(id) if id == seller => {
                            // A sale to oneself would inflate the seller's record.
                            errors.push(
                                field(
                                    "buyerId",
                                    "buyer-is-seller",
                                    "is de verkoper zelf",
                                    "est le vendeur lui-même",
                                )
                                .with_value(value.clone()),
                            );
                            None
                        }
                        Some(id) if users::get(conn, id).await?.is_some() => Some(id),
                        Some(_) => {
                            errors.push(
                                field(
                                    "buyerId",
                                    "unknown-user",
                                    "is geen gebruiker",
                                    "n'est pas un utilisateur",
                                )
                                .with_value(value.clone()),
                            );
                            None
                        }
                    },
                };
                let price = amount("amount", body.amount.as_ref(), &mut errors);
                let shipping = amount("shippingCosts", body.shipping_costs.as_ref(), &mut errors);
                match (buyer, price, shipping) {
                    (Some(buyer), Some(price), Some(shipping)) if errors.is_empty() => Ok(
                        transactions::insert(conn, item.number(), buyer, price, shipping, now)
                            .await?,
                    ),
                    _ => Err(ApiError::validation(errors)),
                }
            })
        })
        .await?;
    let hal = state.hal(version);
    let body = transaction_json(&hal, item, &transaction);
    let location = hal.path(&format!(
        "/advertisements/{item}/transactions/{}",
        transaction.id
    ));
    Ok(Json::created(location, body))
}

async fn list(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Read>,
    Path(raw): Path<String>,
) -> Result<Json, ApiError> {
    let item = parse_item(&raw)?;
    let now = state.clock.now();
    let listed = state
        .db
        .read(move |conn| {
            Box::pin(async move {
                let ad = ad_for_transactions(conn, item, user, now).await?;
                let only = (ad.seller_id != user).then_some(user);
                let listed = transactions::list(conn, item.number(), only).await?;
                if only.is_some() && listed.is_empty() {
                    // Neither the seller nor a buyer of this ad.
                    return Err(ApiError::new(ErrorCode::Unauthorized));
                }
                Ok(listed)
            })
        })
        .await?;
    let hal = state.hal(version);
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

/// Reads a transaction for `user`: the seller and the buyer see it, others get 403 (or 404
/// for an ad that is not online, see [`ad_for_transactions`]).
async fn visible_transaction(
    conn: &mut dyn Conn,
    item: ItemId,
    id: i64,
    user: i64,
    now: i64,
) -> Result<(AdRecord, Transaction), ApiError> {
    let ad = ad_for_transactions(conn, item, user, now).await?;
    let transaction = transactions::get(conn, item.number(), id)
        .await?
        .ok_or(ErrorCode::TransactionNotFound)?;
    if ad.seller_id != user && transaction.buyer_id != user {
        return Err(ApiError::new(ErrorCode::Unauthorized));
    }
    Ok((ad, transaction))
}

async fn one(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Read>,
    Path((raw, raw_id)): Path<(String, String)>,
) -> Result<Json, ApiError> {
    let item = parse_item(&raw)?;
    let id = parse_id("transactionId", &raw_id)?;
    let now = state.clock.now();
    let (_, transaction) = state
        .db
        .read(move |conn| {
            Box::pin(async move { visible_transaction(conn, item, id, user, now).await })
        })
        .await?;
    Ok(Json::ok(transaction_json(
        &state.hal(version),
        item,
        &transaction,
    )))
}

/// Completes (the seller) or cancels (the seller or the buyer) a CREATED transaction.
async fn finish(
    state: AppState,
    version: &'static str,
    user: i64,
    raw: String,
    raw_id: String,
    to: &'static str,
) -> Result<Json, ApiError> {
    let item = parse_item(&raw)?;
    let id = parse_id("transactionId", &raw_id)?;
    let now = state.clock.now();
    let transaction = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                let (ad, transaction) = visible_transaction(conn, item, id, user, now).await?;
                if to == "COMPLETED" && ad.seller_id != user {
                    return Err(ApiError::new(ErrorCode::Unauthorized));
                }
                if !transactions::finish(conn, item.number(), id, to, now).await? {
                    return Err(ApiError::new(ErrorCode::ConflictingState).with_message(
                        Text::new(
                            format!("De transactie is al {}", transaction.status),
                            format!("La transaction est déjà {}", transaction.status),
                        ),
                    ));
                }
                Ok(transactions::get(conn, item.number(), id)
                    .await?
                    .ok_or(ErrorCode::TransactionNotFound)?)
            })
        })
        .await?;
    Ok(Json::ok(transaction_json(
        &state.hal(version),
        item,
        &transaction,
    )))
}

async fn complete(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Write>,
    Path((raw, raw_id)): Path<(String, String)>,
) -> Result<Json, ApiError> {
    finish(state, version, user, raw, raw_id, "COMPLETED").await
}

async fn cancel(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Write>,
    Path((raw, raw_id)): Path<(String, String)>,
) -> Result<Json, ApiError> {
    finish(state, version, user, raw, raw_id, "CANCELLED").await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpcallBody {
    caller_phone_number: Option<Value>,
    callee_phone_number: Option<Value>,
    start_time: Option<Value>,
    end_time: Option<Value>,
}

/// A checked upcall confirmation.
struct Call {
    caller_phone: String,
    callee_phone: String,
    start_time: i64,
    end_time: i64,
}

/// Every problem of an upcall body at once.
fn check_call(body: UpcallBody) -> Result<Call, ApiError> {
    let mut errors = Vec::new();
    let mut text = |name: &str, value: &Option<Value>| -> Option<String> {
        match value {
            None | Some(Value::Null) => {
                errors.push(field(name, "missing", "is verplicht", "est obligatoire"));
                None
            }
            Some(Value::String(s)) => Some(s.trim().to_owned()),
            Some(other) => {
                errors.push(
                    field(
                        name,
                        "invalid-value",
                        "moet tekst zijn",
                        "doit être du texte",
                    )
                    .with_value(other.clone()),
                );
                None
            }
        }
    };
    let caller_phone = text("callerPhoneNumber", &body.caller_phone_number);
    let callee_phone = text("calleePhoneNumber", &body.callee_phone_number);
    let start = text("startTime", &body.start_time);
    let end = text("endTime", &body.end_time);
    for (name, phone) in [
        ("callerPhoneNumber", &caller_phone),
        ("calleePhoneNumber", &callee_phone),
    ] {
        if let Some(phone) = phone
            && !plausible_phone(phone)
        {
            errors.push(
                field(
                    name,
                    "invalid-phone-number",
                    "is geen telefoonnummer",
                    "n'est pas un numéro de téléphone",
                )
                .with_value(phone.as_str()),
            );
        }
    }
    let mut time = |name: &str, value: &Option<String>| {
        value.as_deref().and_then(|v| {
            parse_timestamp(v).or_else(|| {
                errors.push(
                    field(
                        name,
                        "invalid-timestamp",
                        "moet ISO 8601 met tijdzone zijn (2024-05-01T12:00:00+02:00)",
                        "doit être ISO 8601 avec fuseau (2024-05-01T12:00:00+02:00)",
                    )
                    .with_value(v),
                );
                None
            })
        })
    };
    let start_time = time("startTime", &start);
    let end_time = time("endTime", &end);
    if let (Some(start), Some(end)) = (start_time, end_time)
        && end < start
    {
        let mut error = field(
            "endTime",
            "before-start-time",
            "ligt voor startTime",
            "est antérieur à startTime",
        );
        error.fields = vec!["startTime".into(), "endTime".into()];
        errors.push(error);
    }
    match (caller_phone, callee_phone, start_time, end_time) {
        (Some(caller_phone), Some(callee_phone), Some(start_time), Some(end_time))
            if errors.is_empty() =>
        {
            Ok(Call {
                caller_phone,
                callee_phone,
                start_time,
                end_time,
            })
        }
        _ => Err(ApiError::validation(errors)),
    }
}

async fn upcall(
    State(state): State<AppState>,
    ClientWith(client, _): ClientWith<need::ConfirmUpcall>,
    Path(raw): Path<String>,
    body: Result<JsonBody<UpcallBody>, ApiError>,
) -> Result<Response, ApiError> {
    let item = parse_item(&raw)?;
    let call = body.and_then(|JsonBody(body)| check_call(body));
    let now = state.clock.now();
    state
        .db
        .write(move |conn| {
            Box::pin(async move {
                // Calls are about ads people can see: any other is 404, before the body's
                // problems (there is nothing to report on).
                let ad = existing_ad(conn, item, now).await?;
                if ad.status_at(now) != AdStatus::Online {
                    return Err(ErrorCode::AdvertisementNotFound.into());
                }
                let call = call?;
                let upcall = Upcall {
                    client_id: &client,
                    caller_phone: &call.caller_phone,
                    callee_phone: &call.callee_phone,
                    start_time: call.start_time,
                    end_time: call.end_time,
                };
                transactions::insert_upcall(conn, ad.number, &upcall, now).await?;
                transactions::count(conn, Counter::PhoneClicks, &[(ad.number, 1)]).await?;
                Ok::<_, ApiError>(())
            })
        })
        .await?;
    Ok(StatusCode::CREATED.into_response())
}

async fn statistics(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Read>,
    Path(raw): Path<String>,
) -> Result<Json, ApiError> {
    let item = parse_item(&raw)?;
    let now = state.clock.now();
    let mut counts = state
        .db
        .read(move |conn| {
            Box::pin(async move {
                let ad = existing_ad(conn, item, now).await?;
                if ad.seller_id != user {
                    return Err(outsider(&ad, now));
                }
                Ok(transactions::statistics(conn, ad.number).await?)
            })
        })
        .await?;
    // Views this replica has counted but not written yet: a read does no write.
    counts.views += state.views.pending(item.number());
    let hal = state.hal(version);
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
