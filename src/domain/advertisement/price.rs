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
        let Some(object) = value.and_then(Value::as_object) else {
            return Err(vec![FieldError::missing("priceModel")]);
        };
        let mut errors = Vec::new();
        let model_type = match object.get("modelType").and_then(Value::as_str) {
            None => {
                errors.push(FieldError::missing("priceModel.modelType"));
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

#[cfg(test)]
mod tests {
    use super::*;

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
