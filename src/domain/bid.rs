//! Bids on an advertisement whose price model is `bidding`: how much a bid must be, and
//! the checks of a bid and of a seller's question to a bidder (docs/API.md, "Bids").

use serde_json::Value;

use super::advertisement::AMOUNT_MAX;
use super::field_error::FieldError;
use super::locale::Text;
use super::text::message_text;
use super::user::plausible_phone;

/// The least step by which a bid must beat the highest: one euro.
pub const MIN_STEP: i64 = 100;

/// The longest question a seller may send a bidder, in characters.
pub const QUESTION_MAX_CHARS: usize = 2000;

/// The least amount a new bid may have: the ad's minimal bid (at least one cent), and,
/// once there is a bid, the highest bid plus 1% of it rounded up to a cent, and at least
/// [`MIN_STEP`]. So every accepted bid is above every bid accepted before it, by a step
/// that matters for cheap and dear things alike; a bidder may raise their own bid. A seller
/// who raised the minimal bid while bids stand has raised the bar for the next one.
pub fn minimum_bid(minimal_bid: i64, highest: Option<i64>) -> i64 {
    match highest {
        None => minimal_bid.max(1),
        Some(highest) => minimal_bid.max(highest + step(highest)),
    }
}

/// How much a bid must beat `highest` by.
fn step(highest: i64) -> i64 {
    let one_percent = (highest + 99) / 100;
    one_percent.max(MIN_STEP)
}

/// A bid as a client sent it (`{"amount": cents}`).
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct BidRequest {
    pub amount: Option<Value>,
}

/// The amount of a bid, checked against the least amount [`minimum_bid`] allows now;
/// `minimal_sets_it` says that the least amount is the ad's minimal bid (no bid to beat
/// yet, or one below it), for the code of the refusal.
pub fn check_bid(
    request: &BidRequest,
    minimum: i64,
    minimal_sets_it: bool,
) -> Result<i64, FieldError> {
    let amount = match request.amount.as_ref() {
        None | Some(Value::Null) => return Err(FieldError::missing("amount")),
        Some(value) => value
            .as_i64()
            .filter(|n| (1..=AMOUNT_MAX).contains(n))
            .ok_or_else(|| {
                FieldError::new(
                    "amount",
                    "invalid-value",
                    Text::new(
                        format!("moet een geheel bedrag in centen van 1 tot {AMOUNT_MAX} zijn"),
                        format!("doit être un montant entier en centimes de 1 à {AMOUNT_MAX}"),
                    ),
                )
                .with_value(value.clone())
            })?,
    };
    if amount >= minimum {
        return Ok(amount);
    }
    let refusal = if minimal_sets_it {
        FieldError::new(
            "amount",
            "below-minimal-bid",
            Text::new(
                format!("moet minstens het minimumbod van {minimum} cent zijn"),
                format!("doit être au moins l'offre minimale de {minimum} centimes"),
            ),
        )
    } else {
        FieldError::new(
            "amount",
            "not-above-highest-bid",
            Text::new(
                format!(
                    "moet het hoogste bod met minstens 1% (en minstens 1 euro) overtreffen: \
                     minstens {minimum} cent"
                ),
                format!(
                    "doit dépasser l'offre la plus haute d'au moins 1 % (et d'au moins 1 euro) : \
                     au moins {minimum} centimes"
                ),
            ),
        )
    };
    Err(refusal.with_value(amount))
}

/// A seller's question to a bidder as a client sent it.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    pub message: Option<Value>,
    pub phone_number: Option<Value>,
}

/// A question, checked: the message, and the phone number the seller may be called on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    pub message: String,
    pub phone_number: Option<String>,
}

/// Every problem of a question at once: a message of 1 to 2,000 characters (lines are
/// fine, other control characters are not) and an optional plausible phone number.
pub fn check_question(request: &QuestionRequest) -> Result<Question, Vec<FieldError>> {
    let mut errors = Vec::new();
    let message = message_text("message", request.message.as_ref(), QUESTION_MAX_CHARS)
        .map_err(|e| errors.push(e))
        .ok();
    let phone_number = match request.phone_number.as_ref() {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) if plausible_phone(text.trim()) => Some(text.trim().to_owned()),
        Some(other) => {
            errors.push(
                FieldError::new(
                    "phoneNumber",
                    "invalid-phone-number",
                    Text::new("is geen telefoonnummer", "n'est pas un numéro de téléphone"),
                )
                .with_value(other.clone()),
            );
            None
        }
    };
    match message {
        Some(message) if errors.is_empty() => Ok(Question {
            message,
            phone_number,
        }),
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bid_beats_the_highest_by_a_step() {
        assert_eq!(minimum_bid(500, None), 500);
        assert_eq!(minimum_bid(0, None), 1, "a bid is never nothing");
        // One euro at least, 1% above 100 euro, rounded up to a cent.
        assert_eq!(minimum_bid(500, Some(500)), 600);
        assert_eq!(minimum_bid(0, Some(10_000)), 10_100);
        assert_eq!(minimum_bid(0, Some(250_001)), 252_502);
        assert_eq!(
            minimum_bid(5_000, Some(1_000)),
            5_000,
            "a minimal bid raised past the bids stands"
        );
        // The minimal bid still holds if the highest bid is below it (the seller raised it).
        assert_eq!(minimum_bid(5_000, Some(1_000)), 5_000);
    }

    #[test]
    fn bids_are_checked() {
        let bid = |amount: Value| BidRequest {
            amount: Some(amount),
        };
        assert_eq!(check_bid(&bid(json!(600)), 600, false), Ok(600));
        assert_eq!(
            check_bid(&bid(json!(599)), 600, false).unwrap_err().code,
            "not-above-highest-bid"
        );
        assert_eq!(
            check_bid(&bid(json!(499)), 500, true).unwrap_err().code,
            "below-minimal-bid"
        );
        for bad in [
            json!("600"),
            json!(12.5),
            json!(0),
            json!(-1),
            json!(AMOUNT_MAX + 1),
        ] {
            assert_eq!(
                check_bid(&bid(bad.clone()), 1, true).unwrap_err().code,
                "invalid-value",
                "{bad}"
            );
        }
        assert_eq!(
            check_bid(&BidRequest::default(), 1, true).unwrap_err().code,
            "missing"
        );
    }

    #[test]
    fn questions_are_checked() {
        let question = |message: Value, phone: Option<Value>| QuestionRequest {
            message: Some(message),
            phone_number: phone,
        };
        let ok = check_question(&question(
            json!(" Nog te koop? "),
            Some(json!("0612345678")),
        ));
        assert_eq!(
            ok,
            Ok(Question {
                message: "Nog te koop?".into(),
                phone_number: Some("0612345678".into())
            })
        );
        let codes = |r: Result<Question, Vec<FieldError>>| {
            r.unwrap_err().iter().map(|e| e.code).collect::<Vec<_>>()
        };
        assert_eq!(
            codes(check_question(&question(json!(""), Some(json!("bel me"))))),
            ["invalid-length", "invalid-phone-number"]
        );
        assert_eq!(
            codes(check_question(&question(json!("a\u{0}b"), None))),
            ["control-characters"]
        );
        assert_eq!(
            codes(check_question(&question(
                json!("x".repeat(QUESTION_MAX_CHARS + 1)),
                None
            ))),
            ["invalid-length"]
        );
        assert_eq!(
            codes(check_question(&QuestionRequest::default())),
            ["missing"]
        );
    }
}
