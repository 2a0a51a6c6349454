//! Images of advertisements: their names and the sizes they are served in.

/// The renditions an image is served in, smallest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Small,
    Medium,
    Large,
    Xlarge,
}

impl Size {
    pub const ALL: [Size; 4] = [Size::Small, Size::Medium, Size::Large, Size::Xlarge];

    pub fn as_str(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Medium => "medium",
            Size::Large => "large",
            Size::Xlarge => "xlarge",
        }
    }
}

/// A `mediaId`: a UUID (version 4 layout) made from 16 bytes, lowercase and hyphenated.
pub fn media_id(bytes: [u8; 16]) -> String {
    let mut bytes = bytes;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_ids_are_version_4_uuids() {
        let id = media_id([0xff; 16]);
        assert_eq!(id, "ffffffff-ffff-4fff-bfff-ffffffffffff");
        let id = media_id([0; 16]);
        assert_eq!(id, "00000000-0000-4000-8000-000000000000");
    }
}
