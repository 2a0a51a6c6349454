//! Sales of an advertisement (transactions) and the phone calls about it that a partner
//! confirms: their states, who may move them, and the checks of what a client sends.

use serde_json::Value;

use super::advertisement::AMOUNT_MAX;
use super::field_error::{FieldError, checked};
use super::locale::Text;
use super::text::required_text;
use super::text_enum;
use super::time::parse_timestamp;
use super::user::plausible_phone;

text_enum! {
    /// The states of a transaction: the seller records it, then completes it, or either
    /// party cancels it. Completed and cancelled are final.
    pub enum TransactionStatus {
        Created = "CREATED",
        Completed = "COMPLETED",
        Cancelled = "CANCELLED",
    }
}

/// Who acts on a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Party {
    Seller,
    Buyer,
}

/// May `party` move a created transaction to `to`? The seller completes a sale; either
/// party may cancel it.
pub fn may_finish(party: Party, to: TransactionStatus) -> bool {
    match to {
        TransactionStatus::Completed => party == Party::Seller,
        TransactionStatus::Cancelled => true,
        TransactionStatus::Created => false,
    }
}

/// A sale as a client sent it (`{buyerId, amount, shippingCosts}`).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaleRequest {
    pub buyer_id: Option<Value>,
    pub amount: Option<Value>,
    pub shipping_costs: Option<Value>,
}

/// A sale, checked: amounts in cents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sale {
    pub buyer_id: i64,
    pub amount: i64,
    pub shipping_costs: i64,
}

/// The buyer a request names, if it names one at all (a user id is a positive integer),
/// and it is not `seller`: the one whose existence [`check_sale`] needs to know.
pub fn named_buyer(request: &SaleRequest, seller: i64) -> Option<i64> {
    request
        .buyer_id
        .as_ref()
        .and_then(Value::as_i64)
        .filter(|id| *id > 0 && *id != seller)
}

/// Every problem of a sale by `seller` at once; `buyer_exists` says whether the
/// [`named_buyer`] is a user.
pub fn check_sale(
    request: &SaleRequest,
    seller: i64,
    buyer_exists: bool,
) -> Result<Sale, Vec<FieldError>> {
    let mut errors = Vec::new();
    let buyer = match request.buyer_id.as_ref() {
        None | Some(Value::Null) => {
            errors.push(FieldError::missing("buyerId"));
            None
        }
        // A user id is a positive integer; anything else is not one at all.
        Some(value) => match value.as_i64().filter(|id| *id > 0) {
            None => {
                errors.push(refusal(
                    "buyerId",
                    "invalid-value",
                    "moet een gebruikersnummer (een positief geheel getal) zijn",
                    "doit être un numéro d'utilisateur (un nombre entier positif)",
                    value,
                ));
                None
            }
            Some(id) if id == seller => {
                // A sale to oneself would inflate the seller's record.
                errors.push(refusal(
                    "buyerId",
                    "buyer-is-seller",
                    "is de verkoper zelf",
                    "est le vendeur lui-même",
                    value,
                ));
                None
            }
            Some(id) if buyer_exists => Some(id),
            Some(_) => {
                errors.push(refusal(
                    "buyerId",
                    "unknown-user",
                    "is geen gebruiker",
                    "n'est pas un utilisateur",
                    value,
                ));
                None
            }
        },
    };
    let amount = cents("amount", request.amount.as_ref(), &mut errors);
    let shipping_costs = cents(
        "shippingCosts",
        request.shipping_costs.as_ref(),
        &mut errors,
    );
    let sale = (|| {
        Some(Sale {
            buyer_id: buyer?,
            amount: amount?,
            shipping_costs: shipping_costs?,
        })
    })();
    checked(sale, errors)
}

fn refusal(
    field: &str,
    code: &'static str,
    dutch: &str,
    french: &str,
    value: &Value,
) -> FieldError {
    FieldError::new(field, code, Text::new(dutch, french)).with_value(value.clone())
}

/// A non-negative integer amount of cents, or the field error.
fn cents(name: &str, value: Option<&Value>, errors: &mut Vec<FieldError>) -> Option<i64> {
    match value {
        None | Some(Value::Null) => {
            errors.push(FieldError::missing(name));
            None
        }
        Some(value) => match value.as_i64() {
            Some(n) if (0..=AMOUNT_MAX).contains(&n) => Some(n),
            _ => {
                errors.push(refusal(
                    name,
                    "invalid-value",
                    "moet een geheel, niet-negatief bedrag in centen zijn",
                    "doit être un montant entier et positif en centimes",
                    value,
                ));
                None
            }
        },
    }
}

/// A confirmed phone call about an ad as a partner sent it.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequest {
    pub caller_phone_number: Option<Value>,
    pub callee_phone_number: Option<Value>,
    pub start_time: Option<Value>,
    pub end_time: Option<Value>,
}

/// A confirmed phone call, checked; times in Unix seconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub caller_phone: String,
    pub callee_phone: String,
    pub start_time: i64,
    pub end_time: i64,
}

/// Every problem of a confirmed call at once.
pub fn check_call(request: &CallRequest) -> Result<Call, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut text = |name: &str, value: &Option<Value>| {
        required_text(name, value.as_ref())
            .map_err(|e| errors.push(e))
            .ok()
    };
    let caller_phone = text("callerPhoneNumber", &request.caller_phone_number);
    let callee_phone = text("calleePhoneNumber", &request.callee_phone_number);
    let start = text("startTime", &request.start_time);
    let end = text("endTime", &request.end_time);
    for (name, phone) in [
        ("callerPhoneNumber", &caller_phone),
        ("calleePhoneNumber", &callee_phone),
    ] {
        if let Some(phone) = phone
            && !plausible_phone(phone)
        {
            errors.push(
                FieldError::new(
                    name,
                    "invalid-phone-number",
                    Text::new("is geen telefoonnummer", "n'est pas un numéro de téléphone"),
                )
                .with_value(phone.as_str()),
            );
        }
    }
    let mut time = |name: &str, value: &Option<String>| {
        value.as_deref().and_then(|v| {
            parse_timestamp(v).or_else(|| {
                errors.push(
                    FieldError::new(
                        name,
                        "invalid-timestamp",
                        Text::new(
                            "moet ISO 8601 met tijdzone zijn (2024-05-01T12:00:00+02:00)",
                            "doit être ISO 8601 avec fuseau (2024-05-01T12:00:00+02:00)",
                        ),
                    )
                    .with_value(v),
                );
                None
            })
        })
    };
    let start_time = time("startTime", &start);
    let end_time = time("endTime", &end);
    if let (Some(start), Some(end)) = (start_time, end_time)
        && end < start
    {
        errors.push(
            FieldError::new(
                "endTime",
                "before-start-time",
                Text::new("ligt voor startTime", "est antérieur à startTime"),
            )
            .on_fields(&["startTime", "endTime"]),
        );
    }
    let call = (|| {
        Some(Call {
            caller_phone: caller_phone?,
            callee_phone: callee_phone?,
            start_time: start_time?,
            end_time: end_time?,
        })
    })();
    checked(call, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn who_finishes_a_sale() {
        assert!(may_finish(Party::Seller, TransactionStatus::Completed));
        assert!(!may_finish(Party::Buyer, TransactionStatus::Completed));
        assert!(may_finish(Party::Buyer, TransactionStatus::Cancelled));
        for status in [TransactionStatus::Created, TransactionStatus::Completed] {
            assert_eq!(TransactionStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(TransactionStatus::parse("created"), None);
    }

    #[test]
    fn sales_report_every_problem() {
        let request = SaleRequest {
            buyer_id: Some(json!(7)),
            amount: Some(json!(-1)),
            shipping_costs: None,
        };
        assert_eq!(named_buyer(&request, 7), None, "the seller is no buyer");
        let errors = check_sale(&request, 7, false).unwrap_err();
        let codes: Vec<&str> = errors.iter().map(|e| e.code).collect();
        assert_eq!(codes, ["buyer-is-seller", "invalid-value", "missing"]);
        let request = SaleRequest {
            buyer_id: Some(json!(8)),
            amount: Some(json!(100)),
            shipping_costs: Some(json!(0)),
        };
        assert_eq!(named_buyer(&request, 7), Some(8));
        assert_eq!(
            check_sale(&request, 7, false).unwrap_err()[0].code,
            "unknown-user"
        );
        assert_eq!(
            check_sale(&request, 7, true).unwrap(),
            Sale {
                buyer_id: 8,
                amount: 100,
                shipping_costs: 0
            }
        );
    }
}
