//! Timestamps as the API writes them: ISO 8601 with an offset, UTC as `+00:00`, no fraction.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, UtcOffset};

/// Formats a Unix timestamp (seconds) as `YYYY-MM-DDThh:mm:ss+00:00`.
pub fn format_timestamp(unix_seconds: i64) -> String {
    let at = OffsetDateTime::from_unix_timestamp(unix_seconds)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .to_offset(UtcOffset::UTC);
    at.format(format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second]+00:00"
    ))
    .unwrap_or_default()
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
