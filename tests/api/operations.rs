//! Health, readiness, metrics and the command line.

use std::process::Command;

use crate::both_backends;
use crate::helpers::TestApp;

both_backends!(
    health_and_readiness,
    metrics_count_requests_by_route_and_status
);

async fn health_and_readiness(app: TestApp) {
    assert_eq!(app.get_json("/healthz", 200).await["status"], "ok");
    let ready = app.get_json("/readyz", 200).await;
    assert_eq!(ready["status"], "ready");
    assert!(ready["schemaVersion"].as_i64().unwrap() >= 1);
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
