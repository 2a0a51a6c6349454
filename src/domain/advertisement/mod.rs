//! Advertisements: identifiers, price models, category attributes, the lifecycle, and the
//! check of the content a client sends. Every problem of one request is reported together.
//!
//! The parts live in files of their own; their items are used from here
//! (`domain::advertisement::ItemId`).

mod attributes;
mod content;
mod item_id;
mod lifecycle;
mod price;

use serde_json::Value;

pub use attributes::{check_attributes, collect_attributes};
pub use content::{
    AdContent, DESCRIPTION_MAX, Stored, TITLE_MAX, TITLE_MIN, category_closed, check_content,
    named_category, normalize_postcode, requested_status,
};
pub use item_id::ItemId;
pub use lifecycle::{
    Actor, AdStatus, DAY, Dates, PERIOD_MAX_DAYS, RENEW_GRACE_DAYS, RENEW_WINDOW_DAYS,
    effective_status, listed_statuses, may_transition, new_ad_status, publishes, renew_possible,
    restored_status,
};
pub use price::{AMOUNT_MAX, ModelType, PriceBefore, PriceModel, reconcile_reserved};

use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;

/// The members of an advertisement body that are not category attributes.
pub const STANDARD_FIELDS: &[&str] = &[
    "itemId",
    "title",
    "description",
    "categoryId",
    "status",
    "startDate",
    "closeDate",
    "renewPossible",
    "locale",
    "reserved",
    "showOnMap",
    "websiteUrl",
    "priceModel",
    "location",
    "seller",
    "rejectionReason",
    "attributes",
    // Written only in search results (metres from the asked postcode); reserved so that no
    // category attribute takes the name.
    "distance",
    // The features whose effect runs (docs/API.md "Features").
    "activeFeatures",
    // A draft that waits for its insertion fee's order (docs/API.md "Insertion fees").
    "awaitingPayment",
];

/// The members of an advertisement that only Souk writes. PUT ignores them, so that a client
/// may send back what it read.
pub const READ_ONLY_FIELDS: &[&str] = &[
    "itemId",
    "startDate",
    "closeDate",
    "renewPossible",
    "seller",
    "rejectionReason",
    "distance",
    "activeFeatures",
    "awaitingPayment",
];

fn error(
    field: &str,
    code: &'static str,
    dutch: impl Into<String>,
    french: impl Into<String>,
) -> FieldError {
    FieldError::new(field, code, Text::new(dutch, french))
}

/// The refusal of a line break or another control character in text of one line.
fn not_one_line(field: &str, value: &str) -> FieldError {
    error(
        field,
        "invalid-value",
        "mag geen regeleinden of stuurtekens bevatten",
        "ne peut contenir ni sauts de ligne ni caractères de contrôle",
    )
    .with_value(value)
}

/// An integer from a JSON number or a numeric string.
fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn decimal(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}
