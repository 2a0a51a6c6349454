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
        // Outside years 0 to 9999 shows as the epoch; nothing Souk stores gets there.
        let at = OffsetDateTime::from_unix_timestamp(self.0)
            .ok()
            .filter(|at| (0..=9999).contains(&at.year()))
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        // Written digit by digit: the representation of every ad has two of these, and
        // `write!` with widths costs ten times as much.
        let mut text = *b"0000-00-00T00:00:00+00:00";
        let mut put = |at: usize, width: usize, mut value: u32| {
            for i in (at..at + width).rev() {
                text[i] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, at.year() as u32);
        put(5, 2, u8::from(at.month()).into());
        put(8, 2, at.day().into());
        put(11, 2, at.hour().into());
        put(14, 2, at.minute().into());
        put(17, 2, at.second().into());
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
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

/// Parses an ISO 8601 timestamp with any offset or `Z` into Unix seconds; one whose UTC
/// year is outside 0 to 9999 is none ([`Timestamp`] could not write it back).
pub fn parse_timestamp(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .and_then(|at| at.checked_to_offset(time::UtcOffset::UTC))
        .filter(|at| (0..=9999).contains(&at.year()))
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
        // Within years 0 to 9999 as written, not in UTC.
        assert_eq!(parse_timestamp("0000-01-01T00:00:00+01:00"), None);
        assert_eq!(parse_timestamp("9999-12-31T23:30:00-01:00"), None);
        let first = parse_timestamp("0000-01-01T00:00:00Z").unwrap();
        assert_eq!(format_timestamp(first), "0000-01-01T00:00:00+00:00");
    }
}
