//! Checks of free text before Souk stores it. PostgreSQL's TEXT cannot hold NUL (storing
//! one fails there, while SQLite keeps it), and other control characters break listings,
//! logs and mails; so they are refused where text comes in, per field.

use serde_json::Value;

use super::field_error::FieldError;

/// The text a required field of a JSON body holds, trimmed: `missing` when it is absent or
/// null, `invalid-value` when it is not text.
pub fn required_text(field: &str, value: Option<&Value>) -> Result<String, FieldError> {
    match value {
        None | Some(Value::Null) => Err(FieldError::missing(field)),
        Some(Value::String(s)) => Ok(s.trim().to_owned()),
        Some(other) => Err(FieldError::not_text(field, other.clone())),
    }
}

/// One line: no control character at all (no line break, tab or NUL).
pub fn is_one_line(text: &str) -> bool {
    !text.chars().any(char::is_control)
}

/// Text of several lines: line breaks and tabs are fine, other control characters (NUL
/// among them) are not.
pub fn is_multiline(text: &str) -> bool {
    !text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_control_characters() {
        assert!(is_one_line("Fiets met mand, € 20"));
        for bad in ["a\nb", "a\tb", "a\0b", "a\u{7f}b", "a\u{85}b"] {
            assert!(!is_one_line(bad), "{bad:?}");
        }
        assert!(is_multiline("Regel één\r\nRegel\ttwee"));
        for bad in ["a\0b", "a\u{1b}[31m", "a\u{7f}", "a\u{9b}b"] {
            assert!(!is_multiline(bad), "{bad:?}");
        }
    }
}
