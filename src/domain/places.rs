//! Which city a postcode belongs to, from the sample in `data/cities.csv` (compiled in).

use std::sync::LazyLock;

struct Range {
    belgian: bool,
    from: u32,
    to: u32,
    city: &'static str,
}

static RANGES: LazyLock<Vec<Range>> = LazyLock::new(|| {
    include_str!("../../data/cities.csv")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let fields: Vec<&'static str> = line.split(',').collect();
            Some(Range {
                belgian: *fields.first()? == "BE",
                from: fields.get(1)?.parse().ok()?,
                to: fields.get(2)?.parse().ok()?,
                city: fields.get(3)?,
            })
        })
        .collect()
});

/// The city of a normalized postcode (`1097DN` or `9000`), where the sample knows it.
pub fn city_of(postcode: &str) -> Option<&'static str> {
    let belgian = postcode.len() == 4;
    let number: u32 = postcode.get(..4)?.parse().ok()?;
    RANGES
        .iter()
        .find(|r| r.belgian == belgian && (r.from..=r.to).contains(&number))
        .map(|r| r.city)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_postcodes() {
        assert_eq!(city_of("1097DN"), Some("Amsterdam"));
        assert_eq!(city_of("3012AB"), Some("Rotterdam"));
        assert_eq!(city_of("9000"), Some("Gent"));
        assert_eq!(
            city_of("9711AA"),
            Some("Groningen"),
            "Dutch 97xx is not Belgian 9000"
        );
        assert_eq!(city_of("1234"), None);
        assert!(RANGES.len() >= 40, "the sample parsed");
    }
}
