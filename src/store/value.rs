//! Backend-neutral values and rows: what a query binds and what it reads back.
//!
//! Every query in `store` is written once with `$1`-style placeholders and runs on both
//! backends; this module is the common currency between that query code and the two drivers.
//! (A row from PostgreSQL holds the driver's row and decodes each value as it is read.)

use std::sync::Arc;

use super::DbError;
use crate::domain::advertisement::AdStatus;
use crate::domain::category::CategoryStatus;
use crate::domain::feature::Feature;
use crate::domain::image::{Format, ImageStatus, Size};
use crate::domain::locale::Locale;
use crate::domain::order::{OrderStatus, ProductKind};
use crate::domain::sale::TransactionStatus;
use crate::domain::search::saved::Alert;
use crate::domain::user::{DealerPackage, Email, UserStatus};

/// A value bound to a query parameter or read from a column.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    #[default]
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
    Blob(Vec<u8>),
    /// A list of texts, bound as a PostgreSQL `text[]` (`x = ANY($3)`). SQLite has no
    /// arrays: binding one there is an error.
    TextList(Vec<String>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v.into())
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(v.into())
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// Builds the parameter slice of a query: `params![id, name]`.
#[macro_export]
macro_rules! params {
    () => { &[] as &[$crate::store::Value] };
    ($($p:expr),+ $(,)?) => { &[$($crate::store::Value::from($p)),+] };
}

/// Converts a column value into a Rust type, taking it (a text column's `String` moves into
/// the record instead of being copied again).
pub trait FromValue: Sized {
    /// The value as a `Self`, or the value back when it is not one (for the error).
    fn from_value(value: Value) -> Result<Self, Value>;
}

impl FromValue for i64 {
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Int(v) => Ok(v),
            other => Err(other),
        }
    }
}
impl FromValue for u32 {
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Int(v) => u32::try_from(v).map_err(|_| Value::Int(v)),
            other => Err(other),
        }
    }
}
impl FromValue for f64 {
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Real(v) => Ok(v),
            Value::Int(v) => Ok(v as f64),
            other => Err(other),
        }
    }
}
impl FromValue for bool {
    fn from_value(value: Value) -> Result<Self, Value> {
        // SQLite has no boolean type: it stores 0 and 1.
        match value {
            Value::Bool(v) => Ok(v),
            Value::Int(v) => Ok(v != 0),
            other => Err(other),
        }
    }
}
impl FromValue for String {
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Text(v) => Ok(v),
            other => Err(other),
        }
    }
}
impl FromValue for Vec<u8> {
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Blob(v) => Ok(v),
            other => Err(other),
        }
    }
}
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// Stored states and checked texts read back as their types: a text that does not parse is
/// a decode error, never a default.
macro_rules! from_text {
    ($($ty:ty => $parse:expr),+ $(,)?) => {$(
        impl FromValue for $ty {
            fn from_value(value: Value) -> Result<Self, Value> {
                match value {
                    Value::Text(text) => $parse(&text).ok_or(Value::Text(text)),
                    other => Err(other),
                }
            }
        }
    )+};
}
pub(super) use from_text;

from_text!(
    AdStatus => AdStatus::parse,
    Alert => Alert::parse,
    CategoryStatus => CategoryStatus::parse,
    DealerPackage => DealerPackage::parse,
    Email => Email::stored,
    Feature => Feature::parse,
    Format => Format::parse,
    ImageStatus => ImageStatus::parse,
    Locale => Locale::parse,
    OrderStatus => OrderStatus::parse,
    ProductKind => ProductKind::parse,
    Size => Size::parse,
    TransactionStatus => TransactionStatus::parse,
    UserStatus => UserStatus::parse,
);

/// One result row: the column names (shared by all rows of a result) and the values.
#[derive(Debug)]
pub struct Row {
    columns: Arc<[String]>,
    cells: Cells,
    /// The column [`Row::take`] takes: records read their columns in the order they were
    /// selected (see [`super::Record`]).
    next: usize,
}

/// A row's values: decoded already (SQLite's, read inside its blocking call), or as
/// PostgreSQL sent them, each decoded when it is read. Columns a reader passes over
/// ([`Row::skip`]) then cost nothing: an ad read with its images comes as a row per image,
/// each with the ad's twenty-odd columns, which only the first row's reader decodes.
enum Cells {
    Decoded(Vec<Value>),
    Postgres(tokio_postgres::Row),
}

/// The values, decoded (the driver's row would show only its columns' names and types).
impl std::fmt::Debug for Cells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cells::Decoded(values) => values.fmt(f),
            Cells::Postgres(row) => {
                let mut list = f.debug_list();
                for i in 0..row.len() {
                    match super::postgres::from_pg(row, i) {
                        Ok(value) => list.entry(&value),
                        Err(e) => list.entry(&format_args!("<{e}>")),
                    };
                }
                list.finish()
            }
        }
    }
}

impl Row {
    pub(crate) fn new(columns: Arc<[String]>, values: Vec<Value>) -> Self {
        Row {
            columns,
            cells: Cells::Decoded(values),
            next: 0,
        }
    }

    pub(super) fn from_postgres(columns: Arc<[String]>, row: tokio_postgres::Row) -> Self {
        Row {
            columns,
            cells: Cells::Postgres(row),
            next: 0,
        }
    }

    /// Reads the column `name` as a `T` (a copy: for counts, ids and other small values);
    /// a missing column or a wrong type is a decode error, which means the query and the
    /// code reading it disagree (a bug, not bad input).
    pub fn get<T: FromValue>(&self, name: &str) -> Result<T, DbError> {
        let index = self
            .columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| DbError::Decode(format!("no column `{name}` in the result")))?;
        let value = match &self.cells {
            Cells::Decoded(values) => values[index].clone(),
            Cells::Postgres(row) => super::postgres::from_pg(row, index)?,
        };
        T::from_value(value).map_err(|value| self.mismatch::<T>(index, value))
    }

    /// Takes the next column, in the order of the SELECT list, as a `T`.
    pub fn take<T: FromValue>(&mut self) -> Result<T, DbError> {
        let index = self.next;
        let missing = || DbError::Decode(format!("the result has no column {index}"));
        let value = match &mut self.cells {
            Cells::Decoded(values) => values
                .get_mut(index)
                .map(std::mem::take)
                .ok_or_else(missing)?,
            Cells::Postgres(row) if index < row.len() => super::postgres::from_pg(row, index)?,
            Cells::Postgres(_) => return Err(missing()),
        };
        self.next += 1;
        T::from_value(value).map_err(|value| self.mismatch::<T>(index, value))
    }

    /// Passes over the next `columns` columns (a record read from an earlier row).
    pub fn skip(&mut self, columns: usize) {
        self.next += columns;
    }

    /// Whether the next column is NULL (a LEFT JOIN that found nothing).
    pub fn next_is_null(&self) -> bool {
        match &self.cells {
            Cells::Decoded(values) => matches!(values.get(self.next), Some(Value::Null)),
            Cells::Postgres(row) => {
                self.next < row.len() && super::postgres::is_null(row, self.next)
            }
        }
    }

    /// Reads a record from the next columns (see [`super::Record`]).
    pub fn read<R: super::Record>(&mut self) -> Result<R, DbError> {
        R::read(self)
    }

    fn mismatch<T>(&self, index: usize, value: Value) -> DbError {
        DbError::Decode(format!(
            "column `{}` holds {value:?}, not a {}",
            self.columns[index],
            std::any::type_name::<T>()
        ))
    }
}
