//! Types and rules of the marketplace, free of HTTP and SQL so they are unit-tested alone.

pub mod advertisement;
pub mod bid;
pub mod category;
pub mod feature;
pub mod field_error;
pub mod hook;
pub mod image;
pub mod locale;
pub mod order;
pub mod places;
pub mod review;
pub mod sale;
pub mod search;
pub mod taxonomy;
pub mod text;
pub mod time;
pub mod user;

/// Declares an enum whose values have a fixed text (stored, sent and parsed as that text):
/// the enum, `ALL`, `as_str` and `parse`, from one list.
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                $name::ALL.into_iter().find(|value| value.as_str() == text)
            }
        }
    };
}
pub(crate) use text_enum;
