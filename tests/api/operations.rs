//! Health, readiness, metrics and the command line.

use std::process::Command;

use reqwest::Method;

use crate::both_backends;
use crate::helpers::{Backend, FreshDatabase, Http, Served, TestApp, expect_json, user_with_token};

both_backends!(
    health_and_readiness,
    metrics_count_requests_by_route_and_status
);

async fn health_and_readiness(app: TestApp) {
    assert_eq!(app.get_json("/healthz", 200).await["status"], "ok");
    let ready = app.get_json("/readyz", 200).await;
    assert_eq!(ready["status"], "ready");
    assert_eq!(
        ready["schemaVersion"],
        souk::store::migrations::latest_version(),
        "the latest migration"
    );

    // A database behind the binary (its latest migration not applied) is not ready: a
    // balancer sends the replica nothing, though the process is up.
    let latest = souk::store::migrations::latest_version();
    let sql = "DELETE FROM schema_migrations WHERE version = $1";
    app.execute(sql, vec![latest.into()]).await;
    let behind = app.get_json("/readyz", 503).await;
    assert_eq!(behind["code"], "service-unavailable");
    assert_eq!(app.get_json("/healthz", 200).await["status"], "ok");
}

async fn metrics_count_requests_by_route_and_status(app: TestApp) {
    // Two requests of one series, and a second series of the same route.
    app.get_json("/v1/categories/1", 200).await;
    app.get_json("/v1/categories/2", 200).await;
    app.get_json("/v1/categories/424242", 404).await;
    let response = app.get("/metrics").await;
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = response.text().await.unwrap();
    let ok_series = "souk_http_requests_total{method=\"GET\",route=\"/v1/categories/{categoryId}\",status=\"200\"} ";
    assert_eq!(
        text.matches(ok_series).count(),
        1,
        "one line a series: {text}"
    );
    assert!(text.contains(&format!("{ok_series}2")), "{text}");
    assert!(text.contains("route=\"/v1/categories/{categoryId}\",status=\"404\"} 1"));
    assert!(text.contains("souk_http_request_duration_seconds_bucket{"));
    assert!(text.contains("souk_db_connections{state=\"idle\"}"));
    assert!(text.contains("souk_db_connections_max "));
}

fn souk(app_env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_souk"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(app_env.iter().copied())
        .output()
        .expect("run souk")
}

#[test]
fn config_prints_every_setting_with_secrets_redacted() {
    let output = souk(
        &[
            (
                "SOUK_DATABASE_URL",
                "postgres://souk:hunter2@db.internal/souk",
            ),
            ("SOUK_REGION", "nl-BE"),
            ("SOUK_CURIE_PREFIX", "mp"),
        ],
        &["config"],
    );
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("database_url = \"postgres://souk:***@db.internal:5432/souk\""));
    assert!(text.contains("region = \"nl-BE\""));
    assert!(text.contains("curie_prefix = \"mp\""));
    assert!(text.contains("listen = \"127.0.0.1:8080\""));
    assert!(text.contains("environment = \"sandbox\""));
}

#[test]
fn a_bad_setting_stops_the_command_with_a_clear_message() {
    let output = souk(&[("SOUK_REGION", "de-DE")], &["config"]);
    assert!(!output.status.success());
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(text.contains("region") && text.contains("de-DE"), "{text}");
}

/// A `RUST_LOG` that is not a filter is said in the log, not dropped in silence.
#[test]
fn a_malformed_rust_log_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().display().to_string();
    let served = Served::start(&[("SOUK_DATA_DIR", &data_dir), ("RUST_LOG", "souk=loud")]);
    let log = served.stop();
    assert!(log.contains("RUST_LOG is not a filter"), "{log}");
}

/// The binary as an operator runs it: a new sandbox prints working demo credentials and
/// has demo ads (the demo users are the database's first two), it serves the default
/// taxonomy, logs JSON lines that carry each request's id, and stops
/// cleanly on SIGTERM.
#[test]
fn the_binary_serves_logs_request_ids_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().display().to_string();
    let served = Served::start(&[("SOUK_DATA_DIR", &data_dir), ("SOUK_LOG_FORMAT", "json")]);
    let (base, printed) = (served.base_url.clone(), served.printed.clone());
    // Asked for port 0, it names the port it bound, in its links too.
    assert!(
        base.starts_with("http://127.0.0.1:") && !base.ends_with(":0"),
        "{base}"
    );
    assert!(
        printed.contains(&format!(
            "Souk serves {base}/v1 (docs: {base}/docs). Try: curl {base}/v1"
        )),
        "{printed:?}"
    );
    let value_of = |label: &str| {
        printed
            .iter()
            .find_map(|l| l.trim().strip_prefix(label))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("no {label} in {printed:?}"))
    };
    let (client_id, secret) = (value_of("client_id:"), value_of("client_secret:"));
    assert!(
        std::fs::read_to_string(dir.path().join("sandbox.txt"))
            .unwrap()
            .contains(&client_id)
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let written = std::fs::metadata(dir.path().join("sandbox.txt")).unwrap();
        assert_eq!(
            written.permissions().mode() & 0o777,
            0o600,
            "the file of the demo client's secret is its owner's only"
        );
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let logref = runtime.block_on(async {
        let server = Http::connect(&base).await;
        let token = server
            .request(Method::POST, "/accounts/oauth/token")
            .basic_auth(&client_id, Some(&secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await;
        let token = expect_json(token, 200).await["access_token"]
            .as_str()
            .unwrap()
            .to_owned();
        let get = |path: String| {
            let request = server.request(Method::GET, &path).token(&token);
            async move { expect_json(request.send().await, 200).await }
        };
        let tree = get("/v1/categories".into()).await;
        assert!(tree["_embedded"]["svc:category"].as_array().unwrap().len() >= 15);
        // Demo ads: the two demo users' online ads, 40 in all, with images.
        let first = get("/v1/advertisements/m1".into()).await;
        assert_eq!(
            first["_embedded"]["svc:advertisement-images"]["_embedded"]["svc:advertisement-image"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        // Real pictures: the blob links answer.
        let picture = &first["_embedded"]["svc:advertisement-images"]["_embedded"]
            ["svc:advertisement-image"][0]["_links"]["medium"]["href"];
        let blob = server
            .request(Method::GET, picture.as_str().unwrap())
            .token(&token)
            .send()
            .await;
        assert_eq!(blob.status(), 200, "{picture}");
        assert_eq!(blob.headers()["content-type"], "image/jpeg");
        image::load_from_memory(&blob.bytes().await.unwrap()).expect("a whole JPEG");
        let mut demo_ads = 0;
        for seller in [1, 2] {
            let user = get(format!("/v1/users/{seller}")).await;
            assert!(["Jan de Vries", "Marie Dubois"].contains(&user["name"].as_str().unwrap()));
            let ads = get(format!("/v1/users/{seller}/advertisements")).await;
            demo_ads += ads["totalCount"].as_i64().unwrap();
        }
        assert_eq!(demo_ads, 40);
        let missing = server
            .request(Method::GET, "/v1/categories/404404")
            .token(&token)
            .send()
            .await;
        expect_json(missing, 404).await["logref"]
            .as_str()
            .unwrap()
            .to_owned()
    });
    let logs = served.stop();
    let request_line = logs
        .lines()
        .find(|line| line.contains(&logref))
        .unwrap_or_else(|| panic!("no log line has {logref}:\n{logs}"));
    let parsed: serde_json::Value = serde_json::from_str(request_line).expect("a JSON log line");
    assert_eq!(parsed["status"], 404);
    assert!(logs.contains("shutdown signal received"));
}

/// Production never creates demo data.
#[test]
fn production_starts_without_demo_data() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().display().to_string();
    let env = [
        ("SOUK_DATA_DIR", data_dir.as_str()),
        ("SOUK_ENVIRONMENT", "production"),
    ];
    let served = Served::start(&env);
    let printed = served.printed.clone();
    served.stop();
    assert!(
        !printed.iter().any(|l| l.contains("client_secret")),
        "{printed:?}"
    );
    assert!(!dir.path().join("sandbox.txt").exists());
    let listed = souk(&env, &["client", "list"]);
    assert_eq!(String::from_utf8(listed.stdout).unwrap().trim(), "[]");
}

/// A request with an `Idempotency-Key` answered 408 goes on writing, and a SIGTERM then
/// waits for it: its answer is kept, and the retry on the next start replays it. (When
/// shutdown dropped the request, its write was lost, its key stayed pending, and the
/// retry ran it anew.) The write is held up by another connection's lock on the user's
/// row; SQLite's one writer would hold up the key's claim too, so PostgreSQL only.
#[tokio::test]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn shutdown_waits_for_a_request_that_outlived_its_answer() {
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let database = FreshDatabase::create(Backend::Postgres, dir.path(), module_path!()).await;
    let data_dir = dir.path().display().to_string();
    let env = [
        ("SOUK_DATA_DIR", data_dir.as_str()),
        ("SOUK_DATABASE_URL", database.url.as_str()),
        ("SOUK_ENVIRONMENT", "production"),
        ("SOUK_REQUEST_TIMEOUT_SECS", "1"),
    ];
    let (db, token) = user_with_token(&env).await;
    let token = token.as_str();
    let first = Served::start(&env);
    let blocker = tokio::spawn(async move {
        db.write(move |conn| {
            Box::pin(async move {
                conn.execute("UPDATE users SET name = name", &[]).await?;
                tokio::time::sleep(Duration::from_millis(1_500)).await;
                Ok::<_, souk::store::DbError>(())
            })
        })
        .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let save = |base_url: String| async move {
        Http::connect(&base_url)
            .await
            .request(Method::POST, "/v1/savedsearches")
            .token(token)
            .header("idempotency-key", "tot-morgen")
            .json(&serde_json::json!({"searchRequest": {"query": "fiets"}}))
            .send()
            .await
    };
    let answered = save(first.base_url.clone()).await;
    assert_eq!(expect_json(answered, 408).await["code"], "request-timeout");
    // The write still waits for the lock as the server is told to stop.
    let stopped = tokio::task::spawn_blocking(move || first.stop());
    blocker.await.unwrap().unwrap();
    let log = stopped.await.unwrap();
    assert!(
        log.contains("waiting for requests that outlived their answers"),
        "{log}"
    );

    let second = Served::start(&env);
    let retry = save(second.base_url.clone()).await;
    assert_eq!(
        retry
            .headers()
            .get("idempotency-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true"),
        "the retry replays the answer kept at shutdown"
    );
    let saved = expect_json(retry, 201).await;
    let listed = expect_json(
        Http::connect(&second.base_url)
            .await
            .request(Method::GET, "/v1/savedsearches")
            .token(token)
            .send()
            .await,
        200,
    )
    .await;
    assert_eq!(listed["totalCount"], 1, "one saved search: {saved}");
    second.stop();
}

/// SIGTERM while a webhook delivery is in flight: the sender finishes it (the receiver's
/// answer comes after the signal) and the queue forgets it, so it is not made again. (When
/// shutdown dropped the workers, the delivery stayed queued under its lease, to be made a
/// second time.)
#[tokio::test(flavor = "multi_thread")]
async fn shutdown_finishes_the_delivery_in_flight_sqlite() {
    shutdown_finishes_the_delivery_in_flight(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn shutdown_finishes_the_delivery_in_flight_postgres() {
    shutdown_finishes_the_delivery_in_flight(Backend::Postgres).await;
}

async fn shutdown_finishes_the_delivery_in_flight(backend: Backend) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use souk::store::events::{self, NewEvent};
    use souk::store::hooks::{self, DELIVERIES, HookWrite};

    // A receiver that says when a delivery arrives and answers it two seconds later.
    let (arrived, mut arrivals) = tokio::sync::mpsc::unbounded_channel();
    let answered = Arc::new(AtomicUsize::new(0));
    let counted = answered.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let (arrived, counted) = (arrived.clone(), counted.clone());
            async move {
                let _ = arrived.send(());
                tokio::time::sleep(Duration::from_secs(2)).await;
                counted.fetch_add(1, Ordering::SeqCst);
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let database = FreshDatabase::create(backend, dir.path(), module_path!()).await;
    let data_dir = dir.path().display().to_string();
    let env = [
        ("SOUK_DATA_DIR", data_dir.as_str()),
        ("SOUK_DATABASE_URL", database.url.as_str()),
        ("SOUK_ENVIRONMENT", "production"),
        ("SOUK_WEBHOOK_ALLOW", "127.0.0.0/8"),
    ];
    let (db, _) = user_with_token(&env).await;
    // A hook of the served test's client, and an event for it with its delivery queued.
    let now = souk::clock::Clock::default().now();
    db.write(move |conn| {
        Box::pin(async move {
            let client: String = conn
                .query_one("SELECT client_id FROM clients", &[])
                .await?
                .get("client_id")?;
            let hook = HookWrite {
                url: &url,
                secret: Some("geheim"),
                active: true,
                events: &["advertisement.created"],
            };
            hooks::insert(conn, &client, hook, now).await?;
            let event = NewEvent {
                event_type: "advertisement.created",
                event_data: "{}".into(),
                resource_rel: "advertisement",
                resource_path: "/advertisements/m1".into(),
                resource: "{}".into(),
            };
            events::record(conn, &event, &[], Some(&client), now).await
        })
    })
    .await
    .unwrap()
    .expect("an event for its client");

    let served = Served::start(&env);
    tokio::time::timeout(Duration::from_secs(20), arrivals.recv())
        .await
        .expect("the delivery is made within 20 s");
    let log = tokio::task::spawn_blocking(move || served.stop())
        .await
        .unwrap();
    assert_eq!(answered.load(Ordering::SeqCst), 1, "{log}");
    let waiting = db
        .read(|conn| Box::pin(DELIVERIES.waiting(conn)))
        .await
        .unwrap()
        .count;
    assert_eq!(waiting, 0, "the delivery in flight was finished: {log}");
}

/// A connection that sends its request's head too slowly (a byte now and then, or nothing
/// after a first line) is closed after `SOUK_HEADER_TIMEOUT_SECS`, and an idle keep-alive
/// one too; other connections are served meanwhile.
#[tokio::test]
async fn a_connection_slow_to_send_its_head_is_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let settings = [("SOUK_HEADER_TIMEOUT_SECS", "1")];
    let app = TestApp::start_with(Backend::Sqlite, "header_timeout", &settings).await;
    let address = app.url("").trim_start_matches("http://").to_owned();
    let mut slow = tokio::net::TcpStream::connect(&address).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: souk\r\n")
        .await
        .unwrap();
    let mut idle = tokio::net::TcpStream::connect(&address).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: souk\r\n\r\n")
        .await
        .unwrap();
    // Served meanwhile.
    assert_eq!(app.get_json("/healthz", 200).await["status"], "ok");
    let mut answer = vec![0; 4096];
    let read = idle.read(&mut answer).await.unwrap();
    assert!(answer[..read].starts_with(b"HTTP/1.1 200"), "{read} bytes");
    for (name, mut stream) in [("slow", slow), ("idle", idle)] {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            stream.read_to_end(&mut rest),
        )
        .await;
        assert!(
            closed.is_ok(),
            "the {name} connection is still open after 20 s"
        );
    }
}

/// `SOUK_MAX_CONNECTIONS` bounds the connections served at once (the bound itself is
/// tested on `http::serve`), and `/metrics` shows it with the connections open.
#[tokio::test]
async fn metrics_show_the_connections_and_their_bound() {
    let settings = [("SOUK_MAX_CONNECTIONS", "3")];
    let app = TestApp::start_with(Backend::Sqlite, "max_connections", &settings).await;
    let metrics = app.get_anonymous("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("souk_http_connections_max 3\n"),
        "{metrics}"
    );
    let open = metrics
        .lines()
        .find_map(|line| line.strip_prefix("souk_http_connections "))
        .and_then(|n| n.parse::<usize>().ok());
    assert!(
        open.is_some_and(|open| (1..=3).contains(&open)),
        "at least this request's: {metrics}"
    );
}
