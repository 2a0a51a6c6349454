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

/// Euro cents as the language writes them: `€ 1.234,50` in Dutch, `1 234,50 €` in French
/// (thousands grouped by a narrow no-break space, as French typography does).
pub fn euros(language: Language, cents: i64) -> String {
    let separator = match language {
        Language::Dutch => '.',
        Language::French => '\u{202f}',
    };
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(separator);
        }
        grouped.push(digit);
    }
    let amount = format!("{sign}{grouped},{:02}", cents % 100);
    match language {
        Language::Dutch => format!("€ {amount}"),
        Language::French => format!("{amount} €"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_as_each_language_writes_them() {
        assert_eq!(euros(Language::Dutch, 123_450), "€ 1.234,50");
        assert_eq!(euros(Language::Dutch, 5), "€ 0,05");
        assert_eq!(
            euros(Language::French, 100_000_000),
            "1\u{202f}000\u{202f}000,00 €"
        );
        assert_eq!(euros(Language::French, 99_900), "999,00 €");
        assert_eq!(euros(Language::Dutch, -250), "€ -2,50");
    }

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
