//! The authorization code flow in a real browser (Debian's chromium, driven through
//! chromedriver): sign in, allow, land with a code. The screenshots of the pages go to
//! `target/screenshots/`, or to `docs/screenshots/` with `SOUK_UPDATE_SCREENSHOTS=1`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{ClientBuilder, Locator};
use serde_json::json;

use crate::helpers::{Backend, TestApp, encode};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts chromedriver. Without it the test is ignored outside CI (`build.rs`); in CI it
/// fails here.
fn start_driver() -> (Driver, u16) {
    assert!(
        std::path::Path::new(CHROMEDRIVER).exists(),
        "{CHROMEDRIVER} is missing (apt-get install chromium chromium-driver)"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (Driver(child), port)
}

async fn browser(port: u16, profile: &std::path::Path) -> fantoccini::Client {
    // Two TLS stacks are linked in the tests; the WebDriver client needs one chosen.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1000,800",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    ClientBuilder::rustls()
        .expect("rustls")
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a browser session")
}

fn screenshot_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = if std::env::var("SOUK_UPDATE_SCREENSHOTS").is_ok() {
        root.join("docs/screenshots")
    } else {
        root.join("target/screenshots")
    };
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    souk_no_browser,
    ignore = "chromedriver is missing (apt-get install chromium chromium-driver)"
)]
async fn authorization_code_flow_in_a_real_browser() {
    let (_driver, port) = start_driver();
    let app = TestApp::start(Backend::Sqlite, "browser").await;
    app.create_user("jan@souk.test", "password-of-jan").await;
    // The sandbox's demo callback shows the code on a page of Souk's own.
    let callback = app.url("/accounts/demo-callback");
    let client = app
        .register_client(souk::accounts::ClientSpec {
            name: "Marktplaats Partner App".into(),
            redirect_uris: vec![callback.clone()],
            ..Default::default()
        })
        .await;
    let profile = tempfile::tempdir().unwrap();
    let browser = browser(port, profile.path()).await;
    let shots = screenshot_dir();
    let authorize = app.url(&format!(
        "/accounts/oauth/authorize?response_type=code&client_id={}&redirect_uri={}&scope=read+write&state=xyz%20123",
        client.id,
        encode(&callback)
    ));
    browser.goto(&authorize).await.unwrap();
    std::fs::write(shots.join("login.png"), browser.screenshot().await.unwrap()).unwrap();
    browser
        .find(Locator::Id("username"))
        .await
        .unwrap()
        .send_keys("jan@souk.test")
        .await
        .unwrap();
    browser
        .find(Locator::Id("password"))
        .await
        .unwrap()
        .send_keys("password-of-jan")
        .await
        .unwrap();
    browser
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    // Clicks navigate; wait for the next page's element rather than racing it.
    let allow = browser
        .wait()
        .at_most(Duration::from_secs(45))
        .for_element(Locator::Css("button[value=allow]"))
        .await
        .expect("the consent page");
    let page = browser.source().await.unwrap();
    assert!(
        page.contains("Marktplaats Partner App"),
        "the consent page names the client"
    );
    std::fs::write(
        shots.join("consent.png"),
        browser.screenshot().await.unwrap(),
    )
    .unwrap();
    allow.click().await.unwrap();
    let code = browser
        .wait()
        .at_most(Duration::from_secs(45))
        .for_element(Locator::Id("code"))
        .await
        .expect("landed on the callback")
        .text()
        .await
        .unwrap();
    let landed = browser.current_url().await.unwrap();
    assert!(landed.as_str().starts_with(&callback), "{landed}");
    let pairs: Vec<(String, String)> = landed.query_pairs().into_owned().collect();
    assert!(pairs.contains(&("state".into(), "xyz 123".into())));
    assert!(pairs.contains(&("code".into(), code.clone())));
    std::fs::write(
        shots.join("callback.png"),
        browser.screenshot().await.unwrap(),
    )
    .unwrap();
    let token = app
        .token_request(
            &client,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &callback),
            ],
        )
        .await;
    assert_eq!(token.status(), 200);

    // The documentation renders with no request leaving the machine.
    browser.goto(&app.url("/docs")).await.unwrap();
    let origins = browser
        .execute(
            "return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)",
            vec![],
        )
        .await
        .unwrap();
    let origins = origins.as_array().unwrap();
    assert!(!origins.is_empty(), "the stylesheet loaded");
    for origin in origins {
        assert_eq!(
            origin.as_str().unwrap(),
            app.url(""),
            "a request left the server"
        );
    }
    std::fs::write(shots.join("docs.png"), browser.screenshot().await.unwrap()).unwrap();

    // An ad's page, where its website link leads, shows it with the stylesheet applied.
    let seller = app.user("verkoper@souk.test").await;
    let ad = crate::ads::created(&app, &seller.token, &crate::ads::minimal("Stadsfiets")).await;
    let link = ad["_links"]["svc:advertisement-website-link"]["href"]
        .as_str()
        .unwrap();
    browser.goto(link).await.unwrap();
    let title = browser.find(Locator::Css("h1")).await.unwrap();
    assert_eq!(title.text().await.unwrap(), "Stadsfiets");
    let weight = browser
        .execute(
            "return getComputedStyle(document.querySelector('.price')).fontWeight",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(weight, "700", "the stylesheet applies");
    std::fs::write(shots.join("ad.png"), browser.screenshot().await.unwrap()).unwrap();
    browser.close().await.unwrap();
}
