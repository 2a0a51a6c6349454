//! The areas within a radius as SQLite's count of words within it sees them: how many ads
//! they hold, and the terms of the index that name them (migrations 0031 and 0039).

use std::collections::{BTreeSet, HashSet};

use super::filter::{areas_within, bind_point};
use crate::domain::places::Point;
use crate::store::{Conn, DbError, Value};

/// A radius whose areas come to at most this many terms is counted by FTS5 alone; with
/// more, FTS5's union of their lists costs more than walking one side of the count.
const AREA_TERMS_AT_MOST: usize = 150;

/// The areas within a radius (keys of `locations`: `NL3081`, `BE9000`, six characters), and
/// the areas holding ads in the regions (country and two digits) that these touch, each
/// with how many it holds: what a count of words within the radius chooses its way from
/// (SQLite). An ad's key may be shorter than six characters, from a postcode an earlier
/// release took.
pub(super) struct RadiusAreas {
    within: HashSet<String>,
    held: Vec<(String, i64)>,
}

impl RadiusAreas {
    pub(super) async fn find(
        conn: &mut dyn Conn,
        point: Point,
        metres: i64,
    ) -> Result<Self, DbError> {
        let mut values = Vec::new();
        let point = bind_point(point, &mut values);
        let within = areas_within(point, metres, &mut values);
        let within: HashSet<String> = conn.column(&within, &values).await?.into_iter().collect();
        let regions: BTreeSet<&str> = within.iter().map(|area| &area[..4]).collect();
        let regions: Vec<Value> = regions.into_iter().map(Value::from).collect();
        let held = if regions.is_empty() {
            Vec::new()
        } else {
            conn.query(
                &format!(
                    "SELECT area, n FROM search_area_counts \
                     WHERE n > 0 AND substr(area, 1, 4) IN ({})",
                    crate::store::numbered(1, regions.len())
                ),
                &regions,
            )
            .await?
            .into_iter()
            .map(|row| Ok((row.get("area")?, row.get("n")?)))
            .collect::<Result<_, DbError>>()?
        };
        Ok(RadiusAreas { within, held })
    }

    /// How many ads the radius holds (those past their close date and not yet swept
    /// included).
    pub(super) fn ads(&self) -> i64 {
        self.held
            .iter()
            .filter(|(area, _)| self.within.contains(area))
            .map(|(_, n)| n)
            .sum()
    }

    /// The FTS5 terms of the ads within: `z_nl3081` for an area (migration 0031), and for
    /// a group of areas its district, `x_nl308` (ten areas), or its region, `y_nl30` (a
    /// hundred; migration 0039), when every area under it that holds ads is within the
    /// radius (an ad whose postcode has no known place is never within, so its area must
    /// not fall in the group). Areas without ads need no term. None when they come to more
    /// than [`AREA_TERMS_AT_MOST`].
    ///
    /// A group's one list costs far less than a union of its areas' lists: at a million
    /// ads, a common word within 50 km (1,144 areas, 119 terms) counted in 51 ms against
    /// 272 ms with a term per area, within 25 km of Mechelen (131 areas, 46 terms) 16 ms
    /// against 24, within 5 km of a city centre (65 areas, one term) 11 ms against 21
    /// (measured with the groups as prefixes, `z_nl30*`, which FTS5 merged for every query
    /// and which cost about twice the lists of migration 0039).
    pub(super) fn terms(&self) -> Option<Vec<String>> {
        let held_within: BTreeSet<&str> = self
            .held
            .iter()
            .map(|(area, _)| area.as_str())
            .filter(|area| self.within.contains(*area))
            .collect();
        // A group is whole when every area holding ads in it is within; an ad's key
        // shorter than the group's (an earlier release's) is in no group longer than itself.
        let whole = |length: usize| -> BTreeSet<&str> {
            let mut groups: BTreeSet<&str> = held_within.iter().map(|a| &a[..length]).collect();
            for (area, _) in &self.held {
                if let (false, Some(group)) = (self.within.contains(area), area.get(..length)) {
                    groups.remove(group);
                }
            }
            groups
        };
        let (regions, districts) = (whole(4), whole(5));
        // In key order, the areas of one group come one after the other: one term each.
        let mut terms: Vec<String> = Vec::new();
        for area in held_within {
            let term = if regions.contains(&area[..4]) {
                format!("y_{}", &area[..4])
            } else if districts.contains(&area[..5]) {
                format!("x_{}", &area[..5])
            } else {
                format!("z_{area}")
            }
            .to_ascii_lowercase();
            if terms.last() != Some(&term) {
                terms.push(term);
            }
            if terms.len() > AREA_TERMS_AT_MOST {
                return None;
            }
        }
        Some(terms)
    }
}

#[cfg(test)]
mod tests {
    use super::RadiusAreas;

    fn areas(within: &[&str], held: &[(&str, i64)]) -> RadiusAreas {
        RadiusAreas {
            within: within.iter().map(|a| (*a).to_owned()).collect(),
            held: held.iter().map(|(a, n)| ((*a).to_owned(), *n)).collect(),
        }
    }

    #[test]
    fn whole_groups_of_areas_become_one_term() {
        let all = areas(
            &["NL1000", "NL1001", "NL1002", "NL1150"],
            &[("NL1000", 2), ("NL1001", 1), ("NL1002", 1), ("NL1150", 3)],
        );
        assert_eq!(all.terms().unwrap(), ["y_nl10", "y_nl11"]);
        assert_eq!(all.ads(), 7);
    }

    #[test]
    fn an_area_with_ads_outside_keeps_its_group_apart() {
        // 1010 holds ads and is outside: the region 10 is not whole, its district 100 is.
        let split = areas(
            &["NL1000", "NL1001", "NL1011"],
            &[("NL1000", 2), ("NL1001", 1), ("NL1010", 5), ("NL1011", 1)],
        );
        assert_eq!(split.terms().unwrap(), ["x_nl100", "z_nl1011"]);
        assert_eq!(split.ads(), 4, "not the 5 ads outside");
        // A short key (a postcode an earlier release took) outside: `BE10` falls under
        // the region `BE10` but under no district.
        let short = areas(
            &["BE1000", "BE1001"],
            &[("BE1000", 1), ("BE1001", 1), ("BE10", 1)],
        );
        assert_eq!(short.terms().unwrap(), ["x_be100"]);
    }

    #[test]
    fn areas_without_ads_need_no_term_and_too_many_terms_give_none() {
        let empty = areas(&["NL1000", "NL1001"], &[]);
        assert_eq!(empty.terms().unwrap(), Vec::<String>::new());
        assert_eq!(empty.ads(), 0);
        // Every other area of many regions within, the others holding ads outside.
        let mut within = Vec::new();
        let mut held = Vec::new();
        for n in 0..400 {
            let area = format!("NL{}", 1000 + n * 2);
            held.push((area.clone(), 1));
            held.push((format!("NL{}", 1001 + n * 2), 1));
            within.push(area);
        }
        let within: Vec<&str> = within.iter().map(String::as_str).collect();
        let held: Vec<(&str, i64)> = held.iter().map(|(a, n)| (a.as_str(), *n)).collect();
        assert_eq!(areas(&within, &held).terms(), None);
    }
}
