//! Features: the paid promotions of an ad (the original's names), what each one does while
//! it lasts, and the operator's price list (`data/features.json`, and what
//! `souk features import` reads).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::advertisement::{AMOUNT_MAX, PERIOD_MAX_DAYS};
use super::text::positive_id;
use super::text_enum;

text_enum! {
    /// The features, by the original's names.
    pub enum Feature {
        /// Bump: the ad sorts by date as if placed at the purchase.
        Omhoogplaatsen = "omhoogplaatsen",
        /// Top of the day: first in search, for 1, 3 or 7 days.
        Dagtopper = "dagtopper",
        Dagtopper3 = "dagtopper3",
        Dagtopper7 = "dagtopper7",
        /// A spot on the marketplace's homepage (Souk serves no homepage: shown in the
        /// ad's `activeFeatures` for a client that builds one).
        HomepaginaAdvertentie = "homepaginaAdvertentie",
        /// The ad's website link (`svc:advertisement-website-link`).
        Url = "url",
        /// A sticker that catches the eye, shown on the ad.
        Opvalsticker = "opvalsticker",
    }
}

/// What a feature changes on the ad, each until its own date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Bump,
    Top,
    Homepage,
    Url,
    Sticker,
}

impl Effect {
    pub const ALL: [Effect; 5] = [
        Effect::Top,
        Effect::Bump,
        Effect::Sticker,
        Effect::Url,
        Effect::Homepage,
    ];

    /// How an ad's `activeFeatures` names it: the feature that has it (the three
    /// top-of-the-day features share `dagtopper`).
    pub fn name(self) -> &'static str {
        match self {
            Effect::Bump => Feature::Omhoogplaatsen.as_str(),
            Effect::Top => Feature::Dagtopper.as_str(),
            Effect::Homepage => Feature::HomepaginaAdvertentie.as_str(),
            Effect::Url => Feature::Url.as_str(),
            Effect::Sticker => Feature::Opvalsticker.as_str(),
        }
    }
}

impl Feature {
    pub fn effect(self) -> Effect {
        match self {
            Feature::Omhoogplaatsen => Effect::Bump,
            Feature::Dagtopper | Feature::Dagtopper3 | Feature::Dagtopper7 => Effect::Top,
            Feature::HomepaginaAdvertentie => Effect::Homepage,
            Feature::Url => Effect::Url,
            Feature::Opvalsticker => Effect::Sticker,
        }
    }
}

/// The price of a feature in a category: cents (VAT included) for `days` of effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub price: i64,
    pub days: i64,
}

/// The operator's price list: a default for every category, and per category (an L1 for
/// all its leaves, or a leaf) what differs; `null` takes a feature off sale there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriceList {
    /// Category 0 is the default; each entry is a feature's price, or `None`: not sold.
    pub entries: Vec<(i64, Feature, Option<Price>)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PriceListFile {
    default: BTreeMap<String, Option<Price>>,
    #[serde(default)]
    categories: BTreeMap<String, BTreeMap<String, Option<Price>>>,
}

/// Reads a price list, refusing unknown features, category ids that are not positive
/// integers, prices outside 0 to [`AMOUNT_MAX`] and periods outside a day to
/// [`PERIOD_MAX_DAYS`].
pub fn parse_price_list(text: &str) -> Result<PriceList, String> {
    let file: PriceListFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut entries = Vec::new();
    let mut add = |category: i64, prices: BTreeMap<String, Option<Price>>| {
        for (name, price) in prices {
            let feature = Feature::parse(&name).ok_or_else(|| {
                let known: Vec<&str> = Feature::ALL.iter().map(|f| f.as_str()).collect();
                format!("unknown feature {name:?} (known: {})", known.join(", "))
            })?;
            if let Some(price) = price {
                if !(0..=AMOUNT_MAX).contains(&price.price) {
                    return Err(format!("{name}: the price must be 0 to {AMOUNT_MAX} cents"));
                }
                if !(1..=PERIOD_MAX_DAYS).contains(&price.days) {
                    return Err(format!(
                        "{name}: a feature lasts 1 to {PERIOD_MAX_DAYS} days"
                    ));
                }
            }
            entries.push((category, feature, price));
        }
        Ok(())
    };
    add(0, file.default)?;
    for (category, prices) in file.categories {
        // One spelling per id: `04` or `+4` beside `4` would name category 4 twice, the
        // last silently winning.
        let id = positive_id(&category).ok_or_else(|| {
            format!("{category:?} is not a category id (digits, no leading zero)")
        })?;
        add(id, prices)?;
    }
    if entries.is_empty() {
        // An empty table is one a first start fills with the shipped list.
        return Err("the list names no feature (to sell none, give each `null`)".to_owned());
    }
    Ok(PriceList { entries })
}

/// The features of an ad in `leaf` (under `parent`), each with its price where it is sold:
/// the leaf's entry, else the parent's, else the default.
pub fn offers(
    entries: &[(i64, Feature, Option<Price>)],
    leaf: i64,
    parent: Option<i64>,
) -> Vec<(Feature, Option<Price>)> {
    Feature::ALL
        .into_iter()
        .map(|feature| {
            let entry = |category: i64| {
                entries
                    .iter()
                    .find(|(c, f, _)| *c == category && *f == feature)
                    .map(|(_, _, price)| *price)
            };
            let price = entry(leaf)
                .or_else(|| parent.and_then(entry))
                .or_else(|| entry(0))
                .flatten();
            (feature, price)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_category_has_one_spelling() {
        for key in ["04", "+4", "0", "x"] {
            let text =
                format!(r#"{{"default": {{"url": null}}, "categories": {{"{key}": {{}}}}}}"#);
            assert!(parse_price_list(&text).is_err(), "{key}");
        }
        let four = r#"{"default": {"url": null}, "categories": {"4": {}}}"#;
        assert!(parse_price_list(four).is_ok());
    }

    #[test]
    fn the_shipped_price_list_reads() {
        let list = parse_price_list(include_str!("../../data/features.json")).unwrap();
        assert!(list.entries.iter().any(|(c, _, _)| *c == 0));
    }

    #[test]
    fn a_leaf_overrides_its_parent_which_overrides_the_default() {
        let list = parse_price_list(
            r#"{"default": {"dagtopper": {"price": 100, "days": 1}, "url": {"price": 50, "days": 30}},
                "categories": {"4": {"dagtopper": {"price": 200, "days": 1}},
                               "401": {"url": null}}}"#,
        )
        .unwrap();
        let price_of = |leaf, parent, feature| {
            offers(&list.entries, leaf, parent)
                .into_iter()
                .find(|(f, _)| *f == feature)
                .unwrap()
                .1
        };
        let day = |price| Some(Price { price, days: 1 });
        assert_eq!(price_of(401, Some(4), Feature::Dagtopper), day(200));
        assert_eq!(price_of(101, Some(1), Feature::Dagtopper), day(100));
        assert_eq!(price_of(401, Some(4), Feature::Url), None);
        assert_eq!(
            price_of(402, Some(4), Feature::Url),
            Some(Price {
                price: 50,
                days: 30
            })
        );
        assert_eq!(price_of(402, Some(4), Feature::Opvalsticker), None);
    }

    #[test]
    fn a_bad_price_list_is_refused_with_its_reason() {
        let refused = |text: &str| parse_price_list(text).unwrap_err();
        assert!(refused(r#"{"default": {"gratis": null}}"#).contains("unknown feature"));
        for (price, days, problem) in [
            (-1, 1, "the price must be 0 to"),
            (1_000_000_001, 1, "the price must be 0 to"),
            (1, 0, "lasts 1 to 3650 days"),
            (1, 3651, "lasts 1 to 3650 days"),
            (1, i64::MAX, "lasts 1 to 3650 days"),
        ] {
            let text = format!(r#"{{"default": {{"url": {{"price": {price}, "days": {days}}}}}}}"#);
            assert!(refused(&text).contains(problem), "{price} {days}");
        }
        let longest = r#"{"default": {"url": {"price": 1000000000, "days": 3650}}}"#;
        assert!(parse_price_list(longest).is_ok());
        assert!(refused(r#"{"default": {}, "categories": {"x": {}}}"#).contains("not a category"));
        assert!(refused(r#"{"categories": {}}"#).contains("default"));
        let nothing = r#"{"default": {}, "categories": {"4": {}}}"#;
        assert!(refused(nothing).contains("names no feature"));
    }
}
