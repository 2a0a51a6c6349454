//! Souk's OAuth 2.0 authorization server, without a web framework and without storage: the
//! HTTP layer parses requests into these types, `usecase::authorization` runs the decisions
//! made here over the stored records in one transaction, and HTTP renders the outcomes
//! (redirects, pages, JSON).

pub mod authorize;
pub mod grants;
pub mod password;
pub mod records;
pub mod redirect;
pub mod scope;
pub mod secret;
pub mod session;

pub use authorize::*;
pub use grants::*;
pub use records::*;
