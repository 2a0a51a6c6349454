//! The three locales of the marketplace and texts labelled in each of them.

use serde::{Deserialize, Serialize};

use super::text_enum;

text_enum! {
    /// A site locale: the original ran one site for the Netherlands and two for Belgium.
    #[derive(Serialize, Deserialize)]
    pub enum Locale {
        #[serde(rename = "nl-NL")]
        NlNl = "nl-NL",
        #[serde(rename = "nl-BE")]
        NlBe = "nl-BE",
        #[serde(rename = "fr-BE")]
        FrBe = "fr-BE",
    }
}

impl Locale {
    /// The language of messages: Dutch for both Dutch locales, French for fr-BE.
    pub fn language(self) -> Language {
        match self {
            Locale::NlNl | Locale::NlBe => Language::Dutch,
            Locale::FrBe => Language::French,
        }
    }
}

impl std::fmt::Display for Locale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Dutch,
    French,
}

/// A message in both languages of the marketplace; rendered in the deployment's language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    pub dutch: String,
    pub french: String,
}

impl Text {
    pub fn new(dutch: impl Into<String>, french: impl Into<String>) -> Self {
        Text {
            dutch: dutch.into(),
            french: french.into(),
        }
    }

    pub fn get(&self, language: Language) -> &str {
        match language {
            Language::Dutch => &self.dutch,
            Language::French => &self.french,
        }
    }
}

/// A label in each of the three locales (serialized as `{"nl-NL": .., "nl-BE": .., "fr-BE": ..}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Labels {
    #[serde(rename = "nl-NL")]
    pub nl_nl: String,
    #[serde(rename = "nl-BE")]
    pub nl_be: String,
    #[serde(rename = "fr-BE")]
    pub fr_be: String,
}

impl Labels {
    pub fn get(&self, locale: Locale) -> &str {
        match locale {
            Locale::NlNl => &self.nl_nl,
            Locale::NlBe => &self.nl_be,
            Locale::FrBe => &self.fr_be,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locales_round_trip() {
        for locale in Locale::ALL {
            assert_eq!(Locale::parse(locale.as_str()), Some(locale));
        }
        assert_eq!(Locale::parse("en-GB"), None);
        assert_eq!(Locale::FrBe.language(), Language::French);
        assert_eq!(Locale::NlBe.language(), Language::Dutch);
    }
}
