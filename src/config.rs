//! Typed configuration: one struct, [`Config`], whose fields are the settings. Its
//! `Default` is what works on a laptop; `souk.toml` (or the file named by `SOUK_CONFIG`)
//! and then the `SOUK_*` environment variables override it, each later source winning
//! (figment merges them). An empty variable counts as unset. The README lists the settings.

use std::net::SocketAddr;
use std::path::PathBuf;

use figment::providers::{Format, Serialized, Toml};
use figment::value::{Dict, Map, Value};
use figment::{Figment, Metadata, Profile, Provider};
use serde::{Deserialize, Serialize};

use crate::domain::locale::Locale;
use crate::images::fetch::address::{AllowList, Cidr};
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

/// The effective configuration of a Souk process. Each field is a setting: its name is the
/// key in `souk.toml`, and in capitals after `SOUK_` its environment variable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    /// Given empty: `sqlite://<data_dir>/souk.db`.
    pub database_url: String,
    /// Given empty: `http://<listen>`.
    pub base_url: String,
    /// Given empty: the base URL.
    pub auth_url: String,
    pub region: Locale,
    /// The VAT rate of the region in percent, included in every price Souk charges.
    pub vat_percent: u32,
    pub environment: Environment,
    pub curie_prefix: String,
    pub log_format: LogFormat,
    pub sqlite_synchronous: SqliteSync,
    pub database_max_connections: usize,
    pub database_read_connections: usize,
    /// Searches (heavy reads) run at once by this process (`store::DbOptions::heavy_reads`);
    /// by default one per core of the machine.
    pub database_heavy_reads: usize,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// A request taking longer is answered 408 `request-timeout`.
    pub request_timeout_secs: u64,
    /// The time a connection has to send a request's head, and an idle keep-alive
    /// connection to start its next (`http::serve`): longer than a load balancer keeps an
    /// idle connection (60 s for many), which must close it first.
    pub header_timeout_secs: u64,
    /// Client connections served at once (`state::Connections`): past it, new ones wait in
    /// the listener's backlog. Lowered to what the process's descriptors allow.
    pub max_connections: usize,
    /// SMTP server for outgoing mail; `None` writes mail to `data_dir/outbox`.
    pub smtp_url: Option<String>,
    pub mail_from: String,
    /// Largest image file taken (an upload's file, or an image fetched by URL), in bytes;
    /// it may exceed `max_body_bytes`, which image uploads do not use.
    pub max_image_bytes: usize,
    /// Most images an ad holds.
    pub max_images_per_ad: usize,
    /// Bytes of image uploads held in memory at once by this process
    /// (`state::UploadBudget`); an upload waits for room.
    pub upload_memory_bytes: usize,
    /// Renditions made at once by this process (each on a blocking thread; each holds one
    /// decoded image in memory).
    pub image_workers: usize,
    /// How long a worker holds a rendition job before another may take it over (a worker
    /// that crashed is noticed after this).
    pub image_job_lease_secs: u64,
    /// An S3 bucket for image blobs; empty keeps them under `data_dir/images`.
    pub s3_bucket: String,
    pub s3_region: String,
    /// An S3-compatible server's address (`http://127.0.0.1:9000`); empty for AWS.
    pub s3_endpoint: String,
    pub s3_access_key_id: String,
    pub s3_secret_access_key: String,
    /// What the image import by URL may reach although it is not a public internet
    /// address: networks (`10.0.0.0/8`, `fd00::/8`, an address) and `host:port` pairs
    /// (`images.internal:8080`), separated by commas. Empty: nothing.
    pub image_fetch_allow: String,
    /// The load balancers and proxies in front of Souk (networks or addresses, separated by
    /// commas): from these, a sign-in's address is read from `X-Forwarded-For`, so that
    /// the lockout counts clients, not the balancer. Empty: the connection's own address.
    pub trusted_proxies: String,
    /// The time one image URL may take, redirects and body included.
    pub image_fetch_timeout_secs: u64,
    /// Redirects followed for one image URL.
    pub image_fetch_max_redirects: usize,
    /// What webhook deliveries may reach although it is not a public internet address, as
    /// `image_fetch_allow` says it. Empty: nothing.
    pub webhook_allow: String,
    /// The time one webhook delivery may take, from the connection to the answer's status.
    pub webhook_timeout_secs: u64,
}

/// The entries of a comma-separated list, trimmed, empty ones left out.
fn proxy_entries(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|e| !e.is_empty())
}

impl Default for Config {
    /// The defaults, before the URLs that follow from other settings are filled in.
    fn default() -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("./data"),
            database_url: String::new(),
            base_url: String::new(),
            auth_url: String::new(),
            region: Locale::NlNl,
            vat_percent: 21,
            environment: Environment::Sandbox,
            curie_prefix: "svc".to_owned(),
            log_format: LogFormat::Human,
            sqlite_synchronous: SqliteSync::Full,
            database_max_connections: 16,
            database_read_connections: 1,
            database_heavy_reads: crate::store::cores(),
            max_body_bytes: 1024 * 1024,
            request_timeout_secs: 30,
            header_timeout_secs: 75,
            max_connections: 10_000,
            smtp_url: None,
            mail_from: "Souk <no-reply@souk.localhost>".to_owned(),
            max_image_bytes: 20 * 1024 * 1024,
            max_images_per_ad: 24,
            upload_memory_bytes: 1024 * 1024 * 1024,
            image_workers: 1,
            image_job_lease_secs: 60,
            s3_bucket: String::new(),
            s3_region: "us-east-1".to_owned(),
            s3_endpoint: String::new(),
            s3_access_key_id: String::new(),
            s3_secret_access_key: String::new(),
            image_fetch_allow: String::new(),
            trusted_proxies: String::new(),
            image_fetch_timeout_secs: 10,
            image_fetch_max_redirects: 5,
            webhook_allow: String::new(),
            webhook_timeout_secs: 10,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(String);

impl From<figment::Error> for ConfigError {
    /// Names the setting first: figment's own text says where the bad value came from.
    fn from(error: figment::Error) -> ConfigError {
        let text = error.to_string();
        match error.path.last() {
            Some(key) => ConfigError(format!("{key}: {text}")),
            None => ConfigError(text),
        }
    }
}

impl Config {
    /// Reads `souk.toml` (the file named by `SOUK_CONFIG`, else `./souk.toml` if present)
    /// and the process environment.
    pub fn load() -> Result<Config, ConfigError> {
        let file = match std::env::var("SOUK_CONFIG").ok().filter(|p| !p.is_empty()) {
            Some(path) => Some(PathBuf::from(path)),
            None => Some(PathBuf::from("souk.toml")).filter(|p| p.exists()),
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
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(text) = file {
            figment = figment.merge(SettingsFile(text));
        }
        let config: Config = figment
            .merge(EnvironmentVariables::read(env))
            // Lossy: a number or a flag may also be written as text ("2048").
            .extract_lossy()?;
        config.with_derived_urls()
    }

    /// The keys of every setting (as in `souk.toml`).
    pub fn keys() -> Vec<String> {
        match Serialized::defaults(Config::default()).data() {
            Ok(mut profiles) => profiles
                .remove(&Profile::Default)
                .map(|dict| dict.into_keys().collect())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    /// This configuration once the server listens on `bound`: with `listen` port 0 the
    /// system chose the port, so URLs derived from `listen` (`http://127.0.0.1:0`) name the
    /// port actually bound instead. URLs an operator gave stay as they are.
    pub fn bound_to(mut self, bound: SocketAddr) -> Config {
        if self.listen.port() != 0 {
            return self;
        }
        let derived = format!("http://{}", self.listen);
        let actual = format!("http://{bound}");
        if self.auth_url == derived {
            self.auth_url = actual.clone();
        }
        if self.base_url == derived {
            self.base_url = actual;
        }
        self.listen = bound;
        self
    }

    /// What in this configuration is most likely a mistake, though a server can run with
    /// it: said in the log at start (`app::serve`).
    pub fn doubts(&self) -> Vec<&'static str> {
        let mut doubts = Vec::new();
        if self.environment == Environment::Production && self.smtp_url.is_none() {
            doubts.push(
                "production without SOUK_SMTP_URL: mail (account confirmations, alerts) goes \
                 to files in the data folder's outbox, not to its addresses",
            );
        }
        if self.environment == Environment::Sandbox && !self.listen.ip().is_loopback() {
            doubts.push(
                "a sandbox that listens beyond this machine: it has a demo user whose password \
                 the README publishes, and pays every order at once; a marketplace sets \
                 SOUK_ENVIRONMENT=production",
            );
        }
        if self.listen.ip().is_unspecified() && self.base_url == format!("http://{}", self.listen) {
            doubts.push(
                "SOUK_BASE_URL is not set and the server listens on every address: links and \
                 mails name an address no client can follow; set SOUK_BASE_URL to the public one",
            );
        }
        doubts
    }

    /// Fills in the URLs left empty and checks what a type alone cannot.
    fn with_derived_urls(mut self) -> Result<Config, ConfigError> {
        if self.database_url.is_empty() {
            self.database_url = format!("sqlite://{}", self.data_dir.join("souk.db").display());
        }
        if self.base_url.is_empty() {
            self.base_url = format!("http://{}", self.listen);
        }
        self.base_url = self.base_url.trim_end_matches('/').to_owned();
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(ConfigError(format!(
                "base_url: `{}` must start with http:// or https://",
                self.base_url
            )));
        }
        self.auth_url = match self.auth_url.trim_end_matches('/') {
            "" => self.base_url.clone(),
            url => url.to_owned(),
        };
        let prefix = &self.curie_prefix;
        let prefix_ok = !prefix.is_empty()
            && prefix.len() <= 32
            && prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !prefix_ok {
            return Err(ConfigError(format!(
                "curie_prefix: `{prefix}` must be 1 to 32 letters, digits, - or _"
            )));
        }
        // Numbers whose type allows what the server cannot work with: a timeout of 0
        // answers every request 408, a lease of 0 hands a rendition job to every worker at
        // once, a pool of 0 or of billions cannot be made.
        let gib = 1 << 30;
        for (name, value, least, most) in [
            ("request_timeout_secs", self.request_timeout_secs, 1, 3_600),
            ("header_timeout_secs", self.header_timeout_secs, 1, 3_600),
            ("max_connections", self.max_connections as u64, 1, 1_000_000),
            (
                "image_fetch_timeout_secs",
                self.image_fetch_timeout_secs,
                1,
                3_600,
            ),
            ("image_job_lease_secs", self.image_job_lease_secs, 2, 86_400),
            ("webhook_timeout_secs", self.webhook_timeout_secs, 1, 60),
            ("max_body_bytes", self.max_body_bytes as u64, 1_024, gib),
            ("max_image_bytes", self.max_image_bytes as u64, 1_024, gib),
            (
                "upload_memory_bytes",
                self.upload_memory_bytes as u64,
                1 << 20,
                64 * gib,
            ),
            (
                "database_max_connections",
                self.database_max_connections as u64,
                1,
                10_000,
            ),
            (
                "database_read_connections",
                self.database_read_connections as u64,
                1,
                10_000,
            ),
            (
                "database_heavy_reads",
                self.database_heavy_reads as u64,
                1,
                10_000,
            ),
            ("image_workers", self.image_workers as u64, 1, 1_024),
        ] {
            if !(least..=most).contains(&value) {
                return Err(ConfigError(format!(
                    "{name}: `{value}` must be {least} to {most}"
                )));
            }
        }
        if self.vat_percent > 100 {
            return Err(ConfigError(format!(
                "vat_percent: `{}` must be 0 to 100",
                self.vat_percent
            )));
        }
        AllowList::parse(self.image_fetch_allow.split(','))
            .map_err(|e| ConfigError(format!("image_fetch_allow: {e}")))?;
        AllowList::parse(self.webhook_allow.split(','))
            .map_err(|e| ConfigError(format!("webhook_allow: {e}")))?;
        if let Some(bad) = proxy_entries(&self.trusted_proxies).find(|e| Cidr::parse(e).is_none()) {
            return Err(ConfigError(format!(
                "trusted_proxies: `{bad}` is not a network or an address"
            )));
        }
        Ok(self)
    }

    /// The proxies whose `X-Forwarded-For` is believed (checked when the configuration was
    /// read).
    pub fn trusted_proxy_list(&self) -> Vec<Cidr> {
        proxy_entries(&self.trusted_proxies)
            .filter_map(Cidr::parse)
            .collect()
    }

    /// The allow-list of the image import (checked when the configuration was read).
    pub fn image_fetch_allow_list(&self) -> AllowList {
        AllowList::parse(self.image_fetch_allow.split(',')).unwrap_or_default()
    }

    /// The allow-list of webhook deliveries (checked when the configuration was read).
    pub fn webhook_allow_list(&self) -> AllowList {
        AllowList::parse(self.webhook_allow.split(',')).unwrap_or_default()
    }

    /// The configuration as `souk config` prints it: TOML, the database password redacted.
    pub fn to_redacted_toml(&self) -> String {
        let mut printed = self.clone();
        printed.database_url = redact_url(&self.database_url);
        printed.smtp_url = Some(
            self.smtp_url
                .as_deref()
                .map_or("(none: mail goes to the outbox)".into(), redact_url),
        );
        if !printed.s3_secret_access_key.is_empty() {
            printed.s3_secret_access_key = "(redacted)".to_owned();
        }
        let mut text = toml::to_string(&printed).unwrap_or_default();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

/// The text of `souk.toml` (or of the file `SOUK_CONFIG` names), so that an error names
/// the file and the key rather than figment's own words for them.
struct SettingsFile<'a>(&'a str);

impl Provider for SettingsFile<'_> {
    fn metadata(&self) -> Metadata {
        Metadata::named("the settings file (souk.toml or SOUK_CONFIG)")
            .interpolater(|_: &Profile, keys: &[&str]| keys.join("."))
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Toml::string(self.0).data()
    }
}

/// The `SOUK_*` variables of the settings, read through a lookup (the process environment,
/// or a test's list). Values stay text; `extract_lossy` reads numbers from them.
struct EnvironmentVariables(Dict);

impl EnvironmentVariables {
    fn read(env: impl Fn(&str) -> Option<String>) -> EnvironmentVariables {
        let given = Config::keys().into_iter().filter_map(|key| {
            let value = env(&variable(&key)).filter(|v| !v.is_empty())?;
            Some((key, Value::from(value)))
        });
        EnvironmentVariables(given.collect())
    }
}

/// The environment variable of a setting: `region` is `SOUK_REGION`.
fn variable(key: &str) -> String {
    format!("SOUK_{}", key.to_ascii_uppercase())
}

impl Provider for EnvironmentVariables {
    fn metadata(&self) -> Metadata {
        Metadata::named("the environment")
            .interpolater(|_: &Profile, keys: &[&str]| variable(&keys.join(".")))
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.0.clone()))
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
        assert_eq!(config.database_heavy_reads, crate::store::cores());
    }

    #[test]
    fn likely_mistakes_are_doubted() {
        let doubts = |env: &[(&str, &str)]| from(None, env).unwrap().doubts();
        assert!(doubts(&[]).is_empty(), "a laptop's sandbox");
        let production = [("SOUK_ENVIRONMENT", "production")];
        assert!(doubts(&production)[0].contains("SOUK_SMTP_URL"));
        let mailing = [
            ("SOUK_ENVIRONMENT", "production"),
            ("SOUK_SMTP_URL", "smtp://mail.internal:25"),
        ];
        assert!(doubts(&mailing).is_empty());
        let exposed = doubts(&[("SOUK_LISTEN", "0.0.0.0:8080")]);
        assert_eq!(exposed.len(), 2, "{exposed:?}");
        assert!(exposed[0].contains("sandbox") && exposed[1].contains("SOUK_BASE_URL"));
        let named = doubts(&[
            ("SOUK_LISTEN", "0.0.0.0:8080"),
            ("SOUK_BASE_URL", "https://api.souk.example"),
            ("SOUK_ENVIRONMENT", "production"),
            ("SOUK_SMTP_URL", "smtp://mail.internal:25"),
        ]);
        assert!(named.is_empty(), "{named:?}");
    }

    #[test]
    fn heavy_reads_are_bounded_from_the_environment() {
        let config = from(None, &[("SOUK_DATABASE_HEAVY_READS", "1")]).unwrap();
        assert_eq!(config.database_heavy_reads, 1);
        assert_eq!(crate::app::db_options(&config).heavy_reads, 1);
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
        let err = from(None, &[("SOUK_VAT_PERCENT", "4000000000")]).unwrap_err();
        assert!(err.to_string().contains("vat_percent"), "{err}");
        assert!(from(None, &[("SOUK_VAT_PERCENT", "100")]).is_ok());
        for (variable, value, name) in [
            ("SOUK_REQUEST_TIMEOUT_SECS", "0", "request_timeout_secs"),
            ("SOUK_IMAGE_JOB_LEASE_SECS", "1", "image_job_lease_secs"),
            ("SOUK_IMAGE_JOB_LEASE_SECS", "86401", "image_job_lease_secs"),
            ("SOUK_REQUEST_TIMEOUT_SECS", "3601", "request_timeout_secs"),
            ("SOUK_HEADER_TIMEOUT_SECS", "0", "header_timeout_secs"),
            ("SOUK_MAX_CONNECTIONS", "0", "max_connections"),
            ("SOUK_MAX_IMAGE_BYTES", "1073741825", "max_image_bytes"),
            ("SOUK_MAX_BODY_BYTES", "0", "max_body_bytes"),
            ("SOUK_DATABASE_HEAVY_READS", "0", "database_heavy_reads"),
            (
                "SOUK_DATABASE_MAX_CONNECTIONS",
                "100000000",
                "database_max_connections",
            ),
            ("SOUK_IMAGE_WORKERS", "0", "image_workers"),
        ] {
            let err = from(None, &[(variable, value)]).unwrap_err();
            assert!(err.to_string().contains(name), "{variable}={value}: {err}");
        }
        assert!(from(None, &[("SOUK_IMAGE_JOB_LEASE_SECS", "2")]).is_ok());
        let err = from(None, &[("SOUK_TRUSTED_PROXIES", "10.0.0.0/8, balancer")]).unwrap_err();
        assert!(err.to_string().contains("`balancer`"), "{err}");
        let proxies = from(None, &[("SOUK_TRUSTED_PROXIES", "10.0.0.0/8, ::1")]).unwrap();
        assert_eq!(proxies.trusted_proxy_list().len(), 2);
    }

    #[test]
    fn every_setting_is_listed() {
        assert_eq!(Config::keys().len(), 36);
        let printed = from(None, &[]).unwrap().to_redacted_toml();
        for key in Config::keys() {
            assert!(printed.contains(&format!("{key} = ")), "{key} missing");
        }
    }

    #[test]
    fn an_empty_variable_is_unset_and_text_may_hold_a_number() {
        let file = "region = \"nl-BE\"\nmax_body_bytes = \"4096\"\n";
        let config = from(
            Some(file),
            &[("SOUK_REGION", ""), ("SOUK_REQUEST_TIMEOUT_SECS", "5")],
        )
        .unwrap();
        assert_eq!(config.region, Locale::NlBe);
        assert_eq!(config.max_body_bytes, 4096);
        assert_eq!(config.request_timeout_secs, 5);
        let err = from(None, &[("SOUK_MAX_BODY_BYTES", "lots")]).unwrap_err();
        assert!(err.to_string().contains("max_body_bytes"), "{err}");
        assert!(err.to_string().contains("SOUK_MAX_BODY_BYTES"), "{err}");
    }

    #[test]
    fn port_zero_urls_name_the_port_bound() {
        let bound: SocketAddr = "127.0.0.1:41234".parse().unwrap();
        let config = from(None, &[("SOUK_LISTEN", "127.0.0.1:0")]).unwrap();
        let config = config.bound_to(bound);
        assert_eq!(config.listen, bound);
        assert_eq!(config.base_url, "http://127.0.0.1:41234");
        assert_eq!(config.auth_url, "http://127.0.0.1:41234");
        let given = [
            ("SOUK_LISTEN", "127.0.0.1:0"),
            ("SOUK_BASE_URL", "https://souk.example"),
        ];
        let config = from(None, &given).unwrap().bound_to(bound);
        assert_eq!(config.base_url, "https://souk.example", "given, kept");
        let fixed = from(None, &[]).unwrap().bound_to(bound);
        assert_eq!(
            fixed.base_url, "http://127.0.0.1:8080",
            "not port 0: unchanged"
        );
    }

    #[test]
    fn the_image_import_allow_list_is_read_and_checked() {
        let config = from(
            None,
            &[(
                "SOUK_IMAGE_FETCH_ALLOW",
                "127.0.0.0/8, images.internal:8080",
            )],
        )
        .unwrap();
        let allow = config.image_fetch_allow_list();
        assert!(allow.names_address("127.0.0.1".parse().unwrap()));
        assert!(allow.names_host("images.internal", 8080));
        assert_eq!(
            from(None, &[]).unwrap().image_fetch_allow_list(),
            AllowList::default()
        );
        let err = from(None, &[("SOUK_IMAGE_FETCH_ALLOW", "10.0.0.0/8,intranet")]).unwrap_err();
        assert!(err.to_string().contains("image_fetch_allow"), "{err}");
        assert!(err.to_string().contains("`intranet`"), "{err}");
    }

    #[test]
    fn urls_follow_from_other_settings() {
        let listen = ("SOUK_LISTEN", "0.0.0.0:9000");
        let config = from(None, &[listen, ("SOUK_DATA_DIR", "/srv/souk")]).unwrap();
        assert_eq!(config.database_url, "sqlite:///srv/souk/souk.db");
        assert_eq!(config.base_url, "http://0.0.0.0:9000");
        let config = from(None, &[("SOUK_BASE_URL", "https://souk.example/")]).unwrap();
        assert_eq!(config.base_url, "https://souk.example");
        assert_eq!(config.auth_url, "https://souk.example");
        let err = from(None, &[("SOUK_BASE_URL", "souk.example")]).unwrap_err();
        assert!(err.to_string().contains("base_url"), "{err}");
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
        assert!(printed.contains("postgres://u:***@h:5432/db"), "{printed}");
    }
}
