//! Search without SQL or HTTP (docs/design/search.md): the words an ad is indexed under and
//! a query is matched with.

pub mod text;
