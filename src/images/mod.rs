//! Images of advertisements.

pub mod fetch;
