//! The text of seeded ads, like a real marketplace's: titles and descriptions in the ad's
//! language (Dutch for `nl-NL` and `nl-BE`, French for `fr-BE`), naming brands and models
//! of the ad's category, each drawn with a Zipf-like frequency from thousands of them. So a
//! query for a rare model finds a handful of a million ads and a common adjective many, as
//! on a real site, rather than every word matching a fixed share of the data.
//!
//! Brands and models are made-up words, generated per category from its id (the same on
//! every run and machine): 12 brands a category and 6 models a brand, about 1,800 brands
//! and 11,000 models over the default taxonomy.

use crate::domain::category::Category;
use crate::domain::locale::{Language, Locale};

use super::Generator;

const BRANDS_PER_CATEGORY: usize = 12;
const MODELS_PER_BRAND: usize = 6;

const SYLLABLES: &[&str] = &[
    "ka", "lo", "ve", "rin", "dor", "mex", "tal", "sun", "bri", "gol", "nor", "vi", "zen", "pa",
    "tro", "mi", "lex", "or", "san", "du", "kor", "bel", "fa", "ri", "ton", "ma", "sel", "quo",
    "tu", "ner", "va", "lis",
];

/// One language's words: adjectives before the noun, extras after it, and sentences.
struct Words {
    adjectives: &'static [&'static str],
    extras: &'static [&'static str],
    sentences: &'static [&'static str],
}

const DUTCH: Words = Words {
    adjectives: &[
        "Mooie",
        "Nette",
        "Prachtige",
        "Stevige",
        "Complete",
        "Zeldzame",
        "Klassieke",
        "Moderne",
        "Vintage",
        "Degelijke",
        "Luxe",
        "Compacte",
        "Ruime",
        "Lichte",
        "Zware",
        "Originele",
        "Handige",
        "Sportieve",
        "Elegante",
        "Robuuste",
        "Zuinige",
        "Snelle",
        "Stille",
        "Krachtige",
        "Gloednieuwe",
        "Gebruikte",
        "Gerestaureerde",
        "Unieke",
    ],
    extras: &[
        "in topstaat",
        "met garantie",
        "weinig gebruikt",
        "inclusief toebehoren",
        "direct leverbaar",
        "met bon",
        "ophalen in de buurt",
        "nieuw in doos",
        "rookvrij huis",
        "onderhouden",
        "met handleiding",
        "zonder krassen",
        "als nieuw",
        "met extra's",
        "inclusief verzending",
        "met onderdelen",
        "in originele verpakking",
    ],
    sentences: &[
        "Wegens verhuizing te koop.",
        "Altijd binnen gestaan en goed onderhouden.",
        "Kleine gebruikssporen, verder in prima staat.",
        "Bieden vanaf de vraagprijs, redelijke biedingen worden bekeken.",
        "Kan eventueel verzonden worden tegen meerprijs.",
        "Bij vragen bel of app gerust.",
        "Foto's zijn van het echte product.",
        "Ophalen in overleg, ook in het weekend mogelijk.",
        "Zie foto's voor de staat van het artikel.",
        "Eerst komen, eerst maalt.",
        "Nooit gevallen of beschadigd geweest.",
        "De doos en de papieren zijn er nog.",
        "Verkoop omdat ik een nieuwe heb gekocht.",
        "Werkt perfect, net nagekeken.",
        "Ruilen tegen iets anders is bespreekbaar.",
        "Geen garantie, wel eerlijk beschreven.",
        "Prijs is inclusief alle accessoires.",
        "Afhalen en contant betalen heeft de voorkeur.",
    ],
};

const FRENCH: Words = Words {
    adjectives: &[
        "Beau",
        "Superbe",
        "Solide",
        "Complet",
        "Rare",
        "Classique",
        "Moderne",
        "Vintage",
        "Robuste",
        "Luxueux",
        "Compact",
        "Spacieux",
        "Léger",
        "Original",
        "Pratique",
        "Sportif",
        "Élégant",
        "Économique",
        "Rapide",
        "Silencieux",
        "Puissant",
        "Neuf",
        "Restauré",
        "Unique",
    ],
    extras: &[
        "en parfait état",
        "avec garantie",
        "peu utilisé",
        "avec accessoires",
        "disponible de suite",
        "avec facture",
        "à retirer sur place",
        "neuf en boîte",
        "non fumeur",
        "bien entretenu",
        "avec notice",
        "sans rayures",
        "comme neuf",
        "avec options",
        "livraison comprise",
        "dans son emballage d'origine",
    ],
    sentences: &[
        "À vendre pour cause de déménagement.",
        "Toujours gardé à l'intérieur et bien entretenu.",
        "Petites traces d'usage, sinon en très bon état.",
        "Offres à partir du prix demandé, les offres raisonnables seront étudiées.",
        "Envoi possible moyennant supplément.",
        "Pour toute question, appelez ou envoyez un message.",
        "Les photos sont celles du produit réel.",
        "Enlèvement à convenir, le week-end aussi.",
        "Voir les photos pour l'état de l'article.",
        "Premier arrivé, premier servi.",
        "Jamais tombé ni abîmé.",
        "La boîte et les papiers sont toujours là.",
        "Je vends car j'en ai acheté un nouveau.",
        "Fonctionne parfaitement, vérifié récemment.",
        "Échange contre autre chose envisageable.",
        "Sans garantie, mais décrit honnêtement.",
        "Le prix comprend tous les accessoires.",
        "Enlèvement et paiement en liquide de préférence.",
    ],
};

/// A made-up word of `syllables` syllables.
fn word(generator: &mut Generator, syllables: u64) -> String {
    (0..syllables).map(|_| *generator.pick(SYLLABLES)).collect()
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A brand of a category and its models.
struct Brand {
    name: String,
    models: Vec<String>,
}

/// The brands of every seeded category, made once.
pub struct Vocabulary {
    brands: std::collections::HashMap<i64, Vec<Brand>>,
}

impl Vocabulary {
    pub fn new(leaves: &[Category]) -> Vocabulary {
        let brands = leaves
            .iter()
            .map(|leaf| {
                let mut generator = Generator(0xB2A4_D000 ^ leaf.id as u64);
                let brands = (0..BRANDS_PER_CATEGORY)
                    .map(|_| {
                        let syllables = 2 + generator.below(2);
                        let name = capitalised(&word(&mut generator, syllables));
                        let models = (0..MODELS_PER_BRAND)
                            .map(|_| match generator.below(3) {
                                0 => format!("{}", (generator.below(90) + 1) * 10),
                                1 => capitalised(&word(&mut generator, 2)),
                                _ => format!(
                                    "{} {}",
                                    capitalised(&word(&mut generator, 2)),
                                    generator.below(900) + 100
                                ),
                            })
                            .collect();
                        Brand { name, models }
                    })
                    .collect();
                (leaf.id, brands)
            })
            .collect();
        Vocabulary { brands }
    }

    /// A title and a description for an ad in `leaf` and `locale`.
    pub fn ad_text(
        &self,
        generator: &mut Generator,
        leaf: &Category,
        locale: Locale,
    ) -> (String, String) {
        let (words, noun) = match locale.language() {
            Language::Dutch => (&DUTCH, leaf.labels.nl_nl.to_lowercase()),
            Language::French => (&FRENCH, leaf.labels.fr_be.to_lowercase()),
        };
        let brand = self
            .brands
            .get(&leaf.id)
            .map(|brands| &brands[zipf(generator, brands.len())]);
        let named = brand
            .map(|brand| {
                let model = &brand.models[zipf(generator, brand.models.len())];
                format!(" {} {model}", brand.name)
            })
            .unwrap_or_default();
        let title: String = format!(
            "{} {noun}{named} {}",
            words.adjectives[zipf(generator, words.adjectives.len())],
            words.extras[zipf(generator, words.extras.len())]
        )
        .chars()
        .take(60)
        .collect();
        let sentences = 2 + generator.below(3);
        let description = (0..sentences)
            .map(|_| words.sentences[zipf(generator, words.sentences.len())])
            .collect::<Vec<_>>()
            .join(" ");
        (title.trim_end().to_owned(), description)
    }
}

/// An index below `n`, the first ones far more often (density about 1/(i+1), as word
/// frequencies in text follow): `(n+1)^u - 1` for a uniform `u`.
fn zipf(generator: &mut Generator, n: usize) -> usize {
    let u = generator.between(0.0, 1.0);
    let index = ((n as f64 + 1.0).powf(u) - 1.0) as usize;
    index.min(n.saturating_sub(1))
}

/// The locale of a seeded ad: most Dutch, some Flemish, some French.
pub fn locale(generator: &mut Generator) -> Locale {
    locale_of(generator.below(20))
}

/// The locale of seeded user or ad `n`: 14 in 20 `nl-NL`, 3 `nl-BE`, 3 `fr-BE`.
pub fn locale_of(n: u64) -> Locale {
    match n % 20 {
        0..=13 => Locale::NlNl,
        14..=16 => Locale::NlBe,
        _ => Locale::FrBe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_favours_the_first_and_reaches_the_last() {
        let mut generator = Generator(7);
        let mut counts = [0u32; 100];
        for _ in 0..100_000 {
            counts[zipf(&mut generator, 100)] += 1;
        }
        assert!(counts[0] > 10 * counts[50], "{counts:?}");
        assert!(counts[0] > counts[1] && counts[1] > counts[9]);
        assert!(counts[99] > 0);
    }
}
