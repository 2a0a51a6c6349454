//! Structured logs: human-readable by default, JSON lines with `SOUK_LOG_FORMAT=json`.
//! `RUST_LOG` filters them (default `info`).

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

pub fn init(format: LogFormat) {
    // A filter that does not parse is said, once logging works, rather than dropped in
    // silence: an operator who asked for `debug` would otherwise wonder where it went.
    let given = std::env::var("RUST_LOG")
        .ok()
        .filter(|text| !text.trim().is_empty());
    let (filter, refused) = match given.as_deref().map(EnvFilter::try_new) {
        Some(Ok(filter)) => (filter, None),
        Some(Err(e)) => (EnvFilter::new("info"), Some(e.to_string())),
        None => (EnvFilter::new("info"), None),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second initialisation (tests) is harmless: the first subscriber stays.
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
    };
    if let Some(error) = refused {
        tracing::warn!(%error, "RUST_LOG is not a filter; logging at info");
    }
}
