//! Scopes: what a token may do.

use std::collections::BTreeSet;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The user's private data.
    Read,
    /// Ads, images, bids, saved searches.
    Write,
    /// Buying features and renewals.
    Purchase,
    /// Client scope: create user accounts.
    CreateAccount,
    /// Client scope: report phone calls about ads.
    ConfirmUpcall,
    /// Client scope: manage the client's webhooks.
    Webhooks,
}

impl Scope {
    pub const ALL: [Scope; 6] = [
        Scope::Read,
        Scope::Write,
        Scope::Purchase,
        Scope::CreateAccount,
        Scope::ConfirmUpcall,
        Scope::Webhooks,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Purchase => "purchase",
            Scope::CreateAccount => "create_account",
            Scope::ConfirmUpcall => "confirm_upcall",
            Scope::Webhooks => "webhooks",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Scopes a user grants to a client (authorization code and refresh tokens).
    pub fn is_user_scope(self) -> bool {
        matches!(self, Scope::Read | Scope::Write | Scope::Purchase)
    }

    /// A sentence for the consent page.
    pub fn describe(self, dutch: bool) -> &'static str {
        match (self, dutch) {
            (Scope::Read, true) => "je gegevens en advertenties bekijken",
            (Scope::Read, false) => "consulter vos données et vos annonces",
            (Scope::Write, true) => {
                "advertenties plaatsen en wijzigen, bieden en zoekopdrachten bewaren"
            }
            (Scope::Write, false) => {
                "publier et modifier des annonces, faire des offres et enregistrer des recherches"
            }
            (Scope::Purchase, true) => "betaalde opties en verlengingen kopen",
            (Scope::Purchase, false) => "acheter des options payantes et des renouvellements",
            (Scope::CreateAccount, true) => "accounts aanmaken",
            (Scope::CreateAccount, false) => "créer des comptes",
            (Scope::ConfirmUpcall, true) => "telefoongesprekken over advertenties melden",
            (Scope::ConfirmUpcall, false) => "signaler des appels au sujet d'annonces",
            (Scope::Webhooks, true) => "webhooks beheren",
            (Scope::Webhooks, false) => "gérer des webhooks",
        }
    }
}

/// A set of scopes, written space-separated in a fixed order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scopes(BTreeSet<Scope>);

impl Scopes {
    /// Parses a scope string (space separated; commas accepted too). `Err` names the first
    /// unknown scope.
    pub fn parse(text: &str) -> Result<Scopes, String> {
        let mut set = BTreeSet::new();
        for word in text.split([' ', ',']).filter(|w| !w.is_empty()) {
            set.insert(Scope::parse(word).ok_or_else(|| word.to_owned())?);
        }
        Ok(Scopes(set))
    }

    /// Parses a scope string that Souk wrote itself.
    pub fn from_stored(text: &str) -> Scopes {
        Scopes::parse(text).unwrap_or_default()
    }

    pub fn contains(&self, scope: Scope) -> bool {
        self.0.contains(&scope)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn is_subset(&self, other: &Scopes) -> bool {
        self.0.is_subset(&other.0)
    }

    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        self.0.iter().copied()
    }

    /// The scopes of this set that `keep` accepts.
    pub fn filter(&self, keep: impl Fn(Scope) -> bool) -> Scopes {
        Scopes(self.0.iter().copied().filter(|s| keep(*s)).collect())
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<&str> = self.0.iter().map(|s| s.as_str()).collect();
        f.write_str(&words.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_spaces_and_commas() {
        let scopes = Scopes::parse("write,read  purchase").unwrap();
        assert_eq!(scopes.to_string(), "read write purchase");
        assert_eq!(Scopes::parse("read admin").unwrap_err(), "admin");
        assert!(Scopes::parse("").unwrap().is_empty());
    }
}
