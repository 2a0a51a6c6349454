//! The full-text part of a query: an FTS5 `MATCH` on SQLite, a `tsquery` on PostgreSQL.

use super::{Query, Tier, is_index_word};
use crate::store::Backend;

/// The full-text part of a query in one backend's language.
pub(super) struct Match<'q> {
    pub(super) query: &'q Query,
    pub(super) backend: Backend,
}

impl Match<'_> {
    /// `(fiets AND (rood OR roug))` / `(fiets & (rood | roug))`.
    fn groups(&self, groups: &[Vec<String>]) -> String {
        let (and, or) = match self.backend {
            Backend::Sqlite => (" AND ", " OR "),
            Backend::Postgres => (" & ", " | "),
        };
        let parts: Vec<String> = groups
            .iter()
            .map(|group| {
                for term in group {
                    // Words are [a-z0-9]+ and tags [a-z0-9_]+: nothing to quote or escape.
                    assert!(
                        is_index_word(&term.replace('_', "")),
                        "not an index term: {term:?}"
                    );
                }
                format!("({})", group.join(or))
            })
            .collect();
        format!("({})", parts.join(and))
    }

    /// The expression for a tier: FTS5 text or a tsquery (with which vector it is held
    /// against, decided in [`Match::condition`]). None when there is nothing to match.
    fn expression(&self, tier: Tier) -> Option<String> {
        let q = self.query;
        if q.words.is_empty() && q.tags.is_empty() {
            return None;
        }
        let words = (!q.words.is_empty()).then(|| self.groups(&q.words));
        let tags = (!q.tags.is_empty()).then(|| self.groups(&q.tags));
        Some(match self.backend {
            Backend::Sqlite => {
                let columns = match tier {
                    Tier::Title => "{title_words}",
                    Tier::Anywhere | Tier::DescriptionOnly => "{title_words body_words}",
                };
                let parts: Vec<String> = [
                    words.map(|w| format!("{columns}: {w}")),
                    tags.map(|t| format!("{{tags}}: {t}")),
                ]
                .into_iter()
                .flatten()
                .collect();
                let all = parts.join(" AND ");
                if tier == Tier::DescriptionOnly {
                    let title = self.expression(Tier::Title)?;
                    format!("({all}) NOT ({title})")
                } else {
                    all
                }
            }
            Backend::Postgres => [words, tags]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" & "),
        })
    }

    /// The SQL condition on `d` (and `f` on SQLite) for a tier, binding the expression
    /// as parameter `$n`; None when there is nothing to match.
    pub(super) fn condition(&self, tier: Tier, n: usize) -> Option<(String, String)> {
        let expression = self.expression(tier)?;
        let sql = match self.backend {
            Backend::Sqlite => format!("search_fts MATCH ${n}"),
            Backend::Postgres => match tier {
                _ if self.query.words.is_empty() => format!("d.title_terms @@ ${n}::text::tsquery"),
                Tier::Title => format!("d.title_terms @@ ${n}::text::tsquery"),
                Tier::Anywhere => format!("d.all_terms @@ ${n}::text::tsquery"),
                Tier::DescriptionOnly => {
                    format!(
                        "d.all_terms @@ ${n}::text::tsquery AND NOT d.title_terms @@ ${n}::text::tsquery"
                    )
                }
            },
        };
        Some((sql, expression))
    }
}
