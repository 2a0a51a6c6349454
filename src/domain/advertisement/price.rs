//! Price models: what the seller asks and how, in euro cents.

use serde_json::{Map, Value, json};

use super::{error, integer};
use crate::domain::field_error::FieldError;
use crate::domain::text_enum;

/// The largest amount Souk takes: ten million euro, in cents.
pub const AMOUNT_MAX: i64 = 1_000_000_000;

text_enum! {
    /// The price models of the original.
    pub enum ModelType {
        Fixed = "fixed",
        Bidding = "bidding",
        ToBeDiscussed = "to be discussed",
        ByRequest = "by request",
        Trade = "trade",
        SeeDescription = "see description",
        BuyItNow = "buy it now",
        Reserved = "reserved",
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
        let object = match value {
            None | Some(Value::Null) => return Err(vec![FieldError::missing("priceModel")]),
            Some(Value::Object(object)) => object,
            Some(other) => {
                return Err(vec![FieldError::not_an_object("priceModel", other.clone())]);
            }
        };
        let mut errors = Vec::new();
        let model_type = match object.get("modelType") {
            None | Some(Value::Null) => {
                errors.push(FieldError::missing("priceModel.modelType"));
                None
            }
            Some(Value::String(text)) => ModelType::parse(text).or_else(|| {
                errors.push(
                    error(
                        "priceModel.modelType",
                        "unknown-model-type",
                        "is geen bekend prijstype",
                        "n'est pas un type de prix connu",
                    )
                    .with_value(text.as_str()),
                );
                None
            }),
            Some(other) => {
                errors.push(FieldError::not_text("priceModel.modelType", other.clone()));
                None
            }
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
                errors.push(FieldError::missing(format!("priceModel.{key}")));
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
            errors.push(
                error(
                    "priceModel.minimalBid",
                    "above-asking-price",
                    "mag niet hoger zijn dan de vraagprijs",
                    "ne peut pas dépasser le prix demandé",
                )
                .on_fields(&["priceModel.minimalBid", "priceModel.askingPrice"]),
            );
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

/// What an ad's price stood at before a change: its `reserved` flag and model type (none for
/// a new ad, or a stored model that no longer parses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriceBefore {
    pub reserved: bool,
    pub model_type: Option<ModelType>,
}

/// The original's rule for `reserved` (api.md): `reserved: true` overrides the price model
/// with the `reserved` model type, and setting a price model of another type unreserves.
/// The member a request changes wins, so `reserved` and `modelType == "reserved"` never
/// disagree afterwards:
/// - `reserved` changed to true: the model becomes `reserved` (a retail price is kept);
/// - the model type changed (and `reserved` did not): the model says what `reserved` is,
///   which is how a client unreserves (a PATCH of `/priceModel/modelType`);
/// - `reserved` changed to false while the model stays `reserved`: refused, because no price
///   to go back to is known (`price-model-needed`: send a price model with it);
/// - `reserved` absent: it follows the model.
///
/// Returns the price model to store; `reserved` is its model type being `reserved`.
pub fn reconcile_reserved(
    given: Option<bool>,
    model: PriceModel,
    before: PriceBefore,
) -> Result<PriceModel, FieldError> {
    let reserved_changed = given.filter(|r| *r != before.reserved);
    let model_changed = before.model_type != Some(model.model_type);
    match reserved_changed {
        Some(true) => Ok(PriceModel {
            model_type: ModelType::Reserved,
            asking_price: None,
            minimal_bid: None,
            retail_price: model.retail_price,
        }),
        Some(false) if model.model_type == ModelType::Reserved && !model_changed => Err(error(
            "reserved",
            "price-model-needed",
            "een gereserveerde advertentie wordt vrijgegeven met een ander prijstype \
             (priceModel), niet met reserved: false alleen",
            "une annonce réservée se libère avec un autre type de prix (priceModel), \
             pas avec reserved: false seul",
        )
        .on_fields(&["reserved", "priceModel.modelType"])),
        _ => Ok(model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_the_model_type_never_disagree() {
        let model = |v: Value| PriceModel::parse(Some(&v)).unwrap();
        let fixed = model(json!({"modelType": "fixed", "askingPrice": 1400, "retailPrice": 2000}));
        let reserved = model(json!({"modelType": "reserved"}));
        let new_ad = PriceBefore::default();
        let was_fixed = PriceBefore {
            reserved: false,
            model_type: Some(ModelType::Fixed),
        };
        let was_reserved = PriceBefore {
            reserved: true,
            model_type: Some(ModelType::Reserved),
        };
        let kind = |r: Result<PriceModel, FieldError>| r.map(|m| m.model_type);
        // Reserving overrides whatever model is sent, keeping a retail price.
        let overridden = reconcile_reserved(Some(true), fixed.clone(), new_ad).unwrap();
        assert_eq!(overridden.model_type, ModelType::Reserved);
        assert_eq!(overridden.asking_price, None);
        assert_eq!(overridden.retail_price, Some(2000));
        assert_eq!(
            kind(reconcile_reserved(Some(true), fixed.clone(), was_fixed)),
            Ok(ModelType::Reserved)
        );
        // A new model type unreserves, though `reserved: true` is still in the view.
        assert_eq!(
            kind(reconcile_reserved(Some(true), fixed.clone(), was_reserved)),
            Ok(ModelType::Fixed)
        );
        // Sending the reserved model reserves, whatever `reserved` said before.
        assert_eq!(
            kind(reconcile_reserved(Some(false), reserved.clone(), was_fixed)),
            Ok(ModelType::Reserved)
        );
        assert_eq!(
            kind(reconcile_reserved(None, reserved.clone(), new_ad)),
            Ok(ModelType::Reserved)
        );
        // `reserved: false` alone cannot say which price to go back to.
        let alone = reconcile_reserved(Some(false), reserved.clone(), was_reserved).unwrap_err();
        assert_eq!(alone.code, "price-model-needed");
        // No change, or `reserved` left out: the model stands.
        assert_eq!(
            kind(reconcile_reserved(Some(true), reserved, was_reserved)),
            Ok(ModelType::Reserved)
        );
        assert_eq!(
            kind(reconcile_reserved(None, fixed, was_reserved)),
            Ok(ModelType::Fixed)
        );
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
}
