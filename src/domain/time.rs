//! Timestamps as the API writes them: ISO 8601 with an offset, UTC as `+00:00`, no fraction.

use std::fmt;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A Unix timestamp (seconds) that displays as `YYYY-MM-DDThh:mm:ss+00:00`, so that a
/// representation can write it without making a `String` first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp(pub i64);

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Out of range (beyond year 9999) shows as the epoch; nothing Souk stores gets there.
        let at = OffsetDateTime::from_unix_timestamp(self.0).unwrap_or(OffsetDateTime::UNIX_EPOCH);
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}+00:00",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute(),
            at.second()
        )
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Formats a Unix timestamp (seconds) as `YYYY-MM-DDThh:mm:ss+00:00`.
pub fn format_timestamp(unix_seconds: i64) -> String {
    Timestamp(unix_seconds).to_string()
}

/// Parses an ISO 8601 timestamp with any offset or `Z` into Unix seconds.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .map(OffsetDateTime::unix_timestamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_with_offset() {
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(format_timestamp(1_700_000_000), "2023-11-14T22:13:20+00:00");
        assert_eq!(format_timestamp(1_704_067_199), "2023-12-31T23:59:59+00:00");
        assert_eq!(
            serde_json::to_string(&Timestamp(951_782_400)).unwrap(),
            "\"2000-02-29T00:00:00+00:00\""
        );
    }

    #[test]
    fn parses_any_offset() {
        assert_eq!(parse_timestamp("2023-11-14T22:13:20Z"), Some(1_700_000_000));
        assert_eq!(
            parse_timestamp("2023-11-14T23:13:20+01:00"),
            Some(1_700_000_000)
        );
        assert_eq!(parse_timestamp("2023-11-14 23:13"), None);
    }
}
