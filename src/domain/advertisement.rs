//! Advertisements: identifiers, price models, category attributes, the lifecycle, and the
//! checks of a body a client sends. Every problem of one request is reported together.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};

use super::category::{AttributeDefinition, AttributeType, Category, CategoryStatus};
use super::locale::{Locale, Text};
use super::text::{is_multiline, is_one_line};
use crate::error::FieldError;

pub const TITLE_MIN: usize = 2;
pub const TITLE_MAX: usize = 60;
pub const DESCRIPTION_MAX: usize = 4000;
/// The largest amount Souk takes: ten million euro, in cents.
pub const AMOUNT_MAX: i64 = 1_000_000_000;
/// Renewal is allowed in the last days before `closeDate`.
pub const RENEW_WINDOW_DAYS: i64 = 7;

/// `m` followed by digits: the id of an advertisement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemId(i64);

impl ItemId {
    /// `m` and the number as Souk writes it: no sign, no leading zero (`m012` would be a
    /// second name for `m12`).
    pub fn parse(text: &str) -> Option<ItemId> {
        let digits = text.strip_prefix('m')?;
        if digits.is_empty()
            || digits.len() > 18
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok().filter(|n| *n > 0).map(ItemId)
    }

    pub fn from_number(number: i64) -> ItemId {
        ItemId(number)
    }

    pub fn number(self) -> i64 {
        self.0
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}", self.0)
    }
}

fn error(
    field: &str,
    code: &'static str,
    dutch: impl Into<String>,
    french: impl Into<String>,
) -> FieldError {
    FieldError::new(field, code, Text::new(dutch, french))
}

fn missing(field: &str) -> FieldError {
    error(field, "missing", "is verplicht", "est obligatoire")
}

/// The price models of the original.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    Fixed,
    Bidding,
    ToBeDiscussed,
    ByRequest,
    Trade,
    SeeDescription,
    BuyItNow,
    Reserved,
}

impl ModelType {
    const ALL: [ModelType; 8] = [
        ModelType::Fixed,
        ModelType::Bidding,
        ModelType::ToBeDiscussed,
        ModelType::ByRequest,
        ModelType::Trade,
        ModelType::SeeDescription,
        ModelType::BuyItNow,
        ModelType::Reserved,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ModelType::Fixed => "fixed",
            ModelType::Bidding => "bidding",
            ModelType::ToBeDiscussed => "to be discussed",
            ModelType::ByRequest => "by request",
            ModelType::Trade => "trade",
            ModelType::SeeDescription => "see description",
            ModelType::BuyItNow => "buy it now",
            ModelType::Reserved => "reserved",
        }
    }

    fn parse(text: &str) -> Option<ModelType> {
        ModelType::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// A checked price model; amounts in euro cents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriceModel {
    pub model_type: ModelType,
    pub asking_price: Option<i64>,
    pub minimal_bid: Option<i64>,
    pub retail_price: Option<i64>,
}

impl PriceModel {
    pub fn to_json(&self) -> Value {
        let mut body = Map::new();
        body.insert("modelType".into(), json!(self.model_type.as_str()));
        for (key, amount) in [
            ("askingPrice", self.asking_price),
            ("minimalBid", self.minimal_bid),
            ("retailPrice", self.retail_price),
        ] {
            if let Some(amount) = amount {
                body.insert(key.into(), json!(amount));
            }
        }
        Value::Object(body)
    }

    /// Checks a `priceModel` object: the model's amounts present, others absent, all
    /// non-negative integer cents (numeric strings accepted, as clients of the original
    /// send them).
    pub fn parse(value: Option<&Value>) -> Result<PriceModel, Vec<FieldError>> {
        let Some(object) = value.and_then(Value::as_object) else {
            return Err(vec![missing("priceModel")]);
        };
        let mut errors = Vec::new();
        let model_type = match object.get("modelType").and_then(Value::as_str) {
            None => {
                errors.push(missing("priceModel.modelType"));
                None
            }
            Some(text) => ModelType::parse(text).or_else(|| {
                errors.push(
                    error(
                        "priceModel.modelType",
                        "unknown-model-type",
                        "is geen bekend prijstype",
                        "n'est pas un type de prix connu",
                    )
                    .with_value(text),
                );
                None
            }),
        };
        let mut amount = |key: &str| -> Option<i64> {
            let field = format!("priceModel.{key}");
            let value = object.get(key)?;
            match integer(value) {
                Some(n) if n < 0 => {
                    errors.push(
                        error(
                            &field,
                            "negative",
                            "mag niet negatief zijn",
                            "ne peut pas être négatif",
                        )
                        .with_value(n),
                    );
                    None
                }
                Some(n) if n > AMOUNT_MAX => {
                    errors.push(
                        error(&field, "too-large", "is te hoog", "est trop élevé").with_value(n),
                    );
                    None
                }
                Some(n) => Some(n),
                None => {
                    errors.push(
                        error(
                            &field,
                            "invalid-value",
                            "moet een geheel bedrag in centen zijn",
                            "doit être un montant entier en centimes",
                        )
                        .with_value(value.clone()),
                    );
                    None
                }
            }
        };
        let asking_price = amount("askingPrice");
        let minimal_bid = amount("minimalBid");
        let retail_price = amount("retailPrice");
        let Some(model_type) = model_type else {
            return Err(errors);
        };
        let (needs, allowed): (&[&str], &[&str]) = match model_type {
            ModelType::Fixed => (&["askingPrice"], &["askingPrice", "retailPrice"]),
            ModelType::BuyItNow => (&["askingPrice"], &["askingPrice", "retailPrice"]),
            ModelType::Bidding => (
                &["minimalBid"],
                &["minimalBid", "askingPrice", "retailPrice"],
            ),
            _ => (&[], &["retailPrice"]),
        };
        for key in needs {
            if !object.contains_key(*key) {
                errors.push(missing(&format!("priceModel.{key}")));
            }
        }
        for key in ["askingPrice", "minimalBid", "retailPrice"] {
            if object.contains_key(key) && !allowed.contains(&key) {
                errors.push(error(
                    &format!("priceModel.{key}"),
                    "not-allowed",
                    format!("hoort niet bij prijstype `{}`", model_type.as_str()),
                    format!("n'appartient pas au type de prix `{}`", model_type.as_str()),
                ));
            }
        }
        if let (Some(bid), Some(asking)) = (minimal_bid, asking_price)
            && bid > asking
        {
            let mut e = error(
                "priceModel.minimalBid",
                "above-asking-price",
                "mag niet hoger zijn dan de vraagprijs",
                "ne peut pas dépasser le prix demandé",
            );
            e.fields = vec![
                "priceModel.minimalBid".into(),
                "priceModel.askingPrice".into(),
            ];
            errors.push(e);
        }
        if errors.is_empty() {
            Ok(PriceModel {
                model_type,
                asking_price,
                minimal_bid,
                retail_price,
            })
        } else {
            Err(errors)
        }
    }
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

/// The category attributes of an ad: the flat members of the body that are not standard
/// fields, or the original's list form `"attributes": [{"key": .., "value": ..}]`.
pub fn collect_attributes(
    body: &Map<String, Value>,
    standard: &[&str],
) -> Result<BTreeMap<String, Value>, Vec<FieldError>> {
    let mut attributes = BTreeMap::new();
    let mut errors = Vec::new();
    for (key, value) in body {
        if !standard.contains(&key.as_str()) && !key.starts_with('_') && key != "attributes" {
            attributes.insert(key.clone(), value.clone());
        }
    }
    match body.get("attributes") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let key = item.get("key").and_then(Value::as_str);
                match (key, item.get("value")) {
                    (Some(key), Some(value)) => {
                        if attributes.insert(key.to_owned(), value.clone()).is_some() {
                            errors.push(error(
                                &format!("attributes[{i}]"),
                                "duplicate",
                                format!("attribuut `{key}` staat er twee keer"),
                                format!("l'attribut `{key}` figure deux fois"),
                            ));
                        }
                    }
                    _ => errors.push(error(
                        &format!("attributes[{i}]"),
                        "invalid-value",
                        "moet `key` en `value` hebben",
                        "doit avoir `key` et `value`",
                    )),
                }
            }
        }
        Some(_) => errors.push(error(
            "attributes",
            "invalid-value",
            "moet een lijst van {key, value} zijn",
            "doit être une liste de {key, value}",
        )),
    }
    if errors.is_empty() {
        Ok(attributes)
    } else {
        Err(errors)
    }
}

/// Checks attributes against the leaf's definitions; `previous` holds the values the ad
/// has stored on an update in the same category. Returns the typed values.
///
/// On an update, a value the ad already holds is kept as it is without being judged again:
/// the category's definitions may have changed since the ad was placed (an option or an
/// attribute removed, a bound moved, an attribute made mandatory), and the seller must
/// still be able to pause, close or edit the ad (docs/LIFECYCLE.md). What a request
/// changes or adds meets the definitions of today. An attribute that is not `updateable`
/// keeps the value it has: changing or removing it is `not-updateable`.
pub fn check_attributes(
    given: &BTreeMap<String, Value>,
    definitions: &[AttributeDefinition],
    previous: Option<&Map<String, Value>>,
) -> Result<Map<String, Value>, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut checked = Map::new();
    let stored = |key: &str| previous.and_then(|p| p.get(key));
    let not_updateable = |key: &str| {
        error(
            key,
            "not-updateable",
            "kan niet meer worden gewijzigd",
            "ne peut plus être modifié",
        )
    };
    for (key, value) in given {
        if definitions.iter().any(|d| &d.key == key) {
            continue;
        }
        if stored(key) == Some(value) {
            checked.insert(key.clone(), value.clone());
        } else {
            errors.push(error(
                key,
                "unknown-attribute",
                "is geen attribuut van deze categorie",
                "n'est pas un attribut de cette catégorie",
            ));
        }
    }
    for definition in definitions {
        let key = &definition.key;
        let before = stored(key);
        let value = given.get(key).filter(|v| !v.is_null() && *v != &json!(""));
        let Some(value) = value else {
            if before.is_some() && !definition.updateable {
                errors.push(not_updateable(key));
            } else if definition.mandatory && (previous.is_none() || before.is_some()) {
                // (An ad placed before the attribute became mandatory may go on without it.)
                errors.push(missing(key));
            }
            continue;
        };
        if before == Some(value) {
            checked.insert(key.clone(), value.clone());
            continue;
        }
        if !definition.writable {
            errors.push(error(
                key,
                "not-writable",
                "kan niet worden opgegeven",
                "ne peut pas être fourni",
            ));
            continue;
        }
        let typed = match definition.kind {
            AttributeType::List => match value.as_str() {
                Some(option) if definition.options.iter().any(|o| o.key == option) => {
                    Some(json!(option))
                }
                _ => {
                    let keys: Vec<&str> =
                        definition.options.iter().map(|o| o.key.as_str()).collect();
                    errors.push(
                        error(
                            key,
                            "unknown-option",
                            format!("moet een van deze zijn: {}", keys.join(", ")),
                            format!("doit être l'une de ces valeurs : {}", keys.join(", ")),
                        )
                        .with_value(value.clone()),
                    );
                    None
                }
            },
            AttributeType::Number => match integer(value) {
                Some(n) => within(key, n as f64, definition, &mut errors).then(|| json!(n)),
                None => {
                    errors.push(
                        error(
                            key,
                            "invalid-value",
                            "moet een geheel getal zijn",
                            "doit être un nombre entier",
                        )
                        .with_value(value.clone()),
                    );
                    None
                }
            },
            AttributeType::Double => match decimal(value) {
                Some(n) => within(key, n, definition, &mut errors).then(|| json!(n)),
                None => {
                    errors.push(
                        error(
                            key,
                            "invalid-value",
                            "moet een getal zijn",
                            "doit être un nombre",
                        )
                        .with_value(value.clone()),
                    );
                    None
                }
            },
            AttributeType::String => match value.as_str().map(str::trim) {
                Some(text) if text.chars().count() > 100 => {
                    errors.push(error(
                        key,
                        "too-long",
                        "mag hoogstens 100 tekens zijn",
                        "ne peut dépasser 100 caractères",
                    ));
                    None
                }
                Some(text) if !is_one_line(text) => {
                    errors.push(
                        error(
                            key,
                            "invalid-value",
                            "mag geen regeleinden of stuurtekens bevatten",
                            "ne peut contenir ni sauts de ligne ni caractères de contrôle",
                        )
                        .with_value(text),
                    );
                    None
                }
                Some(text) => Some(json!(text)),
                None => {
                    errors.push(
                        error(
                            key,
                            "invalid-value",
                            "moet tekst zijn",
                            "doit être du texte",
                        )
                        .with_value(value.clone()),
                    );
                    None
                }
            },
        };
        if let Some(typed) = typed {
            if !definition.updateable && before.is_some_and(|old| old != &typed) {
                errors.push(not_updateable(key));
                continue;
            }
            checked.insert(key.clone(), typed);
        }
    }
    if errors.is_empty() {
        Ok(checked)
    } else {
        Err(errors)
    }
}

fn within(
    key: &str,
    n: f64,
    definition: &AttributeDefinition,
    errors: &mut Vec<FieldError>,
) -> bool {
    let low = definition.min_value.is_some_and(|min| n < min);
    let high = definition.max_value.is_some_and(|max| n > max);
    if low || high {
        let bounds = format!(
            "{} .. {}",
            definition.min_value.map_or("-".into(), |v| v.to_string()),
            definition.max_value.map_or("-".into(), |v| v.to_string())
        );
        errors.push(
            error(
                key,
                "out-of-range",
                format!("moet tussen {bounds} liggen"),
                format!("doit être compris entre {bounds}"),
            )
            .with_value(n),
        );
        return false;
    }
    true
}

/// A Dutch (`1097DN`, `1097 dn`) or Belgian (`1000`) postcode, normalized.
pub fn normalize_postcode(text: &str) -> Option<String> {
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_uppercase();
    let bytes = compact.as_bytes();
    let dutch = bytes.len() == 6
        && bytes[0] != b'0'
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4..].iter().all(u8::is_ascii_uppercase);
    let belgian = bytes.len() == 4 && bytes[0] != b'0' && bytes.iter().all(u8::is_ascii_digit);
    (dutch || belgian).then_some(compact)
}

/// The states of an advertisement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdStatus {
    Draft,
    Online,
    Paused,
    Expired,
    Closed,
    Deleted,
    Rejected,
}

impl AdStatus {
    pub const ALL: [AdStatus; 7] = [
        AdStatus::Draft,
        AdStatus::Online,
        AdStatus::Paused,
        AdStatus::Expired,
        AdStatus::Closed,
        AdStatus::Deleted,
        AdStatus::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AdStatus::Draft => "draft",
            AdStatus::Online => "online",
            AdStatus::Paused => "paused",
            AdStatus::Expired => "expired",
            AdStatus::Closed => "closed",
            AdStatus::Deleted => "deleted",
            AdStatus::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<AdStatus> {
        AdStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Who asks for a change of state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    Seller,
    Operator,
    System,
}

/// The lifecycle (docs/LIFECYCLE.md): may `actor` move an ad from `from` to `to`?
pub fn may_transition(from: AdStatus, to: AdStatus, actor: Actor) -> bool {
    use AdStatus::*;
    if from == to {
        return true;
    }
    match actor {
        Actor::Seller => matches!(
            (from, to),
            (Draft, Online)
                | (Online, Paused)
                | (Paused, Online)
                | (Online | Paused, Closed)
                | (
                    Draft | Online | Paused | Expired | Closed | Rejected,
                    Deleted
                )
        ),
        Actor::Operator => matches!(
            (from, to),
            (Draft | Online | Paused, Rejected) | (Rejected, Draft | Online | Expired)
        ),
        Actor::System => matches!((from, to), (Online | Paused, Expired)),
    }
}

/// The status an ad has at `now`: an online or paused ad past its `closeDate` is expired
/// even before the expiry sweep has written it down.
pub fn effective_status(stored: AdStatus, close_date: Option<i64>, now: i64) -> AdStatus {
    match (stored, close_date) {
        (AdStatus::Online | AdStatus::Paused, Some(close)) if close <= now => AdStatus::Expired,
        _ => stored,
    }
}

/// Renewal is possible in the last week before `closeDate`, and after expiry.
pub fn renew_possible(status: AdStatus, close_date: Option<i64>, now: i64) -> bool {
    match (status, close_date) {
        (AdStatus::Expired, _) => true,
        (AdStatus::Online | AdStatus::Paused, Some(close)) => {
            close - now <= RENEW_WINDOW_DAYS * 86_400
        }
        _ => false,
    }
}

/// The writable content of an advertisement, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct AdContent {
    pub title: String,
    pub description: String,
    pub category_id: i64,
    pub postcode: String,
    pub price_model: PriceModel,
    pub attributes: Map<String, Value>,
    pub locale: Locale,
    pub reserved: bool,
    pub show_on_map: bool,
}

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
    "priceModel",
    "location",
    "seller",
    "rejectionReason",
    "attributes",
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
];

/// What an update starts from: the ad's category and attribute values as stored.
#[derive(Clone, Copy, Debug)]
pub struct Stored<'a> {
    pub category_id: i64,
    pub attributes: &'a Map<String, Value>,
}

/// The refusal of a closed category.
pub fn category_closed() -> FieldError {
    error(
        "categoryId",
        "category-closed",
        "deze categorie neemt geen nieuwe advertenties meer aan",
        "cette catégorie n'accepte plus de nouvelles annonces",
    )
}

/// Checks a body (POST or PUT, or the result of a PATCH) against the rules and the leaf
/// category; `category` is what `categoryId` names (None if it does not exist), `stored`
/// what an update starts from (None for a new ad). A closed category takes no new ads and
/// no ad moved into it, but an ad already in it stays editable, as do the attribute values
/// it holds (see [`check_attributes`]). Every problem at once.
pub fn check_content(
    body: &Map<String, Value>,
    category: Option<&Category>,
    default_locale: Locale,
    stored: Option<Stored<'_>>,
) -> Result<AdContent, Vec<FieldError>> {
    let mut errors = Vec::new();
    let text = |key: &str, errors: &mut Vec<FieldError>| -> Option<String> {
        match body.get(key) {
            None | Some(Value::Null) => {
                errors.push(missing(key));
                None
            }
            Some(Value::String(s)) => Some(s.trim().to_owned()),
            Some(other) => {
                errors.push(
                    error(
                        key,
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
    let title = text("title", &mut errors);
    if let Some(title) = &title {
        let n = title.chars().count();
        if n < TITLE_MIN {
            errors.push(
                error(
                    "title",
                    "too-short",
                    format!("moet minstens {TITLE_MIN} tekens zijn"),
                    format!("doit comporter au moins {TITLE_MIN} caractères"),
                )
                .with_value(title.as_str()),
            );
        } else if n > TITLE_MAX {
            errors.push(
                error(
                    "title",
                    "too-long",
                    format!("mag hoogstens {TITLE_MAX} tekens zijn"),
                    format!("ne peut dépasser {TITLE_MAX} caractères"),
                )
                .with_value(title.as_str()),
            );
        } else if !is_one_line(title) {
            // A title is one line in every listing; descriptions may have line breaks.
            errors.push(
                error(
                    "title",
                    "invalid-value",
                    "mag geen regeleinden of stuurtekens bevatten",
                    "ne peut contenir ni sauts de ligne ni caractères de contrôle",
                )
                .with_value(title.as_str()),
            );
        }
    }
    let description = text("description", &mut errors);
    if let Some(description) = &description {
        let n = description.chars().count();
        if n == 0 {
            errors.push(error(
                "description",
                "too-short",
                "mag niet leeg zijn",
                "ne peut pas être vide",
            ));
        } else if n > DESCRIPTION_MAX {
            errors.push(error(
                "description",
                "too-long",
                format!("mag hoogstens {DESCRIPTION_MAX} tekens zijn"),
                format!("ne peut dépasser {DESCRIPTION_MAX} caractères"),
            ));
        } else if !is_multiline(description) {
            // Line breaks and tabs lay a description out; NUL and the rest do not.
            errors.push(error(
                "description",
                "invalid-value",
                "mag regeleinden en tabs bevatten, maar geen andere stuurtekens (zoals NUL)",
                "peut contenir des sauts de ligne et des tabulations, mais aucun autre caractère de contrôle (comme NUL)",
            ));
        }
    }
    let category_id = match body.get("categoryId") {
        None | Some(Value::Null) => {
            errors.push(missing("categoryId"));
            None
        }
        Some(value) => integer(value).or_else(|| {
            errors.push(
                error(
                    "categoryId",
                    "invalid-value",
                    "moet een categorienummer zijn",
                    "doit être un numéro de catégorie",
                )
                .with_value(value.clone()),
            );
            None
        }),
    };
    let leaf = match (category_id, category) {
        (Some(_), Some(c)) if c.leaf.is_none() => {
            errors.push(error(
                "categoryId",
                "not-a-leaf",
                "moet een subcategorie (L2) zijn",
                "doit être une sous-catégorie (L2)",
            ));
            None
        }
        (Some(id), Some(c))
            if c.status == CategoryStatus::Closed && stored.is_none_or(|s| s.category_id != id) =>
        {
            errors.push(category_closed());
            None
        }
        (Some(id), None) => {
            errors.push(
                error(
                    "categoryId",
                    "unknown-category",
                    "bestaat niet",
                    "n'existe pas",
                )
                .with_value(id),
            );
            None
        }
        (_, category) => category.and_then(|c| c.leaf.as_ref()),
    };
    let postcode = match body.get("location").and_then(|l| l.get("postcode")) {
        None | Some(Value::Null) => {
            errors.push(missing("location.postcode"));
            None
        }
        Some(value) => value.as_str().and_then(normalize_postcode).or_else(|| {
            errors.push(
                error(
                    "location.postcode",
                    "invalid-postcode",
                    "is geen Nederlandse of Belgische postcode",
                    "n'est pas un code postal néerlandais ou belge",
                )
                .with_value(value.clone()),
            );
            None
        }),
    };
    let price_model = PriceModel::parse(body.get("priceModel"))
        .map_err(|e| errors.extend(e))
        .ok();
    let locale = match body.get("locale") {
        None | Some(Value::Null) => Some(default_locale),
        Some(value) => value.as_str().and_then(Locale::parse).or_else(|| {
            errors.push(
                error(
                    "locale",
                    "invalid-value",
                    "moet nl-NL, nl-BE of fr-BE zijn",
                    "doit être nl-NL, nl-BE ou fr-BE",
                )
                .with_value(value.clone()),
            );
            None
        }),
    };
    let flag = |key: &str, errors: &mut Vec<FieldError>| match body.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            errors.push(
                error(
                    key,
                    "invalid-value",
                    "moet true of false zijn",
                    "doit être true ou false",
                )
                .with_value(other.clone()),
            );
            false
        }
    };
    let reserved = flag("reserved", &mut errors);
    let show_on_map = flag("showOnMap", &mut errors);
    let attributes = match collect_attributes(body, STANDARD_FIELDS) {
        Ok(given) => match leaf {
            Some(leaf) => {
                // Stored values count only where the ad stays in its category.
                let previous = stored
                    .filter(|s| Some(s.category_id) == category_id)
                    .map(|s| s.attributes);
                check_attributes(&given, &leaf.attributes, previous)
                    .map_err(|e| errors.extend(e))
                    .ok()
            }
            // Without a valid leaf the attributes cannot be judged; the category error says why.
            None => None,
        },
        Err(e) => {
            errors.extend(e);
            None
        }
    };
    match (
        title,
        description,
        category_id,
        postcode,
        price_model,
        attributes,
        locale,
    ) {
        (
            Some(title),
            Some(description),
            Some(category_id),
            Some(postcode),
            Some(price_model),
            Some(attributes),
            Some(locale),
        ) if errors.is_empty() => Ok(AdContent {
            title,
            description,
            category_id,
            postcode,
            price_model,
            attributes,
            locale,
            reserved,
            show_on_map,
        }),
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::category::{AttributeOption, Fees, Leaf};
    use crate::domain::locale::Labels;

    fn labels(text: &str) -> Labels {
        Labels {
            nl_nl: text.into(),
            nl_be: text.into(),
            fr_be: text.into(),
        }
    }

    fn definition(key: &str, kind: AttributeType) -> AttributeDefinition {
        AttributeDefinition {
            key: key.into(),
            labels: labels(key),
            kind,
            mandatory: false,
            searchable: true,
            writable: true,
            updateable: true,
            options: Vec::new(),
            min_value: None,
            max_value: None,
            unit: None,
            units: Vec::new(),
        }
    }

    fn leaf() -> Category {
        let mut condition = definition("condition", AttributeType::List);
        condition.mandatory = true;
        condition.options = ["new", "used"]
            .iter()
            .map(|k| AttributeOption {
                key: (*k).into(),
                labels: labels(k),
            })
            .collect();
        let mut year = definition("constructionYear", AttributeType::Number);
        year.min_value = Some(1900.0);
        year.max_value = Some(2030.0);
        year.updateable = false;
        let weight = definition("weight", AttributeType::Double);
        let model = definition("model", AttributeType::String);
        Category {
            id: 101,
            parent_id: Some(1),
            status: CategoryStatus::Open,
            labels: labels("Leaf"),
            leaf: Some(Leaf {
                fees: Fees {
                    insertion_fee: 0,
                    running_days: 28,
                    running_subscriptions: Vec::new(),
                },
                attributes: vec![condition, year, weight, model],
            }),
        }
    }

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn minimal() -> Value {
        json!({"title": "Fiets", "description": "Goede fiets", "categoryId": 101,
               "location": {"postcode": "1097 dn"},
               "priceModel": {"modelType": "fixed", "askingPrice": 1500}, "condition": "used"})
    }

    fn codes(errors: &[FieldError]) -> Vec<(String, &'static str)> {
        errors
            .iter()
            .map(|e| (e.fields.join("+"), e.code))
            .collect()
    }

    #[test]
    fn item_ids() {
        assert_eq!(ItemId::parse("m123").unwrap().number(), 123);
        assert_eq!(ItemId::from_number(7).to_string(), "m7");
        for bad in [
            "123",
            "m",
            "mx1",
            "m-1",
            "m0",
            "M12",
            "m1234567890123456789",
            "m012",
            "m00",
        ] {
            assert!(ItemId::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_minimal_body_is_accepted() {
        let content = check_content(&body(minimal()), Some(&leaf()), Locale::NlNl, None).unwrap();
        assert_eq!(content.postcode, "1097DN");
        assert_eq!(content.attributes["condition"], "used");
        assert_eq!(content.locale, Locale::NlNl);
        assert!(!content.reserved);
    }

    #[test]
    fn title_bounds() {
        for (title, ok) in [
            ("a", false),
            ("ab", true),
            (&"x".repeat(60) as &str, true),
            (&"x".repeat(61), false),
            ("Fiets\nmet mand", false),
            ("Fiets\tmet mand", false),
            ("Fiets met mand", true),
        ] {
            let mut b = minimal();
            b["title"] = json!(title);
            assert_eq!(
                check_content(&body(b), Some(&leaf()), Locale::NlNl, None).is_ok(),
                ok,
                "{title}"
            );
        }
    }

    #[test]
    fn no_control_characters_where_text_is_stored() {
        let mut b = minimal();
        b["description"] = json!("Regel één\r\nRegel\ttwee");
        b["model"] = json!("Gazelle Orange");
        assert!(check_content(&body(b), Some(&leaf()), Locale::NlNl, None).is_ok());
        let mut b = minimal();
        b["title"] = json!("Fiets\u{0}");
        b["description"] = json!("Goed\u{0}");
        b["model"] = json!("Gazelle\nOrange");
        let errors = check_content(&body(b), Some(&leaf()), Locale::NlNl, None).unwrap_err();
        assert_eq!(
            codes(&errors),
            [
                ("title".to_owned(), "invalid-value"),
                ("description".to_owned(), "invalid-value"),
                ("model".to_owned(), "invalid-value"),
            ]
        );
    }

    #[test]
    fn every_problem_at_once() {
        let b = json!({"title": "x", "categoryId": 101, "location": {"postcode": "12"},
                       "priceModel": {"modelType": "bidding"}, "condition": "broken",
                       "constructionYear": 1800, "colour": "red"});
        let errors = check_content(&body(b), Some(&leaf()), Locale::NlNl, None).unwrap_err();
        let found = codes(&errors);
        for expected in [
            ("title", "too-short"),
            ("description", "missing"),
            ("location.postcode", "invalid-postcode"),
            ("priceModel.minimalBid", "missing"),
            ("condition", "unknown-option"),
            ("constructionYear", "out-of-range"),
            ("colour", "unknown-attribute"),
        ] {
            assert!(
                found.contains(&(expected.0.to_owned(), expected.1)),
                "{expected:?} in {found:?}"
            );
        }
    }

    #[test]
    fn price_models() {
        let ok = |v: Value| PriceModel::parse(Some(&v)).is_ok();
        assert!(ok(json!({"modelType": "fixed", "askingPrice": 0})));
        assert!(ok(json!({"modelType": "fixed", "askingPrice": "1500"})));
        assert!(ok(
            json!({"modelType": "bidding", "minimalBid": 100, "askingPrice": 500})
        ));
        assert!(ok(json!({"modelType": "to be discussed"})));
        assert!(!ok(json!({"modelType": "fixed"})));
        assert!(!ok(json!({"modelType": "fixed", "askingPrice": -1})));
        assert!(!ok(json!({"modelType": "fixed", "askingPrice": 12.5})));
        assert!(!ok(json!({"modelType": "trade", "askingPrice": 100})));
        assert!(!ok(
            json!({"modelType": "bidding", "minimalBid": 600, "askingPrice": 500})
        ));
        assert!(!ok(json!({"modelType": "free"})));
        let round =
            PriceModel::parse(Some(&json!({"modelType": "bidding", "minimalBid": "100"}))).unwrap();
        assert_eq!(
            round.to_json(),
            json!({"modelType": "bidding", "minimalBid": 100})
        );
    }

    #[test]
    fn attributes_in_every_form() {
        let mut b = minimal();
        b.as_object_mut().unwrap().remove("condition");
        b["attributes"] = json!([{"key": "condition", "value": "new"}, {"key": "constructionYear", "value": "2019"}]);
        b["weight"] = json!("12.5");
        b["model"] = json!("");
        let content = check_content(&body(b), Some(&leaf()), Locale::NlNl, None).unwrap();
        assert_eq!(content.attributes["constructionYear"], 2019);
        assert_eq!(content.attributes["weight"], 12.5);
        assert!(
            !content.attributes.contains_key("model"),
            "an empty optional string is absent"
        );
        let mut b = minimal();
        b["constructionYear"] = json!(2019);
        let previous = check_content(&body(b.clone()), Some(&leaf()), Locale::NlNl, None)
            .unwrap()
            .attributes;
        let stored = Stored {
            category_id: 101,
            attributes: &previous,
        };
        b["constructionYear"] = json!(2020);
        let errors =
            check_content(&body(b.clone()), Some(&leaf()), Locale::NlNl, Some(stored)).unwrap_err();
        assert_eq!(
            codes(&errors),
            [("constructionYear".to_owned(), "not-updateable")]
        );
        // Taking it out is a change too (else: remove, then add another value).
        b.as_object_mut().unwrap().remove("constructionYear");
        let errors =
            check_content(&body(b.clone()), Some(&leaf()), Locale::NlNl, Some(stored)).unwrap_err();
        assert_eq!(
            codes(&errors),
            [("constructionYear".to_owned(), "not-updateable")]
        );
        b["constructionYear"] = json!("2019");
        assert!(check_content(&body(b), Some(&leaf()), Locale::NlNl, Some(stored)).is_ok());
    }

    #[test]
    fn stored_values_outlive_changed_definitions() {
        // Placed when `colour` existed, `condition` had the option `broken`, `weight` had
        // no upper bound and `model` was optional.
        let mut b = minimal();
        b["condition"] = json!("broken");
        b["colour"] = json!("red");
        b["weight"] = json!(9000.5);
        let stored_attributes = b.as_object().unwrap().clone();
        let mut category = leaf();
        let leaf_of = category.leaf.as_mut().unwrap();
        leaf_of.attributes[2].max_value = Some(100.0);
        leaf_of.attributes[3].mandatory = true;
        let stored = Stored {
            category_id: 101,
            attributes: &stored_attributes,
        };
        let mut edit = b.clone();
        edit["title"] = json!("Fiets, nu goedkoper");
        let content = check_content(
            &body(edit.clone()),
            Some(&category),
            Locale::NlNl,
            Some(stored),
        )
        .unwrap();
        assert_eq!(content.attributes["condition"], "broken", "kept as it is");
        assert_eq!(content.attributes["colour"], "red");
        // What the request changes meets today's definitions.
        edit["condition"] = json!("kapot");
        edit["weight"] = json!(9001);
        let errors =
            check_content(&body(edit), Some(&category), Locale::NlNl, Some(stored)).unwrap_err();
        assert_eq!(
            codes(&errors),
            [
                ("condition".to_owned(), "unknown-option"),
                ("weight".to_owned(), "out-of-range")
            ]
        );
        // A new ad meets them all.
        let errors = check_content(&body(b), Some(&category), Locale::NlNl, None).unwrap_err();
        assert_eq!(errors.len(), 4, "{:?}", codes(&errors));
    }

    #[test]
    fn categories_must_be_open_leaves() {
        let mut closed = leaf();
        closed.status = CategoryStatus::Closed;
        let errors =
            check_content(&body(minimal()), Some(&closed), Locale::NlNl, None).unwrap_err();
        assert_eq!(errors[0].code, "category-closed");
        // An ad already in the closed category stays editable; one moved into it is refused.
        let attributes = minimal().as_object().unwrap().clone();
        let stays = Stored {
            category_id: 101,
            attributes: &attributes,
        };
        assert!(check_content(&body(minimal()), Some(&closed), Locale::NlNl, Some(stays)).is_ok());
        let moved = Stored {
            category_id: 102,
            ..stays
        };
        let errors =
            check_content(&body(minimal()), Some(&closed), Locale::NlNl, Some(moved)).unwrap_err();
        assert_eq!(errors[0].code, "category-closed");
        let errors = check_content(&body(minimal()), None, Locale::NlNl, None).unwrap_err();
        assert_eq!(errors[0].code, "unknown-category");
    }

    #[test]
    fn postcodes() {
        assert_eq!(normalize_postcode("1097 dn").as_deref(), Some("1097DN"));
        assert_eq!(normalize_postcode("9000").as_deref(), Some("9000"));
        for bad in ["0123AB", "1097D", "10971", "ABCD", ""] {
            assert!(normalize_postcode(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn lifecycle() {
        use AdStatus::*;
        assert!(may_transition(Draft, Online, Actor::Seller));
        assert!(may_transition(Online, Paused, Actor::Seller));
        assert!(may_transition(Paused, Online, Actor::Seller));
        assert!(may_transition(Online, Closed, Actor::Seller));
        assert!(may_transition(Closed, Deleted, Actor::Seller));
        assert!(!may_transition(Deleted, Online, Actor::Seller));
        assert!(!may_transition(Rejected, Online, Actor::Seller));
        assert!(
            !may_transition(Expired, Online, Actor::Seller),
            "renewal is its own action"
        );
        assert!(!may_transition(Closed, Online, Actor::Seller));
        assert!(!may_transition(Online, Expired, Actor::Seller));
        assert!(may_transition(Online, Rejected, Actor::Operator));
        assert!(may_transition(Rejected, Online, Actor::Operator));
        assert!(!may_transition(Deleted, Online, Actor::Operator));
        assert!(may_transition(Online, Expired, Actor::System));
        assert_eq!(effective_status(Online, Some(100), 100), Expired);
        assert_eq!(effective_status(Online, Some(101), 100), Online);
        assert!(renew_possible(Online, Some(7 * 86_400), 0));
        assert!(!renew_possible(Online, Some(7 * 86_400 + 1), 0));
        assert!(renew_possible(Expired, Some(0), 100));
        assert!(!renew_possible(Draft, None, 0));
    }
}
