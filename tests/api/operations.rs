//! Health, readiness, metrics and the command line.

use std::process::Command;

use reqwest::Method;

use crate::both_backends;
use crate::helpers::{Http, TestApp, expect_json};

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
}

async fn metrics_count_requests_by_route_and_status(app: TestApp) {
    app.get_json("/v1/categories/1", 200).await;
    app.get_json("/v1/categories/424242", 404).await;
    let response = app.get("/metrics").await;
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = response.text().await.unwrap();
    assert!(text.contains(
        "souk_http_requests_total{method=\"GET\",route=\"/v1/categories/{categoryId}\",status=\"200\"} 1"
    ), "{text}");
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
    assert!(text.contains("database_url = \"postgres://souk:***@db.internal/souk\""));
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

/// A `souk serve` of a test. A test that fails before it stops the server still ends it
/// (on drop): a server left behind would hold whatever it inherited, the build lock too.
struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `souk serve` on a free port with `env`; returns the server, its base URL and
/// what it printed on stdout before serving.
fn spawn_souk(env: &[(&str, &str)]) -> (Served, String, Vec<String>) {
    use std::io::BufRead;

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut served = Served(
        Command::new(env!("CARGO_BIN_EXE_souk"))
            .arg("serve")
            .env_clear()
            .env("SOUK_LISTEN", &listen)
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut printed = Vec::new();
    let stdout = std::io::BufReader::new(served.0.stdout.take().unwrap());
    for line in stdout.lines() {
        let line = line.unwrap();
        let serving = line.starts_with("Souk serves");
        printed.push(line);
        if serving {
            break;
        }
    }
    (served, format!("http://{listen}"), printed)
}

fn stop(mut served: Served) -> String {
    use std::io::Read;

    let child = &mut served.0;
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "souk exits cleanly on SIGTERM: {exit:?}");
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    logs
}

/// The binary as an operator runs it: a new sandbox prints working demo credentials and
/// has demo ads (the demo users are the database's first two), it serves the default
/// taxonomy, logs JSON lines that carry each request's id, and stops
/// cleanly on SIGTERM.
#[test]
fn the_binary_serves_logs_request_ids_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().display().to_string();
    let (child, base, printed) =
        spawn_souk(&[("SOUK_DATA_DIR", &data_dir), ("SOUK_LOG_FORMAT", "json")]);
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
    let logs = stop(child);
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
    let (child, _, printed) = spawn_souk(&env);
    stop(child);
    assert!(
        !printed.iter().any(|l| l.contains("client_secret")),
        "{printed:?}"
    );
    assert!(!dir.path().join("sandbox.txt").exists());
    let listed = souk(&env, &["client", "list"]);
    assert_eq!(String::from_utf8(listed.stdout).unwrap().trim(), "[]");
}
