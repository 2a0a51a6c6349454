//! Documentation: every address Souk emits resolves, the pages are self-contained, and the
//! OpenAPI document is valid and pinned.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::both_backends;
use crate::helpers::TestApp;

both_backends!(every_emitted_rel_and_describedby_resolves);

/// Collects prefixed rels and describedby addresses from a body.
fn collect(value: &Value, rels: &mut BTreeSet<String>, described: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                if let Some(rel) = key.strip_prefix("svc:") {
                    rels.insert(rel.to_owned());
                }
                if key == "describedby" {
                    described.insert(item["href"].as_str().unwrap().to_owned());
                }
                collect(item, rels, described);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect(i, rels, described)),
        _ => {}
    }
}

async fn every_emitted_rel_and_describedby_resolves(app: TestApp) {
    let tree = app.get_json("/v1/categories", 200).await;
    let l1 = &tree["_embedded"]["svc:category"][0];
    let leaf = &l1["_embedded"]["svc:category"][0]["_links"];
    let mut bodies = vec![app.get_json("/v1", 200).await, tree.clone()];
    for path in [
        l1["_links"]["self"]["href"].as_str().unwrap(),
        leaf["self"]["href"].as_str().unwrap(),
        leaf["svc:category-attributes"]["href"].as_str().unwrap(),
        leaf["svc:category-fees"]["href"].as_str().unwrap(),
    ] {
        bodies.push(app.get_json(path, 200).await);
    }
    let (mut rels, mut described) = (BTreeSet::new(), BTreeSet::new());
    for body in &bodies {
        collect(body, &mut rels, &mut described);
        let curie = &body["_links"]["curies"][0];
        assert_eq!(curie["href"], format!("{}/docs/rels/{{rel}}", app.url("")));
    }
    assert!(rels.len() >= 9, "{rels:?}");
    for rel in &rels {
        let response = app.get(&format!("/docs/rels/{rel}")).await;
        assert_eq!(response.status(), 200, "rel {rel}");
    }
    assert!(described.len() >= 5, "{described:?}");
    for href in &described {
        assert!(href.starts_with(&app.url("/docs/resources/")), "{href}");
        let response = app.client.get(href).send().await.unwrap();
        assert_eq!(response.status(), 200, "{href}");
    }
    let unknown = app.get("/docs/rels/no-such-rel").await;
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn every_error_code_has_a_page() {
    let app = TestApp::start(crate::helpers::Backend::Sqlite, "error_pages")
        .await
        .unwrap();
    let listing = app.get("/docs/errors").await.text().await.unwrap();
    for code in souk::error::ErrorCode::ALL {
        let response = app.get(&format!("/docs/errors/{}", code.as_str())).await;
        assert_eq!(response.status(), 200, "{}", code.as_str());
        let page = response.text().await.unwrap();
        assert!(page.contains(&code.status().as_u16().to_string()));
        assert!(listing.contains(&format!("/docs/errors/{}", code.as_str())));
    }
}

/// The docs pages reference nothing outside the server, and every reference resolves.
#[tokio::test]
async fn docs_render_without_leaving_the_machine() {
    let app = TestApp::start(crate::helpers::Backend::Sqlite, "docs_pages")
        .await
        .unwrap();
    let mut to_visit = vec!["/docs".to_owned()];
    let mut visited = BTreeSet::new();
    while let Some(path) = to_visit.pop() {
        if !visited.insert(path.clone()) {
            continue;
        }
        let response = app.get(&path).await;
        assert_eq!(response.status(), 200, "{path}");
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        if !content_type.starts_with("text/html") {
            continue;
        }
        let csp = response.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("style-src 'self'"),
            "{csp}"
        );
        let page = response.text().await.unwrap();
        assert!(!page.contains("<script"), "{path} has a script");
        for attribute in ["href=\"", "src=\""] {
            for reference in page.split(attribute).skip(1) {
                let target = reference.split('"').next().unwrap();
                assert!(
                    target.starts_with('/'),
                    "{path} references {target}, outside the server"
                );
                if target.starts_with("/docs") {
                    to_visit.push(target.to_owned());
                }
            }
        }
    }
    assert!(visited.len() > 20, "{} pages visited", visited.len());
}

#[tokio::test]
async fn openapi_document_is_pinned_and_valid() {
    let app = TestApp::start_with(
        crate::helpers::Backend::Sqlite,
        "openapi",
        &[("SOUK_BASE_URL", "http://127.0.0.1:8080")],
    )
    .await
    .unwrap();
    let document: Value = app.get_json("/openapi.json", 200).await;
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(document["info"]["version"], "1.0");
    for path in [
        "/v1/categories",
        "/v1/categories/{categoryId}",
        "/v1/categories/{l1CategoryId}/{l2CategoryId}/fees",
        "/v1",
        "/v2",
        "/healthz",
    ] {
        assert!(document["paths"][path]["get"].is_object(), "{path}");
    }
    let pretty = serde_json::to_string_pretty(&document).unwrap() + "\n";
    let snapshot_path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/openapi.json");
    if std::env::var("SOUK_UPDATE_SNAPSHOTS").is_ok() {
        std::fs::write(snapshot_path, &pretty).unwrap();
    }
    let pinned = std::fs::read_to_string(snapshot_path).unwrap_or_default();
    assert!(
        pinned == pretty,
        "the OpenAPI document changed. If the change is intended, run \
         `SOUK_UPDATE_SNAPSHOTS=1 cargo test openapi` and record it in CHANGELOG.md"
    );
    validate_openapi(snapshot_path);
}

/// Validates with openapi-spec-validator (PyPI), which `.ci/run` installs; outside CI a
/// missing validator is reported in the output instead.
fn validate_openapi(path: &str) {
    let output = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator", path])
        .output();
    let installed = output.as_ref().is_ok_and(|o| {
        !String::from_utf8_lossy(&o.stderr).contains("No module named openapi_spec_validator")
    });
    if !installed {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true but openapi-spec-validator is not installed"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "NOTE: OpenAPI validation did not run: pip install openapi-spec-validator"
        );
        return;
    }
    let output = output.unwrap();
    assert!(
        output.status.success(),
        "openapi-spec-validator refused the document: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
