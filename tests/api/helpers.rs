//! The test harness: the real router on a real port with a real database, SQLite always,
//! PostgreSQL when `SOUK_TEST_POSTGRES_URL` names a server (a fresh schema per test).

use std::io::Write;
use std::net::SocketAddr;

use serde_json::Value;
use souk::accounts::{ClientSpec, UserSpec, create_client, create_user};
use souk::app::prepare_database;
use souk::clock::Clock;
use souk::config::Config;
use souk::state::AppState;
use souk::store::Db;

pub struct TestApp {
    pub address: SocketAddr,
    pub client: reqwest::Client,
    /// A client registered for every grant and scope.
    pub app_client: TestClient,
    /// A client-credentials token of `app_client` (all client scopes): what `get` sends.
    pub token: String,
    pub clock: Clock,
    pub db: Db,
    pub config: Config,
    pub database_url: String,
    _data_dir: tempfile::TempDir,
    schema: Option<PostgresSchema>,
}

#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl TestApp {
    /// Starts Souk on `backend`, or returns `None` when PostgreSQL is not configured
    /// (outside CI: under `CI=true` a missing PostgreSQL fails the test).
    pub async fn start(backend: Backend, test: &str) -> Option<TestApp> {
        TestApp::start_with(backend, test, &[]).await
    }

    /// Like [`TestApp::start`], with extra settings (`("SOUK_CURIE_PREFIX", "mp")`).
    pub async fn start_with(
        backend: Backend,
        test: &str,
        settings: &[(&str, &str)],
    ) -> Option<TestApp> {
        let data_dir = tempfile::tempdir().expect("temp dir");
        let (database_url, schema) = match backend {
            Backend::Sqlite => (
                format!("sqlite://{}", data_dir.path().join("souk.db").display()),
                None,
            ),
            Backend::Postgres => {
                let base = postgres_url(test)?;
                let schema = PostgresSchema::create(&base).await;
                (schema.url.clone(), Some(schema))
            }
        };
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
        let state = AppState::new(config.clone(), db.clone(), clock.clone()).expect("state");
        tokio::spawn(async move {
            axum::serve(
                listener,
                souk::http::router(state)
                    .into_make_service_with_connect_info::<std::net::SocketAddr>(),
            )
            .await
            .expect("server");
        });
        let mut app = TestApp {
            address,
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            app_client: TestClient::default(),
            token: String::new(),
            clock,
            db,
            config,
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
        Some(app)
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

    /// A confirmed user.
    pub async fn create_user(&self, email: &str, password: &str) -> i64 {
        create_user(
            &self.db,
            UserSpec {
                email: email.into(),
                password: password.into(),
                locale: "nl-NL".into(),
                ..UserSpec::default()
            },
            self.clock.now(),
        )
        .await
        .expect("user")
    }

    /// POSTs a token request with HTTP Basic client authentication.
    pub async fn token_request(
        &self,
        client: &TestClient,
        params: &[(&str, &str)],
    ) -> reqwest::Response {
        self.client
            .post(self.url("/accounts/oauth/token"))
            .basic_auth(&client.id, client.secret.as_deref())
            .form(params)
            .send()
            .await
            .expect("token request")
    }

    pub async fn client_token(&self, client: &TestClient, scope: Option<&str>) -> String {
        let mut params = vec![("grant_type", "client_credentials")];
        if let Some(scope) = scope {
            params.push(("scope", scope));
        }
        let body = expect_json(self.token_request(client, &params).await, 200).await;
        body["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    /// Opens the login page of an authorization request and signs in: the answer after
    /// the login form (the consent page, a redirect, or the login page again).
    pub async fn sign_in(&self, query: &str, email: &str, password: &str) -> reqwest::Response {
        let page = format!("/accounts/oauth/authorize?{query}");
        let login = self
            .client
            .get(self.url(&page))
            .send()
            .await
            .expect("authorize");
        assert_eq!(login.status(), 200, "the login page");
        let cookie = session_cookie(&login);
        let csrf = hidden_field(&login.text().await.unwrap(), "csrf_token");
        self.client
            .post(self.url(&page))
            .header("cookie", &cookie)
            .form(&[
                ("username", email),
                ("password", password),
                ("csrf_token", &csrf),
            ])
            .send()
            .await
            .expect("login")
    }

    /// Drives the sign-in and consent pages as a browser would and returns where the last
    /// step redirected to (the client's redirect_uri with `code` or `error`).
    pub async fn authorize(&self, query: &str, email: &str, password: &str) -> String {
        let page = format!("/accounts/oauth/authorize?{query}");
        let consent = self.sign_in(query, email, password).await;
        if consent.status() == 302 {
            return location(&consent);
        }
        assert_eq!(consent.status(), 200, "the consent page");
        let cookie = session_cookie(&consent);
        let html = consent.text().await.unwrap();
        assert!(
            html.contains("name=\"decision\""),
            "consent page expected: {html}"
        );
        let csrf = hidden_field(&html, "csrf_token");
        let done = self
            .client
            .post(self.url(&page))
            .header("cookie", &cookie)
            .form(&[("decision", "allow"), ("csrf_token", &csrf)])
            .send()
            .await
            .expect("consent");
        assert_eq!(done.status(), 302);
        location(&done)
    }

    /// A user token of `client` for a confirmed user, through the pages and the token
    /// endpoint: returns (access token, refresh token).
    pub async fn user_token(
        &self,
        client: &TestClient,
        email: &str,
        password: &str,
        scope: Option<&str>,
    ) -> (String, String) {
        let mut query = format!(
            "response_type=code&client_id={}&redirect_uri={}",
            client.id,
            encode(&client.redirect_uri)
        );
        if let Some(scope) = scope {
            query.push_str(&format!("&scope={}", encode(scope)));
        }
        let landed = self.authorize(&query, email, password).await;
        let code = query_value(&landed, "code").expect("code");
        let body = expect_json(
            self.token_request(
                client,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", &client.redirect_uri),
                ],
            )
            .await,
            200,
        )
        .await;
        (
            body["access_token"].as_str().unwrap().to_owned(),
            body["refresh_token"].as_str().unwrap().to_owned(),
        )
    }

    /// GET with a given bearer token.
    pub async fn get_with(&self, path: &str, token: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .expect("request")
    }

    /// GET without any token.
    pub async fn get_anonymous(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("request")
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.address, path)
    }

    /// GET with the app client's token.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.get_with(path, &self.token).await
    }

    /// GET that must answer `status`; returns the JSON body.
    pub async fn get_json(&self, path: &str, status: u16) -> Value {
        let response = self.get(path).await;
        expect_json(response, status).await
    }
}

/// Checks the status and returns the JSON body; an error body must have the documented
/// shape, with `logref` equal to `X-Request-Id`.
pub async fn expect_json(response: reqwest::Response, status: u16) -> Value {
    let actual = response.status().as_u16();
    let request_id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .expect("every response has X-Request-Id");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.expect("body");
    assert_eq!(actual, status, "unexpected status; body: {text}");
    assert!(
        content_type.starts_with("application/json"),
        "content type {content_type}"
    );
    let body: Value = serde_json::from_str(&text).expect("JSON body");
    if status >= 400 {
        assert_error_shape(&body, status, &request_id);
    }
    body
}

pub fn assert_error_shape(body: &Value, status: u16, request_id: &str) {
    assert_eq!(body["statuscode"], status, "{body}");
    assert_eq!(body["logref"], request_id, "logref must equal X-Request-Id");
    let code = body["code"].as_str().expect("code");
    assert_eq!(
        body["_links"]["help"]["href"],
        format!("/docs/errors/{code}"),
        "{body}"
    );
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    if let Some(details) = body.get("details") {
        for detail in details.as_array().expect("details is an array") {
            assert!(detail.get("field").is_some() || detail.get("fields").is_some());
            assert!(detail["code"].is_string() && detail["message"].is_string());
        }
    }
}

/// The PostgreSQL server of the tests, or `None` (with a note in the test output) when it
/// is not configured outside CI.
fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("SOUK_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but SOUK_TEST_POSTGRES_URL is not set: PostgreSQL tests must run in CI")
        }
        _ => {
            // Written past the test harness's capture so that it shows in the output.
            let _ = writeln!(
                std::io::stderr(),
                "NOTE: {test} (postgres) did not run: SOUK_TEST_POSTGRES_URL is not set"
            );
            None
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
        let statement = format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name);
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
/// `async fn name(app: TestApp)`, giving `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            use $crate::helpers::{Backend, TestApp};

            #[tokio::test]
            async fn sqlite() {
                let app = TestApp::start(Backend::Sqlite, concat!(module_path!())).await.expect("sqlite");
                super::$name(app).await;
            }

            #[tokio::test]
            async fn postgres() {
                if let Some(app) = TestApp::start(Backend::Postgres, module_path!()).await {
                    super::$name(app).await;
                }
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

/// `souk_session=...` from a response's Set-Cookie.
pub fn session_cookie(response: &reqwest::Response) -> String {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("souk_session="))
        .map(|v| v.split(';').next().unwrap().to_owned())
        .expect("a session cookie")
}

/// The value of a hidden form field in a page.
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

/// The fields a validation failure names, in order.
pub fn fields(error: &Value) -> Vec<String> {
    field_codes(error)
        .into_iter()
        .map(|(field, _)| field)
        .collect()
}

pub fn hidden_field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in {html}"))
        + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}
