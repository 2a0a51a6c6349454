//! Reviews of sellers: the buyer of a completed transaction writes one; anyone with a token
//! reads a seller's. Each handler runs one use case of `usecase::reviews`.

use serde_json::{Value, json};

use crate::access::Caller;
use crate::domain::locale::Language;
use crate::domain::review::{Aspect, ReviewRequest, average};
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::store::reviews::Review;
use crate::usecase::reviews;

use super::api::{Api, get, post};
use super::auth::{UserWith, need};
use super::extract::{Context, JsonBody, PageQuery, Query, ReviewPath, TransactionPath, UserPath};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    api.resource(
        post("/advertisements/{itemId}/transactions/{transactionId}/review", "reviewSeller")
            .tag("Reviews")
            .authenticated()
            .item_param()
            .path_param("transactionId", "The transaction's number within the ad.")
            .summary("The buyer reviews the seller of a completed transaction (scope `write`)")
            .description("Body `{overallScore, content, subScores}`: `overallScore` a whole number from 1 to 5, `content` 1 to 1,000 characters (lines are fine), `subScores` optional, `[{key, score}]` with `key` one of `communication`, `accuracy` (the thing was as described), `delivery`, each at most once, `score` 1 to 5. Only the transaction's buyer may review (403 for its seller), only once it is `COMPLETED` and only once per transaction (409 `conflicting-state` otherwise). Answers 201 with the review; Location is its address under the seller.")
            .body("application/json", "NewReview")
            .ok(201, "The review (Location: its address)", "Review")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound, TransactionNotFound, ConflictingState]),
        write,
    )
    .resource(
        get("/users/{userId}/reviews", "listUserReviews")
            .tag("Reviews")
            .authenticated()
            .path_param("userId", "The seller's id.")
            .summary("The reviews of a seller, newest first, with the averages")
            .description("`offset` (default 0) and `limit` (default 30, at most 100), else 400 `pagination-invalid`. `averageScore` and each of `averageSubScores` have one decimal and are 0 where there is nothing to average.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "Default 0.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 30.")
            .ok(200, "A page of reviews", "ReviewList")
            .errors(&[ValidationFailure, PaginationInvalid, UserNotFound]),
        list,
    )
    .resource(
        get("/users/{userId}/reviews/{reviewId}", "getUserReview")
            .tag("Reviews")
            .authenticated()
            .path_param("userId", "The seller's id.")
            .path_param("reviewId", "The review's id.")
            .summary("One review of a seller")
            .ok(200, "The review", "Review")
            .errors(&[ValidationFailure, UserNotFound, ReviewNotFound]),
        one,
    )
}

fn review_json(hal: &Hal, language: Language, review: &Review) -> Value {
    let list = hal.path(&format!("/users/{}/reviews", review.seller_id));
    let sub_scores: Vec<Value> = Aspect::ALL
        .into_iter()
        .zip(review.sub_scores())
        .filter_map(|(aspect, score)| {
            score.map(|score| {
                json!({"key": aspect.as_str(), "description": aspect.description(language), "score": score})
            })
        })
        .collect();
    let mut body = reviews::members(review);
    let links = hal
        .links(format!("{list}/{}", review.id), Resource::Review)
        .rel(Rel::UserReviews, &list)
        .build();
    body.insert("_links".into(), links);
    body.insert("subScores".into(), sub_scores.into());
    Value::Object(body)
}

async fn write(
    Context { state, hal }: Context,
    UserWith(reviewer, _): UserWith<need::Write>,
    TransactionPath(item, id): TransactionPath,
    body: Result<JsonBody<ReviewRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let now = state.clock.now();
    let review = state
        .db
        .write(move |conn| Box::pin(reviews::write(conn, reviewer, item, id, request, now)))
        .await?;
    let body = review_json(&hal, state.config.region.language(), &review);
    let location = hal.path(&format!(
        "/users/{}/reviews/{}",
        review.seller_id, review.id
    ));
    Ok(Json::created(location, body))
}

async fn list(
    Context { state, hal }: Context,
    _caller: Caller,
    UserPath(seller): UserPath,
    Query(query): Query<PageQuery>,
) -> Result<Json, ApiError> {
    let page = query.page(30, 100)?;
    let (listed, totals) = state
        .db
        .read(move |conn| Box::pin(reviews::of_seller(conn, seller, page.bounds())))
        .await?;
    let language = state.config.region.language();
    let path = hal.path(&format!("/users/{seller}/reviews"));
    let items: Vec<Value> = listed
        .iter()
        .map(|review| review_json(&hal, language, review))
        .collect();
    let averages: Vec<Value> = Aspect::ALL
        .into_iter()
        .zip(totals.aspects)
        .map(|(aspect, (sum, count))| {
            json!({"key": aspect.as_str(), "description": aspect.description(language), "score": average(sum, count)})
        })
        .collect();
    Ok(Json::ok(json!({
        "_links": hal
            .links(&path, Resource::ReviewList)
            .pagination(&path, page, totals.reviews as u64)
            .build(),
        "_embedded": {hal.rel(Rel::UserReview): items},
        "numberOfReviews": totals.reviews,
        "averageScore": average(totals.overall_sum, totals.reviews),
        "averageSubScores": averages,
        "totalCount": totals.reviews,
        "offset": page.offset,
        "limit": page.limit,
    })))
}

async fn one(
    Context { state, hal }: Context,
    _caller: Caller,
    ReviewPath(seller, id): ReviewPath,
) -> Result<Json, ApiError> {
    let review = state
        .db
        .read(move |conn| Box::pin(reviews::one(conn, seller, id)))
        .await?;
    Ok(Json::ok(review_json(
        &hal,
        state.config.region.language(),
        &review,
    )))
}
