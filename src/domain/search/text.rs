//! Words of an ad and of a query as the full-text index stores and matches them
//! (docs/design/search.md section 3). Made here, in Rust, so that SQLite FTS5 and
//! PostgreSQL index exactly the same words: neither database parses or stems them.
//!
//! The pipeline, the same for a title, a description and a query: fold (lower case, no
//! diacritics), split on everything that is not an ASCII letter or digit, drop stop words
//! and words over 40 characters, stem with Snowball (Dutch or French).
//!
//! Snowball alone does not make every form of a word meet: its Dutch stems `fiets` to
//! `fiet` (the plural `-s` rule) but `fietsen` to `fiets`. So an ad is indexed under each
//! word's stem *and* its folded form, and a query word matches any of its own form, its
//! Dutch stem and its French stem: `fietsen` (group `fiets`, `fietsen`) meets the stored
//! form `fiets`, and `fiets` (group `fiet`, `fiets`) meets the stem of `fietsen`.

use std::collections::HashSet;

use frostem::{Algorithm, Stemmer};
use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

use crate::domain::field_error::FieldError;
use crate::domain::locale::{Language, Text};

/// Bumped whenever the stemmer or these rules change what a text becomes: ads indexed with
/// an older version are indexed again.
pub const TOKENIZER_VERSION: i64 = 1;

/// Longer "words" are URLs, serial numbers or noise, never something a buyer types.
const MAX_WORD_CHARS: usize = 40;

/// A query longer than this (in characters) is refused.
pub const MAX_QUERY_CHARS: usize = 100;
/// At most this many words (after stop words) in a query.
pub const MAX_QUERY_WORDS: usize = 8;

/// The Snowball stemmer of a language (an ad's words are stemmed in its locale's).
fn stemmer(language: Language) -> Stemmer {
    Stemmer::new(match language {
        Language::Dutch => Algorithm::Dutch,
        Language::French => Algorithm::French,
    })
}

/// Function words of Dutch and French (from Snowball's stop lists, folded), dropped at
/// index and at query time alike, so that `de fiets` finds `fiets`. Words that carry
/// meaning in a listing (`zonder`, `sans`, `veel`, `plus`, ...) are kept out of it.
const STOP_WORDS: &[&str] = &[
    // Dutch
    "aan", "al", "als", "bij", "dan", "dat", "de", "der", "deze", "die", "dit", "door", "een", "en",
    "er", "het", "hij", "hun", "ik", "in", "is", "je", "maar", "me", "met", "mij", "mijn", "na",
    "naar", "of", "om", "onder", "ons", "op", "over", "te", "tot", "u", "uit", "uw", "van", "voor",
    "want", "wat", "we", "wie", "wij", "ze", "zich", "zij", "zijn", "zo", "zou",
    // French
    "a", "au", "aux", "avec", "c", "ce", "ces", "d", "dans", "des", "du", "elle", "est", "et", "il",
    "j", "l", "la", "le", "les", "leur", "lui", "m", "ma", "mes", "mon", "n", "ne", "nos", "notre",
    "nous", "on", "ou", "par", "qu", "que", "qui", "s", "sa", "se", "ses", "son", "sur", "t", "ta",
    "tes", "ton", "tu", "un", "une", "vos", "votre", "vous", "y",
];

/// Lower case without diacritics: `Café` -> `cafe`, `geënt` -> `geent`, `Straße` ->
/// `strasse`. Folding comes before stemming, so a query typed without accents stems
/// exactly like the accented text.
pub fn fold(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for c in text.to_lowercase().nfd() {
        if is_combining_mark(c) {
            continue;
        }
        match c {
            'ß' => folded.push_str("ss"),
            'æ' => folded.push_str("ae"),
            'œ' => folded.push_str("oe"),
            'ø' => folded.push('o'),
            'ł' => folded.push('l'),
            'đ' => folded.push('d'),
            _ => folded.push(c),
        }
    }
    folded
}

/// The folded words of a text that are worth indexing, in order, before stemming.
fn words(text: &str) -> Vec<String> {
    fold(text)
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && w.len() <= MAX_WORD_CHARS && !STOP_WORDS.contains(w))
        .map(str::to_owned)
        .collect()
}

/// An index word that no ad holds: longer than any word `words` keeps (a stem is never
/// longer than its word). A query group of it matches nothing.
const NEVER_INDEXED: &str = "neverindexedneverindexedneverindexedneverindexed";

/// Whether `query` has a word, in any script, that is not a stop word.
fn has_words_beyond_stop_words(query: &str) -> bool {
    fold(query)
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| !w.is_empty() && !STOP_WORDS.contains(&w))
}

/// The Snowball stem of a folded word. The stem of ASCII letters is ASCII letters; should
/// a stemmer ever answer something else, the word is kept as it is, so that an index word
/// is always `[a-z0-9]+` (the match expressions rely on it).
fn stem(word: &str, language: Language) -> String {
    let stemmed = stemmer(language).stem(word);
    if !stemmed.is_empty() && is_index_word(&stemmed) {
        stemmed.into_owned()
    } else {
        word.to_owned()
    }
}

/// What an index word is made of: the query builders need no quoting because of it.
pub fn is_index_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The words of an ad's title or description as stored: each word's stem and its folded
/// form, each once, in the order they first appear, each followed by one space
/// (`"fiet fiets rood "`), so that texts can be joined in SQL without making an empty word.
pub fn index_words(text: &str, language: Language) -> String {
    let mut seen = HashSet::new();
    let mut stored = String::new();
    for word in words(text) {
        let stemmed = stem(&word, language);
        for term in [stemmed, word] {
            if !seen.contains(&term) {
                stored.push_str(&term);
                stored.push(' ');
                seen.insert(term);
            }
        }
    }
    stored
}

/// The words of a query: one group per word, holding its Dutch stem, its French stem and
/// its folded form (each once), since the query does not know the ads' language. A result
/// must match every group, a group matches if any member does.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct QueryWords {
    pub groups: Vec<Vec<String>>,
}

impl QueryWords {
    /// The words of `query`; field errors on `field` when it is too long or has too many
    /// words. A query of stop words only has no groups (it matches every ad).
    pub fn parse(field: &str, query: &str) -> Result<QueryWords, FieldError> {
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(FieldError::new(
                field,
                "too-long",
                Text::new(
                    "mag hoogstens 100 tekens lang zijn",
                    "ne peut dépasser 100 caractères",
                ),
            )
            .with_value(query));
        }
        let mut groups: Vec<Vec<String>> = Vec::new();
        for word in words(query) {
            let mut group: Vec<String> = Vec::with_capacity(3);
            for term in [
                stem(&word, Language::Dutch),
                stem(&word, Language::French),
                word,
            ] {
                if !group.contains(&term) {
                    group.push(term);
                }
            }
            if !groups.contains(&group) {
                groups.push(group);
            }
        }
        // A query with words of its own, none of which can be indexed (all in a script
        // the index does not hold, or longer than any indexed word), matches no ad: left
        // with no groups it would match every one.
        if groups.is_empty() && has_words_beyond_stop_words(query) {
            groups.push(vec![NEVER_INDEXED.to_owned()]);
        }
        if groups.len() > MAX_QUERY_WORDS {
            return Err(FieldError::new(
                field,
                "too-long",
                Text::new("mag hoogstens 8 woorden tellen", "ne peut dépasser 8 mots"),
            )
            .with_value(query));
        }
        Ok(QueryWords { groups })
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Whether the stored `words` (as `index_words` makes them) hold every group.
    pub fn all_in(&self, words: &str) -> bool {
        let stored: HashSet<&str> = words.split_ascii_whitespace().collect();
        self.groups
            .iter()
            .all(|group| group.iter().any(|w| stored.contains(w.as_str())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query of words the index cannot hold matches no ad; one of stop words only, or of
    /// no words at all, matches every ad.
    #[test]
    fn a_query_of_words_never_indexed_matches_nothing() {
        assert!(NEVER_INDEXED.len() > MAX_WORD_CHARS && is_index_word(NEVER_INDEXED));
        let long = "x".repeat(MAX_WORD_CHARS + 1);
        for query in ["велосипед", "自転車", "🚲 велосипед", long.as_str()] {
            assert!(!matches(query, "Fiets", Language::Dutch), "{query}");
            assert!(
                !matches(query, &format!("{query} fiets"), Language::Dutch),
                "{query}"
            );
        }
        for query in ["", "de het", "« ! »"] {
            assert!(matches(query, "Fiets", Language::Dutch), "{query:?}");
        }
        // A word the index holds beside one it cannot: the first is what counts.
        assert!(matches("fiets велосипед", "Fiets", Language::Dutch));
    }

    fn matches(query: &str, text: &str, language: Language) -> bool {
        QueryWords::parse("query", query)
            .unwrap()
            .all_in(&index_words(text, language))
    }

    #[test]
    fn folding_drops_case_and_diacritics() {
        assert_eq!(fold("Café CRÈME"), "cafe creme");
        assert_eq!(fold("geënt"), "geent");
        assert_eq!(fold("Straße Ærø Œuvre Łódź"), "strasse aero oeuvre lodz");
    }

    #[test]
    fn dutch_and_french_word_forms_meet() {
        // Snowball's Dutch: the forms do not share a stem, the stored forms bridge them.
        assert_eq!(stem("fietsen", Language::Dutch), "fiets");
        assert_eq!(stem("fiets", Language::Dutch), "fiet");
        assert_eq!(
            stem("voitures", Language::French),
            stem("voiture", Language::French)
        );
        assert!(matches("fietsen", "Rode fiets", Language::Dutch));
        assert!(matches("fiets", "Twee fietsen te koop", Language::Dutch));
        assert!(matches("voitures", "Belle voiture rouge", Language::French));
        assert!(matches("voiture", "Deux voitures", Language::French));
        assert!(matches("stoel", "Vier stoelen", Language::Dutch));
        assert!(matches("huizen", "Huis met tuin", Language::Dutch));
        assert!(!matches("auto", "Rode fiets", Language::Dutch));
    }

    #[test]
    fn diacritics_do_not_matter_either_way() {
        assert!(matches("cafe", "Tafel uit een café", Language::Dutch));
        assert!(matches("café", "Tables de cafe", Language::French));
        assert!(matches("ELECTRIQUE", "Vélo électrique", Language::French));
    }

    #[test]
    fn stop_words_are_dropped_at_both_ends() {
        assert_eq!(
            index_words("De fiets van het jaar", Language::Dutch),
            "fiet fiets jaar "
        );
        assert!(matches("de fiets", "fiets", Language::Dutch));
        assert!(matches("la voiture", "voiture", Language::French));
        assert!(QueryWords::parse("query", "de het een").unwrap().is_empty());
    }

    #[test]
    fn stored_words_are_unique_plain_and_space_ended() {
        let stored = index_words(
            "Fiets, fietsen & FIETS! Audi A4 2019 https://example.com/very-long-path",
            Language::Dutch,
        );
        assert_eq!(
            stored,
            "fiet fiets fietsen audi a4 2019 https exampl example com very long path "
        );
        let long = "a".repeat(41);
        assert_eq!(
            index_words(&format!("kast {long}"), Language::Dutch),
            "kast "
        );
        for word in stored.split_ascii_whitespace() {
            assert!(is_index_word(word), "{word}");
        }
    }

    #[test]
    fn query_words_cannot_be_tags() {
        // Tags hold an underscore (`c_101`); the splitter never keeps one.
        let words = QueryWords::parse("query", "c_101 s_7 l_nlnl").unwrap();
        for group in &words.groups {
            for word in group {
                assert!(is_index_word(word), "{word}");
            }
        }
    }

    #[test]
    fn a_query_word_has_its_dutch_and_french_stems() {
        let words = QueryWords::parse("query", "voitures").unwrap();
        assert_eq!(words.groups.len(), 1);
        assert!(words.groups[0].contains(&stem("voitures", Language::French)));
        assert!(words.groups[0].contains(&stem("voitures", Language::Dutch)));
        assert!(words.groups[0].contains(&"voitures".to_owned()));
    }

    #[test]
    fn long_queries_are_refused() {
        let error = QueryWords::parse("query", &"x".repeat(101)).unwrap_err();
        assert_eq!(
            (error.fields[0].as_str(), error.code),
            ("query", "too-long")
        );
        let nine = "een twee drie vier vijf zes zeven acht negen fietsen";
        assert_eq!(
            QueryWords::parse("query", nine).unwrap_err().code,
            "too-long"
        );
        assert!(QueryWords::parse("query", "twee drie vier vijf zes zeven acht negen").is_ok());
    }
}
