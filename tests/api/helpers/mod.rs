//! The test harness: the real router on a real port with a real database, SQLite always,
//! PostgreSQL when `SOUK_TEST_POSTGRES_URL` names a server (a fresh schema per test).
//! Requests go through [`http::Call`] and JSON answers are read with [`expect_json`], which
//! holds them to the OpenAPI document the server publishes.

mod http;
pub mod openapi;
pub mod s3;
mod served;
mod sign_in;

use reqwest::Method;
use serde_json::Value;
use souk::accounts::{ClientSpec, UserSpec, create_client, create_user};
use souk::app::prepare_database;
use souk::clock::Clock;
use souk::config::Config;
use souk::state::AppState;
use souk::store::Db;

pub use http::{Call, Http, expect_json, expect_oauth_error, try_expect_json};
pub use served::{Served, user_with_token};
pub use sign_in::{LoginPage, hidden_field, session_cookie};

pub struct TestApp {
    http: Http,
    /// The backend the test asked for.
    pub backend: Backend,
    /// A client registered for every grant and scope.
    pub app_client: TestClient,
    /// A client-credentials token of `app_client` (all client scopes): what `get` sends.
    pub token: String,
    pub clock: Clock,
    pub db: Db,
    pub config: Config,
    /// The server's blob store (local files, or a bucket with the S3 settings).
    pub blobs: souk::images::blobs::Blobs,
    pub database_url: String,
    _data_dir: tempfile::TempDir,
    schema: Option<PostgresSchema>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A confirmed user and a user token of theirs (of the app client, all user scopes).
pub struct User {
    pub id: i64,
    pub email: String,
    pub password: String,
    pub token: String,
}

impl TestApp {
    /// Runs one SQL statement in a write transaction of its own, to set stored state up
    /// as no request can (a date in the past, a row as an earlier release left it).
    pub async fn execute(&self, sql: &'static str, params: Vec<souk::store::Value>) {
        self.db
            .write(move |conn| Box::pin(async move { conn.execute(sql, &params).await }))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// How many rows `table` holds.
    pub async fn count_rows(&self, table: &'static str) -> i64 {
        self.db
            .read(move |conn| {
                Box::pin(async move {
                    conn.query_one(&format!("SELECT COUNT(*) AS n FROM {table}"), &[])
                        .await?
                        .get::<i64>("n")
                })
            })
            .await
            .unwrap_or_else(|e| panic!("count {table}: {e}"))
    }

    /// The state of another server on this app's database and image store (a replica, or
    /// the next start), its workers not started.
    pub fn another_state(&self) -> AppState {
        AppState::new(
            self.config.clone(),
            self.db.clone(),
            self.blobs.clone(),
            self.clock.clone(),
        )
        .expect("state")
    }

    /// Runs the `souk` command line against this app's database and data folder.
    pub fn souk(&self, args: &[&str]) -> std::process::Output {
        self.souk_with_input(args, "")
    }

    /// Runs the `souk` command line with `input` on its standard input.
    pub fn souk_with_input(&self, args: &[&str], input: &str) -> std::process::Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_souk"))
            .args(args)
            .env("SOUK_DATABASE_URL", &self.database_url)
            .env("SOUK_DATA_DIR", self.config.data_dir.as_os_str())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run souk");
        let mut stdin = child.stdin.take().expect("souk's standard input");
        // A command that reads nothing may have ended already: its input is not needed.
        let _ = stdin.write_all(input.as_bytes());
        drop(stdin);
        child.wait_with_output().expect("souk's output")
    }

    /// Starts Souk on `backend`. PostgreSQL needs `SOUK_TEST_POSTGRES_URL`: its variants are
    /// ignored without it outside CI (see `both_backends!`), and fail without it in CI.
    pub async fn start(backend: Backend, test: &str) -> TestApp {
        TestApp::start_with(backend, test, &[]).await
    }

    /// Like [`TestApp::start`], with extra settings (`("SOUK_CURIE_PREFIX", "mp")`).
    pub async fn start_with(backend: Backend, test: &str, settings: &[(&str, &str)]) -> TestApp {
        let data_dir = tempfile::tempdir().expect("temp dir");
        let FreshDatabase {
            url: database_url,
            schema,
        } = FreshDatabase::create(backend, data_dir.path(), test).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let data_dir_text = data_dir.path().display().to_string();
        let base_url = format!("http://{address}");
        let mut env: Vec<(&str, &str)> = vec![
            ("SOUK_DATA_DIR", &data_dir_text),
            ("SOUK_DATABASE_URL", &database_url),
            ("SOUK_BASE_URL", &base_url),
            ("SOUK_DATABASE_MAX_CONNECTIONS", "4"),
        ];
        env.extend_from_slice(settings);
        let config = Config::from_sources(None, |name| {
            env.iter()
                .rev()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
        .expect("test configuration");
        let clock = Clock::default();
        let db = prepare_database(&config, &clock).await.expect("database");
        let blobs = souk::app::open_blobs(&config, &db)
            .await
            .expect("image store");
        let state = AppState::new(config.clone(), db.clone(), blobs, clock.clone()).expect("state");
        let blobs = state.blobs.clone();
        souk::app::start_workers(&state).await.expect("workers");
        let limits = souk::http::ServeLimits::of(&config);
        let connections = state.connections.clone();
        let router = souk::http::router(state);
        tokio::spawn(souk::http::serve(
            listener,
            router,
            connections,
            std::future::pending(),
            limits,
        ));
        let mut app = TestApp {
            http: Http::connect(&format!("http://{address}")).await,
            backend,
            app_client: TestClient::default(),
            token: String::new(),
            clock,
            db,
            config,
            blobs,
            database_url,
            _data_dir: data_dir,
            schema,
        };
        app.app_client = app
            .register_client(ClientSpec {
                name: "Test app".into(),
                redirect_uris: vec!["https://client.test/cb".into()],
                scopes: Some("read write purchase create_account confirm_upcall webhooks".into()),
                ..ClientSpec::default()
            })
            .await;
        app.token = app.client_token(&app.app_client, None).await;
        app
    }

    pub async fn register_client(&self, spec: ClientSpec) -> TestClient {
        let redirect_uri = spec.redirect_uris.first().cloned().unwrap_or_default();
        let (id, secret) = create_client(&self.db, spec, self.clock.now())
            .await
            .expect("client");
        TestClient {
            id,
            secret,
            redirect_uri,
        }
    }

    /// `count` online ads of `seller` made by `souk seed`'s generator, as the seed stores
    /// them (in bulk, with images).
    pub async fn seed_ads(&self, seller: i64, count: u64) {
        let leaves = souk::seed::open_leaves(&self.db).await.unwrap();
        souk::seed::seed_ads(
            &self.db,
            &self.blobs,
            &leaves,
            &[seller],
            count,
            souk::state::till(&self.config),
            self.clock.now(),
        )
        .await
        .unwrap();
    }

    /// A confirmed user.
    pub async fn create_user(&self, email: &str, password: &str) -> i64 {
        create_user(
            &self.db,
            UserSpec {
                email: email.into(),
                password: Some(password.into()),
                locale: "nl-NL".into(),
                ..UserSpec::default()
            },
            self.clock.now(),
        )
        .await
        .expect("user")
    }

    /// A confirmed user (password `password of <email>`) signed in to the app client.
    pub async fn user(&self, email: &str) -> User {
        self.user_with(UserSpec {
            email: email.into(),
            ..UserSpec::default()
        })
        .await
    }

    /// A confirmed user as `spec` has them (a name, a postcode, a locale; `nl-NL` where it
    /// names none), with the password `password of <email>`, signed in to the app client.
    pub async fn user_with(&self, spec: UserSpec) -> User {
        let email = spec.email.clone();
        let password = format!("password of {email}");
        let locale = match spec.locale.as_str() {
            "" => "nl-NL".to_owned(),
            given => given.to_owned(),
        };
        let spec = UserSpec {
            password: Some(password.clone()),
            locale,
            ..spec
        };
        let id = create_user(&self.db, spec, self.clock.now())
            .await
            .expect("user");
        let (token, _) = self
            .user_token(&self.app_client, &email, &password, None)
            .await;
        User {
            id,
            email,
            password,
            token,
        }
    }

    /// A token of a user who signed up through `POST /v1/users` and has not followed the
    /// confirmation link yet (password `a good password`).
    pub async fn unconfirmed_user_token(&self, email: &str) -> String {
        let response = self
            .post("/v1/users")
            .token(&self.token)
            .json(&serde_json::json!({"email": email, "password": "a good password"}))
            .send()
            .await;
        assert_eq!(response.status(), 201, "signing up {email}");
        self.user_token(&self.app_client, email, "a good password", None)
            .await
            .0
    }

    /// The mails sent so far (the test mailer's outbox), oldest first, once the mail queue
    /// is empty: every mail queued by then has been sent. Waits for that up to 10 s.
    pub async fn outbox(&self) -> Vec<String> {
        self.outbox_leaving(0).await
    }

    /// The mails sent so far, once the mail queue holds `left` mails (those that wait to
    /// be tried again). Waits for that up to 10 s.
    pub async fn outbox_leaving(&self, left: i64) -> Vec<String> {
        let mut waiting = 0;
        for _ in 0..100 {
            waiting = self
                .db
                .read(|conn| Box::pin(souk::store::mail_queue::QUEUE.waiting(conn)))
                .await
                .unwrap()
                .count;
            if waiting == left {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(waiting, left, "queued mail not sent within 10 s");
        let dir = self.config.data_dir.join("outbox");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .map(|entries| entries.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        names.sort();
        names
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }

    /// A new access token of `user` (tokens live a day), with `scope` or all.
    pub async fn token_of(&self, user: &User, scope: Option<&str>) -> String {
        self.user_token(&self.app_client, &user.email, &user.password, scope)
            .await
            .0
    }

    pub fn url(&self, path: &str) -> String {
        self.http.url(path)
    }

    /// The OpenAPI document this server publishes, against which answers are checked.
    pub fn document(&self) -> &openapi::Document {
        self.http.document()
    }

    /// A request for `path`; see [`Call`].
    pub fn request(&self, method: Method, path: &str) -> Call {
        self.http.request(method, path)
    }

    pub fn post(&self, path: &str) -> Call {
        self.request(Method::POST, path)
    }

    pub fn put(&self, path: &str) -> Call {
        self.request(Method::PUT, path)
    }

    pub fn patch(&self, path: &str) -> Call {
        self.request(Method::PATCH, path)
    }

    pub fn delete(&self, path: &str) -> Call {
        self.request(Method::DELETE, path)
    }

    /// GET with the app client's token.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.get_with(path, &self.token).await
    }

    /// GET with a given bearer token.
    pub async fn get_with(&self, path: &str, token: &str) -> reqwest::Response {
        self.request(Method::GET, path).token(token).send().await
    }

    /// GET without any token.
    pub async fn get_anonymous(&self, path: &str) -> reqwest::Response {
        self.request(Method::GET, path).send().await
    }

    /// GET with the app client's token that must answer `status`; returns the JSON body.
    pub async fn get_json(&self, path: &str, status: u16) -> Value {
        expect_json(self.get(path).await, status).await
    }
}

/// Whether the run is CI's, where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The PostgreSQL server of the tests. The PostgreSQL variants are ignored outside CI when
/// it is not configured (`build.rs`), so reaching here without it is a failure.
fn postgres_url(test: &str) -> String {
    match std::env::var("SOUK_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ if in_ci() => {
            panic!("CI=true but SOUK_TEST_POSTGRES_URL is not set: PostgreSQL tests must run in CI")
        }
        _ => panic!("{test} (postgres) needs SOUK_TEST_POSTGRES_URL"),
    }
}

/// An empty database of one test: a SQLite file in its data folder, or a PostgreSQL schema
/// of its own (dropped with this).
pub struct FreshDatabase {
    pub url: String,
    schema: Option<PostgresSchema>,
}

impl FreshDatabase {
    pub async fn create(backend: Backend, data_dir: &std::path::Path, test: &str) -> FreshDatabase {
        match backend {
            Backend::Sqlite => FreshDatabase {
                url: format!("sqlite://{}", data_dir.join("souk.db").display()),
                schema: None,
            },
            Backend::Postgres => {
                let schema = PostgresSchema::create(&postgres_url(test)).await;
                FreshDatabase {
                    url: schema.url.clone(),
                    schema: Some(schema),
                }
            }
        }
    }
}

/// A schema of its own for one test, dropped at the end.
struct PostgresSchema {
    admin_url: String,
    name: String,
    url: String,
}

impl PostgresSchema {
    async fn create(admin_url: &str) -> PostgresSchema {
        let name = format!(
            "souk_test_{}",
            ulid::Ulid::generate().to_string().to_lowercase()
        );
        let admin = admin_url.to_owned();
        let statement = format!("CREATE SCHEMA {name}");
        tokio::task::spawn_blocking(move || {
            let mut client = postgres::Client::connect(&admin, postgres::NoTls)
                .unwrap_or_else(|e| panic!("cannot reach SOUK_TEST_POSTGRES_URL: {e}"));
            client.batch_execute(&statement).expect("create schema");
        })
        .await
        .expect("create schema task");
        let separator = if admin_url.contains('?') { '&' } else { '?' };
        // The application name lets a test find its own connections among the others'.
        let url =
            format!("{admin_url}{separator}options=-csearch_path%3D{name}&application_name={name}");
        PostgresSchema {
            admin_url: admin_url.to_owned(),
            name,
            url,
        }
    }
}

impl Drop for PostgresSchema {
    fn drop(&mut self) {
        let admin = self.admin_url.clone();
        // The server's own connections go first: its background workers may be inside a
        // transaction that holds locks in the schema, and while this drop blocks the test's
        // runtime they can never finish it, so `DROP SCHEMA` would wait for them forever.
        let statement = format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = '{name}' AND pid <> pg_backend_pid(); \
             DROP SCHEMA IF EXISTS {name} CASCADE",
            name = self.name
        );
        // Dropping runs inside the test's runtime: do the blocking work on a thread.
        let _ = std::thread::spawn(move || {
            if let Ok(mut client) = postgres::Client::connect(&admin, postgres::NoTls) {
                let _ = client.batch_execute(&statement);
            }
        })
        .join();
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        drop(self.schema.take());
    }
}

/// Declares a test that runs on both backends: `both_backends!(name)` for an
/// `async fn name(app: TestApp)`, giving `name::sqlite` and `name::postgres`. Without
/// `SOUK_TEST_POSTGRES_URL` (outside CI) `build.rs` sets `souk_no_postgres`, and the test
/// runner counts the PostgreSQL variants as ignored.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            use $crate::helpers::{Backend, TestApp};

            #[tokio::test]
            async fn sqlite() {
                super::$name(TestApp::start(Backend::Sqlite, module_path!()).await).await;
            }

            #[tokio::test]
            #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
            async fn postgres() {
                super::$name(TestApp::start(Backend::Postgres, module_path!()).await).await;
            }
        }
    )+};
}

#[derive(Clone, Debug, Default)]
pub struct TestClient {
    pub id: String,
    pub secret: Option<String>,
    pub redirect_uri: String,
}

pub fn encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

pub fn location(response: &reqwest::Response) -> String {
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// The value of a query parameter of a URL (decoded).
pub fn query_value(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The (field, code) pairs of a validation failure's field errors, in order (a detail that
/// names several `fields` has an empty `field`).
pub fn field_codes(error: &Value) -> Vec<(String, String)> {
    assert_eq!(error["code"], "validation-failure", "{error}");
    error["details"]
        .as_array()
        .expect("field errors")
        .iter()
        .map(|d| {
            (
                d["field"].as_str().unwrap_or_default().to_owned(),
                d["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `(field, code)` pairs as `field_codes` gives them, from string slices.
pub fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(f, c)| ((*f).to_owned(), (*c).to_owned()))
        .collect()
}

/// The fields a validation failure names, in order.
pub fn fields(error: &Value) -> Vec<String> {
    field_codes(error)
        .into_iter()
        .map(|(field, _)| field)
        .collect()
}
