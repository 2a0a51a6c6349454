//! The schemas of reviews, orders, features and purchases (a part of [`super::all`], kept apart
//! to keep each file readable).

use serde_json::{Value, json};

use super::{object, paged};

/// The schemas, given `all`'s builders of `_links` and `_embedded` members.
pub(super) fn schemas(
    links: &dyn Fn(&[&str]) -> Value,
    embedded: &dyn Fn(&str, &str) -> Value,
) -> Value {
    json!({
        "Review": object(
            json!({
                "_links": links(&["user-reviews"]),
                "reviewId": {"type": "integer"},
                "name": {"type": "string", "description": "The reviewer's name."},
                "place": {"type": "string", "description": "The reviewer's town when they wrote the review; empty where unknown."},
                "date": {"type": "string", "format": "date-time"},
                "reason": {"type": "string", "description": "The title of the advertisement the transaction was about."},
                "overallScore": {"type": "integer", "minimum": 1, "maximum": 5},
                "content": {"type": "string"},
                "subScores": {"type": "array", "items": object(
                    json!({"key": {"type": "string", "enum": ["communication", "accuracy", "delivery"]}, "description": {"type": "string"}, "score": {"type": "integer", "minimum": 1, "maximum": 5}}),
                    &["key", "description", "score"],
                )},
            }),
            &["reviewId", "name", "place", "date", "reason", "overallScore", "content", "subScores"],
        ),
        "ReviewList": paged(object(
            json!({
                "_links": links(&[]),
                "_embedded": embedded("user-review", "Review"),
                "numberOfReviews": {"type": "integer"},
                "averageScore": {"type": "number", "description": "One decimal; 0 without reviews."},
                "averageSubScores": {"type": "array", "items": object(
                    json!({"key": {"type": "string", "enum": ["communication", "accuracy", "delivery"]}, "description": {"type": "string"}, "score": {"type": "number"}}),
                    &["key", "description", "score"],
                )},
            }),
            &["numberOfReviews", "averageScore", "averageSubScores"],
        )),
        "Order": object(
            json!({
                "_links": links(&["order-products"]),
                "_embedded": embedded("order-products", "OrderProduct"),
                "orderId": {"type": "integer"},
                "status": {"type": "string", "enum": ["new", "payment required", "paid", "refused", "closed"]},
                "price": {"type": "integer", "description": "Euro cents, VAT included: the products' together."},
                "vat": {"type": "integer", "description": "The VAT in `price`, euro cents."},
                "createdDate": {"type": "string", "format": "date-time"},
                "paidDate": {"type": "string", "format": "date-time"},
            }),
            &["orderId", "status", "price", "vat", "createdDate"],
        ),
        "OrderProduct": object(
            json!({
                "_links": links(&["order", "advertisement"]),
                "productId": {"type": "integer"},
                "type": {"type": "string", "enum": ["insertion", "renewal", "feature"]},
                "feature": {"type": "string", "description": "The feature bought, for a product of type `feature`."},
                "description": {"type": "string"},
                "price": {"type": "integer", "description": "Euro cents, VAT included."},
                "vat": {"type": "integer", "description": "The VAT in `price`, euro cents."},
            }),
            &["productId", "type", "description", "price", "vat"],
        ),
        "OrderProductList": object(
            json!({"_links": links(&["order"]), "_embedded": embedded("order-products", "OrderProduct")}),
            &[],
        ),
        "Feature": object(
            json!({
                "_links": links(&["advertisement", "buy-feature"]),
                "name": {"type": "string", "enum": ["omhoogplaatsen", "dagtopper", "dagtopper3", "dagtopper7", "homepaginaAdvertentie", "url", "opvalsticker"]},
                "price": {"type": "integer", "description": "Euro cents, VAT included; absent where the ad's category does not sell it."},
                "days": {"type": "integer", "description": "How long its effect lasts."},
                "available": {"type": "boolean"},
                "active": {"type": "boolean"},
            }),
            &["name", "available", "active"],
        ),
        "FeatureList": object(
            json!({"_links": links(&["advertisement"]), "_embedded": embedded("advertisement-feature", "Feature")}),
            &[],
        ),
        "PurchasedFeature": object(
            json!({
                "name": {"type": "string"},
                "purchaseDate": {"type": "string", "format": "date-time"},
            }),
            &["name", "purchaseDate"],
        ),
        "PurchasedFeatureList": object(
            json!({"_links": links(&["advertisement"]), "_embedded": embedded("advertisement-purchased-feature", "PurchasedFeature")}),
            &[],
        ),
        "Purchase": object(
            json!({
                "pay": {"type": "boolean", "const": true, "description": "Must be true: a purchase is paid."},
                "orderId": {"type": ["integer", "null"], "minimum": 1, "description": "An open order of the caller's to add the product to; absent or null: a new order."},
            }),
            &["pay"],
        ),
        "NewReview": object(
            json!({
                "overallScore": {"type": "integer", "minimum": 1, "maximum": 5},
                "content": {"type": "string", "minLength": 1, "maxLength": 1000},
                "subScores": {"type": "array", "maxItems": 3, "items": object(
                    json!({"key": {"type": "string", "enum": ["communication", "accuracy", "delivery"]}, "score": {"type": "integer", "minimum": 1, "maximum": 5}}),
                    &["key", "score"],
                )},
            }),
            &["overallScore", "content"],
        ),
    })
}
