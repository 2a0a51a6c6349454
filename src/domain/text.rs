//! Checks of free text before Souk stores it. PostgreSQL's TEXT cannot hold NUL (storing
//! one fails there, while SQLite keeps it), and other control characters break listings,
//! logs and mails; so they are refused where text comes in, per field.

use serde_json::Value;

use super::field_error::FieldError;
use super::locale::Text;

/// The text a required field of a JSON body holds, trimmed ([`trimmed`]): `missing` when it
/// is absent or null, `invalid-value` when it is not text.
pub fn required_text(field: &str, value: Option<&Value>) -> Result<String, FieldError> {
    match value {
        None | Some(Value::Null) => Err(FieldError::missing(field)),
        Some(Value::String(s)) => Ok(trimmed(s).to_owned()),
        Some(other) => Err(FieldError::not_text(field, other.clone())),
    }
}

/// Text without what shows nothing at its ends: white space, and the characters that take
/// no room (a zero-width space, a word joiner, a byte order mark...), which `str::trim`
/// keeps. A name, brand or title made of them alone would show as nothing, yet count as
/// given; trimmed, it is empty and refused as such. (Within text they stay: emoji
/// sequences and some scripts need joiners. The variation selectors and tag characters
/// that end an emoji, `❤️` or a flag, are no part of them.)
pub fn trimmed(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || takes_no_room(c))
}

/// Characters drawn as nothing: Unicode's invisible format characters and the fillers
/// and blanks that render empty.
fn takes_no_room(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{1D173}'..='\u{1D17A}'
    )
}

/// A positive whole number written as Souk writes its ids: digits only, no sign and no
/// leading zero (`007` and `+7` would be second names of 7), within i64.
pub fn positive_id(text: &str) -> Option<i64> {
    if text.starts_with('0') || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// One line: no control character at all (no line break, tab or NUL), no Unicode line or
/// paragraph separator, and no bidirectional override.
pub fn is_one_line(text: &str) -> bool {
    !text
        .chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_bidi_control(c))
}

/// Text of several lines: line breaks (Unicode's separators too) and tabs are fine, other
/// control characters (NUL among them) and bidirectional overrides are not.
pub fn is_multiline(text: &str) -> bool {
    !text
        .chars()
        .any(|c| (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || is_bidi_control(c))
}

/// The overrides of Unicode's bidirectional algorithm (LRO, RLO): they make text display
/// in another order than it reads (a title that shows "50" and says "05"), and typed text
/// has no need of them. Embeddings, isolates and marks stay allowed: text pasted from
/// right-to-left scripts carries them, and they reorder no letters or digits.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202D}' | '\u{202E}')
}

/// A required message of several lines (a question, a review), trimmed: 1 to `max_chars`
/// characters (`invalid-length`), no control characters but line breaks and tabs
/// (`control-characters`).
pub fn message_text(
    field: &str,
    value: Option<&Value>,
    max_chars: usize,
) -> Result<String, FieldError> {
    let text = required_text(field, value)?;
    let length = text.chars().count();
    if text.is_empty() || length > max_chars {
        return Err(FieldError::new(
            field,
            "invalid-length",
            Text::new(
                format!("moet 1 tot {max_chars} tekens lang zijn"),
                format!("doit compter de 1 à {max_chars} caractères"),
            ),
        )
        .with_value(length as i64));
    }
    if !is_multiline(&text) {
        return Err(FieldError::new(
            field,
            "control-characters",
            Text::new(
                "mag geen stuurtekens bevatten",
                "ne peut pas contenir de caractères de contrôle",
            ),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_has_one_spelling() {
        assert_eq!(positive_id("7"), Some(7));
        assert_eq!(positive_id("9223372036854775807"), Some(i64::MAX));
        for other in [
            "",
            "0",
            "007",
            "+7",
            "-7",
            " 7",
            "7 ",
            "9223372036854775808",
            "٧",
        ] {
            assert_eq!(positive_id(other), None, "{other:?}");
        }
    }

    #[test]
    fn lines_and_control_characters() {
        assert!(is_one_line("Fiets met mand, € 20"));
        assert!(
            is_one_line("\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{200f}20"),
            "right to left, a mark"
        );
        assert!(
            is_one_line("\u{2067}\u{5e9}\u{5dc}\u{5d5}\u{5dd}\u{2069} 20"),
            "an isolate"
        );
        for bad in [
            "a\nb",
            "a\tb",
            "a\0b",
            "a\u{7f}b",
            "a\u{85}b",
            "a\u{2028}b",
            "a\u{2029}b",
            "a\u{202e}b",
            "a\u{202d}b",
        ] {
            assert!(!is_one_line(bad), "{bad:?}");
        }
        assert!(is_multiline("Regel één\r\nRegel\ttwee\u{2028}drie"));
        for bad in [
            "a\0b",
            "a\u{1b}[31m",
            "a\u{7f}",
            "a\u{9b}b",
            "a\u{202d}b",
            "a\u{202e}",
        ] {
            assert!(!is_multiline(bad), "{bad:?}");
        }
    }
}
