//! The API test suite: every test runs over real HTTP against the real router, on SQLite
//! and on PostgreSQL (see `helpers`).

mod helpers;

mod access;
mod ads;
mod alerts;
mod bids;
mod blob_store;
mod browser;
mod categories;
mod clients;
mod conventions;
mod docs;
mod features;
mod image_import;
mod images;
mod import_races;
mod locations;
mod lost_commits;
mod mail;
mod oauth;
mod operations;
mod orders;
mod pg_errors;
mod postgres_tls;
mod races;
mod reviews;
mod saved_searches;
mod search;
mod storage;
mod transactions;
mod users;
mod webhooks;
mod website;
