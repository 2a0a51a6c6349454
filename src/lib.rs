#![recursion_limit = "256"]
//! Souk: the HTTP/JSON API server of a classifieds marketplace.
//!
//! `docs/ARCHITECTURE.md` is the map; in short: `http` parses requests and renders HAL,
//! `usecase` carries out each change to the marketplace, `domain` holds the rules, `store`
//! the queries (written once for SQLite and PostgreSQL).

pub mod access;
pub mod accounts;
pub mod app;
pub mod cli;
pub mod clock;
pub mod config;
pub mod domain;
pub mod error;
pub mod hal;
pub mod http;
pub mod images;
#[cfg(test)]
mod layering;
pub mod locations;
pub mod mail;
pub mod metrics;
pub mod moderation;
pub mod oauth;
pub mod seed;
pub mod state;
pub mod statistics;
pub mod store;
pub mod supervisor;
pub mod telemetry;
pub mod usecase;
