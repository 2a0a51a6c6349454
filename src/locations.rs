//! Loading postcodes into the `locations` table: `souk locations import FILE` and the
//! shipped `data/locations.txt`, which a new database gets at its first start. Both read
//! GeoNames' postal-code text format (data/README.md).

use std::collections::HashSet;
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

use crate::domain::places::{Country, LineError, Location, parse_geonames_line};
use crate::store::{Db, TableLock, locations};

/// Every Dutch 4-digit postcode area and Belgian postcode (ODbL: see data/README.md),
/// compiled in so that `souk` runs from any directory.
pub const DEFAULT_LOCATIONS: &str = include_str!("../data/locations.txt");

/// What a file held.
#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    /// The Dutch and Belgian postcodes, each once (the first line of a postcode counts).
    pub locations: Vec<Location>,
    /// Lines of other countries, which Souk does not serve.
    pub other_countries: u64,
    /// Later lines of a postcode already read (GeoNames lists several places for some).
    pub repeated: u64,
}

/// Reads every line of `text`, calling `progress` with the bytes read so far now and then;
/// the first malformed line is the error, and then nothing is kept.
pub fn parse(text: &str, progress: impl Fn(u64)) -> Result<Parsed, LineError> {
    let mut parsed = Parsed::default();
    let mut seen = HashSet::new();
    let mut bytes = 0;
    for (index, line) in text.lines().enumerate() {
        bytes += line.len() as u64 + 1;
        if index % 10_000 == 0 {
            progress(bytes);
        }
        match parse_geonames_line(index + 1, line)? {
            None => parsed.other_countries += 1,
            Some(location) if seen.insert(location.postcode.clone()) => {
                parsed.locations.push(location);
            }
            Some(_) => parsed.repeated += 1,
        }
    }
    progress(text.len() as u64);
    Ok(parsed)
}

/// Loads [`DEFAULT_LOCATIONS`] into an empty `locations` table; returns how many rows it
/// wrote (0 when the table had rows: an operator's import is never overwritten).
pub async fn load_default(db: &Db) -> anyhow::Result<u64> {
    let empty = db
        .read(|conn| Box::pin(async move { locations::count(conn).await }))
        .await?
        == 0;
    if !empty {
        return Ok(0);
    }
    let parsed = parse(DEFAULT_LOCATIONS, |_| {})?;
    let written = db
        .write(move |conn| {
            Box::pin(async move {
                // Another replica may have loaded it meanwhile, or an operator's first
                // import be under way: it is waited for, and then counted.
                conn.lock_table("locations", TableLock::Writes).await?;
                if locations::count(conn).await? > 0 {
                    return Ok(0);
                }
                locations::upsert(conn, &parsed.locations, |_| {}).await
            })
        })
        .await?;
    Ok(written)
}

/// `souk locations import FILE`: reads the whole file first (a malformed line is refused
/// with its number, and nothing changes), then adds or replaces its postcodes in one
/// transaction. Progress goes to stderr; the summary is the answer.
pub async fn import(db: &Db, file: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let reading = bar(text.len() as u64, "{bar:40} {bytes}/{total_bytes} read");
    let parsed = parse(&text, |bytes| reading.set_position(bytes))
        .map_err(|e| anyhow::anyhow!("{}: {e}; nothing changed", file.display()))?;
    reading.finish_and_clear();
    let count = |country| {
        parsed
            .locations
            .iter()
            .filter(|l| l.postcode.country() == country)
            .count()
    };
    let (dutch, belgian) = (count(Country::Netherlands), count(Country::Belgium));
    let writing = bar(
        parsed.locations.len() as u64,
        "{bar:40} {pos}/{len} postcodes written",
    );
    let progress = writing.clone();
    let locations = parsed.locations;
    db.write(move |conn| {
        Box::pin(async move {
            locations::upsert(conn, &locations, move |rows| progress.inc(rows)).await
        })
    })
    .await?;
    writing.finish_and_clear();
    Ok(format!(
        "{}: {} postcodes loaded ({dutch} NL, {belgian} BE); skipped: {} lines of other \
         countries, {} repeated postcodes",
        file.display(),
        dutch + belgian,
        parsed.other_countries,
        parsed.repeated
    ))
}

fn bar(length: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(length);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_file_has_both_countries_once_each() {
        let parsed = parse(DEFAULT_LOCATIONS, |_| {}).expect("the shipped file reads");
        assert_eq!((parsed.other_countries, parsed.repeated), (0, 0));
        assert!(parsed.locations.len() > 5000);
    }

    #[test]
    fn repeated_postcodes_keep_their_first_place() {
        let text = "BE\t1000\tBruxelles\tBruxelles-Capitale\tBRU\t\t\t\t\t50.8\t4.3\t4\n\
                    BE\t1000\tBrussel\tBruxelles-Capitale\tBRU\t\t\t\t\t50.8\t4.3\t4\n\
                    DE\t10115\tBerlin\tBerlin\tBE\t\t\t\t\t52.5\t13.4\t4\n";
        let parsed = parse(text, |_| {}).unwrap();
        assert_eq!(parsed.locations.len(), 1);
        assert_eq!(parsed.locations[0].place, "Bruxelles");
        assert_eq!((parsed.other_countries, parsed.repeated), (1, 1));
    }
}
