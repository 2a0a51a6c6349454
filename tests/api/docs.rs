//! Documentation: every address Souk emits resolves, the pages are self-contained, and the
//! OpenAPI document is valid and pinned.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{Backend, TestApp};

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
        let path = href.strip_prefix(&app.url("")).unwrap();
        let response = app.get_anonymous(path).await;
        assert_eq!(response.status(), 200, "{href}");
    }
    let unknown = app.get("/docs/rels/no-such-rel").await;
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn every_error_code_has_a_page() {
    let app = TestApp::start(Backend::Sqlite, "error_pages").await;
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
    let app = TestApp::start(Backend::Sqlite, "docs_pages").await;
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
async fn openapi_document_is_pinned() {
    let app = TestApp::start_with(
        Backend::Sqlite,
        "openapi",
        &[("SOUK_BASE_URL", "http://127.0.0.1:8080")],
    )
    .await;
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
    // Every operation's tag is declared, with its description, at the top.
    let declared: Vec<&str> = document["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tag| tag["name"].as_str().unwrap())
        .collect();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for tag in operation["tags"].as_array().into_iter().flatten() {
                let tag = tag.as_str().unwrap();
                assert!(declared.contains(&tag), "{method} {path}: {tag}");
            }
        }
    }
    let pretty = serde_json::to_string_pretty(&document).unwrap() + "\n";
    if std::env::var("SOUK_UPDATE_SNAPSHOTS").is_ok() {
        std::fs::write(SNAPSHOT, &pretty).unwrap();
    }
    let pinned = std::fs::read_to_string(SNAPSHOT).unwrap_or_default();
    assert!(
        pinned == pretty,
        "the OpenAPI document changed. If the change is intended, run \
         `SOUK_UPDATE_SNAPSHOTS=1 cargo test openapi` and record it in CHANGELOG.md"
    );
}

/// The pinned document passes openapi-spec-validator (PyPI), which `.ci/run` installs;
/// outside CI a machine without it counts this test as ignored (`build.rs`).
#[test]
#[cfg_attr(
    souk_no_openapi_validator,
    ignore = "openapi-spec-validator is not installed (pip install openapi-spec-validator)"
)]
fn openapi_document_is_valid() {
    let output = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator", SNAPSHOT])
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "openapi-spec-validator refused the document: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/openapi.json");

/// The helpers hold every answer to the document: they find the operation a request
/// reaches (`/v2` as `/v1`, the most specific template), and refuse a route, a method or a
/// status the document does not list, a JSON body where it documents none, and a body that
/// does not match the documented schema.
#[tokio::test]
async fn answers_are_held_to_the_document() {
    use reqwest::Method;

    let app = TestApp::start(Backend::Sqlite, "document_checks").await;
    let document = app.document();
    let template = |method: Method, path: &str| document.route(&method, path).map(|r| r.template);
    assert_eq!(
        template(Method::GET, "/v1/advertisements/m12?_links=false").as_deref(),
        Ok("/v1/advertisements/{itemId}")
    );
    assert_eq!(
        template(
            Method::POST,
            "/v2/advertisements/m1/transactions/3/actions/cancel"
        )
        .as_deref(),
        Ok("/v1/advertisements/{itemId}/transactions/{transactionId}/actions/cancel")
    );
    assert_eq!(template(Method::GET, "/v2").as_deref(), Ok("/v2"));
    assert_eq!(
        template(Method::GET, "/v1/categories/1/101").as_deref(),
        Ok("/v1/categories/{l1CategoryId}/{l2CategoryId}")
    );
    assert!(template(Method::GET, "/v1/nothing-here").is_err());
    assert!(template(Method::GET, "/v1/advertisements/").is_err());
    assert!(template(Method::DELETE, "/v1/categories").is_err());

    let ad = document
        .route(&Method::GET, "/v1/advertisements/m1")
        .unwrap();
    assert!(document.check_status(&ad, 200).is_ok());
    assert!(document.check_status(&ad, 304).is_ok());
    assert!(document.check_status(&ad, 418).is_err());
    assert!(
        document.check_json(Some(&ad), 304, &json!({})).is_err(),
        "304 has no body"
    );
    let error = json!({"logref": "x", "statuscode": 404, "code": "advertisement-not-found", "message": "Weg"});
    assert!(document.check_json(Some(&ad), 404, &error).is_ok());
    assert!(
        document
            .check_json(Some(&ad), 404, &json!({"code": "x"}))
            .is_err()
    );
    assert!(
        document.check_json(None, 404, &error).is_ok(),
        "outside the document: Error"
    );
    let valid = json!({"itemId": "m1", "title": "Fiets", "description": "Goed.", "categoryId": 402,
                       "status": "online", "priceModel": {"modelType": "fixed", "askingPrice": 100},
                       "location": {"postcode": "1097DN"}, "startDate": "2026-11-23T10:00:00+00:00"});
    assert!(document.check_json(Some(&ad), 200, &valid).is_ok());
    for (key, wrong) in [
        ("itemId", json!("m012")),
        ("status", json!("sold")),
        ("startDate", json!("yesterday")),
        ("priceModel", json!({"askingPrice": 100})),
    ] {
        let mut body = valid.clone();
        body[key] = wrong;
        assert!(document.check_json(Some(&ad), 200, &body).is_err(), "{key}");
    }
}
