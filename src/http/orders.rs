//! Renewal of an advertisement, and the orders purchases make. Each handler runs one use
//! case of `usecase::orders`.

use serde_json::{Value, json};

use crate::domain::advertisement::ItemId;
use crate::domain::order::PurchaseRequest;
use crate::domain::time::format_timestamp;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::state::AppState;
use crate::store::orders::Product;
use crate::usecase::orders::{self, OrderWithProducts, Till};

use super::api::{Api, get, post};
use super::auth::{UserWith, need};
use super::extract::{Context, ItemPath, JsonBody, OrderPath, ProductPath};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let order_param = |operation: super::api::Operation| {
        operation
            .tag("Orders")
            .authenticated()
            .path_param("orderId", "The order's id.")
            .errors(&[ValidationFailure, Unauthorized, OrderNotFound])
    };
    api.resource(
        post("/advertisements/{itemId}/renew", "renewAdvertisement")
            .tag("Orders")
            .authenticated()
            .item_param()
            .summary("Renew an advertisement (the seller, scope `purchase`)")
            .description("Body `{\"pay\": true}`, optionally with the `orderId` of an open order of the caller's to add the renewal to (400 `unknown-order` for an order that is not theirs or does not exist, `invalid-order-state` for one paid or closed). Possible in the last 7 days before `closeDate` and for 30 days after it (else 400 `invalid-expiration`). The renewal costs the category's insertion fee and extends `closeDate` by the category's running days (from now, for an ad that expired; it comes back online). In the sandbox the order is paid at once, and so is an order of price 0; in production it is `payment required` and the renewal takes effect when the payment is confirmed, and a second renewal meanwhile is 409 `conflicting-state` naming the order. Answers 201 with the order, `Location` and `Content-Location` its address.")
            .body("application/json", "Purchase")
            .ok(201, "The order (Location and Content-Location: its address)", "Order")
            .errors(&[ValidationFailure, Unauthorized, AdvertisementNotFound, InvalidExpiration, UnknownOrder, InvalidOrderState, ConflictingState]),
        renew,
    )
    .resource(
        order_param(get("/orders/{orderId}", "getOrder"))
            .summary("An order of the caller's (scope `read`; anyone else's is 404)")
            .ok(200, "The order", "Order"),
        one_order,
    )
    .resource(
        order_param(get("/orders/{orderId}/products", "listOrderProducts"))
            .summary("The products of an order of the caller's")
            .ok(200, "The products", "OrderProductList"),
        products,
    )
    .resource(
        order_param(get("/orders/{orderId}/products/{productId}", "getOrderProduct"))
            .path_param("productId", "The product's number within the order.")
            .summary("One product of an order of the caller's")
            .ok(200, "The product", "OrderProduct"),
        one_product,
    )
}

fn product_json(hal: &Hal, product: &Product) -> Value {
    let order = hal.path(&format!("/orders/{}", product.order_id));
    let item = ItemId::from_number(product.item_number);
    let mut body = json!({
        "_links": hal
            .links(format!("{order}/products/{}", product.id), Resource::OrderProduct)
            .rel(Rel::Order, &order)
            .rel(Rel::Advertisement, hal.path(&format!("/advertisements/{item}")))
            .build(),
        "productId": product.id,
        "type": product.kind.as_str(),
        "description": product.description,
        "price": product.price,
        "vat": product.vat,
    });
    if let Some(feature) = product.feature {
        body["feature"] = json!(feature.as_str());
    }
    body
}

fn order_json(hal: &Hal, found: &OrderWithProducts) -> Value {
    let order = &found.order;
    let path = hal.path(&format!("/orders/{}", order.id));
    let products: Vec<Value> = found
        .products
        .iter()
        .map(|p| product_json(hal, p))
        .collect();
    let mut body = json!({
        "_links": hal
            .links(&path, Resource::Order)
            .rel(Rel::OrderProducts, format!("{path}/products"))
            .build(),
        "_embedded": {hal.rel(Rel::OrderProducts): products},
        "orderId": order.id,
        "status": order.status.as_str(),
        "price": found.price(),
        "vat": found.products.iter().map(|p| p.vat).sum::<i64>(),
        "createdDate": format_timestamp(order.created_at),
    });
    if let Some(paid) = order.paid_at {
        body["paidDate"] = json!(format_timestamp(paid));
    }
    body
}

/// 201 with the order made by a purchase (a feature, a renewal) at its `Location`.
pub(super) fn order_created(hal: &Hal, order: &OrderWithProducts) -> Json {
    let location = hal.path(&format!("/orders/{}", order.order.id));
    Json::created(location, order_json(hal, order))
}

pub(super) fn till(state: &AppState) -> Till {
    crate::state::till(&state.config)
}

async fn renew(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Purchase>,
    ItemPath(item): ItemPath,
    body: Result<JsonBody<PurchaseRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let (till, now) = (till(&state), state.clock.now());
    let order = state
        .db
        .write(move |conn| Box::pin(orders::renew(conn, user, item, request, till, now)))
        .await?;
    Ok(order_created(&hal, &order))
}

/// Order `id` if `user` bought it; to anyone else it does not exist.
async fn buyers_order(state: &AppState, user: i64, id: i64) -> Result<OrderWithProducts, ApiError> {
    let order = state
        .db
        .read(move |conn| Box::pin(orders::of_buyer(conn, user, id)))
        .await?;
    Ok(order)
}

async fn one_order(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    OrderPath(id): OrderPath,
) -> Result<Json, ApiError> {
    let order = buyers_order(&state, user, id).await?;
    Ok(Json::ok(order_json(&hal, &order)))
}

async fn products(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    OrderPath(id): OrderPath,
) -> Result<Json, ApiError> {
    let order = buyers_order(&state, user, id).await?;
    let path = hal.path(&format!("/orders/{id}"));
    let items: Vec<Value> = order
        .products
        .iter()
        .map(|p| product_json(&hal, p))
        .collect();
    Ok(Json::ok(json!({
        "_links": hal
            .links(format!("{path}/products"), Resource::OrderProductList)
            .rel(Rel::Order, &path)
            .build(),
        "_embedded": {hal.rel(Rel::OrderProducts): items},
    })))
}

async fn one_product(
    Context { state, hal }: Context,
    UserWith(user, _): UserWith<need::Read>,
    ProductPath(id, product): ProductPath,
) -> Result<Json, ApiError> {
    let order = buyers_order(&state, user, id).await?;
    let found = order
        .products
        .iter()
        .find(|p| p.id == product)
        .ok_or_else(|| ApiError::new(ErrorCode::OrderNotFound))?;
    Ok(Json::ok(product_json(&hal, found)))
}
