//! The category tree: L1 categories group L2 (leaf) categories; ads live in leaves, which
//! carry the listing fees and the definitions of the ad attributes.
//!
//! The taxonomy file (`data/categories.json`, and what `souk categories import` reads) is the
//! serde form of these types; `domain::taxonomy` checks it completely before anything is
//! stored.

use serde::{Deserialize, Serialize};

use super::locale::Labels;
use super::text_enum;

text_enum! {
    /// Open categories take new ads; a closed one keeps those it has.
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum CategoryStatus {
        Open = "open",
        Closed = "closed",
    }
}

/// A category as stored: an L1 (no parent, no leaf details) or an L2 leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Category {
    pub id: i64,
    pub parent_id: Option<i64>,
    pub status: CategoryStatus,
    pub labels: Labels,
    /// Present on L2 categories only.
    pub leaf: Option<Leaf>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    pub fees: Fees,
    pub attributes: Vec<AttributeDefinition>,
}

/// Listing fees of a leaf category, in euro cents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fees {
    pub insertion_fee: i64,
    /// How many days an ad runs before it expires.
    pub running_days: i64,
    #[serde(default)]
    pub running_subscriptions: Vec<Subscription>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Subscription {
    pub duration_days: i64,
    pub fee: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum AttributeType {
    String,
    List,
    Number,
    Double,
}

/// How an ad attribute of a leaf category is written and checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttributeDefinition {
    pub key: String,
    pub labels: Labels,
    #[serde(rename = "type")]
    pub kind: AttributeType,
    #[serde(default)]
    pub mandatory: bool,
    #[serde(default)]
    pub searchable: bool,
    #[serde(default = "yes")]
    pub writable: bool,
    #[serde(default = "yes")]
    pub updateable: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<AttributeOption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<String>,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttributeOption {
    pub key: String,
    pub labels: Labels,
}
