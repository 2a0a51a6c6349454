//! Backend-neutral values and rows: what a query binds and what it reads back.
//!
//! Every query in `store` is written once with `$1`-style placeholders and runs on both
//! backends; this module is the common currency between that query code and the two drivers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::DbError;

/// A value bound to a query parameter or read from a column.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
    Blob(Vec<u8>),
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

/// Converts a column value into a Rust type.
pub trait FromValue: Sized {
    fn from_value(value: &Value) -> Option<Self>;
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }
}
impl FromValue for u32 {
    fn from_value(value: &Value) -> Option<Self> {
        i64::from_value(value).and_then(|v| u32::try_from(v).ok())
    }
}
impl FromValue for f64 {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Real(v) => Some(*v),
            Value::Int(v) => Some(*v as f64),
            _ => None,
        }
    }
}
impl FromValue for bool {
    fn from_value(value: &Value) -> Option<Self> {
        // SQLite has no boolean type: it stores 0 and 1.
        match value {
            Value::Bool(v) => Some(*v),
            Value::Int(v) => Some(*v != 0),
            _ => None,
        }
    }
}
impl FromValue for String {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Text(v) => Some(v.clone()),
            _ => None,
        }
    }
}
impl FromValue for Vec<u8> {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Blob(v) => Some(v.clone()),
            _ => None,
        }
    }
}
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Null => Some(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// One result row: the column names (shared by all rows of a result) and the values.
#[derive(Debug)]
pub struct Row {
    columns: Arc<[String]>,
    values: Vec<Value>,
    /// Where the next [`Row::get`] looks first: code reads columns in the order it selected
    /// them, so a lookup is one comparison instead of a search.
    next: AtomicUsize,
}

impl Row {
    pub(crate) fn new(columns: Arc<[String]>, values: Vec<Value>) -> Self {
        Row {
            columns,
            values,
            next: AtomicUsize::new(0),
        }
    }

    /// Reads the column `name` as a `T`; a missing column or a wrong type is a decode error,
    /// which means the query and the code reading it disagree (a bug, not bad input).
    pub fn get<T: FromValue>(&self, name: &str) -> Result<T, DbError> {
        let hint = self.next.load(Ordering::Relaxed);
        let index = if self.columns.get(hint).is_some_and(|c| c == name) {
            hint
        } else {
            self.columns
                .iter()
                .position(|c| c == name)
                .ok_or_else(|| DbError::Decode(format!("no column `{name}` in the result")))?
        };
        self.next.store(index + 1, Ordering::Relaxed);
        T::from_value(&self.values[index]).ok_or_else(|| {
            DbError::Decode(format!(
                "column `{name}` holds {:?}, not a {}",
                self.values[index],
                std::any::type_name::<T>()
            ))
        })
    }
}
