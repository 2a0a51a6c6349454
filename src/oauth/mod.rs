//! Souk's OAuth 2.0 authorization server, without a web framework: the HTTP layer parses
//! requests into these types and renders the outcomes (redirects, pages, JSON).

pub mod grants;
pub mod password;
pub mod redirect;
pub mod scope;
pub mod secret;

pub use grants::*;
