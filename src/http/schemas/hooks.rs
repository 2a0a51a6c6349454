//! The schemas of webhooks and events (a part of [`super::all`], kept apart to keep each file
//! readable).

use serde_json::{Value, json};

use super::{described, object, paged};
use crate::domain::hook::{EVENTS_MOST, SECRET_MAX, SECRET_MIN, URL_MAX};

/// The schemas, given `all`'s builders of `_links` and `_embedded` members and a link.
pub(super) fn schemas(
    links: &dyn Fn(&[&str]) -> Value,
    embedded: &dyn Fn(&str, &str) -> Value,
    link: &Value,
) -> Value {
    let event_types = json!({"type": "string", "enum": super::super::hooks::event_types()});
    let hook = json!({
        "url": {"type": "string", "maxLength": URL_MAX, "description": "An absolute http or https URL."},
        "events": {"type": "array", "items": event_types, "minItems": 1, "maxItems": EVENTS_MOST},
        "secret": {"type": "string", "minLength": SECRET_MIN, "maxLength": SECRET_MAX, "description": "The key of each delivery's signature; one line."},
        "active": {"type": "boolean", "default": true},
    });
    json!({
        "HookInput": object(hook.clone(), &["url", "events", "secret"]),
        "HookReplacement": described(
            "A hook's replacement: as HookInput, but without `secret` the hook keeps its own.",
            object(hook, &["url", "events"]),
        ),
        "Hook": object(
            json!({
                "_links": links(&[]),
                "hookId": {"type": "integer"},
                "url": {"type": "string"},
                "events": {"type": "array", "items": event_types},
                "active": {"type": "boolean"},
                "createdDate": {"type": "string", "format": "date-time"},
                "updatedDate": {"type": "string", "format": "date-time"},
                "deliveries": described(
                    "The deliveries the hook still waits for (not yet taken by its URL, nor given up after three days).",
                    object(
                        json!({
                            "waiting": {"type": "integer", "minimum": 0},
                            "oldestWaitingDate": described("When the oldest of them was queued (when its event happened); absent when none waits.", json!({"type": "string", "format": "date-time"})),
                            "lastFailure": described(
                                "The latest failed attempt at one of them; absent when none failed.",
                                object(
                                    json!({
                                        "date": {"type": "string", "format": "date-time"},
                                        "reason": {"type": "string", "description": "What went wrong: the image import's error code: `error-status` and the status its URL answered (`error-status 503`), `too-slow`, `not-answering` or `address-refused` (which names neither the address nor its kind)."},
                                    }),
                                    &["date", "reason"],
                                ),
                            ),
                        }),
                        &["waiting"],
                    ),
                ),
            }),
            &["hookId", "url", "events", "active", "createdDate", "updatedDate", "deliveries"],
        ),
        "HookList": object(
            json!({
                "_links": links(&[]),
                "_embedded": embedded("hook", "Hook"),
                "totalCount": {"type": "integer"},
                "maximum": {"type": "integer", "description": "How many webhooks a client may have."},
            }),
            &["_embedded", "totalCount", "maximum"],
        ),
        "Event": object(
            json!({
                "_links": links(&[]),
                "eventId": {"type": "integer"},
                "eventType": event_types,
                "created": {"type": "string", "format": "date-time"},
                "eventData": described("What changed: ids and states.", json!({"type": "object"})),
                "_embedded": described(
                    "The resource, under its rel, as it was when the event happened (some of its members), with a `self` link to it as it is now.",
                    json!({
                        "type": "object",
                        "minProperties": 1,
                        "maxProperties": 1,
                        "additionalProperties": object(
                            json!({"_links": object(json!({"self": link}), &["self"])}),
                            &["_links"],
                        ),
                    }),
                ),
            }),
            &["eventId", "eventType", "created", "eventData", "_embedded"],
        ),
        "EventList": paged(object(
            json!({
                "_links": links(&[]),
                "_embedded": embedded("event", "Event"),
            }),
            &[],
        )),
    })
}
