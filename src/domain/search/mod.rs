//! Search without SQL or HTTP (docs/design/search.md): the words and tags an ad is indexed
//! under, and the words a query is matched with.
//!
//! Tags are index terms for everything a filter asks that is not a range (category, parent
//! category, seller, locale, the values of LIST and STRING attributes), so that a filter is
//! a term of the full-text match and a count needs the index alone. A tag holds `_`, which
//! the word splitter never keeps, so no query word can ever hit a tag.

pub mod request;
pub mod saved;
pub mod text;

use serde_json::Value;

use super::advertisement::AdContent;
use super::locale::Locale;
use text::{TOKENIZER_VERSION, fold, index_words};

/// What an ad is found by, as stored on the ad (and copied to the index while it is online).
#[derive(Clone, Debug, PartialEq)]
pub struct AdTerms {
    pub title_words: String,
    pub body_words: String,
    pub tags: String,
    /// The amount a price filter and `sortBy=price` use: the asking price, else the
    /// minimal bid; none for models without an amount.
    pub price_cents: Option<i64>,
    pub version: i64,
}

impl AdTerms {
    pub fn of(content: &AdContent, seller_id: i64, parent_category_id: Option<i64>) -> AdTerms {
        let language = content.locale.language();
        let mut tags = vec![
            category_tag(content.category_id),
            seller_tag(seller_id),
            locale_tag(content.locale),
        ];
        tags.extend(parent_category_id.map(parent_tag));
        for (key, value) in &content.attributes {
            let values: Vec<&str> = match value {
                Value::String(text) => vec![text],
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            tags.extend(values.into_iter().filter_map(|v| attribute_tag(key, v)));
        }
        tags.sort();
        tags.dedup();
        AdTerms {
            title_words: index_words(&content.title, language),
            body_words: index_words(&content.description, language),
            tags: tags.iter().map(|t| format!("{t} ")).collect(),
            price_cents: content
                .price_model
                .asking_price
                .or(content.price_model.minimal_bid),
            version: TOKENIZER_VERSION,
        }
    }
}

/// An ad of this leaf category.
pub fn category_tag(id: i64) -> String {
    format!("c_{id}")
}

/// An ad in a leaf of this L1 category.
pub fn parent_tag(id: i64) -> String {
    format!("p_{id}")
}

/// Whether `tag` is a category's, of a leaf ([`category_tag`]) or of an L1 ([`parent_tag`]).
pub fn is_category_tag(tag: &str) -> bool {
    tag.starts_with("c_") || tag.starts_with("p_")
}

pub fn seller_tag(id: i64) -> String {
    format!("s_{id}")
}

pub fn locale_tag(locale: Locale) -> String {
    format!("l_{}", compact(locale.as_str()))
}

/// An attribute's value: `a_<key>_<value>`, both folded with everything but ASCII letters
/// and digits left out (`Brand: "Citroën"` -> `a_brand_citroen`). None when a part comes
/// out empty or the value is long free text (never a filter value).
pub fn attribute_tag(key: &str, value: &str) -> Option<String> {
    let (key, value) = (attribute_key_tag(key), compact(value));
    (!key.is_empty() && !value.is_empty() && value.len() <= 60).then(|| format!("a_{key}_{value}"))
}

/// The part of an attribute's tags that names its key: two keys with one such part are one
/// attribute to search, so a taxonomy may not hold both under one L1 category.
pub fn attribute_key_tag(key: &str) -> String {
    compact(key)
}

/// Folded, letters and digits only.
fn compact(text: &str) -> String {
    fold(text)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_plain_and_distinct_from_words() {
        assert_eq!(locale_tag(Locale::FrBe), "l_frbe");
        assert_eq!(
            attribute_tag("Brand", "Citroën C-4").as_deref(),
            Some("a_brand_citroenc4")
        );
        assert_eq!(attribute_tag("brand", " - "), None);
        for tag in [category_tag(101), parent_tag(1), seller_tag(7)] {
            assert!(tag.contains('_') && !text::is_index_word(&tag));
        }
        assert!(is_category_tag(&category_tag(101)) && is_category_tag(&parent_tag(1)));
        assert!(!is_category_tag(&seller_tag(7)) && !is_category_tag(&locale_tag(Locale::NlNl)));
    }
}
