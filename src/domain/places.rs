//! Postcodes and the places they stand for, without SQL or HTTP: how a postcode is written
//! (normalised, its country, its area) and how a line of GeoNames' postal-code text format
//! reads. The rules are those of data/README.md ("Finding a postcode", and the table of
//! fields); `store::locations` keeps the rows.

use std::fmt;

use super::text::is_one_line;

/// The two countries whose postcodes Souk knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Country {
    Netherlands,
    Belgium,
}

impl Country {
    /// ISO 3166-1 alpha-2, as the `locations` table and GeoNames write it.
    pub fn code(self) -> &'static str {
        match self {
            Country::Netherlands => "NL",
            Country::Belgium => "BE",
        }
    }

    pub fn parse(code: &str) -> Option<Country> {
        match code {
            "NL" => Some(Country::Netherlands),
            "BE" => Some(Country::Belgium),
            _ => None,
        }
    }
}

/// A normalised postcode: `8301AA` (Dutch, six characters), `8301` (a Dutch 4-digit area,
/// only as a row of the table) or `9000` (Belgian).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Postcode {
    country: Country,
    code: String,
}

impl Postcode {
    /// What a client writes: white space removed and ASCII letters upper-cased (`8301 aa` is
    /// `NL 8301AA`); four digits are Belgian (`9000`), four digits and two letters Dutch.
    /// A 4-digit Dutch area alone is not a postcode a client can give: `8301` is Belgian.
    pub fn parse(text: &str) -> Option<Postcode> {
        let code = compact(text);
        if is_dutch(&code) {
            Some(Postcode {
                country: Country::Netherlands,
                code,
            })
        } else if is_area(&code) {
            Some(Postcode {
                country: Country::Belgium,
                code,
            })
        } else {
            None
        }
    }

    /// A postcode of a known country as a data file writes it: for the Netherlands a whole
    /// postcode (`1011 AB`) or a 4-digit area (`1011`), for Belgium four digits.
    pub fn of_country(country: Country, text: &str) -> Option<Postcode> {
        let code = compact(text);
        let valid = match country {
            Country::Netherlands => is_dutch(&code) || is_area(&code),
            Country::Belgium => is_area(&code),
        };
        valid.then_some(Postcode { country, code })
    }

    pub fn country(&self) -> Country {
        self.country
    }

    /// The normalised code: `8301AA`, `8301`, `9000`.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The first four digits: a Dutch postcode's area (`8301AA` -> `8301`); a Belgian
    /// postcode or an area is its own.
    pub fn area(&self) -> &str {
        &self.code[..4]
    }
}

impl fmt::Display for Postcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code)
    }
}

fn compact(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_uppercase()
}

/// Four digits, the first not 0 (Dutch areas run 1000-9999, Belgian postcodes 1000-9992).
fn is_area(code: &str) -> bool {
    let bytes = code.as_bytes();
    bytes.len() == 4 && bytes[0] != b'0' && bytes.iter().all(u8::is_ascii_digit)
}

fn is_dutch(code: &str) -> bool {
    code.len() == 6
        && code.get(..4).is_some_and(is_area)
        && code.as_bytes()[4..].iter().all(u8::is_ascii_uppercase)
}

/// A point on the earth, in WGS84 degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub latitude: f64,
    pub longitude: f64,
}

/// One postcode with its place, province and coordinates: a row of the `locations` table.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    pub postcode: Postcode,
    pub place: String,
    pub province: String,
    /// The province's part of its ISO 3166-2 code: `FL`, `VOV`, `BRU`.
    pub province_code: String,
    pub point: Point,
}

/// A line of a postal-code file that cannot be read: its number (from 1) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub reason: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for LineError {}

/// GeoNames' admin code 1 of the Dutch provinces, and their ISO 3166-2 part.
const DUTCH_PROVINCES: &[(&str, &str)] = &[
    ("01", "DR"),
    ("02", "FR"),
    ("03", "GE"),
    ("04", "GR"),
    ("05", "LI"),
    ("06", "NB"),
    ("07", "NH"),
    ("09", "UT"),
    ("10", "ZE"),
    ("11", "ZH"),
    ("15", "OV"),
    ("16", "FL"),
];

/// The ISO 3166-2 part of a Dutch province from GeoNames' code (`16` -> `FL`); the ISO part
/// itself is taken as it is.
pub fn dutch_province_code(code: &str) -> Option<&'static str> {
    DUTCH_PROVINCES
        .iter()
        .find(|(geonames, iso)| *geonames == code || *iso == code)
        .map(|(_, iso)| *iso)
}

/// One line (numbered from 1) of GeoNames' postal-code text format: twelve tab-separated
/// fields (data/README.md lists them). A Dutch or Belgian line gives its location; a line of
/// another country is `None` (the world dump holds them all); anything malformed is an error
/// naming the line.
pub fn parse_geonames_line(number: usize, line: &str) -> Result<Option<Location>, LineError> {
    let refuse = |reason: String| LineError {
        line: number,
        reason,
    };
    let fields: Vec<&str> = line.split('\t').collect();
    if fields.len() != 12 {
        return Err(refuse(format!(
            "{} tab-separated fields where GeoNames' postal-code format has 12",
            fields.len()
        )));
    }
    let field = |n: usize| fields[n - 1].trim();
    let country_code = field(1);
    if country_code.len() != 2 || !country_code.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(refuse(format!(
            "`{country_code}` is not a country code (two capital letters)"
        )));
    }
    let Some(country) = Country::parse(country_code) else {
        return Ok(None);
    };
    let postcode = Postcode::of_country(country, field(2)).ok_or_else(|| {
        refuse(format!(
            "`{}` is not a postcode of {country_code}",
            field(2)
        ))
    })?;
    let place = field(3);
    if place.is_empty() {
        return Err(refuse("the place name (field 3) is empty".into()));
    }
    let (province, province_code) = match country {
        Country::Netherlands => {
            let code = dutch_province_code(field(5)).ok_or_else(|| {
                refuse(format!(
                    "`{}` (field 5) is not the code of a Dutch province",
                    field(5)
                ))
            })?;
            (field(4), code)
        }
        // The provinces are fields 6 and 7; Brussels, in no province, may leave them empty
        // and have only its region (fields 4 and 5).
        Country::Belgium if field(7).is_empty() => (field(4), field(5)),
        Country::Belgium => (field(6), field(7)),
    };
    if province.is_empty() || province_code.is_empty() {
        return Err(refuse("the province or its code is empty".into()));
    }
    // Served as they are (`cityName`, `/v1/locations`); PostgreSQL cannot store a NUL.
    if ![place, province, province_code]
        .into_iter()
        .all(is_one_line)
    {
        return Err(refuse(
            "the place, the province or its code has a control character".into(),
        ));
    }
    let degrees = |n: usize, name: &str, limit: f64| {
        field(n)
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && v.abs() <= limit)
            .ok_or_else(|| {
                refuse(format!(
                    "`{}` (field {n}) is not a {name} in degrees",
                    field(n)
                ))
            })
    };
    let point = Point {
        latitude: degrees(10, "latitude", 90.0)?,
        longitude: degrees(11, "longitude", 180.0)?,
    };
    Ok(Some(Location {
        postcode,
        place: place.to_owned(),
        province: province.to_owned(),
        province_code: province_code.to_owned(),
        point,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postcodes_are_normalised() {
        let dutch = Postcode::parse(" 8301 aa").expect("Dutch");
        assert_eq!(
            (dutch.country(), dutch.code(), dutch.area()),
            (Country::Netherlands, "8301AA", "8301")
        );
        let belgian = Postcode::parse("9000").expect("Belgian");
        assert_eq!(
            (belgian.country(), belgian.code(), belgian.area()),
            (Country::Belgium, "9000", "9000")
        );
        for bad in [
            "",
            "0123AB",
            "123",
            "12345",
            "8301A",
            "8301A1",
            "83O1AA",
            "８３０１",
            "123é4",
            "€€",
        ] {
            assert_eq!(Postcode::parse(bad), None, "{bad}");
        }
        assert_eq!(
            Postcode::of_country(Country::Netherlands, "8301").map(|p| p.code),
            Some("8301".to_owned()),
            "a file may hold Dutch areas"
        );
        assert_eq!(Postcode::of_country(Country::Belgium, "8301AA"), None);
    }

    #[test]
    fn geonames_lines() {
        let dutch =
            "NL\t8301 AB\tEmmeloord\tFlevoland\t16\tNoordoostpolder\t0171\t\t\t52.7108\t5.7486\t6";
        let location = parse_geonames_line(1, dutch).unwrap().unwrap();
        assert_eq!(location.postcode.code(), "8301AB");
        assert_eq!(
            (location.province.as_str(), location.province_code.as_str()),
            ("Flevoland", "FL")
        );
        assert_eq!(location.point.latitude, 52.7108);
        let belgian =
            "BE\t9000\tGent\tVlaanderen\tVLG\tOost-Vlaanderen\tVOV\t\t\t51.0397\t3.7142\t4";
        let location = parse_geonames_line(2, belgian).unwrap().unwrap();
        assert_eq!(
            (location.province.as_str(), location.province_code.as_str()),
            ("Oost-Vlaanderen", "VOV")
        );
        let brussels = "BE\t1000\tBruxelles\tBruxelles-Capitale\tBRU\t\t\t\t\t50.8466\t4.3517\t4";
        let location = parse_geonames_line(3, brussels).unwrap().unwrap();
        assert_eq!(location.province_code, "BRU");
        let french = "FR\t75001\tParis\tÎle-de-France\t11\tParis\t75\t\t\t48.8592\t2.3417\t5";
        assert_eq!(parse_geonames_line(4, french), Ok(None));
    }

    #[test]
    fn malformed_lines_name_their_number() {
        let cases = [
            "NL\t8301\tEmmeloord",
            "NL\t8301\tEmmeloord\tFlevoland\t99\t\t\t\t\t52.7\t5.7\t4",
            "NL\tABCD\tEmmeloord\tFlevoland\t16\t\t\t\t\t52.7\t5.7\t4",
            "NL\t8301\t\tFlevoland\t16\t\t\t\t\t52.7\t5.7\t4",
            "NL\t8301\tEmmeloord\tFlevoland\t16\t\t\t\t\tnorth\t5.7\t4",
            "NL\t8301\tEmmeloord\tFlevoland\t16\t\t\t\t\t52.7\t500\t4",
            "nl\t8301\tEmmeloord\tFlevoland\t16\t\t\t\t\t52.7\t5.7\t4",
            "NL\t8301\tEmmeloord\u{0}\tFlevoland\t16\t\t\t\t\t52.7\t5.7\t4",
            "BE\t9000\tGent\tVlaanderen\tVLG\tOost-\u{1b}Vlaanderen\tVOV\t\t\t51.0\t3.7\t4",
        ];
        for line in cases {
            let error = parse_geonames_line(17, line).expect_err(line);
            assert_eq!(error.line, 17);
            assert!(error.to_string().starts_with("line 17: "), "{error}");
        }
    }
}
