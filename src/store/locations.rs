//! Postcodes with their place, province and coordinates (migration 0013): what
//! `GET /v1/locations` answers and what search measures distances from.

use crate::domain::places::{Location, Point, Postcode};
use crate::params;

use super::record::record;
use super::{Conn, DbError, Record, TableLock, Value, placeholders};

record! {
    /// A row of `locations`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct LocationRecord {
        /// `NL` or `BE`.
        pub country: String,
        /// The row's own code: for a Dutch postcode that the table has by area only, the
        /// area (`8301`), not the postcode asked for.
        pub postcode: String,
        pub place: String,
        pub province: String,
        pub province_code: String,
        pub latitude: f64,
        pub longitude: f64,
    }
}

impl LocationRecord {
    pub fn point(&self) -> Point {
        Point {
            latitude: self.latitude,
            longitude: self.longitude,
        }
    }
}

/// The row of a postcode: the whole postcode's if the table has it, else its area's (a
/// Dutch `8301AA` is found as `8301` when only the area was loaded).
pub async fn find(
    conn: &mut dyn Conn,
    postcode: &Postcode,
) -> Result<Option<LocationRecord>, DbError> {
    conn.record(
        &format!(
            "SELECT {} FROM locations WHERE country = $1 AND postcode IN ($2, $3) \
             ORDER BY length(postcode) DESC LIMIT 1",
            LocationRecord::COLUMNS
        ),
        params![postcode.country().code(), postcode.code(), postcode.area()],
    )
    .await
}

/// The place of the postcode that the SQL expression `postcode` gives, by the rule of
/// [`find`] (the whole postcode's row, else its area's; six characters are Dutch), as a
/// SQL expression: NULL where the table has neither. Kept on each ad (`place`, migration
/// 0046) when it is written, and again for every ad by [`upsert`], so that reading an ad
/// looks nothing up.
pub(super) fn place_of(postcode: &str) -> String {
    // Two lookups by key rather than `find`'s one with a sort: over 100,000 ads on SQLite
    // 0.27 s against 0.63.
    let of = |code: &str| {
        format!(
            "(SELECT l.place FROM locations l WHERE l.postcode = {code} \
             AND l.country = CASE WHEN length({postcode}) = 6 THEN 'NL' ELSE 'BE' END)"
        )
    };
    format!(
        "COALESCE({}, {})",
        of(postcode),
        of(&format!("substr({postcode}, 1, 4)"))
    )
}

/// The coordinates of a postcode (of its area where the table has no row of its own), for
/// distances; `None` for a postcode the table lacks.
pub async fn point(conn: &mut dyn Conn, postcode: &Postcode) -> Result<Option<Point>, DbError> {
    Ok(find(conn, postcode).await?.map(|row| row.point()))
}

pub async fn count(conn: &mut dyn Conn) -> Result<i64, DbError> {
    conn.query_one("SELECT COUNT(*) AS n FROM locations", &[])
        .await?
        .get("n")
}

/// Rows per INSERT: 7 parameters each, well below both backends' parameter limits.
const ROWS_PER_STATEMENT: usize = 500;

/// Adds the locations, replacing the row of a postcode the table has already, and
/// brings every ad's place up to date with them ([`place_of`]), so that the ads show the
/// new places as soon as this commits; calls `progress` with the number of rows written
/// after each statement. Postcodes must be distinct (PostgreSQL refuses to update a row
/// twice in one statement).
pub async fn upsert(
    conn: &mut dyn Conn,
    locations: &[Location],
    progress: impl Fn(u64) + Send,
) -> Result<u64, DbError> {
    // Another import, or a first start's default load, waits for this one, and then reads
    // what it wrote.
    conn.lock_table("locations", TableLock::Writes).await?;
    let mut written = 0;
    for chunk in locations.chunks(ROWS_PER_STATEMENT) {
        let values: Vec<Value> = chunk
            .iter()
            .flat_map(|location| {
                [
                    Value::from(location.postcode.country().code()),
                    Value::from(location.postcode.code()),
                    Value::from(location.place.as_str()),
                    Value::from(location.province.as_str()),
                    Value::from(location.province_code.as_str()),
                    Value::from(location.point.latitude),
                    Value::from(location.point.longitude),
                ]
            })
            .collect();
        written += conn
            .execute(
                &format!(
                    "INSERT INTO locations (country, postcode, place, province, province_code, \
                     latitude, longitude) VALUES {} \
                     ON CONFLICT (country, postcode) DO UPDATE SET place = excluded.place, \
                     province = excluded.province, province_code = excluded.province_code, \
                     latitude = excluded.latitude, longitude = excluded.longitude",
                    placeholders(chunk.len(), 7)
                ),
                &values,
            )
            .await?;
        progress(chunk.len() as u64);
    }
    // One pass over the ads, each a lookup or two; rows whose place stays are not written.
    // An ad's write looks its place up in the statement that writes it, which takes the
    // table lock this one holds off: ads written under way are seen by the pass, and
    // those written after it wait for the commit and see the new places (on PostgreSQL,
    // ad writes wait for the pass; SQLite serializes writes anyway). Row locks are held
    // off too: a renewal that holds its ad and then waits to write it would otherwise
    // wait in a circle with the pass.
    conn.lock_table("advertisements", TableLock::RowLocksToo)
        .await?;
    let place = place_of("advertisements.postcode");
    conn.execute(
        &format!("UPDATE advertisements SET place = {place} WHERE place IS DISTINCT FROM {place}"),
        &[],
    )
    .await?;
    Ok(written)
}
