//! Orders: what a user buys (an ad's insertion, its renewal, its features), in integer euro cents with VAT
//! included, and the request that buys it (`{"pay": true, "orderId": ...}`).

use serde_json::Value;

use super::field_error::FieldError;
use super::locale::Text;
use super::text_enum;

text_enum! {
    /// The states of an order. In the sandbox an order is paid at once; in production it
    /// waits in `payment required` until a payment is confirmed (`souk orders pay`).
    pub enum OrderStatus {
        New = "new",
        PaymentRequired = "payment required",
        Paid = "paid",
        Refused = "refused",
        Closed = "closed",
    }
}

impl OrderStatus {
    /// An order that still takes products: it is not paid, refused or closed.
    pub fn is_open(self) -> bool {
        matches!(self, OrderStatus::New | OrderStatus::PaymentRequired)
    }
}

text_enum! {
    /// What a product buys; its effect is applied when its order is paid.
    pub enum ProductKind {
        /// The ad runs another period of its category.
        Renewal = "renewal",
        /// A feature of the ad (which one: the product's `feature`).
        Feature = "feature",
        /// The insertion fee of an ad's first publication: paid, it publishes the ad.
        Insertion = "insertion",
    }
}

/// The VAT part of `price` (VAT included) at `percent`, rounded to the nearest cent.
pub fn vat_included(price: i64, percent: u32) -> i64 {
    let percent = i64::from(percent);
    let denominator = 100 + percent;
    (2 * price * percent + denominator) / (2 * denominator)
}

/// A purchase as a client sent it: `{"pay": true}` and optionally the `orderId` of an open
/// order of the buyer's to add the product to.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PurchaseRequest {
    pub pay: Option<Value>,
    pub order_id: Option<Value>,
}

/// The order a purchase goes into (`None`: a new one), once `pay` is true.
pub fn check_purchase(request: &PurchaseRequest) -> Result<Option<i64>, Vec<FieldError>> {
    let mut errors = Vec::new();
    if request.pay != Some(Value::Bool(true)) {
        errors.push(
            FieldError::new(
                "pay",
                "must-pay",
                Text::new(
                    "moet true zijn: een aankoop wordt betaald",
                    "doit être true : un achat se paie",
                ),
            )
            .with_value(request.pay.clone().unwrap_or(Value::Null)),
        );
    }
    let order = match request.order_id.as_ref() {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_i64().filter(|id| *id >= 1) {
            Some(id) => Some(id),
            None => {
                errors.push(
                    FieldError::new(
                        "orderId",
                        "invalid-value",
                        Text::new(
                            "moet het nummer van een order zijn",
                            "doit être le numéro d'une commande",
                        ),
                    )
                    .with_value(value.clone()),
                );
                None
            }
        },
    };
    if errors.is_empty() {
        Ok(order)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vat_is_the_included_part_rounded_to_a_cent() {
        assert_eq!(vat_included(12100, 21), 2100);
        assert_eq!(vat_included(995, 21), 173);
        assert_eq!(vat_included(0, 21), 0);
        assert_eq!(vat_included(1000, 0), 0);
        assert_eq!(vat_included(106, 6), 6);
    }

    #[test]
    fn a_purchase_is_paid_into_a_new_or_an_open_order() {
        let request = |body: Value| serde_json::from_value::<PurchaseRequest>(body).unwrap();
        assert_eq!(check_purchase(&request(json!({"pay": true}))), Ok(None));
        assert_eq!(
            check_purchase(&request(json!({"pay": true, "orderId": 7}))),
            Ok(Some(7))
        );
        let codes = |body| {
            check_purchase(&request(body))
                .unwrap_err()
                .into_iter()
                .map(|e| (e.fields.join(","), e.code))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            codes(json!({"pay": false, "orderId": "7"})),
            [
                ("pay".to_owned(), "must-pay"),
                ("orderId".to_owned(), "invalid-value")
            ]
        );
        assert_eq!(codes(json!({})), [("pay".to_owned(), "must-pay")]);
    }
}
