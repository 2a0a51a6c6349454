//! Records: a type read from the columns of a row, declared once with its columns.
//!
//! The SELECT list and the code that reads a row come from one declaration, so they cannot
//! drift apart: [`record!`] writes both from a list of fields and the columns they are read
//! from, in order. Columns are read by position (the row's next column each), and each
//! value is moved into its field.

use super::{DbError, Row};

/// A type read from a row's columns, in the order of its SELECT list.
pub trait Record: Sized {
    /// The SELECT list, comma-separated, in the order [`Record::read`] takes the columns.
    const COLUMNS: &'static str;
    /// How many columns that is.
    const WIDTH: usize;

    /// Reads the record from the row's next columns.
    fn read(row: &mut Row) -> Result<Self, DbError>;
}

/// Declares a record: a struct whose fields are each read from a column, and its
/// [`Record`] impl. A field is read from the column of its name (in the table named after
/// `in`, if given), or from the column given after `=`. Fields after `..` are not columns;
/// they start as their default and the query fills them (an ad's images).
///
/// ```text
/// record! {
///     /// A user.
///     pub struct User {
///         pub id: i64 = "user_id",
///         pub name: String,
///     }
/// }
/// ```
macro_rules! record {
    // A struct declared in a layer that may not reach the store (`oauth`): its fields are
    // named again here, in the order of their columns; the compiler holds the two lists to
    // the same fields, as the struct literal must name each once.
    (impl for $name:ty { $first:ident $(= $first_column:literal)? $(, $field:ident $(= $column:literal)?)* $(,)? }) => {
        impl $crate::store::Record for $name {
            const COLUMNS: &'static str = concat!(
                $crate::store::record::column!([], $first $(, $first_column)?)
                $(, ", ", $crate::store::record::column!([], $field $(, $column)?))*
            );
            const WIDTH: usize = [stringify!($first) $(, stringify!($field))*].len();

            fn read(row: &mut $crate::store::Row) -> Result<Self, $crate::store::DbError> {
                Ok(Self {
                    $first: row.take()?,
                    $( $field: row.take()?, )*
                })
            }
        }
    };
    ($(#[$meta:meta])* pub struct $name:ident in $table:literal { $($fields:tt)* }) => {
        $crate::store::record::record!(@record [$table] $(#[$meta])* $name { $($fields)* });
    };
    ($(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $crate::store::record::record!(@record [] $(#[$meta])* $name { $($fields)* });
    };
    (
        @record $table:tt
        $(#[$meta:meta])* $name:ident {
            $(#[$first_meta:meta])* pub $first:ident : $first_ty:ty $(= $first_column:literal)?,
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty $(= $column:literal)?, )*
            $( .. $(#[$extra_meta:meta])* pub $extra:ident : $extra_ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $(#[$first_meta])* pub $first: $first_ty,
            $( $(#[$field_meta])* pub $field: $ty, )*
            $( $(#[$extra_meta])* pub $extra: $extra_ty, )*
        }

        impl $crate::store::Record for $name {
            const COLUMNS: &'static str = concat!(
                $crate::store::record::column!($table, $first $(, $first_column)?)
                $(, ", ", $crate::store::record::column!($table, $field $(, $column)?))*
            );
            const WIDTH: usize = [stringify!($first) $(, stringify!($field))*].len();

            fn read(row: &mut $crate::store::Row) -> Result<Self, $crate::store::DbError> {
                Ok($name {
                    $first: row.take()?,
                    $( $field: row.take()?, )*
                    $( $extra: Default::default(), )*
                })
            }
        }
    };
}
pub(crate) use record;

/// The column a field is read from: the one named, or the field's own (in the table, if
/// the record names one).
macro_rules! column {
    ([$($table:literal)?], $field:ident) => {
        concat!($($table, ".",)? stringify!($field))
    };
    ($table:tt, $field:ident, $column:literal) => {
        $column
    };
}
pub(crate) use column;

#[cfg(test)]
mod tests {
    use super::Record;
    use crate::domain::category::Category;
    use crate::oauth::{AccessToken, AuthorizationCode, BrowserSession, Client, RefreshToken};
    use crate::store::ads::AdRecord;
    use crate::store::images::ImageRecord;
    use crate::store::oauth::EmailConfirmation;
    use crate::store::transactions::{Statistics, Transaction};
    use crate::store::users::User;

    /// A record reads as many columns as it selects (the hand-written ones included).
    #[test]
    fn records_read_the_columns_they_select() {
        macro_rules! same_width {
            ($($record:ty),+) => {$(
                let columns = <$record>::COLUMNS.split(", ").count();
                assert_eq!(<$record>::WIDTH, columns, stringify!($record));
            )+};
        }
        same_width!(
            AdRecord,
            ImageRecord,
            User,
            Transaction,
            Statistics,
            Category,
            Client,
            AuthorizationCode,
            AccessToken,
            RefreshToken,
            BrowserSession,
            EmailConfirmation
        );
        assert_eq!(
            AdRecord::COLUMNS.split(", ").take(4).collect::<Vec<_>>(),
            ["a.item_number", "a.seller_id", "u.name", "u.phone_number"]
        );
        assert_eq!(User::COLUMNS.split(", ").next(), Some("user_id"));
    }
}
