//! The taxonomy file (`data/categories.json`, and what `souk categories import` reads): the
//! category tree in the serde form of `domain::category`, checked completely before anything
//! is stored. It lives apart from the category types because one of its rules is the
//! advertisement's: an attribute may not take the key of a member of every ad.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::advertisement::{AMOUNT_MAX, PERIOD_MAX_DAYS, STANDARD_FIELDS};
use super::category::{AttributeDefinition, AttributeType, Category, CategoryStatus, Fees, Leaf};
use super::locale::Labels;
use super::search::{attribute_key_tag, attribute_tag};
use super::text::is_one_line;

/// The taxonomy file: L1 categories with their L2 children.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaxonomyFile {
    categories: Vec<L1Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct L1Entry {
    category_id: i64,
    labels: Labels,
    status: CategoryStatus,
    children: Vec<L2Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct L2Entry {
    category_id: i64,
    labels: Labels,
    status: CategoryStatus,
    fees: Fees,
    #[serde(default)]
    attributes: Vec<AttributeDefinition>,
}

/// Why a taxonomy file was refused: where (a line or a key path) and what.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct TaxonomyError {
    pub location: String,
    pub problem: String,
}

fn refuse(location: impl Into<String>, problem: impl Into<String>) -> TaxonomyError {
    TaxonomyError {
        location: location.into(),
        problem: problem.into(),
    }
}

/// Parses and checks a taxonomy file; returns the categories in file order (each L1 before
/// its children).
pub fn parse_taxonomy(text: &str) -> Result<Vec<Category>, TaxonomyError> {
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let file: TaxonomyFile = serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let inner = e.inner();
        refuse(
            format!(
                "line {}, column {}, at `{}`",
                inner.line(),
                inner.column(),
                e.path()
            ),
            inner.to_string(),
        )
    })?;
    if file.categories.is_empty() {
        return Err(refuse("categories", "the file has no categories"));
    }
    let mut seen = HashSet::new();
    let mut categories = Vec::new();
    for (i, l1) in file.categories.into_iter().enumerate() {
        let at = format!("categories[{i}]");
        let l1_id = l1.category_id;
        check_id(&at, l1_id, &mut seen)?;
        check_labels(&format!("{at}.labels"), &l1.labels)?;
        if l1.children.is_empty() {
            return Err(refuse(
                format!("{at}.children"),
                "an L1 category needs children",
            ));
        }
        categories.push(Category {
            id: l1_id,
            parent_id: None,
            status: l1.status,
            labels: l1.labels,
            leaf: None,
        });
        // A search under the L1 category filters its leaves' ads by an attribute's tag,
        // which folds the key: `fuelType` and `fueltype` in two leaves would be one filter.
        let mut key_tags: HashMap<String, String> = HashMap::new();
        for (j, l2) in l1.children.into_iter().enumerate() {
            let at = format!("{at}.children[{j}]");
            check_id(&at, l2.category_id, &mut seen)?;
            check_labels(&format!("{at}.labels"), &l2.labels)?;
            check_fees(&format!("{at}.fees"), &l2.fees)?;
            let mut keys = HashSet::new();
            for (k, attribute) in l2.attributes.iter().enumerate() {
                let at = format!("{at}.attributes[{k}]");
                check_attribute(&at, attribute)?;
                if !keys.insert(attribute.key.as_str()) {
                    return Err(refuse(
                        format!("{at}.key"),
                        format!("attribute `{}` is defined twice", attribute.key),
                    ));
                }
                let tag = attribute_key_tag(&attribute.key);
                match key_tags.get(&tag) {
                    Some(other) if *other != attribute.key => {
                        return Err(refuse(
                            format!("{at}.key"),
                            format!(
                                "attribute `{}` and `{other}` of the same L1 category differ \
                                 only in case or punctuation, which search does not tell apart",
                                attribute.key
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        key_tags.insert(tag, attribute.key.clone());
                    }
                }
            }
            categories.push(Category {
                id: l2.category_id,
                parent_id: Some(l1_id),
                status: l2.status,
                labels: l2.labels,
                leaf: Some(Leaf {
                    fees: l2.fees,
                    attributes: l2.attributes,
                }),
            });
        }
    }
    Ok(categories)
}

/// Checks a parsed taxonomy against the categories stored (`(id, parent)` pairs): a file
/// may move an L2 category under another L1, but not make a stored L1 an L2 or a stored
/// L2 an L1. The ads of a leaf must stay in a leaf (their fees and attributes come from
/// it), and the children of an L1 under an L1.
pub fn check_against_stored(
    categories: &[Category],
    stored: &[(i64, Option<i64>)],
) -> Result<(), TaxonomyError> {
    for category in categories {
        let Some((_, parent)) = stored.iter().find(|(id, _)| *id == category.id) else {
            continue;
        };
        if parent.is_some() != category.parent_id.is_some() {
            let (was, now) = match parent {
                Some(_) => ("an L2", "an L1"),
                None => ("an L1", "an L2"),
            };
            return Err(refuse(
                format!("category {}", category.id),
                format!(
                    "is {was} category in the database and {now} in the file; a category \
                     keeps its level (an L2 may move under another L1)"
                ),
            ));
        }
    }
    Ok(())
}

fn check_id(at: &str, id: i64, seen: &mut HashSet<i64>) -> Result<(), TaxonomyError> {
    if id <= 0 {
        return Err(refuse(
            format!("{at}.categoryId"),
            "must be a positive integer",
        ));
    }
    if !seen.insert(id) {
        return Err(refuse(
            format!("{at}.categoryId"),
            format!("category {id} appears twice"),
        ));
    }
    Ok(())
}

fn check_labels(at: &str, labels: &Labels) -> Result<(), TaxonomyError> {
    for (locale, label) in [
        ("nl-NL", &labels.nl_nl),
        ("nl-BE", &labels.nl_be),
        ("fr-BE", &labels.fr_be),
    ] {
        if label.trim().is_empty() {
            return Err(refuse(
                format!("{at}.{locale}"),
                "a label must not be empty",
            ));
        }
        // A label is a category's name, in lists and in the titles `souk seed` makes.
        if !is_one_line(label) {
            return Err(refuse(
                format!("{at}.{locale}"),
                "a label is one line, without control characters",
            ));
        }
    }
    Ok(())
}

/// Fees in cents from 0 to [`AMOUNT_MAX`] and periods from a day to [`PERIOD_MAX_DAYS`],
/// so that no price or date computed from them can overflow.
fn check_fees(at: &str, fees: &Fees) -> Result<(), TaxonomyError> {
    let amount = |name: String, cents: i64| {
        if (0..=AMOUNT_MAX).contains(&cents) {
            Ok(())
        } else {
            Err(refuse(name, format!("must be 0 to {AMOUNT_MAX} cents")))
        }
    };
    let period = |name: String, days: i64| {
        if (1..=PERIOD_MAX_DAYS).contains(&days) {
            Ok(())
        } else {
            Err(refuse(name, format!("must be 1 to {PERIOD_MAX_DAYS} days")))
        }
    };
    amount(format!("{at}.insertionFee"), fees.insertion_fee)?;
    period(format!("{at}.runningDays"), fees.running_days)?;
    for (i, s) in fees.running_subscriptions.iter().enumerate() {
        let at = format!("{at}.runningSubscriptions[{i}]");
        period(format!("{at}.durationDays"), s.duration_days)?;
        amount(format!("{at}.fee"), s.fee)?;
    }
    Ok(())
}

fn check_attribute(at: &str, a: &AttributeDefinition) -> Result<(), TaxonomyError> {
    let key_ok = a.key.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && a.key.chars().all(|c| c.is_ascii_alphanumeric());
    if !key_ok {
        return Err(refuse(
            format!("{at}.key"),
            format!("`{}` is not a lowerCamelCase ASCII key", a.key),
        ));
    }
    // Attributes are members of the ad itself (flat, as in the original): one named like a
    // member of every ad would put its key twice in the ad's body.
    if STANDARD_FIELDS.contains(&a.key.as_str()) {
        return Err(refuse(
            format!("{at}.key"),
            format!(
                "`{}` is a member of every advertisement and cannot be an attribute",
                a.key
            ),
        ));
    }
    check_labels(&format!("{at}.labels"), &a.labels)?;
    // An ad must give a mandatory attribute and may not give one that is not writable: no
    // ad could be placed in the category.
    if a.mandatory && !a.writable {
        return Err(refuse(
            format!("{at}.writable"),
            "a mandatory attribute must be writable",
        ));
    }
    for (i, unit) in a.unit.iter().chain(&a.units).enumerate() {
        if !is_one_line(unit) {
            let name = if a.unit.is_some() && i == 0 {
                "unit".to_owned()
            } else {
                format!("units[{}]", i - usize::from(a.unit.is_some()))
            };
            return Err(refuse(
                format!("{at}.{name}"),
                "a unit is one line, without control characters",
            ));
        }
    }
    let numeric = matches!(a.kind, AttributeType::Number | AttributeType::Double);
    match a.kind {
        AttributeType::List if a.options.len() < 2 => {
            return Err(refuse(
                format!("{at}.options"),
                "a LIST attribute needs at least two options",
            ));
        }
        AttributeType::List => {}
        _ if !a.options.is_empty() => {
            return Err(refuse(
                format!("{at}.options"),
                "only LIST attributes have options",
            ));
        }
        _ => {}
    }
    // An option's key is what an ad stores and a search filters on (by its tag, folded to
    // ASCII letters and digits): two keys with one tag could not be told apart, a key with
    // none could not be found, and a control character (a NUL) is refused by PostgreSQL's
    // jsonb, which the attribute filters read the ad's attributes as.
    let mut option_tags = HashSet::new();
    for (i, option) in a.options.iter().enumerate() {
        let tag = attribute_tag(&a.key, &option.key);
        if option.key.chars().any(char::is_control)
            || !tag.is_some_and(|tag| option_tags.insert(tag))
        {
            return Err(refuse(
                format!("{at}.options[{i}].key"),
                format!(
                    "option key `{}` is empty, repeated, has no letter or digit, has a \
                     control character, or is the same as another once folded",
                    option.key.escape_debug()
                ),
            ));
        }
        check_labels(&format!("{at}.options[{i}].labels"), &option.labels)?;
    }
    if !numeric && (a.min_value.is_some() || a.max_value.is_some()) {
        return Err(refuse(
            format!("{at}.minValue"),
            "only NUMBER and DOUBLE attributes have bounds",
        ));
    }
    if let (Some(min), Some(max)) = (a.min_value, a.max_value)
        && min > max
    {
        return Err(refuse(
            format!("{at}.maxValue"),
            "must not be below minValue",
        ));
    }
    if a.kind == AttributeType::Number {
        for (name, bound) in [("minValue", a.min_value), ("maxValue", a.max_value)] {
            if bound.is_some_and(|b| b.fract() != 0.0) {
                return Err(refuse(
                    format!("{at}.{name}"),
                    "a NUMBER attribute has integer bounds",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{"categories": [{"categoryId": 1,
        "labels": {"nl-NL": "Auto's", "nl-BE": "Auto's", "fr-BE": "Voitures"},
        "status": "open",
        "children": [{"categoryId": 101,
            "labels": {"nl-NL": "Volvo", "nl-BE": "Volvo", "fr-BE": "Volvo"},
            "status": "open",
            "fees": {"insertionFee": 0, "runningDays": 56, "runningSubscriptions": []},
            "attributes": [{"key": "mileage", "type": "NUMBER",
                "labels": {"nl-NL": "Km-stand", "nl-BE": "Km-stand", "fr-BE": "Kilométrage"},
                "minValue": 0, "maxValue": 2000000, "unit": "km", "units": ["km"]}]}]}]}"#;

    #[test]
    fn parses_a_small_taxonomy() {
        let categories = parse_taxonomy(SMALL).unwrap();
        assert_eq!(categories.len(), 2);
        assert_eq!(categories[1].parent_id, Some(1));
        let leaf = categories[1].leaf.as_ref().unwrap();
        assert_eq!(leaf.fees.running_days, 56);
        assert!(leaf.attributes[0].writable, "writable defaults to true");
    }

    #[test]
    fn names_the_line_of_a_syntax_error() {
        let err = parse_taxonomy("{\"categories\": [\n  {\"categoryId\": 1,,}]}").unwrap_err();
        assert!(err.location.starts_with("line 2"), "{err}");
    }

    #[test]
    fn names_the_key_of_a_wrong_value() {
        let text = SMALL.replace("\"NUMBER\"", "\"INTEGER\"");
        let err = parse_taxonomy(&text).unwrap_err();
        assert!(
            err.location
                .contains("categories[0].children[0].attributes[0].type"),
            "{err}"
        );
    }

    /// Under one L1 category, keys that search folds to one (`mileage`, `mileAge`) are
    /// refused; one key in several leaves is one attribute, and fine.
    #[test]
    fn keys_that_search_cannot_tell_apart_are_refused() {
        let leaf = |id: u32, key: &str| {
            format!(
                r#"{{"categoryId": {id},
                "labels": {{"nl-NL": "Volvo", "nl-BE": "Volvo", "fr-BE": "Volvo"}},
                "status": "open",
                "fees": {{"insertionFee": 0, "runningDays": 56, "runningSubscriptions": []}},
                "attributes": [{{"key": "{key}", "type": "NUMBER",
                    "labels": {{"nl-NL": "Km", "nl-BE": "Km", "fr-BE": "Km"}},
                    "minValue": 0, "maxValue": 2000000}}]}}"#
            )
        };
        let taxonomy = |first: &str, second: &str| {
            format!(
                r#"{{"categories": [{{"categoryId": 1,
                "labels": {{"nl-NL": "Auto's", "nl-BE": "Auto's", "fr-BE": "Voitures"}},
                "status": "open", "children": [{}, {}]}}]}}"#,
                leaf(101, first),
                leaf(102, second)
            )
        };
        assert_eq!(
            parse_taxonomy(&taxonomy("mileage", "mileage"))
                .unwrap()
                .len(),
            3
        );
        let refused = parse_taxonomy(&taxonomy("mileage", "mileAge")).unwrap_err();
        assert_eq!(
            refused.location,
            "categories[0].children[1].attributes[0].key"
        );
        assert!(refused.problem.contains("`mileage`"), "{refused}");
    }

    #[test]
    fn refuses_semantic_errors() {
        let refused = |from: &str, to: &str| parse_taxonomy(&SMALL.replace(from, to)).unwrap_err();
        let twice = refused("\"categoryId\": 101", "\"categoryId\": 1");
        assert!(twice.problem.contains("twice"));
        let bounds = refused("\"minValue\": 0", "\"minValue\": 3000000");
        assert_eq!(
            bounds.location,
            "categories[0].children[0].attributes[0].maxValue"
        );
        let shadowing = refused("\"key\": \"mileage\"", "\"key\": \"status\"");
        assert!(shadowing.problem.contains("member of every advertisement"));
        let empty = refused("\"fr-BE\": \"Voitures\"", "\"fr-BE\": \" \"");
        assert_eq!(empty.location, "categories[0].labels.fr-BE");
        let forever = refused(
            "\"runningDays\": 56",
            "\"runningDays\": 9223372036854775807",
        );
        assert_eq!(
            forever.location,
            "categories[0].children[0].fees.runningDays"
        );
        let dear = refused("\"insertionFee\": 0", "\"insertionFee\": 1000000001");
        assert_eq!(dear.location, "categories[0].children[0].fees.insertionFee");
        let unplaceable = refused(
            "\"minValue\": 0,",
            "\"mandatory\": true, \"writable\": false,",
        );
        assert_eq!(
            unplaceable.location,
            "categories[0].children[0].attributes[0].writable"
        );
        let two_lines = refused("\"nl-NL\": \"Volvo\"", "\"nl-NL\": \"Vol\\nvo\"");
        assert_eq!(two_lines.location, "categories[0].children[0].labels.nl-NL");
        let unit = refused("\"units\": [\"km\"]", "\"units\": [\"km\", \"m\\u0000\"]");
        assert_eq!(
            unit.location,
            "categories[0].children[0].attributes[0].units[1]"
        );
    }

    #[test]
    fn the_shipped_taxonomy_is_valid() {
        let text = include_str!("../../data/categories.json");
        let categories = parse_taxonomy(text).unwrap();
        let l1 = categories.iter().filter(|c| c.parent_id.is_none()).count();
        assert!(l1 >= 15, "{l1} L1 categories");
        assert!(
            categories.len() - l1 >= 100,
            "{} L2 categories",
            categories.len() - l1
        );
    }
}
