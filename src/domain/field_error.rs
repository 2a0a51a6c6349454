//! A problem with one field (or several fields together) of what a client sent: what every
//! check in `domain` reports, all problems of a request at once. The HTTP layer writes
//! them as the `details` of a 400 (api.md §2).

use serde_json::Value;

use super::locale::Text;

#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub fields: Vec<String>,
    pub code: &'static str,
    pub message: Text,
    pub value: Option<Value>,
}

/// Whether one of `errors` is about `field`.
pub fn names_field(errors: &[FieldError], field: &str) -> bool {
    errors
        .iter()
        .any(|error| error.fields.iter().any(|f| f == field))
}

impl FieldError {
    pub fn new(field: impl Into<String>, code: &'static str, message: Text) -> Self {
        FieldError {
            fields: vec![field.into()],
            code,
            message,
            value: None,
        }
    }

    /// A required field is absent (`missing`).
    pub fn missing(field: impl Into<String>) -> Self {
        FieldError::new(
            field,
            "missing",
            Text::new("is verplicht", "est obligatoire"),
        )
    }

    /// The value is not text (`invalid-value`).
    pub fn not_text(field: impl Into<String>, value: impl Into<Value>) -> Self {
        FieldError::new(
            field,
            "invalid-value",
            Text::new("moet tekst zijn", "doit être du texte"),
        )
        .with_value(value)
    }

    /// The value is not an object (`invalid-value`).
    pub fn not_an_object(field: impl Into<String>, value: impl Into<Value>) -> Self {
        FieldError::new(
            field,
            "invalid-value",
            Text::new("moet een object zijn", "doit être un objet"),
        )
        .with_value(value)
    }

    /// A query parameter given more than once (`duplicate`): each of Souk's takes one value.
    pub fn repeated_parameter(name: impl Into<String>) -> Self {
        FieldError::new(
            name,
            "duplicate",
            Text::new("mag maar één keer voorkomen", "ne peut figurer qu'une fois"),
        )
    }

    pub fn with_value(mut self, value: impl Into<Value>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// The problem lies in these fields together (a bid above the asking price, an end
    /// before the start).
    pub fn on_fields(mut self, fields: &[&str]) -> Self {
        self.fields = fields.iter().map(|f| (*f).to_owned()).collect();
        self
    }
}

/// The checked value if every part of it could be read and nothing was wrong; else every
/// problem found. (`value` is `None` when a part is missing: its problem is in `errors`.)
pub fn checked<T>(value: Option<T>, errors: Vec<FieldError>) -> Result<T, Vec<FieldError>> {
    match value {
        Some(value) if errors.is_empty() => Ok(value),
        _ => Err(errors),
    }
}
