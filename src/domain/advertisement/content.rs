//! The writable content of an advertisement: a body (POST, PUT, or the result of a PATCH)
//! checked against the rules and its leaf category, every problem at once.

use serde_json::{Map, Value};

use super::attributes::{check_attributes, collect_attributes};
use super::lifecycle::AdStatus;
use super::price::{ModelType, PriceBefore, PriceModel, reconcile_reserved};
use super::{STANDARD_FIELDS, error, integer, not_one_line};
use crate::domain::category::{Category, CategoryStatus};
use crate::domain::field_error::{FieldError, checked};
use crate::domain::locale::Locale;
use crate::domain::text::{is_multiline, is_one_line, required_text};

pub const TITLE_MIN: usize = 2;
pub const TITLE_MAX: usize = 60;
pub const DESCRIPTION_MAX: usize = 4000;

/// The writable content of an advertisement, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct AdContent {
    pub title: String,
    pub description: String,
    pub category_id: i64,
    pub postcode: String,
    pub price_model: PriceModel,
    pub attributes: Map<String, Value>,
    pub locale: Locale,
    pub reserved: bool,
    pub show_on_map: bool,
    /// The seller's own website, `http` or `https` (shown to others while the ad's `url`
    /// feature runs).
    pub website_url: Option<String>,
}

/// The longest `websiteUrl` taken.
pub const WEBSITE_URL_MAX: usize = 200;

/// What an update starts from: the ad's category, attribute values and price as stored.
#[derive(Clone, Copy, Debug)]
pub struct Stored<'a> {
    pub category_id: i64,
    pub attributes: &'a Map<String, Value>,
    pub price: PriceBefore,
}

/// The category a body names, if it names one (the content check needs it read).
pub fn named_category(body: &Map<String, Value>) -> Option<i64> {
    body.get("categoryId").and_then(integer)
}

/// The `status` a body asks for, if any.
pub fn requested_status(body: &Map<String, Value>) -> Result<Option<AdStatus>, FieldError> {
    match body.get("status") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_str()
            .and_then(AdStatus::parse)
            .map(Some)
            .ok_or_else(|| {
                error(
                    "status",
                    "invalid-value",
                    "is geen bekende status",
                    "n'est pas un statut connu",
                )
                .with_value(value.clone())
            }),
    }
}

/// The refusal of a closed category.
pub fn category_closed() -> FieldError {
    error(
        "categoryId",
        "category-closed",
        "deze categorie neemt geen nieuwe advertenties meer aan",
        "cette catégorie n'accepte plus de nouvelles annonces",
    )
}

/// Checks a body (POST or PUT, or the result of a PATCH) against the rules and the leaf
/// category; `category` is what `categoryId` names (None if it does not exist), `stored`
/// what an update starts from (None for a new ad). A closed category takes no new ads and
/// no ad moved into it, but an ad already in it stays editable, as do the attribute values
/// it holds (see [`check_attributes`]). Every problem at once.
pub fn check_content(
    body: &Map<String, Value>,
    category: Option<&Category>,
    default_locale: Locale,
    stored: Option<Stored<'_>>,
) -> Result<AdContent, Vec<FieldError>> {
    let mut errors = Vec::new();
    let text = |key: &str, errors: &mut Vec<FieldError>| {
        required_text(key, body.get(key))
            .map_err(|e| errors.push(e))
            .ok()
    };
    let title = text("title", &mut errors);
    if let Some(title) = &title {
        let n = title.chars().count();
        if n < TITLE_MIN {
            errors.push(
                error(
                    "title",
                    "too-short",
                    format!("moet minstens {TITLE_MIN} tekens zijn"),
                    format!("doit comporter au moins {TITLE_MIN} caractères"),
                )
                .with_value(title.as_str()),
            );
        } else if n > TITLE_MAX {
            errors.push(
                error(
                    "title",
                    "too-long",
                    format!("mag hoogstens {TITLE_MAX} tekens zijn"),
                    format!("ne peut dépasser {TITLE_MAX} caractères"),
                )
                .with_value(title.as_str()),
            );
        } else if !is_one_line(title) {
            // A title is one line in every listing; descriptions may have line breaks.
            errors.push(not_one_line("title", title.as_str()));
        }
    }
    let description = text("description", &mut errors);
    if let Some(description) = &description {
        let n = description.chars().count();
        if n == 0 {
            errors.push(error(
                "description",
                "too-short",
                "mag niet leeg zijn",
                "ne peut pas être vide",
            ));
        } else if n > DESCRIPTION_MAX {
            errors.push(error(
                "description",
                "too-long",
                format!("mag hoogstens {DESCRIPTION_MAX} tekens zijn"),
                format!("ne peut dépasser {DESCRIPTION_MAX} caractères"),
            ));
        } else if !is_multiline(description) {
            // Line breaks and tabs lay a description out; NUL and the rest do not.
            errors.push(error(
                "description",
                "invalid-value",
                "mag regeleinden en tabs bevatten, maar geen andere stuurtekens (zoals NUL)",
                "peut contenir des sauts de ligne et des tabulations, mais aucun autre caractère de contrôle (comme NUL)",
            ));
        }
    }
    let category_id = match body.get("categoryId") {
        None | Some(Value::Null) => {
            errors.push(FieldError::missing("categoryId"));
            None
        }
        Some(value) => integer(value).or_else(|| {
            errors.push(
                error(
                    "categoryId",
                    "invalid-value",
                    "moet een categorienummer zijn",
                    "doit être un numéro de catégorie",
                )
                .with_value(value.clone()),
            );
            None
        }),
    };
    let leaf = match (category_id, category) {
        (Some(_), Some(c)) if c.leaf.is_none() => {
            errors.push(error(
                "categoryId",
                "not-a-leaf",
                "moet een subcategorie (L2) zijn",
                "doit être une sous-catégorie (L2)",
            ));
            None
        }
        (Some(id), Some(c))
            if c.status == CategoryStatus::Closed && stored.is_none_or(|s| s.category_id != id) =>
        {
            errors.push(category_closed());
            None
        }
        (Some(id), None) => {
            errors.push(
                error(
                    "categoryId",
                    "unknown-category",
                    "bestaat niet",
                    "n'existe pas",
                )
                .with_value(id),
            );
            None
        }
        (_, category) => category.and_then(|c| c.leaf.as_ref()),
    };
    let postcode = match body.get("location") {
        Some(location) if !location.is_object() && !location.is_null() => {
            errors.push(FieldError::not_an_object("location", location.clone()));
            None
        }
        location => match location.and_then(|l| l.get("postcode")) {
            None | Some(Value::Null) => {
                errors.push(FieldError::missing("location.postcode"));
                None
            }
            Some(value) => value.as_str().and_then(normalize_postcode).or_else(|| {
                errors.push(
                    error(
                        "location.postcode",
                        "invalid-postcode",
                        "is geen Nederlandse of Belgische postcode",
                        "n'est pas un code postal néerlandais ou belge",
                    )
                    .with_value(value.clone()),
                );
                None
            }),
        },
    };
    let reserved = match body.get("reserved") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            errors.push(
                error(
                    "reserved",
                    "invalid-value",
                    "moet true of false zijn",
                    "doit être true ou false",
                )
                .with_value(other.clone()),
            );
            None
        }
    };
    let price_model = PriceModel::parse(body.get("priceModel"))
        .map_err(|e| errors.extend(e))
        .ok()
        .and_then(|model| {
            let before = stored.map(|s| s.price).unwrap_or_default();
            reconcile_reserved(reserved, model, before)
                .map_err(|e| errors.push(e))
                .ok()
        });
    let locale = match body.get("locale") {
        None | Some(Value::Null) => Some(default_locale),
        Some(value) => value.as_str().and_then(Locale::parse).or_else(|| {
            errors.push(
                error(
                    "locale",
                    "invalid-value",
                    "moet nl-NL, nl-BE of fr-BE zijn",
                    "doit être nl-NL, nl-BE ou fr-BE",
                )
                .with_value(value.clone()),
            );
            None
        }),
    };
    let flag = |key: &str, errors: &mut Vec<FieldError>| match body.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            errors.push(
                error(
                    key,
                    "invalid-value",
                    "moet true of false zijn",
                    "doit être true ou false",
                )
                .with_value(other.clone()),
            );
            false
        }
    };
    let show_on_map = flag("showOnMap", &mut errors);
    let website_url = match body.get("websiteUrl") {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(text)) if is_website_url(text) => Some(Some(text.clone())),
        Some(other) => {
            errors.push(
                error(
                    "websiteUrl",
                    "invalid-url",
                    format!(
                        "moet een adres met http:// of https:// zijn, met een host, zonder spaties, tot {WEBSITE_URL_MAX} tekens"
                    ),
                    format!(
                        "doit être une adresse http:// ou https:// avec un hôte, sans espaces, jusqu'à {WEBSITE_URL_MAX} caractères"
                    ),
                )
                .with_value(other.clone()),
            );
            None
        }
    };
    let attributes = match collect_attributes(body, STANDARD_FIELDS) {
        Ok(given) => match leaf {
            Some(leaf) => {
                // Stored values count only where the ad stays in its category.
                let previous = stored
                    .filter(|s| Some(s.category_id) == category_id)
                    .map(|s| s.attributes);
                check_attributes(&given, &leaf.attributes, previous)
                    .map_err(|e| errors.extend(e))
                    .ok()
            }
            // Without a valid leaf the attributes cannot be judged; the category error says why.
            None => None,
        },
        Err(e) => {
            errors.extend(e);
            None
        }
    };
    let content = (|| {
        Some(AdContent {
            title: title?,
            description: description?,
            category_id: category_id?,
            postcode: postcode?,
            reserved: price_model.as_ref()?.model_type == ModelType::Reserved,
            price_model: price_model?,
            attributes: attributes?,
            locale: locale?,
            show_on_map,
            website_url: website_url?,
        })
    })();
    checked(content, errors)
}

/// An `http` or `https` address with a host, of printable ASCII without spaces (what a
/// reader's browser opens as it is written), at most [`WEBSITE_URL_MAX`] characters.
pub fn is_website_url(text: &str) -> bool {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    let host = rest.map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""));
    text.len() <= WEBSITE_URL_MAX
        && text.bytes().all(|b| b.is_ascii_graphic())
        && host.is_some_and(|host| !host.is_empty() && !host.starts_with(':'))
}

/// A Dutch (`1097DN`, `1097 dn`) or Belgian (`1000`) postcode, normalized.
pub fn normalize_postcode(text: &str) -> Option<String> {
    crate::domain::places::Postcode::parse(text).map(|postcode| postcode.code().to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_website_is_an_http_address_with_a_host() {
        use super::is_website_url;
        for good in [
            "https://kamers.example",
            "http://a.b/c?d=e#f",
            "https://x.example:8080/",
        ] {
            assert!(is_website_url(good), "{good}");
        }
        let long = format!("https://x.example/{}", "a".repeat(200));
        for bad in [
            "ftp://x.example",
            "https://",
            "https:///pad",
            "https://:80",
            "https://a b",
            "kamers.example",
            "https://é.example",
            &long,
        ] {
            assert!(!is_website_url(bad), "{bad}");
        }
    }

    use super::*;
    use crate::domain::category::{
        AttributeDefinition, AttributeOption, AttributeType, Fees, Leaf,
    };
    use crate::domain::locale::Labels;
    use serde_json::json;

    fn labels(text: &str) -> Labels {
        Labels {
            nl_nl: text.into(),
            nl_be: text.into(),
            fr_be: text.into(),
        }
    }

    fn definition(key: &str, kind: AttributeType) -> AttributeDefinition {
        AttributeDefinition {
            key: key.into(),
            labels: labels(key),
            kind,
            mandatory: false,
            searchable: true,
            writable: true,
            updateable: true,
            options: Vec::new(),
            min_value: None,
            max_value: None,
            unit: None,
            units: Vec::new(),
        }
    }

    fn leaf() -> Category {
        let mut condition = definition("condition", AttributeType::List);
        condition.mandatory = true;
        condition.options = ["new", "used"]
            .iter()
            .map(|k| AttributeOption {
                key: (*k).into(),
                labels: labels(k),
            })
            .collect();
        let mut year = definition("constructionYear", AttributeType::Number);
        year.min_value = Some(1900.0);
        year.max_value = Some(2030.0);
        year.updateable = false;
        let weight = definition("weight", AttributeType::Double);
        let model = definition("model", AttributeType::String);
        Category {
            id: 101,
            parent_id: Some(1),
            status: CategoryStatus::Open,
            labels: labels("Leaf"),
            leaf: Some(Leaf {
                fees: Fees {
                    insertion_fee: 0,
                    running_days: 28,
                    running_subscriptions: Vec::new(),
                },
                attributes: vec![condition, year, weight, model],
            }),
        }
    }

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn minimal() -> Value {
        json!({"title": "Fiets", "description": "Goede fiets", "categoryId": 101,
               "location": {"postcode": "1097 dn"},
               "priceModel": {"modelType": "fixed", "askingPrice": 1500}, "condition": "used"})
    }

    fn codes(errors: &[FieldError]) -> Vec<(String, &'static str)> {
        errors
            .iter()
            .map(|e| (e.fields.join("+"), e.code))
            .collect()
    }

    #[test]
    fn the_minimal_body_is_accepted() {
        let content = check_content(&body(minimal()), Some(&leaf()), Locale::NlNl, None).unwrap();
        assert_eq!(content.postcode, "1097DN");
        assert_eq!(content.attributes["condition"], "used");
        assert_eq!(content.locale, Locale::NlNl);
        assert!(!content.reserved);
    }

    #[test]
    fn title_bounds() {
        for (title, ok) in [
            ("a", false),
            ("ab", true),
            (&"x".repeat(60) as &str, true),
            (&"x".repeat(61), false),
            ("Fiets\nmet mand", false),
            ("Fiets\tmet mand", false),
            ("Fiets met mand", true),
        ] {
            let mut b = minimal();
            b["title"] = json!(title);
            assert_eq!(
                check_content(&body(b), Some(&leaf()), Locale::NlNl, None).is_ok(),
                ok,
                "{title}"
            );
        }
    }

    #[test]
    fn no_control_characters_where_text_is_stored() {
        let mut b = minimal();
        b["description"] = json!("Regel één\r\nRegel\ttwee");
        b["model"] = json!("Gazelle Orange");
        assert!(check_content(&body(b), Some(&leaf()), Locale::NlNl, None).is_ok());
        let mut b = minimal();
        b["title"] = json!("Fiets\u{0}");
        b["description"] = json!("Goed\u{0}");
        b["model"] = json!("Gazelle\nOrange");
        let errors = check_content(&body(b), Some(&leaf()), Locale::NlNl, None).unwrap_err();
        assert_eq!(
            codes(&errors),
            [
                ("title".to_owned(), "invalid-value"),
                ("description".to_owned(), "invalid-value"),
                ("model".to_owned(), "invalid-value"),
            ]
        );
    }

    /// A NUMBER is exact as a double, so both backends filter it alike: at most 2^53 from 0.
    #[test]
    fn a_number_attribute_is_exact_as_a_double() {
        let mut category = leaf();
        category.leaf.as_mut().unwrap().attributes[1].max_value = None;
        category.leaf.as_mut().unwrap().attributes[1].min_value = None;
        for (year, fits) in [
            (9_007_199_254_740_992_i64, true),
            (-9_007_199_254_740_992, true),
            (9_007_199_254_740_993, false),
            (i64::MIN, false),
        ] {
            let mut b = minimal();
            b["constructionYear"] = json!(year);
            let checked = check_content(&body(b), Some(&category), Locale::NlNl, None);
            match checked {
                Ok(content) => assert!(fits && content.attributes["constructionYear"] == year),
                Err(errors) => {
                    assert!(!fits, "{year}: {:?}", codes(&errors));
                    assert_eq!(
                        codes(&errors),
                        [("constructionYear".to_owned(), "out-of-range")]
                    );
                }
            }
        }
    }

    #[test]
    fn every_problem_at_once() {
        let b = json!({"title": "x", "categoryId": 101, "location": {"postcode": "12"},
                       "priceModel": {"modelType": "bidding"}, "condition": "broken",
                       "constructionYear": 1800, "colour": "red"});
        let errors = check_content(&body(b), Some(&leaf()), Locale::NlNl, None).unwrap_err();
        let found = codes(&errors);
        for expected in [
            ("title", "too-short"),
            ("description", "missing"),
            ("location.postcode", "invalid-postcode"),
            ("priceModel.minimalBid", "missing"),
            ("condition", "unknown-option"),
            ("constructionYear", "out-of-range"),
            ("colour", "unknown-attribute"),
        ] {
            assert!(
                found.contains(&(expected.0.to_owned(), expected.1)),
                "{expected:?} in {found:?}"
            );
        }
    }

    #[test]
    fn attributes_in_every_form() {
        let mut b = minimal();
        b.as_object_mut().unwrap().remove("condition");
        b["attributes"] = json!([{"key": "condition", "value": "new"}, {"key": "constructionYear", "value": "2019"}]);
        b["weight"] = json!("12.5");
        b["model"] = json!("");
        let content = check_content(&body(b), Some(&leaf()), Locale::NlNl, None).unwrap();
        assert_eq!(content.attributes["constructionYear"], 2019);
        assert_eq!(content.attributes["weight"], 12.5);
        assert!(
            !content.attributes.contains_key("model"),
            "an empty optional string is absent"
        );
        let mut b = minimal();
        b["constructionYear"] = json!(2019);
        let previous = check_content(&body(b.clone()), Some(&leaf()), Locale::NlNl, None)
            .unwrap()
            .attributes;
        let stored = Stored {
            category_id: 101,
            attributes: &previous,
            price: PriceBefore::default(),
        };
        b["constructionYear"] = json!(2020);
        let errors =
            check_content(&body(b.clone()), Some(&leaf()), Locale::NlNl, Some(stored)).unwrap_err();
        assert_eq!(
            codes(&errors),
            [("constructionYear".to_owned(), "not-updateable")]
        );
        // Taking it out is a change too (else: remove, then add another value).
        b.as_object_mut().unwrap().remove("constructionYear");
        let errors =
            check_content(&body(b.clone()), Some(&leaf()), Locale::NlNl, Some(stored)).unwrap_err();
        assert_eq!(
            codes(&errors),
            [("constructionYear".to_owned(), "not-updateable")]
        );
        b["constructionYear"] = json!("2019");
        assert!(check_content(&body(b), Some(&leaf()), Locale::NlNl, Some(stored)).is_ok());
    }

    #[test]
    fn stored_values_outlive_changed_definitions() {
        // Placed when `colour` existed, `condition` had the option `broken`, `weight` had
        // no upper bound and `model` was optional.
        let mut b = minimal();
        b["condition"] = json!("broken");
        b["colour"] = json!("red");
        b["weight"] = json!(9000.5);
        let stored_attributes = b.as_object().unwrap().clone();
        let mut category = leaf();
        let leaf_of = category.leaf.as_mut().unwrap();
        leaf_of.attributes[2].max_value = Some(100.0);
        leaf_of.attributes[3].mandatory = true;
        let stored = Stored {
            category_id: 101,
            attributes: &stored_attributes,
            price: PriceBefore::default(),
        };
        let mut edit = b.clone();
        edit["title"] = json!("Fiets, nu goedkoper");
        let content = check_content(
            &body(edit.clone()),
            Some(&category),
            Locale::NlNl,
            Some(stored),
        )
        .unwrap();
        assert_eq!(content.attributes["condition"], "broken", "kept as it is");
        assert_eq!(content.attributes["colour"], "red");
        // What the request changes meets today's definitions.
        edit["condition"] = json!("kapot");
        edit["weight"] = json!(9001);
        let errors =
            check_content(&body(edit), Some(&category), Locale::NlNl, Some(stored)).unwrap_err();
        assert_eq!(
            codes(&errors),
            [
                ("condition".to_owned(), "unknown-option"),
                ("weight".to_owned(), "out-of-range")
            ]
        );
        // A new ad meets them all.
        let errors = check_content(&body(b), Some(&category), Locale::NlNl, None).unwrap_err();
        assert_eq!(errors.len(), 4, "{:?}", codes(&errors));
    }

    #[test]
    fn categories_must_be_open_leaves() {
        let mut closed = leaf();
        closed.status = CategoryStatus::Closed;
        let errors =
            check_content(&body(minimal()), Some(&closed), Locale::NlNl, None).unwrap_err();
        assert_eq!(errors[0].code, "category-closed");
        // An ad already in the closed category stays editable; one moved into it is refused.
        let attributes = minimal().as_object().unwrap().clone();
        let stays = Stored {
            category_id: 101,
            attributes: &attributes,
            price: PriceBefore::default(),
        };
        assert!(check_content(&body(minimal()), Some(&closed), Locale::NlNl, Some(stays)).is_ok());
        let moved = Stored {
            category_id: 102,
            ..stays
        };
        let errors =
            check_content(&body(minimal()), Some(&closed), Locale::NlNl, Some(moved)).unwrap_err();
        assert_eq!(errors[0].code, "category-closed");
        let errors = check_content(&body(minimal()), None, Locale::NlNl, None).unwrap_err();
        assert_eq!(errors[0].code, "unknown-category");
    }

    #[test]
    fn postcodes() {
        assert_eq!(normalize_postcode("1097 dn").as_deref(), Some("1097DN"));
        assert_eq!(normalize_postcode("9000").as_deref(), Some("9000"));
        for bad in ["0123AB", "1097D", "10971", "ABCD", ""] {
            assert!(normalize_postcode(bad).is_none(), "{bad}");
        }
    }
}
