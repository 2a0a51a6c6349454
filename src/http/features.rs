//! The features of an advertisement (what its category sells, and buying one) and the
//! features bought for it. Each handler runs one use case of `usecase::features`.

use serde_json::{Value, json};

use crate::access::Caller;
use crate::domain::advertisement::ItemId;
use crate::domain::feature::Feature;
use crate::domain::order::PurchaseRequest;
use crate::domain::time::format_timestamp;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::usecase::features::{self, Offer};

use super::ads::list_of_ad;
use super::api::{Api, Operation, get, post};
use super::auth::{UserWith, ad_reader, need};
use super::extract::{Context, FeaturePath, ItemPath, JsonBody};
use super::orders::{order_created, till};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let features = |operation: Operation| operation.tag("Features").authenticated().item_param();
    let names: Vec<&str> = Feature::ALL.iter().map(|f| f.as_str()).collect();
    let one = |operation: Operation| {
        features(operation).path_enum_param(
            "featureName",
            &names,
            "The feature's name (another name is 404 `feature-not-found`, or 400 `invalid-feature-type` to buy).",
        )
    };
    api.resource(
        features(get("/advertisements/{itemId}/features", "listAdvertisementFeatures"))
            .summary("The features of an advertisement: price, whether it can be bought now, whether it runs")
            .ok(200, "The features", "FeatureList")
            .errors(&[ValidationFailure, AdvertisementNotFound]),
        list,
    )
    .resource(
        one(get("/advertisements/{itemId}/features/{featureName}", "getAdvertisementFeature"))
            .summary("One feature of an advertisement")
            .ok(200, "The feature", "Feature")
            .errors(&[ValidationFailure, AdvertisementNotFound, FeatureNotFound]),
        one_feature,
    )
    .resource(
        one(post("/advertisements/{itemId}/features/{featureName}/buy-feature", "buyAdvertisementFeature"))
            .summary("Buy a feature for an advertisement (the seller, scope `purchase`)")
            .description("Body `{\"pay\": true}`, optionally with the `orderId` of an open order of the caller's (400 `unknown-order`, `invalid-order-state` as for a renewal). An unknown feature name is 400 `invalid-feature-type`; a feature the ad's category does not sell, or any feature of an ad that is not online, 400 `feature-not-allowed`. The price is the price list's for the ad's category, for its number of days; the effect starts when the order is paid (at once in the sandbox) and adds its days to what is left of the same effect (a bump starts again). Answers 201 with the order, `Location` and `Content-Location` its address.")
            .body("application/json", "Purchase")
            .ok(201, "The order (Location and Content-Location: its address)", "Order")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound, InvalidFeatureType, FeatureNotAllowed, UnknownOrder, InvalidOrderState]),
        buy,
    )
    .resource(
        features(get("/advertisements/{itemId}/purchased-features", "listPurchasedFeatures"))
            .tag("Features")
            .summary("The features bought for an advertisement and paid, newest first (the seller, scope `read`)")
            .ok(200, "The purchased features", "PurchasedFeatureList")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound]),
        purchased,
    )
}

fn feature_json(hal: &Hal, item: ItemId, offer: &Offer) -> Value {
    let path = hal.path(&format!(
        "/advertisements/{item}/features/{}",
        offer.feature.as_str()
    ));
    let mut links = hal.links(&path, Resource::Feature).rel(
        Rel::Advertisement,
        hal.path(&format!("/advertisements/{item}")),
    );
    if offer.available {
        links = links.rel(Rel::BuyFeature, format!("{path}/buy-feature"));
    }
    let mut body = json!({
        "_links": links.build(),
        "name": offer.feature.as_str(),
        "available": offer.available,
        "active": offer.active,
    });
    if let Some(price) = offer.price {
        body["price"] = json!(price.price);
        body["days"] = json!(price.days);
    }
    body
}

async fn list(
    Context { state, hal }: Context,
    caller: Caller,
    ItemPath(item): ItemPath,
) -> Result<Json, ApiError> {
    let (reader, now) = (ad_reader(&caller), state.clock.now());
    let offers = state
        .db
        .read(move |conn| Box::pin(features::of_ad(conn, item, reader, now)))
        .await?;
    let items = offers.iter().map(|o| feature_json(&hal, item, o)).collect();
    let kind = (Resource::FeatureList, Rel::AdvertisementFeature);
    Ok(Json::ok(list_of_ad(&hal, item, "features", kind, items)))
}

async fn one_feature(
    Context { state, hal }: Context,
    caller: Caller,
    FeaturePath(item, name): FeaturePath,
) -> Result<Json, ApiError> {
    let (reader, now) = (ad_reader(&caller), state.clock.now());
    let offer = state
        .db
        .read(move |conn| {
            let name = name.clone();
            Box::pin(async move { features::one_of_ad(conn, item, &name, reader, now).await })
        })
        .await?;
    Ok(Json::ok(feature_json(&hal, item, &offer)))
}

async fn buy(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Purchase>,
    FeaturePath(item, name): FeaturePath,
    body: Result<JsonBody<PurchaseRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let (till, now) = (till(&state), state.clock.now());
    let order = state
        .db
        .write(move |conn| {
            Box::pin(
                async move { features::buy(conn, user, item, &name, request, till, now).await },
            )
        })
        .await?;
    Ok(order_created(&hal, &order))
}

async fn purchased(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    ItemPath(item): ItemPath,
) -> Result<Json, ApiError> {
    let now = state.clock.now();
    let bought = state
        .db
        .read(move |conn| Box::pin(features::purchased(conn, user, item, now)))
        .await?;
    let items = bought
        .iter()
        .map(|p| {
            json!({
                "name": p.feature.as_str(),
                "purchaseDate": format_timestamp(p.paid_at),
            })
        })
        .collect();
    let kind = (
        Resource::PurchasedFeatureList,
        Rel::AdvertisementPurchasedFeature,
    );
    let list = list_of_ad(&hal, item, "purchased-features", kind, items);
    Ok(Json::ok(list))
}
