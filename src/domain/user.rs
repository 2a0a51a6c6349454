//! Rules for user accounts.

use std::fmt;

use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::text::{is_one_line, trimmed};
use crate::domain::text_enum;

pub const NAME_MAX: usize = 30;
pub const POSTCODE_MAX: usize = 6;
pub const PASSWORD_MIN: usize = 8;
pub const PASSWORD_MAX: usize = 200;

text_enum! {
    /// An account is unconfirmed until its owner follows the link mailed to them.
    pub enum UserStatus {
        Unconfirmed = "unconfirmed",
        Confirmed = "confirmed",
    }
}

text_enum! {
    /// The dealer package of a user (the original's names).
    pub enum DealerPackage {
        None = "NONE",
        Basic = "BASIC",
        Plus = "PLUS",
        Premium = "PREMIUM",
    }
}

/// An e-mail address as Souk keeps and compares it: trimmed and in lower case, made only
/// by [`Email::parse`], so that no address is stored, looked up or compared any other way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    /// A plausible address, normalized: one `@`, something before, a dotted domain after,
    /// no spaces or control characters, at most 254 characters, and an address the mailer
    /// can write (`jan,piet@...` is not: its mail could never be sent, and
    /// the account would stay unconfirmed for good). Whether it receives mail is what the
    /// confirmation link finds out.
    pub fn parse(text: &str) -> Option<Email> {
        let email = normalize_email(text);
        let (local, domain) = email.split_once('@')?;
        let plausible = email.len() <= 254
            && !local.is_empty()
            && !domain.contains('@')
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !email.chars().any(char::is_whitespace)
            && is_one_line(&email)
            && email.parse::<lettre::Address>().is_ok();
        plausible.then_some(Email(email))
    }

    /// An address someone typed to sign in, normalized and checked only as far as any
    /// stored address could be (one line, at most 254 characters), not against today's
    /// rule for new addresses: one stored under an earlier, looser rule still signs in.
    pub fn typed(text: &str) -> Option<Email> {
        let email = normalize_email(text);
        (email.contains('@') && email.len() <= 254 && is_one_line(&email)).then_some(Email(email))
    }

    /// An address read back from the database: [`Email::parse`] took it when it was
    /// written, perhaps under an earlier release's looser rule, and it must still load.
    pub fn stored(text: &str) -> Option<Email> {
        (!text.is_empty()).then(|| Email(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How addresses are compared: `Jan@Souk.test ` is `jan@souk.test`. [`Email::parse`]
/// applies it; so does anything that keys on what someone typed as an address (the
/// sign-in lockout counts failures per address typed, valid or not).
pub fn normalize_email(text: &str) -> String {
    text.trim().to_lowercase()
}

/// The refusal of an address that [`Email::parse`] does not take.
pub fn invalid_email(field: &str, given: &str) -> FieldError {
    FieldError::new(
        field,
        "input-invalid",
        Text::new(
            "is geen geldig e-mailadres",
            "n'est pas une adresse e-mail valide",
        ),
    )
    .with_value(given)
}

/// The refusal of an address another account has.
pub fn email_in_use(field: &str, email: &Email) -> FieldError {
    FieldError::new(
        field,
        "email-in-use",
        Text::new("is al in gebruik", "est déjà utilisée"),
    )
    .with_value(email.as_str())
}

/// A new account as a client or an operator sent it (the body of `POST /v1/users`).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewAccount {
    pub email: Option<String>,
    /// `None`: the owner chooses one when confirming the account.
    pub password: Option<String>,
    pub name: Option<String>,
    pub postcode: Option<String>,
    pub phone_number: Option<String>,
}

/// A new account, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub email: Email,
    /// The name given, or none at all (an empty name: the address would say more about its
    /// owner than they chose to, and names are public).
    pub name: String,
    pub postcode: Option<String>,
    pub phone_number: Option<String>,
}

/// The account, or every problem with it at once.
pub fn check_new_account(account: &NewAccount) -> Result<Account, Vec<FieldError>> {
    let mut errors = Vec::new();
    let email = match account.email.as_deref() {
        None => {
            errors.push(FieldError::missing("email"));
            None
        }
        Some(given) => Email::parse(given).or_else(|| {
            errors.push(invalid_email("email", given));
            None
        }),
    };
    if let Some(p) = account.password.as_deref()
        && (p.chars().count() < PASSWORD_MIN || p.len() > PASSWORD_MAX)
    {
        let message = if p.len() > PASSWORD_MAX {
            Text::new(
                format!("mag hoogstens {PASSWORD_MAX} bytes lang zijn"),
                format!("ne doit pas dépasser {PASSWORD_MAX} octets"),
            )
        } else {
            Text::new(
                format!("moet minstens {PASSWORD_MIN} tekens lang zijn"),
                format!("doit comporter au moins {PASSWORD_MIN} caractères"),
            )
        };
        errors.push(FieldError::new("password", "input-invalid", message))
    }
    let name = account.name.as_deref().map(trimmed);
    if let Some(name) = name
        && (name.is_empty() || name.chars().count() > NAME_MAX || !is_one_line(name))
    {
        errors.push(
            FieldError::new(
                "name",
                "input-invalid",
                Text::new(
                    format!("moet 1 tot {NAME_MAX} tekens lang zijn, op één regel"),
                    format!("doit comporter de 1 à {NAME_MAX} caractères, sur une ligne"),
                ),
            )
            .with_value(name),
        );
    }
    if let Some(postcode) = account.postcode.as_deref()
        && (postcode.chars().count() > POSTCODE_MAX
            || !postcode.chars().all(|c| c.is_ascii_alphanumeric()))
    {
        errors.push(
            FieldError::new(
                "postcode",
                "input-invalid",
                Text::new(
                    format!("hoogstens {POSTCODE_MAX} letters en cijfers"),
                    format!("au plus {POSTCODE_MAX} lettres et chiffres"),
                ),
            )
            .with_value(postcode),
        );
    }
    if let Some(phone) = account.phone_number.as_deref()
        && !plausible_phone(phone)
    {
        errors.push(
            FieldError::new(
                "phoneNumber",
                "input-invalid",
                Text::new("is geen telefoonnummer", "n'est pas un numéro de téléphone"),
            )
            .with_value(phone),
        );
    }
    match email {
        Some(email) if errors.is_empty() => Ok(Account {
            email,
            name: name.unwrap_or_default().to_owned(),
            postcode: account.postcode.clone(),
            phone_number: account.phone_number.clone(),
        }),
        _ => Err(errors),
    }
}

pub const BRANDS_MAX: usize = 50;
pub const BRAND_LENGTH_MAX: usize = 50;

/// Checks a user's list of brands: at most 50, each 1 to 50 characters, no brand twice
/// (ignoring case). Returns the trimmed list or every problem.
pub fn check_brands(brands: &[String]) -> Result<Vec<String>, Vec<FieldError>> {
    // A list too long is refused whole, not item by item.
    if brands.len() > BRANDS_MAX {
        return Err(vec![FieldError::new(
            "brands",
            "too-many",
            Text::new(
                format!("hoogstens {BRANDS_MAX} merken"),
                format!("au plus {BRANDS_MAX} marques"),
            ),
        )]);
    }
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut checked = Vec::new();
    for (i, brand) in brands.iter().enumerate() {
        let brand = trimmed(brand);
        let field = format!("brands[{i}]");
        if brand.is_empty() || brand.chars().count() > BRAND_LENGTH_MAX || !is_one_line(brand) {
            errors.push(
                FieldError::new(
                    field,
                    "input-invalid",
                    Text::new(
                        format!("een merk heeft 1 tot {BRAND_LENGTH_MAX} tekens, op één regel"),
                        format!(
                            "une marque comporte de 1 à {BRAND_LENGTH_MAX} caractères, sur une ligne"
                        ),
                    ),
                )
                .with_value(brand),
            );
        } else if !seen.insert(brand.to_lowercase()) {
            errors.push(
                FieldError::new(
                    field,
                    "duplicate",
                    Text::new(
                        "dit merk staat er al",
                        "cette marque figure déjà dans la liste",
                    ),
                )
                .with_value(brand),
            );
        } else {
            checked.push(brand.to_owned());
        }
    }
    if errors.is_empty() {
        Ok(checked)
    } else {
        Err(errors)
    }
}

/// A plausible phone number: digits, spaces, `+`, `-`, `.` and parentheses; 6 to 20 digits,
/// at most 32 characters. Not stricter: the original put no rule on them.
pub fn plausible_phone(phone: &str) -> bool {
    let digits = phone.chars().filter(char::is_ascii_digit).count();
    (6..=20).contains(&digits)
        && phone.len() <= 32
        && phone
            .chars()
            .all(|c| c.is_ascii_digit() || " +-().".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brands() {
        let ok = check_brands(&[" Ford ".into(), "Alfa Romeo".into()]).unwrap();
        assert_eq!(ok, ["Ford", "Alfa Romeo"]);
        let errors = check_brands(&["Ford".into(), "ford".into(), "".into()]).unwrap_err();
        let codes: Vec<&str> = errors.iter().map(|e| e.code).collect();
        assert_eq!(codes, ["duplicate", "input-invalid"]);
        assert_eq!(errors[0].fields, ["brands[1]"]);
        let blank = check_brands(&["\u{200B}".into()]).unwrap_err();
        assert_eq!(blank[0].code, "input-invalid", "a brand that shows nothing");
        let control = check_brands(&["Fo\u{0}rd".into(), "Alfa\nRomeo".into()]).unwrap_err();
        assert_eq!(control.len(), 2, "no NUL, no line break");
        let many: Vec<String> = (0..51).map(|i| format!("b{i}")).collect();
        assert_eq!(check_brands(&many).unwrap_err()[0].code, "too-many");
    }

    #[test]
    fn emails() {
        assert!(Email::parse("a@b.nl").is_some());
        assert!(Email::parse("jan.de.vries+souk@example.co.uk").is_some());
        assert_eq!(
            Email::parse(" Jan@Souk.TEST ").unwrap().as_str(),
            "jan@souk.test",
            "normalized once, on parse"
        );
        for bad in [
            "",
            "a",
            "a@b",
            "@b.nl",
            "a@@b.nl",
            "a b@c.nl",
            "a@.nl",
            "a@b.",
            "a\u{0}@b.nl",
            "jan,piet@b.nl",
            "jan;piet@b.nl",
            "<jan@b.nl>",
        ] {
            assert!(Email::parse(bad).is_none(), "{bad}");
        }
        assert!(Email::parse("josé@exemple.be").is_some(), "UTF-8 is fine");
        assert_eq!(
            Email::typed(" Oud,Adres@B.nl").unwrap().as_str(),
            "oud,adres@b.nl",
            "signs in under an earlier rule's address"
        );
        assert!(
            Email::typed("jan\u{0}@b.nl").is_none(),
            "no control character"
        );
        assert_eq!(
            Email::stored("oud,adres@b.nl").unwrap().as_str(),
            "oud,adres@b.nl",
            "what an earlier rule stored still loads"
        );
    }

    #[test]
    fn new_accounts_report_every_problem() {
        let errors = check_new_account(&NewAccount {
            email: Some("nope".into()),
            password: Some("short".into()),
            name: Some("x".repeat(31)),
            postcode: Some("1097 DN".into()),
            phone_number: Some("call me".into()),
        })
        .unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.fields[0].as_str()).collect();
        assert_eq!(
            fields,
            ["email", "password", "name", "postcode", "phoneNumber"]
        );
        let ok = check_new_account(&NewAccount {
            email: Some("a@b.nl".into()),
            password: Some("long enough".into()),
            name: Some("Jan".into()),
            postcode: Some("1097DN".into()),
            phone_number: Some("+31 (0)20-1234567".into()),
        });
        assert_eq!(ok.unwrap().email.as_str(), "a@b.nl");
        let message_of = |password: String| {
            let errors = check_new_account(&NewAccount {
                email: Some("a@b.nl".into()),
                password: Some(password),
                name: None,
                postcode: None,
                phone_number: None,
            })
            .unwrap_err();
            format!("{:?}", errors[0].message)
        };
        assert!(message_of("short".into()).contains("minstens 8"));
        assert!(message_of("é".repeat(101)).contains("hoogstens 200 bytes"));
        let nul = check_new_account(&NewAccount {
            email: Some("a@b.nl".into()),
            password: Some("short".into()),
            name: Some("Jan\u{0}".into()),
            postcode: None,
            phone_number: None,
        })
        .unwrap_err();
        assert_eq!(nul[1].fields, ["name"]);
    }

    /// A name is stored without what shows nothing at its ends, and one of nothing visible
    /// is no name.
    #[test]
    fn names_are_trimmed_of_the_invisible() {
        let account = |name: &str| {
            check_new_account(&NewAccount {
                email: Some("a@b.nl".into()),
                password: Some("long enough".into()),
                name: Some(name.into()),
                postcode: None,
                phone_number: None,
            })
        };
        assert_eq!(
            account(" \u{FEFF}Jan Smit\u{200B} ").unwrap().name,
            "Jan Smit"
        );
        for blank in ["\u{200B}\u{200B}", " \u{2060} ", "\u{3164}", "\u{00AD}"] {
            let errors = account(blank).unwrap_err();
            assert_eq!(errors[0].fields, ["name"], "{blank:?}");
        }
        // Within a name, a joiner stays (emoji and some scripts need them); so does what
        // ends an emoji at its end (a variation selector, a flag's tags).
        assert_eq!(account("Jan\u{200D}Smit").unwrap().name, "Jan\u{200D}Smit");
        assert_eq!(
            account("Jan \u{2764}\u{FE0F}").unwrap().name,
            "Jan \u{2764}\u{FE0F}"
        );
        let scotland = "Jan \u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
        assert_eq!(account(scotland).unwrap().name, scotland);
        // 30 visible characters with invisible ones around them fit.
        let long = format!("\u{200B}{}\u{200B}", "x".repeat(NAME_MAX));
        assert_eq!(account(&long).unwrap().name.chars().count(), NAME_MAX);
    }
}
