//! A saved search: the original's `searchRequest` shape (`{query, categoryId, sellerId,
//! filters: {price: {from, to}, postCode, distance, <attributeKey>: [values]}}`).
//!
//! It is read into the query string's pairs of `GET /v1/search` and checked by the same
//! [`SearchRequest::parse`], so a saved search and a search can never disagree on what a
//! filter means; the pairs are what is stored, and the `searchRequest` a client reads back
//! is written from them.

use serde_json::{Map, Value, json};

use super::request::{Refusal, SearchRequest};
use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::text_enum;

/// At most this many saved searches per user.
pub const MAX_PER_USER: i64 = 100;

text_enum! {
    /// Whether the owner wants mail about new matches (ours; the original had none).
    pub enum Alert {
        None = "none",
        /// A mail soon after a new or changed ad matches.
        Immediate = "immediate",
        /// One digest a day.
        Daily = "daily",
    }
}

/// A saved search as a client sent it (`{searchRequest, alert}`).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedSearchInput {
    pub search_request: Option<Value>,
    /// `None` only when absent: an explicit `null` is a value, and not one of the choices.
    #[serde(default, deserialize_with = "present")]
    pub alert: Option<Value>,
}

/// A member that is there, `null` included (serde reads `null` as `None` otherwise).
fn present<'de, D: serde::Deserializer<'de>>(member: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(member).map(Some)
}

/// Why a saved search was refused: its errors, each field named by its JSON path, and the
/// search request of the rest when `searchRequest` could be read, for the checks that need
/// the database (a category, its attributes, a postcode), whose errors join these.
#[derive(Debug)]
pub struct Refused {
    pub errors: Vec<FieldError>,
    pub rest: Option<Box<SearchRequest>>,
}

impl SavedSearchInput {
    /// The checked request and alert choice (`none` unless given); every problem at once.
    pub fn check(&self) -> Result<(SavedRequest, Alert), Refused> {
        let mut errors = Vec::new();
        let alert = match &self.alert {
            None => Some(Alert::None),
            Some(value) => {
                let alert = value.as_str().and_then(Alert::parse);
                if alert.is_none() {
                    errors.push(
                        FieldError::new(
                            "alert",
                            "invalid-value",
                            Text::new(
                                "moet none, immediate of daily zijn",
                                "doit être none, immediate ou daily",
                            ),
                        )
                        .with_value(value.clone()),
                    );
                }
                alert
            }
        };
        let (request, rest) = match &self.search_request {
            None => {
                errors.push(FieldError::missing("searchRequest"));
                (None, None)
            }
            Some(value) => match SavedRequest::read(value) {
                Ok(request) => (Some(request), None),
                Err(refused) => {
                    errors.extend(refused.errors);
                    (None, refused.rest)
                }
            },
        };
        match (request, alert) {
            (Some(request), Some(alert)) if errors.is_empty() => Ok((request, alert)),
            (request, _) => Err(Refused {
                errors,
                rest: request.map(|saved| Box::new(saved.request)).or(rest),
            }),
        }
    }
}

/// Members of `searchRequest` that are search parameters as they are.
const TOP_LEVEL: [&str; 6] = [
    "query",
    "categoryId",
    "sellerId",
    "withImages",
    "searchDescription",
    "locale",
];

/// Search parameters that are neither a member of `searchRequest` nor a filter: the page,
/// the order, facets, and what the HTTP layer reads itself. A saved search holds none of
/// them, so none may come in as a filter's name either.
const NOT_SAVED: [&str; 7] = [
    "offset",
    "limit",
    "sortBy",
    "sortOrder",
    "facets",
    "_links",
    "access_token",
];

/// A checked saved search: the search parameters as `GET /v1/search` takes them, and the
/// request they parse into.
#[derive(Clone, Debug)]
pub struct SavedRequest {
    pub pairs: Vec<(String, String)>,
    pub request: SearchRequest,
}

impl SavedRequest {
    /// Reads `searchRequest`; every problem at once, each field named by its JSON path
    /// (`searchRequest.filters.price.from`).
    pub fn read(search_request: &Value) -> Result<SavedRequest, Refused> {
        let Some(object) = search_request.as_object() else {
            return Err(Refused {
                errors: vec![invalid("searchRequest", search_request, Shape::Object)],
                rest: None,
            });
        };
        let mut reader = Reader::default();
        for (key, value) in object {
            let path = format!("searchRequest.{key}");
            if key == "filters" {
                reader.filters(value, &path);
            } else if TOP_LEVEL.contains(&key.as_str()) {
                reader.scalar(key, value, &path);
            } else {
                reader.errors.push(unknown(&path, value));
            }
        }
        // The members of the wrong kind are errors already, and left out of the pairs: the
        // rest is parsed as a search, so that its errors (and the database's) join them.
        let Reader {
            pairs,
            paths,
            mut errors,
        } = reader;
        // Each parameter by the path it came from; one the client did not send (the
        // `postCode` that a `distance` needs) by where it belongs.
        let rename = |mut error: FieldError| {
            for field in &mut error.fields {
                *field = match paths.iter().find(|(name, _)| name == field) {
                    Some((_, path)) => path.clone(),
                    None => SavedRequest::path_of(field),
                };
            }
            error
        };
        let rest = match SearchRequest::parse(&pairs) {
            Ok(request) if errors.is_empty() => return Ok(SavedRequest { pairs, request }),
            Ok(request) => Box::new(request),
            Err(refusal) => {
                let Refusal {
                    errors: found,
                    paging,
                    request,
                } = refusal;
                errors.extend(found.into_iter().chain(paging).map(rename));
                request
            }
        };
        Err(Refused {
            errors,
            rest: Some(rest),
        })
    }

    /// The JSON path of a search parameter of this request, for a field error found later
    /// (an attribute the category does not have).
    pub fn path_of(name: &str) -> String {
        if TOP_LEVEL.contains(&name) {
            format!("searchRequest.{name}")
        } else {
            format!("searchRequest.filters.{name}")
        }
    }

    /// The stored form: the pairs as a query string.
    pub fn query_string(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in &self.pairs {
            query.append_pair(name, value);
        }
        query.finish()
    }

    /// The `searchRequest` a client reads back, written from stored pairs.
    pub fn json_of(query_string: &str) -> Value {
        let mut top = Map::new();
        let mut filters = Map::new();
        let mut ranges: std::collections::BTreeMap<String, Map<String, Value>> = Default::default();
        for (name, value) in form_urlencoded::parse(query_string.as_bytes()) {
            // A whole number as an integer (ids, prices, most bounds), else as written.
            let number = || match value.parse::<i64>() {
                Ok(whole) => Value::from(whole),
                Err(_) => value
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(json!(value), Value::Number),
            };
            match name.as_ref() {
                "categoryId" | "sellerId" => {
                    top.insert(name.into_owned(), number());
                }
                "withImages" | "searchDescription" => {
                    top.insert(name.into_owned(), json!(value == "true"));
                }
                "query" | "locale" => {
                    top.insert(name.into_owned(), json!(value));
                }
                "postCode" => {
                    filters.insert(name.into_owned(), json!(value));
                }
                "distance" => {
                    filters.insert(name.into_owned(), number());
                }
                other => match other.rsplit_once('.') {
                    Some((key, end @ ("from" | "to"))) => {
                        let range = ranges.entry(key.to_owned()).or_default();
                        range.insert(end.to_owned(), number());
                    }
                    _ => {
                        let values: Vec<&str> = value.split(',').collect();
                        filters.insert(other.to_owned(), json!(values));
                    }
                },
            }
        }
        for (key, range) in ranges {
            if filters.contains_key(&key) {
                // The key is a list filter too (an L1 category whose leaves define it in
                // two kinds): each bound keeps its own name.
                for (end, bound) in range {
                    filters.insert(format!("{key}.{end}"), bound);
                }
            } else {
                filters.insert(key, Value::Object(range));
            }
        }
        if !filters.is_empty() {
            top.insert("filters".into(), Value::Object(filters));
        }
        Value::Object(top)
    }
}

/// What a member must be.
#[derive(Clone, Copy)]
enum Shape {
    Object,
    Text,
    Integer,
    /// Any number: an attribute's range bound (an engine of 1.6 litres).
    Number,
    Boolean,
    TextList,
}

fn invalid(path: &str, value: &Value, shape: Shape) -> FieldError {
    let (dutch, french) = match shape {
        Shape::Object => ("moet een object zijn", "doit être un objet"),
        Shape::Text => ("moet een tekst zijn", "doit être un texte"),
        Shape::Integer => ("moet een geheel getal zijn", "doit être un nombre entier"),
        Shape::Number => ("moet een getal zijn", "doit être un nombre"),
        Shape::Boolean => ("moet true of false zijn", "doit être true ou false"),
        Shape::TextList => (
            "moet een lijst van teksten zonder komma zijn",
            "doit être une liste de textes sans virgule",
        ),
    };
    FieldError::new(path, "invalid-value", Text::new(dutch, french)).with_value(value.clone())
}

fn unknown(path: &str, value: &Value) -> FieldError {
    FieldError::new(
        path,
        "unknown-parameter",
        Text::new(
            "is geen onderdeel van een zoekopdracht",
            "ne fait pas partie d'une recherche",
        ),
    )
    .with_value(value.clone())
}

/// Collects the pairs, the JSON path of each pair's name, and the problems.
#[derive(Default)]
struct Reader {
    pairs: Vec<(String, String)>,
    paths: Vec<(String, String)>,
    errors: Vec<FieldError>,
}

impl Reader {
    fn push(&mut self, name: &str, value: String, path: &str) {
        self.pairs.push((name.to_owned(), value));
        self.paths.push((name.to_owned(), path.to_owned()));
    }

    /// A top-level member or `postCode`/`distance`: one parameter of the same name. A
    /// member that is `null` is absent, as in an ad's body.
    fn scalar(&mut self, name: &str, value: &Value, path: &str) {
        if value.is_null() {
            return;
        }
        let is_attribute_bound =
            !name.starts_with("price.") && (name.ends_with(".from") || name.ends_with(".to"));
        let shape = match name {
            "query" | "locale" | "postCode" => Shape::Text,
            "withImages" | "searchDescription" => Shape::Boolean,
            _ if is_attribute_bound => Shape::Number,
            _ => Shape::Integer,
        };
        let text = match (shape, value) {
            (Shape::Text, Value::String(text)) => Some(text.clone()),
            (Shape::Boolean, Value::Bool(flag)) => Some(flag.to_string()),
            (Shape::Integer, Value::Number(n)) if n.is_i64() => Some(n.to_string()),
            (Shape::Number, Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        match text {
            Some(text) => self.push(name, text, path),
            None => self.errors.push(invalid(path, value, shape)),
        }
    }

    fn filters(&mut self, filters: &Value, path: &str) {
        if filters.is_null() {
            return;
        }
        let Some(filters) = filters.as_object() else {
            self.errors.push(invalid(path, filters, Shape::Object));
            return;
        };
        for (key, value) in filters {
            let path = format!("{path}.{key}");
            if TOP_LEVEL.contains(&key.as_str()) || NOT_SAVED.contains(&key.as_str()) {
                self.errors.push(unknown(&path, value));
                continue;
            }
            match (key.as_str(), value) {
                (_, Value::Null) => {}
                ("postCode" | "distance", _) => self.scalar(key, value, &path),
                (_, Value::Object(range)) => self.range(key, range, &path),
                // A bound under its own name, as a key that is a list too reads back
                // (`"size": ["small"], "size.from": 3`).
                (_, Value::Number(_)) if key.ends_with(".from") || key.ends_with(".to") => {
                    self.scalar(key, value, &path)
                }
                (_, Value::Array(values)) => {
                    let texts: Option<Vec<&str>> = values
                        .iter()
                        .map(|v| v.as_str().filter(|t| !t.contains(',')))
                        .collect();
                    match texts {
                        Some(texts) => self.push(key, texts.join(","), &path),
                        None => self.errors.push(invalid(&path, value, Shape::TextList)),
                    }
                }
                _ => self.errors.push(invalid(&path, value, Shape::TextList)),
            }
        }
    }

    /// `{from, to}`: the parameters `<key>.from` and `<key>.to`.
    fn range(&mut self, key: &str, range: &Map<String, Value>, path: &str) {
        for (end, value) in range {
            let path = format!("{path}.{end}");
            if end == "from" || end == "to" {
                self.scalar(&format!("{key}.{end}"), value, &path);
            } else {
                self.errors.push(unknown(&path, value));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(refused: Refused) -> Vec<String> {
        refused.errors.into_iter().flat_map(|e| e.fields).collect()
    }

    /// An attribute's range takes any number, as search does (an engine of 1.6 litres), and
    /// reads back as written; a price and a distance stay whole numbers.
    #[test]
    fn attribute_bounds_may_be_decimal() {
        let sent = json!({"categoryId": 101,
                          "filters": {"engineSize": {"from": 1.6, "to": 2}, "price": {"to": 5000}}});
        let saved = SavedRequest::read(&sent).unwrap();
        assert_eq!(SavedRequest::json_of(&saved.query_string()), sent);
        let refused = SavedRequest::read(&json!({"filters": {"price": {"from": 1.5}}}));
        assert_eq!(
            fields(refused.unwrap_err()),
            ["searchRequest.filters.price.from"]
        );
        let refused = SavedRequest::read(&json!({"filters": {"engineSize": {"from": "1.6"}}}));
        assert_eq!(
            fields(refused.unwrap_err()),
            ["searchRequest.filters.engineSize.from"]
        );
    }

    /// What many clients' serializers write for an unset member: absent.
    #[test]
    fn null_members_are_absent() {
        let sent = json!({"query": "fiets", "categoryId": null, "sellerId": null,
                          "filters": {"price": {"from": null, "to": 5000}, "condition": null,
                                      "postCode": null}});
        let saved = SavedRequest::read(&sent).unwrap();
        assert_eq!(saved.request.category_id, None);
        assert_eq!(
            (saved.request.price_from, saved.request.price_to),
            (None, Some(5000))
        );
        assert_eq!(
            SavedRequest::json_of(&saved.query_string()),
            json!({"query": "fiets", "filters": {"price": {"to": 5000}}})
        );
        let bare = SavedRequest::read(&json!({"query": "fiets", "filters": null})).unwrap();
        assert_eq!(bare.pairs, [("query".to_owned(), "fiets".to_owned())]);
        // A name that is no member stays refused, null or not.
        let refused = SavedRequest::read(&json!({"colour": null})).unwrap_err();
        assert_eq!(fields(refused), ["searchRequest.colour"]);
    }

    #[test]
    fn the_original_shape_reads_into_search_parameters_and_back() {
        let sent = json!({"query": "fiets", "categoryId": 403, "sellerId": 7,
                          "filters": {"price": {"from": 100, "to": 5000}, "condition": ["new", "used"]}});
        let saved = SavedRequest::read(&sent).unwrap();
        assert_eq!(saved.request.category_id, Some(403));
        assert_eq!(
            (saved.request.price_from, saved.request.price_to),
            (Some(100), Some(5000))
        );
        assert_eq!(
            saved.request.attributes,
            [(
                "condition".to_owned(),
                vec!["new".to_owned(), "used".to_owned()]
            )]
        );
        assert_eq!(SavedRequest::json_of(&saved.query_string()), sent);
    }

    #[test]
    fn a_key_both_listed_and_ranged_reads_back_whole() {
        let both = json!({"filters": {"size": ["small"], "size.from": 3, "size.to": 5}});
        for stored in [
            "size=small&size.from=3&size.to=5",
            "size.from=3&size=small&size.to=5",
        ] {
            assert_eq!(SavedRequest::json_of(stored), both, "{stored}");
        }
        // And what reads back is taken again as it is (a PUT of what a GET gave).
        let again = SavedRequest::read(&both).unwrap();
        assert_eq!(SavedRequest::json_of(&again.query_string()), both);
    }

    #[test]
    fn every_problem_is_named_by_its_path() {
        let sent = json!({"query": 5, "offset": 10, "categoryId": "403",
                          "filters": {"price": {"from": 500, "to": 100, "step": 1}, "colour": "red",
                                      "condition": ["a,b"]}});
        let errors = SavedRequest::read(&sent).unwrap_err();
        assert_eq!(
            fields(errors),
            [
                "searchRequest.categoryId",
                "searchRequest.filters.colour",
                "searchRequest.filters.condition",
                "searchRequest.filters.price.step",
                "searchRequest.offset",
                "searchRequest.query",
                // What the search finds in the rest joins what the reading found.
                "searchRequest.filters.price.from",
                "searchRequest.filters.price.to",
            ]
        );
        let reversed = json!({"filters": {"price": {"from": 500, "to": 100}}});
        assert_eq!(
            fields(SavedRequest::read(&reversed).unwrap_err()),
            [
                "searchRequest.filters.price.from",
                "searchRequest.filters.price.to"
            ]
        );
        assert_eq!(
            fields(SavedRequest::read(&json!([1])).unwrap_err()),
            ["searchRequest"]
        );
        // What is not part of a saved search is no filter either.
        let smuggled = json!({"filters": {"sortBy": ["price"], "offset": ["30"],
                                          "access_token": ["abc"], "query": ["fiets"]}});
        assert_eq!(
            fields(SavedRequest::read(&smuggled).unwrap_err()),
            [
                "searchRequest.filters.access_token",
                "searchRequest.filters.offset",
                "searchRequest.filters.query",
                "searchRequest.filters.sortBy",
            ]
        );
        // A parameter that another needs is named where it would be sent.
        let far = json!({"filters": {"distance": 5000}});
        assert_eq!(
            fields(SavedRequest::read(&far).unwrap_err()),
            [
                "searchRequest.filters.postCode",
                "searchRequest.filters.distance"
            ]
        );
    }

    #[test]
    fn an_empty_request_saves_everything() {
        let saved = SavedRequest::read(&json!({})).unwrap();
        assert!(saved.pairs.is_empty());
        assert_eq!(SavedRequest::json_of(""), json!({}));
    }
}
