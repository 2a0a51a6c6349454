//! Types and rules of the marketplace, free of HTTP and SQL so they are unit-tested alone.

pub mod advertisement;
pub mod category;
pub mod field_error;
pub mod image;
pub mod locale;
pub mod places;
pub mod taxonomy;
pub mod text;
pub mod time;
pub mod user;
