//! Webhooks: the event types a client can subscribe to, and the rules of a hook as a client
//! sends it (`POST /v1/hooks`, `PUT /v1/hooks/{hookId}`).

use serde_json::Value;

use super::field_error::{FieldError, checked};
use super::locale::Text;
use super::text::is_one_line;
use super::text_enum;

text_enum! {
    /// What happened, as a delivery's `eventType` names it.
    pub enum EventType {
        /// An ad was placed (online, or a draft).
        AdvertisementCreated = "advertisement.created",
        /// An ad's content or state changed: by its seller, or by an operator's moderation.
        AdvertisementUpdated = "advertisement.updated",
        /// An ad was deleted.
        AdvertisementDeleted = "advertisement.deleted",
        /// A bid was placed on an ad.
        BidPlaced = "bid.placed",
        /// A bid was withdrawn by its bidder or removed by the ad's seller.
        BidWithdrawn = "bid.withdrawn",
        /// A sale of an ad was recorded.
        TransactionCreated = "transaction.created",
        /// A sale was completed or cancelled.
        TransactionUpdated = "transaction.updated",
        /// A partner confirmed a phone call about an ad.
        UpcallConfirmed = "upcall.confirmed",
        /// The buyer of a completed sale reviewed its seller.
        ReviewCreated = "review.created",
    }
}

/// The most hooks one client may have.
pub const MAX_HOOKS_PER_CLIENT: i64 = 10;

/// The longest list of event types a hook takes (each type, and some repeated).
pub const EVENTS_MOST: usize = 2 * EventType::ALL.len();

/// The longest hook URL.
pub const URL_MAX: usize = 2000;

/// The shortest and the longest secret: short ones can be guessed from a signature.
pub const SECRET_MIN: usize = 16;
pub const SECRET_MAX: usize = 200;

/// A hook as a client sent it: every member unchecked.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct HookRequest {
    pub url: Option<Value>,
    pub events: Option<Value>,
    pub secret: Option<Value>,
    pub active: Option<Value>,
}

/// A hook, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hook {
    pub url: String,
    /// Each type once, in the order of [`EventType::ALL`].
    pub events: Vec<EventType>,
    /// `None` in a replacement that sent none: the hook keeps its own.
    pub secret: Option<String>,
    pub active: bool,
}

impl HookRequest {
    /// Every problem at once: `url` an absolute `http` or `https` URL, `events` a non-empty
    /// list of known event types, `secret` 16 to 200 characters of one line (absent in a
    /// `replacing` request: the hook keeps the secret its representation never shows),
    /// `active` a boolean (default true).
    pub fn check(&self, replacing: bool) -> Result<Hook, Vec<FieldError>> {
        let mut errors = Vec::new();
        let url = check_url(self.url.as_ref())
            .map_err(|e| errors.push(e))
            .ok();
        let events = check_events(self.events.as_ref())
            .map_err(|e| errors.extend(e))
            .ok();
        let secret = match &self.secret {
            None | Some(Value::Null) if replacing => Some(None),
            secret => check_secret(secret.as_ref())
                .map_err(|e| errors.push(e))
                .ok()
                .map(Some),
        };
        let active = match &self.active {
            None | Some(Value::Null) => Some(true),
            Some(Value::Bool(active)) => Some(*active),
            Some(other) => {
                errors.push(
                    FieldError::new(
                        "active",
                        "invalid-value",
                        Text::new("moet true of false zijn", "doit être true ou false"),
                    )
                    .with_value(other.clone()),
                );
                None
            }
        };
        let hook = match (url, events, secret, active) {
            (Some(url), Some(events), Some(secret), Some(active)) => Some(Hook {
                url,
                events,
                secret,
                active,
            }),
            _ => None,
        };
        checked(hook, errors)
    }
}

fn check_url(value: Option<&Value>) -> Result<String, FieldError> {
    let text = match value {
        None | Some(Value::Null) => return Err(FieldError::missing("url")),
        Some(Value::String(text)) => text.trim(),
        Some(other) => return Err(FieldError::not_text("url", other.clone())),
    };
    let invalid = || {
        FieldError::new(
            "url",
            "invalid-url",
            Text::new(
                format!("moet een absolute http- of https-URL zijn van hoogstens {URL_MAX} tekens"),
                format!("doit être une URL http ou https absolue d'au plus {URL_MAX} caractères"),
            ),
        )
        .with_value(text)
    };
    if text.chars().count() > URL_MAX || !is_one_line(text) {
        return Err(invalid());
    }
    let parsed = url::Url::parse(text).map_err(|_| invalid())?;
    let web = matches!(parsed.scheme(), "http" | "https") && parsed.host().is_some();
    if !web {
        return Err(invalid());
    }
    Ok(text.to_owned())
}

fn check_events(value: Option<&Value>) -> Result<Vec<EventType>, Vec<FieldError>> {
    let list = match value {
        None | Some(Value::Null) => return Err(vec![FieldError::missing("events")]),
        // A list longer than one of each type is refused whole, not item by item.
        Some(Value::Array(list)) if (1..=EVENTS_MOST).contains(&list.len()) => list,
        Some(other) => {
            return Err(vec![
                FieldError::new(
                    "events",
                    "invalid-value",
                    Text::new(
                        format!("moet een lijst van 1 tot {EVENTS_MOST} gebeurtenistypen zijn"),
                        format!("doit être une liste de 1 à {EVENTS_MOST} types d'événements"),
                    ),
                )
                .with_value(other.clone()),
            ]);
        }
    };
    let mut errors = Vec::new();
    let mut wanted = Vec::new();
    for (i, item) in list.iter().enumerate() {
        match item.as_str().and_then(EventType::parse) {
            Some(event) => wanted.push(event),
            None => errors.push(
                FieldError::new(
                    format!("events[{i}]"),
                    "unknown-event",
                    Text::new(
                        format!("is geen gebeurtenistype; bekend zijn: {}", known_events()),
                        format!(
                            "n'est pas un type d'événement ; les types sont : {}",
                            known_events()
                        ),
                    ),
                )
                .with_value(item.clone()),
            ),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(EventType::ALL
        .into_iter()
        .filter(|event| wanted.contains(event))
        .collect())
}

fn known_events() -> String {
    EventType::ALL.map(EventType::as_str).join(", ")
}

fn check_secret(value: Option<&Value>) -> Result<String, FieldError> {
    let text = match value {
        None | Some(Value::Null) => return Err(FieldError::missing("secret")),
        // Not trimmed: the client signs with the secret it sent, spaces and all.
        Some(Value::String(text)) => text,
        Some(other) => return Err(FieldError::not_text("secret", other.clone())),
    };
    let length = text.chars().count();
    if !(SECRET_MIN..=SECRET_MAX).contains(&length) || !is_one_line(text) {
        // The value is not echoed: it is a secret.
        return Err(FieldError::new(
            "secret",
            "invalid-secret",
            Text::new(
                format!("moet {SECRET_MIN} tot {SECRET_MAX} tekens op één regel zijn"),
                format!("doit compter {SECRET_MIN} à {SECRET_MAX} caractères sur une ligne"),
            ),
        ));
    }
    Ok(text.clone())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(value: Value) -> HookRequest {
        serde_json::from_value(value).unwrap()
    }

    fn codes(result: Result<Hook, Vec<FieldError>>) -> Vec<(String, &'static str)> {
        result
            .unwrap_err()
            .into_iter()
            .map(|e| (e.fields.join(","), e.code))
            .collect()
    }

    #[test]
    fn a_hook_is_read_with_its_events_once_each_in_a_fixed_order() {
        let hook = request(json!({
            "url": " https://partner.example/hooks ",
            "events": ["bid.placed", "advertisement.created", "bid.placed"],
            "secret": "a secret of twenty chars",
        }))
        .check(false)
        .unwrap();
        assert_eq!(hook.url, "https://partner.example/hooks");
        assert_eq!(
            hook.events,
            [EventType::AdvertisementCreated, EventType::BidPlaced]
        );
        assert!(hook.active, "active by default");
        assert_eq!(hook.secret.as_deref(), Some("a secret of twenty chars"));
    }

    #[test]
    fn every_problem_of_a_hook_is_reported_at_once() {
        let found = codes(
            request(json!({
                "url": "ftp://partner.example/x",
                "events": ["advertisement.created", "ad.sold"],
                "secret": "short",
                "active": "yes",
            }))
            .check(false),
        );
        assert_eq!(
            found,
            [
                ("url".to_owned(), "invalid-url"),
                ("events[1]".to_owned(), "unknown-event"),
                ("secret".to_owned(), "invalid-secret"),
                ("active".to_owned(), "invalid-value"),
            ]
        );
        let found = codes(request(json!({"events": []})).check(false));
        assert_eq!(
            found,
            [
                ("url".to_owned(), "missing"),
                ("events".to_owned(), "invalid-value"),
                ("secret".to_owned(), "missing"),
            ]
        );
    }

    #[test]
    fn a_replacement_without_a_secret_keeps_the_hooks_own() {
        let read_back = json!({"url": "https://a.example/h", "events": ["bid.placed"]});
        let hook = request(read_back.clone()).check(true).unwrap();
        assert_eq!(hook.secret, None, "kept");
        assert_eq!(
            codes(request(read_back.clone()).check(false)),
            [("secret".to_owned(), "missing")],
            "a new hook has none to keep"
        );
        let mut new_secret = read_back.clone();
        new_secret["secret"] = json!("a new secret of 24 chars");
        assert_eq!(
            request(new_secret).check(true).unwrap().secret.as_deref(),
            Some("a new secret of 24 chars")
        );
        let mut short = read_back;
        short["secret"] = json!("short");
        assert_eq!(
            codes(request(short).check(true)),
            [("secret".to_owned(), "invalid-secret")]
        );
    }

    #[test]
    fn a_relative_or_multiline_url_is_refused() {
        for url in [
            "/hooks",
            "https://",
            "https://a.example/\nx",
            "mailto:a@b.example",
        ] {
            let found = codes(
                request(
                    json!({"url": url, "events": ["bid.placed"], "secret": "0123456789abcdef"}),
                )
                .check(false),
            );
            assert_eq!(found, [("url".to_owned(), "invalid-url")], "{url:?}");
        }
    }
}
