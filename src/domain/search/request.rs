//! A search request (`GET /v1/search`'s query string) parsed and checked: every problem at
//! once, as field errors; a problem of `offset` or `limit` alone is a pagination problem.

use super::text::QueryWords;
use crate::domain::field_error::FieldError;
use crate::domain::locale::{Locale, Text};
use crate::domain::places::Postcode;
use crate::domain::text::positive_id;

/// At most this many results are reachable (`offset + limit`).
pub const REACHABLE: i64 = 5000;
pub const DEFAULT_LIMIT: i64 = 30;
pub const MAX_LIMIT: i64 = 200;
/// At most this many values in one attribute filter.
const MAX_VALUES: usize = 20;
/// The widest radius, in metres: all of the Netherlands and Belgium from their middle.
pub const MAX_DISTANCE: i64 = 250_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    /// Every word in the title first, then newest first.
    Default,
    Price,
    /// Nearest to `postCode` first (needs it).
    Location,
}

/// A range filter on a numeric attribute (`mileage.from`, `mileage.to`), bounds inclusive.
#[derive(Clone, Debug, PartialEq)]
pub struct NumberRange {
    pub key: String,
    pub from: Option<f64>,
    pub to: Option<f64>,
}

/// A checked search request. Attribute filters are checked against the category by the use
/// case, which reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRequest {
    pub words: QueryWords,
    pub category_id: Option<i64>,
    pub with_images: bool,
    /// Counts per category and per value of the category's LIST attributes (ours).
    pub facets: bool,
    pub search_description: bool,
    pub seller_id: Option<i64>,
    pub sort_by: SortBy,
    pub ascending: bool,
    pub offset: i64,
    pub limit: i64,
    pub locale: Option<Locale>,
    pub price_from: Option<i64>,
    pub price_to: Option<i64>,
    /// `(key, values)`: the ad's value of `key` is one of `values`.
    pub attributes: Vec<(String, Vec<String>)>,
    /// Ranges on numeric attributes, at most one per key.
    pub number_ranges: Vec<NumberRange>,
    /// Distances are measured from this postcode (and `distance` and `sortBy=location`
    /// need it).
    pub postcode: Option<Postcode>,
    /// Only ads at most this many metres from `postcode`.
    pub distance: Option<i64>,
}

/// Why a request was refused: every error its parameters alone show, and the rest of it
/// (each parameter at fault left out), for the checks that need the database (a category,
/// its attributes, a postcode), whose errors then join these: one answer lists them all.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    /// The errors of the parameters but `offset` and `limit`.
    pub errors: Vec<FieldError>,
    /// Those of `offset` and `limit`: alone, `pagination-invalid` (unless the database's
    /// checks find more); they come last in an answer.
    pub paging: Vec<FieldError>,
    pub request: Box<SearchRequest>,
}

fn invalid(field: &str, raw: &str, dutch: &str, french: &str) -> FieldError {
    FieldError::new(field, "invalid-value", Text::new(dutch, french)).with_value(raw)
}

/// `value` (`raw` parsed), or `None` and an `invalid-value` error on `field` saying what it
/// must be (in Dutch and in French).
fn valid<T>(
    value: Option<T>,
    field: &str,
    raw: &str,
    (dutch, french): (&str, &str),
    errors: &mut Vec<FieldError>,
) -> Option<T> {
    if value.is_none() {
        errors.push(invalid(field, raw, dutch, french));
    }
    value
}

fn boolean(field: &str, raw: &str, errors: &mut Vec<FieldError>) -> bool {
    let value = match raw {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    let must = ("moet true of false zijn", "doit être true ou false");
    valid(value, field, raw, must, errors).unwrap_or(false)
}

fn positive(field: &str, raw: &str, errors: &mut Vec<FieldError>) -> Option<i64> {
    let value = positive_id(raw);
    let must = (
        "moet een positief geheel getal zijn",
        "doit être un nombre entier positif",
    );
    valid(value, field, raw, must, errors)
}

fn amount(field: &str, raw: &str, errors: &mut Vec<FieldError>) -> Option<i64> {
    let value = raw.parse::<i64>().ok().filter(|v| *v >= 0);
    let must = (
        "moet een bedrag in centen zijn (0 of meer)",
        "doit être un montant en centimes (0 ou plus)",
    );
    valid(value, field, raw, must, errors)
}

/// A bound of a numeric attribute range: any finite number.
fn number(field: &str, raw: &str, errors: &mut Vec<FieldError>) -> Option<f64> {
    let value = raw.parse::<f64>().ok().filter(|v| v.is_finite());
    let must = ("moet een getal zijn", "doit être un nombre");
    valid(value, field, raw, must, errors)
}

fn out_of_range(field: &str, raw: &str, dutch: String, french: String) -> FieldError {
    FieldError::new(field, "out-of-range", Text::new(dutch, french)).with_value(raw)
}

impl SearchRequest {
    /// Parses the query string's pairs. A name that is not a parameter of search is taken
    /// as an attribute filter (`fuel=petrol,diesel`), which the use case checks against
    /// the category.
    pub fn parse(pairs: &[(String, String)]) -> Result<SearchRequest, Refusal> {
        let mut errors = Vec::new();
        let mut paging = Vec::new();
        let mut request = SearchRequest {
            words: QueryWords::default(),
            category_id: None,
            with_images: false,
            facets: false,
            search_description: false,
            seller_id: None,
            sort_by: SortBy::Default,
            ascending: false,
            offset: 0,
            limit: DEFAULT_LIMIT,
            locale: None,
            price_from: None,
            price_to: None,
            attributes: Vec::new(),
            number_ranges: Vec::new(),
            postcode: None,
            distance: None,
        };
        let mut sort_order = None;
        let mut seen = std::collections::HashSet::new();
        for (name, raw) in pairs {
            // The render middleware's own parameter, and a token sent in the query (which
            // an error's value would echo).
            if name == "_links" || name == "access_token" {
                continue;
            }
            if !seen.insert(name.as_str()) {
                errors.push(FieldError::repeated_parameter(name.clone()).with_value(raw.as_str()));
                continue;
            }
            match name.as_str() {
                "query" => match QueryWords::parse("query", raw) {
                    Ok(words) => request.words = words,
                    Err(error) => errors.push(error),
                },
                "categoryId" => request.category_id = positive(name, raw, &mut errors),
                "sellerId" => request.seller_id = positive(name, raw, &mut errors),
                "withImages" => request.with_images = boolean(name, raw, &mut errors),
                "facets" => request.facets = boolean(name, raw, &mut errors),
                "searchDescription" => request.search_description = boolean(name, raw, &mut errors),
                "sortBy" => {
                    let sort_by = match raw.as_str() {
                        "default" => Some(SortBy::Default),
                        "price" => Some(SortBy::Price),
                        "location" => Some(SortBy::Location),
                        _ => None,
                    };
                    let must = (
                        "moet default, location of price zijn",
                        "doit être default, location ou price",
                    );
                    if let Some(sort_by) = valid(sort_by, name, raw, must, &mut errors) {
                        request.sort_by = sort_by;
                    }
                }
                "sortOrder" => {
                    let ascending = match raw.as_str() {
                        "ascending" => Some(true),
                        "descending" => Some(false),
                        _ => None,
                    };
                    let must = (
                        "moet ascending of descending zijn",
                        "doit être ascending ou descending",
                    );
                    sort_order = valid(ascending, name, raw, must, &mut errors);
                }
                "locale" => {
                    let must = (
                        "moet nl-NL, nl-BE of fr-BE zijn",
                        "doit être nl-NL, nl-BE ou fr-BE",
                    );
                    request.locale = valid(Locale::parse(raw), name, raw, must, &mut errors);
                }
                "postCode" => match Postcode::parse(raw) {
                    Some(postcode) => request.postcode = Some(postcode),
                    None => errors.push(
                        FieldError::new(
                            name.clone(),
                            "invalid-postcode",
                            Text::new(
                                "moet een Nederlandse (1234AB) of Belgische (1234) postcode zijn",
                                "doit être un code postal néerlandais (1234AB) ou belge (1234)",
                            ),
                        )
                        .with_value(raw.as_str()),
                    ),
                },
                "distance" => match raw
                    .parse::<i64>()
                    .ok()
                    .filter(|d| (1..=MAX_DISTANCE).contains(d))
                {
                    Some(metres) => request.distance = Some(metres),
                    None => errors.push(out_of_range(
                        name,
                        raw,
                        format!("moet een geheel aantal meters van 1 tot {MAX_DISTANCE} zijn"),
                        format!("doit être un nombre entier de mètres de 1 à {MAX_DISTANCE}"),
                    )),
                },
                "price.from" => request.price_from = amount(name, raw, &mut errors),
                "price.to" => request.price_to = amount(name, raw, &mut errors),
                "offset" => match raw.parse::<i64>().ok().filter(|o| *o >= 0) {
                    Some(offset) => request.offset = offset,
                    None => paging.push(out_of_range(
                        name,
                        raw,
                        "moet een geheel getal van 0 of meer zijn".into(),
                        "doit être un nombre entier de 0 ou plus".into(),
                    )),
                },
                "limit" => match raw
                    .parse::<i64>()
                    .ok()
                    .filter(|l| (1..=MAX_LIMIT).contains(l))
                {
                    Some(limit) => request.limit = limit,
                    None => paging.push(out_of_range(
                        name,
                        raw,
                        format!("moet tussen 1 en {MAX_LIMIT} liggen"),
                        format!("doit être compris entre 1 et {MAX_LIMIT}"),
                    )),
                },
                _ if name.ends_with(".from") || name.ends_with(".to") => {
                    let (key, bound) = name.rsplit_once('.').unwrap_or((name, ""));
                    let value = number(name, raw, &mut errors);
                    let index = match request.number_ranges.iter().position(|r| r.key == key) {
                        Some(index) => index,
                        None => {
                            request.number_ranges.push(NumberRange {
                                key: key.to_owned(),
                                from: None,
                                to: None,
                            });
                            request.number_ranges.len() - 1
                        }
                    };
                    let range = &mut request.number_ranges[index];
                    if bound == "from" {
                        range.from = value;
                    } else {
                        range.to = value;
                    }
                }
                _ => {
                    let values: Vec<String> = raw
                        .split(',')
                        .map(|v| v.trim().to_owned())
                        .filter(|v| !v.is_empty())
                        .collect();
                    if values.is_empty() || values.len() > MAX_VALUES {
                        errors.push(invalid(
                            name,
                            raw,
                            "moet 1 tot 20 waarden tellen, door komma's gescheiden",
                            "doit compter 1 à 20 valeurs séparées par des virgules",
                        ));
                    } else {
                        request.attributes.push((name.clone(), values));
                    }
                }
            }
        }
        if paging.is_empty() && request.offset.saturating_add(request.limit) > REACHABLE {
            paging.push(
                out_of_range(
                    "offset",
                    &request.offset.to_string(),
                    format!("offset + limit mag hoogstens {REACHABLE} zijn"),
                    format!("offset + limit ne peut dépasser {REACHABLE}"),
                )
                .on_fields(&["offset", "limit"]),
            );
        }
        if let (Some(from), Some(to)) = (request.price_from, request.price_to)
            && from > to
        {
            errors.push(
                FieldError::new(
                    "price.from",
                    "invalid-range",
                    Text::new(
                        "mag niet boven price.to liggen",
                        "ne peut dépasser price.to",
                    ),
                )
                .on_fields(&["price.from", "price.to"]),
            );
        }
        for range in &request.number_ranges {
            if let (Some(from), Some(to)) = (range.from, range.to)
                && from > to
            {
                let (from_field, to_field) =
                    (format!("{}.from", range.key), format!("{}.to", range.key));
                errors.push(
                    FieldError::new(
                        from_field.clone(),
                        "invalid-range",
                        Text::new(
                            format!("mag niet boven {to_field} liggen"),
                            format!("ne peut dépasser {to_field}"),
                        ),
                    )
                    .on_fields(&[&from_field, &to_field]),
                );
            }
        }
        // A distance, or an order by it, is measured from a postcode: without one (given at
        // all; a malformed one has its own error) they mean nothing.
        if !seen.contains(&"postCode") {
            let mut needing = Vec::new();
            if request.distance.is_some() {
                needing.push("distance");
            }
            if request.sort_by == SortBy::Location {
                needing.push("sortBy");
            }
            if !needing.is_empty() {
                let mut fields = vec!["postCode"];
                fields.extend(&needing);
                errors.push(
                    FieldError::new(
                        "postCode",
                        "missing",
                        Text::new(
                            format!("is nodig voor {}", needing.join(" en ")),
                            format!("est nécessaire pour {}", needing.join(" et ")),
                        ),
                    )
                    .on_fields(&fields),
                );
            }
        }
        request.ascending = sort_order.unwrap_or(request.sort_by != SortBy::Default);
        if errors.is_empty() && paging.is_empty() {
            return Ok(request);
        }
        Err(Refusal {
            errors,
            paging,
            request: Box::new(request),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &[(&str, &str)]) -> Result<SearchRequest, Refusal> {
        let pairs: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        SearchRequest::parse(&pairs)
    }

    fn fields(refusal: Refusal) -> Vec<String> {
        let errors = refusal.errors.into_iter().chain(refusal.paging);
        errors.flat_map(|e| e.fields).collect()
    }

    #[test]
    fn defaults_and_orders() {
        let request = parse(&[]).unwrap();
        assert_eq!((request.offset, request.limit), (0, 30));
        assert_eq!(
            (request.sort_by, request.ascending),
            (SortBy::Default, false)
        );
        let by_price = parse(&[("sortBy", "price")]).unwrap();
        assert!(by_price.ascending, "cheapest first unless asked otherwise");
        let by_distance = parse(&[("sortBy", "location"), ("postCode", "8301 aa")]).unwrap();
        assert!(
            by_distance.ascending,
            "nearest first unless asked otherwise"
        );
        assert_eq!(by_distance.postcode.unwrap().code(), "8301AA");
    }

    #[test]
    fn distances_need_a_postcode() {
        let refusal = parse(&[("distance", "5000"), ("sortBy", "location")]).unwrap_err();
        assert_eq!(fields(refusal), ["postCode", "distance", "sortBy"]);
        let refusal = parse(&[("distance", "250001"), ("postCode", "12")]).unwrap_err();
        assert_eq!(
            fields(refusal),
            ["distance", "postCode"],
            "a malformed postcode is its own error, not a missing one"
        );
        let request = parse(&[("distance", "250000"), ("postCode", "9000")]).unwrap();
        assert_eq!(request.distance, Some(250_000));
    }

    #[test]
    fn number_ranges_by_key() {
        let request = parse(&[
            ("mileage.from", "1000"),
            ("year.to", "2020"),
            ("mileage.to", "5e4"),
        ])
        .unwrap();
        assert_eq!(
            request.number_ranges,
            [
                NumberRange {
                    key: "mileage".into(),
                    from: Some(1000.0),
                    to: Some(50_000.0)
                },
                NumberRange {
                    key: "year".into(),
                    from: None,
                    to: Some(2020.0)
                },
            ]
        );
        let refusal = parse(&[
            ("mileage.from", "9"),
            ("mileage.to", "1"),
            ("year.from", "NaN"),
        ])
        .unwrap_err();
        assert_eq!(fields(refusal), ["year.from", "mileage.from", "mileage.to"]);
    }

    #[test]
    fn pagination_bounds() {
        for bad in [
            [("limit", "0"), ("offset", "0")],
            [("limit", "201"), ("offset", "0")],
            [("limit", "200"), ("offset", "4801")],
            [("limit", "30"), ("offset", "-1")],
        ] {
            assert!(
                parse(&bad).is_err_and(|refusal| refusal.errors.is_empty()),
                "{bad:?}"
            );
        }
        assert!(parse(&[("limit", "200"), ("offset", "4800")]).is_ok());
        let both = parse(&[("limit", "0"), ("withImages", "yes")]).unwrap_err();
        assert!(!both.errors.is_empty());
        assert_eq!(fields(both), ["withImages", "limit"]);
    }

    #[test]
    fn every_problem_at_once() {
        let refusal = parse(&[
            ("categoryId", "x"),
            ("sortBy", "location2"),
            ("locale", "en"),
            ("price.from", "500"),
            ("price.to", "100"),
            ("query", "a"),
            ("query", "b"),
        ])
        .unwrap_err();
        assert_eq!(
            fields(refusal),
            [
                "categoryId",
                "sortBy",
                "locale",
                "query",
                "price.from",
                "price.to"
            ]
        );
    }
}
