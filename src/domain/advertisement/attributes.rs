//! The category attributes of an ad, checked against its leaf category's definitions.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{decimal, error, integer, not_one_line};
use crate::domain::category::{AttributeDefinition, AttributeType};
use crate::domain::field_error::FieldError;
use crate::domain::text::is_one_line;

/// The most attributes an ad's body may give (flat members and listed ones together); a
/// category has a few dozen at most.
pub const ATTRIBUTES_MOST: usize = 200;

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
    let listed = match body.get("attributes") {
        Some(Value::Array(items)) => items.len(),
        _ => 0,
    };
    // More than any category has are refused whole, not one by one: a megabyte of them
    // would be answered with a field error each.
    if attributes.len() + listed > ATTRIBUTES_MOST {
        return Err(vec![error(
            "attributes",
            "too-many",
            format!("hoogstens {ATTRIBUTES_MOST} attributen"),
            format!("au plus {ATTRIBUTES_MOST} attributs"),
        )]);
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
                errors.push(FieldError::missing(key));
            }
            continue;
        };
        if before == Some(value) {
            checked.insert(key.clone(), value.clone());
            continue;
        }
        // Compared as its type reads it: a value the ad holds, sent back in another form
        // (a number as text), is no change and is not judged again either (a bound that
        // moved since), even where the attribute may no longer be given.
        if let Some(same) = converted(definition, value).filter(|value| before == Some(value)) {
            checked.insert(key.clone(), same);
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
        let typed = typed(definition, value, &mut errors);
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

/// `value` in the form its type stores, without judging it (a number may come as text);
/// `None` if it cannot be read as the type at all.
fn converted(definition: &AttributeDefinition, value: &Value) -> Option<Value> {
    match definition.kind {
        AttributeType::List => value.as_str().map(|option| json!(option)),
        AttributeType::Number => integer(value).map(|n| json!(n)),
        AttributeType::Double => decimal(value).map(|n| json!(n)),
        AttributeType::String => value.as_str().map(|text| json!(text.trim())),
    }
}

/// `value` read as the attribute's type and judged by its definition (options, bounds,
/// length), or `None` with the reason in `errors`.
fn typed(
    definition: &AttributeDefinition,
    value: &Value,
    errors: &mut Vec<FieldError>,
) -> Option<Value> {
    let key = &definition.key;
    match definition.kind {
        AttributeType::List => match value.as_str() {
            Some(option) if definition.options.iter().any(|o| o.key == option) => {
                Some(json!(option))
            }
            _ => {
                let keys: Vec<&str> = definition.options.iter().map(|o| o.key.as_str()).collect();
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
            Some(n) if n.unsigned_abs() > EXACT_INTEGER_MAX => {
                errors.push(out_of_range(
                    key,
                    &format!("-{EXACT_INTEGER_MAX} .. {EXACT_INTEGER_MAX}"),
                    json!(n),
                ));
                None
            }
            Some(n) => within(key, n as f64, definition, errors).then(|| json!(n)),
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
            Some(n) => within(key, n, definition, errors).then(|| json!(n)),
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
                errors.push(not_one_line(key, text));
                None
            }
            Some(text) => Some(json!(text)),
            None => {
                errors.push(FieldError::not_text(key, value.clone()));
                None
            }
        },
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
        errors.push(out_of_range(key, &bounds, json!(n)));
        return false;
    }
    true
}

/// The largest whole number a NUMBER attribute holds: 2^53, beyond which a number is not
/// exact as a double, which PostgreSQL's range filters (`::float8`), the bounds check and
/// JavaScript clients read it as (SQLite compares it exactly: the backends would differ).
pub const EXACT_INTEGER_MAX: u64 = 1 << 53;

fn out_of_range(key: &str, bounds: &str, value: Value) -> FieldError {
    error(
        key,
        "out-of-range",
        format!("moet tussen {bounds} liggen"),
        format!("doit être compris entre {bounds}"),
    )
    .with_value(value)
}
