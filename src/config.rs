//! Typed configuration: defaults that work on a laptop, then `souk.toml`, then `SOUK_*`
//! environment variables (each later source wins).

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::domain::locale::Locale;
use crate::store::{SqliteSync, redact_url};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    /// A new database gets demo data.
    Sandbox,
    /// Never creates demo data.
    Production,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Human,
    Json,
}

/// The effective configuration of a Souk process.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    pub database_url: String,
    pub base_url: String,
    pub auth_url: String,
    pub region: Locale,
    pub environment: Environment,
    pub curie_prefix: String,
    pub log_format: LogFormat,
    pub sqlite_synchronous: SqliteSync,
    pub database_max_connections: usize,
    pub database_read_connections: usize,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// A request taking longer is answered 408 `request-timeout`.
    pub request_timeout_secs: u64,
    /// SMTP server for outgoing mail; `None` writes mail to `data_dir/outbox`.
    pub smtp_url: Option<String>,
    pub mail_from: String,
}

/// The settings as a file or the environment may give them: every one optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Partial {
    listen: Option<String>,
    data_dir: Option<String>,
    database_url: Option<String>,
    base_url: Option<String>,
    auth_url: Option<String>,
    region: Option<String>,
    environment: Option<String>,
    curie_prefix: Option<String>,
    log_format: Option<String>,
    sqlite_synchronous: Option<String>,
    database_max_connections: Option<String>,
    database_read_connections: Option<String>,
    max_body_bytes: Option<String>,
    request_timeout_secs: Option<String>,
    smtp_url: Option<String>,
    mail_from: Option<String>,
}

/// Each setting: its key in `souk.toml` and its environment variable.
pub const SETTINGS: &[(&str, &str)] = &[
    ("listen", "SOUK_LISTEN"),
    ("data_dir", "SOUK_DATA_DIR"),
    ("database_url", "SOUK_DATABASE_URL"),
    ("base_url", "SOUK_BASE_URL"),
    ("auth_url", "SOUK_AUTH_URL"),
    ("region", "SOUK_REGION"),
    ("environment", "SOUK_ENVIRONMENT"),
    ("curie_prefix", "SOUK_CURIE_PREFIX"),
    ("log_format", "SOUK_LOG_FORMAT"),
    ("sqlite_synchronous", "SOUK_SQLITE_SYNCHRONOUS"),
    ("database_max_connections", "SOUK_DATABASE_MAX_CONNECTIONS"),
    (
        "database_read_connections",
        "SOUK_DATABASE_READ_CONNECTIONS",
    ),
    ("max_body_bytes", "SOUK_MAX_BODY_BYTES"),
    ("request_timeout_secs", "SOUK_REQUEST_TIMEOUT_SECS"),
    ("smtp_url", "SOUK_SMTP_URL"),
    ("mail_from", "SOUK_MAIL_FROM"),
];

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(String);

impl Config {
    /// Reads `souk.toml` (the file named by `SOUK_CONFIG`, else `./souk.toml` if present)
    /// and the process environment.
    pub fn load() -> Result<Config, ConfigError> {
        let file = match std::env::var("SOUK_CONFIG") {
            Ok(path) => Some(PathBuf::from(path)),
            Err(_) => Some(PathBuf::from("souk.toml")).filter(|p| p.exists()),
        };
        let file_text = match &file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| ConfigError(format!("cannot read {}: {e}", path.display())))?,
            ),
            None => None,
        };
        Config::from_sources(file_text.as_deref(), |name| std::env::var(name).ok())
    }

    /// Builds the configuration from a file's text and an environment lookup.
    pub fn from_sources(
        file: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let mut partial: Partial = match file {
            Some(text) => {
                let table: toml::Table = text
                    .parse()
                    .map_err(|e| ConfigError(format!("souk.toml: {e}")))?;
                // Accept numbers and strings alike in the file: stringify every value.
                let strings: toml::Table = table
                    .into_iter()
                    .map(|(k, v)| {
                        let text = match v {
                            toml::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (k, toml::Value::String(text))
                    })
                    .collect();
                strings
                    .try_into()
                    .map_err(|e| ConfigError(format!("souk.toml: {e}")))?
            }
            None => Partial::default(),
        };
        let overrides = [
            (&mut partial.listen, "SOUK_LISTEN"),
            (&mut partial.data_dir, "SOUK_DATA_DIR"),
            (&mut partial.database_url, "SOUK_DATABASE_URL"),
            (&mut partial.base_url, "SOUK_BASE_URL"),
            (&mut partial.auth_url, "SOUK_AUTH_URL"),
            (&mut partial.region, "SOUK_REGION"),
            (&mut partial.environment, "SOUK_ENVIRONMENT"),
            (&mut partial.curie_prefix, "SOUK_CURIE_PREFIX"),
            (&mut partial.log_format, "SOUK_LOG_FORMAT"),
            (&mut partial.sqlite_synchronous, "SOUK_SQLITE_SYNCHRONOUS"),
            (
                &mut partial.database_max_connections,
                "SOUK_DATABASE_MAX_CONNECTIONS",
            ),
            (
                &mut partial.database_read_connections,
                "SOUK_DATABASE_READ_CONNECTIONS",
            ),
            (&mut partial.max_body_bytes, "SOUK_MAX_BODY_BYTES"),
            (
                &mut partial.request_timeout_secs,
                "SOUK_REQUEST_TIMEOUT_SECS",
            ),
            (&mut partial.smtp_url, "SOUK_SMTP_URL"),
            (&mut partial.mail_from, "SOUK_MAIL_FROM"),
        ];
        for (slot, name) in overrides {
            if let Some(value) = env(name).filter(|v| !v.is_empty()) {
                *slot = Some(value);
            }
        }
        partial.resolve()
    }

    /// The configuration as `souk config` prints it: TOML, the database password redacted.
    pub fn to_redacted_toml(&self) -> String {
        let mut table = toml::Table::new();
        let mut put = |key: &str, value: String| {
            table.insert(key.to_owned(), toml::Value::String(value));
        };
        put("listen", self.listen.to_string());
        put("data_dir", self.data_dir.display().to_string());
        put("database_url", redact_url(&self.database_url));
        put("base_url", self.base_url.clone());
        put("auth_url", self.auth_url.clone());
        put("region", self.region.as_str().to_owned());
        put("environment", enum_text(&self.environment));
        put("curie_prefix", self.curie_prefix.clone());
        put("log_format", enum_text(&self.log_format));
        put("sqlite_synchronous", enum_text(&self.sqlite_synchronous));
        put(
            "database_max_connections",
            self.database_max_connections.to_string(),
        );
        put(
            "database_read_connections",
            self.database_read_connections.to_string(),
        );
        put("max_body_bytes", self.max_body_bytes.to_string());
        put(
            "request_timeout_secs",
            self.request_timeout_secs.to_string(),
        );
        put(
            "smtp_url",
            self.smtp_url
                .as_deref()
                .map_or("(none: mail goes to the outbox)".into(), redact_url),
        );
        put("mail_from", self.mail_from.clone());
        toml::to_string(&table).unwrap_or_default()
    }
}

fn enum_text<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn parse_enum<T: serde::de::DeserializeOwned>(key: &str, text: &str) -> Result<T, ConfigError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| ConfigError(format!("{key}: `{text}` is not one of the allowed values")))
}

fn parse_number<T: std::str::FromStr>(key: &str, text: &str) -> Result<T, ConfigError> {
    text.trim()
        .parse()
        .map_err(|_| ConfigError(format!("{key}: `{text}` is not a number")))
}

impl Partial {
    fn resolve(self) -> Result<Config, ConfigError> {
        let listen: SocketAddr = self
            .listen
            .as_deref()
            .unwrap_or("127.0.0.1:8080")
            .parse()
            .map_err(|_| ConfigError("listen: expected an address like 127.0.0.1:8080".into()))?;
        let data_dir = PathBuf::from(self.data_dir.as_deref().unwrap_or("./data"));
        let database_url = self
            .database_url
            .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("souk.db").display()));
        let base_url = self
            .base_url
            .unwrap_or_else(|| format!("http://{listen}"))
            .trim_end_matches('/')
            .to_owned();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ConfigError(format!(
                "base_url: `{base_url}` must start with http:// or https://"
            )));
        }
        let auth_url = self
            .auth_url
            .map(|u| u.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| base_url.clone());
        let region = match self.region.as_deref() {
            None => Locale::NlNl,
            Some(text) => Locale::parse(text).ok_or_else(|| {
                ConfigError(format!("region: `{text}` is not nl-NL, nl-BE or fr-BE"))
            })?,
        };
        let curie_prefix = self.curie_prefix.unwrap_or_else(|| "svc".to_owned());
        let prefix_ok = !curie_prefix.is_empty()
            && curie_prefix.len() <= 32
            && curie_prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !prefix_ok {
            return Err(ConfigError(format!(
                "curie_prefix: `{curie_prefix}` must be 1 to 32 letters, digits, - or _"
            )));
        }
        Ok(Config {
            listen,
            data_dir,
            database_url,
            base_url,
            auth_url,
            region,
            environment: match self.environment.as_deref() {
                None => Environment::Sandbox,
                Some(text) => parse_enum("environment", text)?,
            },
            curie_prefix,
            log_format: match self.log_format.as_deref() {
                None => LogFormat::Human,
                Some(text) => parse_enum("log_format", text)?,
            },
            sqlite_synchronous: match self.sqlite_synchronous.as_deref() {
                None => SqliteSync::Full,
                Some(text) => parse_enum("sqlite_synchronous", &text.to_lowercase())?,
            },
            database_max_connections: match self.database_max_connections.as_deref() {
                None => 16,
                Some(text) => parse_number("database_max_connections", text)?,
            },
            database_read_connections: match self.database_read_connections.as_deref() {
                None => 1,
                Some(text) => parse_number("database_read_connections", text)?,
            },
            max_body_bytes: match self.max_body_bytes.as_deref() {
                None => 1024 * 1024,
                Some(text) => parse_number("max_body_bytes", text)?,
            },
            request_timeout_secs: match self.request_timeout_secs.as_deref() {
                None => 30,
                Some(text) => parse_number("request_timeout_secs", text)?,
            },
            smtp_url: self.smtp_url,
            mail_from: self
                .mail_from
                .unwrap_or_else(|| "Souk <no-reply@souk.localhost>".to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(file: Option<&str>, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_sources(file, |name| {
            env.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn defaults_work_on_a_laptop() {
        let config = from(None, &[]).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(config.database_url, "sqlite://./data/souk.db");
        assert_eq!(config.base_url, "http://127.0.0.1:8080");
        assert_eq!(config.auth_url, config.base_url);
        assert_eq!(config.region, Locale::NlNl);
        assert_eq!(config.environment, Environment::Sandbox);
        assert_eq!(config.curie_prefix, "svc");
        assert_eq!(config.sqlite_synchronous, SqliteSync::Full);
    }

    #[test]
    fn environment_beats_file() {
        let file = "region = \"nl-BE\"\ncurie_prefix = \"mp\"\nmax_body_bytes = 2048\n";
        let config = from(Some(file), &[("SOUK_REGION", "fr-BE")]).unwrap();
        assert_eq!(config.region, Locale::FrBe);
        assert_eq!(config.curie_prefix, "mp");
        assert_eq!(config.max_body_bytes, 2048);
    }

    #[test]
    fn refuses_bad_values_clearly() {
        let err = from(None, &[("SOUK_REGION", "en-GB")]).unwrap_err();
        assert!(err.to_string().contains("region"), "{err}");
        let err = from(None, &[("SOUK_ENVIRONMENT", "staging")]).unwrap_err();
        assert!(err.to_string().contains("environment"), "{err}");
        let err = from(Some("colour = \"blue\""), &[]).unwrap_err();
        assert!(err.to_string().contains("colour"), "{err}");
        assert!(from(None, &[("SOUK_CURIE_PREFIX", "a b")]).is_err());
    }

    #[test]
    fn every_setting_is_listed() {
        assert_eq!(SETTINGS.len(), 16);
        let printed = from(None, &[]).unwrap().to_redacted_toml();
        for (key, _) in SETTINGS {
            assert!(printed.contains(&format!("{key} = ")), "{key} missing");
        }
    }

    #[test]
    fn redacts_the_database_password() {
        let config = from(
            None,
            &[
                ("SOUK_DATABASE_URL", "postgres://u:hunter2@h/db"),
                ("SOUK_SMTP_URL", "smtps://mailer:hunter3@smtp.example:465"),
            ],
        )
        .unwrap();
        let printed = config.to_redacted_toml();
        assert!(!printed.contains("hunter2") && !printed.contains("hunter3"));
        assert!(printed.contains("postgres://u:***@h/db"));
    }
}
