//! The API test suite: every test runs over real HTTP against the real router, on SQLite
//! and on PostgreSQL (see `helpers`).

mod helpers;

mod categories;
mod conventions;
mod docs;
mod oauth;
mod operations;
mod storage;
