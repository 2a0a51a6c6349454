//! The id of an advertisement.

use std::fmt;

/// `m` followed by digits: the id of an advertisement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemId(i64);

impl ItemId {
    /// `m` and the number as Souk writes it: no sign, no leading zero (`m012` would be a
    /// second name for `m12`).
    pub fn parse(text: &str) -> Option<ItemId> {
        let digits = text.strip_prefix('m')?;
        if digits.is_empty()
            || digits.len() > 18
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok().filter(|n| *n > 0).map(ItemId)
    }

    pub fn from_number(number: i64) -> ItemId {
        ItemId(number)
    }

    pub fn number(self) -> i64 {
        self.0
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_ids() {
        assert_eq!(ItemId::parse("m123").unwrap().number(), 123);
        assert_eq!(ItemId::from_number(7).to_string(), "m7");
        for bad in [
            "123",
            "m",
            "mx1",
            "m-1",
            "m0",
            "M12",
            "m1234567890123456789",
            "m012",
            "m00",
        ] {
            assert!(ItemId::parse(bad).is_none(), "{bad}");
        }
    }
}
