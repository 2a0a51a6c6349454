//! The full-text part of a query: an FTS5 `MATCH` on SQLite, a `tsquery` on PostgreSQL, and
//! the same test over a row's own terms.

use super::{Query, Tier, is_index_word};
use crate::store::{Backend, Value};

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

    /// The tier's condition held against the row's own words (`d.title_words`,
    /// `d.body_words`, `d.tags`: terms separated by spaces, as FTS5 splits them), each term
    /// bound: for a few known ads (the featured part), far cheaper on SQLite than asking
    /// FTS5 about each, which walks the doclists of the expression's every term again.
    /// None when there is nothing to match.
    pub(super) fn row_condition(&self, tier: Tier, values: &mut Vec<Value>) -> Option<String> {
        let q = self.query;
        if q.words.is_empty() && q.tags.is_empty() {
            return None;
        }
        let title = self.row_groups(&q.words, &["d.title_words"], values);
        let tags = self.row_groups(&q.tags, &["d.tags"], values);
        let in_title = [title, tags.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
        Some(match tier {
            Tier::Title => in_title.join(" AND "),
            Tier::Anywhere | Tier::DescriptionOnly => {
                let anywhere =
                    self.row_groups(&q.words, &["d.title_words", "d.body_words"], values);
                let all = [anywhere, tags].into_iter().flatten().collect::<Vec<_>>();
                if tier == Tier::Anywhere {
                    all.join(" AND ")
                } else {
                    format!(
                        "({}) AND NOT ({})",
                        all.join(" AND "),
                        in_title.join(" AND ")
                    )
                }
            }
        })
    }

    /// Each group: one of its terms in one of `columns`; None without groups.
    fn row_groups(
        &self,
        groups: &[Vec<String>],
        columns: &[&str],
        values: &mut Vec<Value>,
    ) -> Option<String> {
        if groups.is_empty() {
            return None;
        }
        let mut parts = Vec::with_capacity(groups.len());
        for group in groups {
            let mut found = Vec::new();
            for term in group {
                values.push(Value::Text(format!(" {term} ")));
                let n = values.len();
                for column in columns {
                    found.push(format!("instr(' ' || {column} || ' ', ${n}) > 0"));
                }
            }
            parts.push(format!("({})", found.join(" OR ")));
        }
        Some(format!("({})", parts.join(" AND ")))
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
