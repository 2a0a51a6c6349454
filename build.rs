//! Tells the test suite which of its optional parts cannot run on this machine, so that the
//! test runner counts them as ignored instead of reporting them "ok" without running them.
//! Only outside CI: under `CI=true` no cfg is set, everything runs, and a missing part fails.
//!
//! - `souk_no_postgres`: `SOUK_TEST_POSTGRES_URL` is not set (the PostgreSQL variants).
//! - `souk_no_browser`: no chromedriver (the browser test).
//! - `souk_no_openapi_validator`: no `openapi-spec-validator` for `python3`.
//!
//! Cargo runs this again when one of those changes: the variables, or the place where the
//! missing tool would be installed.

use std::path::Path;
use std::process::Command;

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=SOUK_TEST_POSTGRES_URL");
    println!(
        "cargo::rustc-check-cfg=cfg(souk_no_postgres, souk_no_browser, souk_no_openapi_validator)"
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        return;
    }
    if std::env::var("SOUK_TEST_POSTGRES_URL").map_or(true, |url| url.is_empty()) {
        println!("cargo::rustc-cfg=souk_no_postgres");
    }
    if Path::new(CHROMEDRIVER).exists() {
        println!("cargo::rerun-if-changed={CHROMEDRIVER}");
    } else {
        println!("cargo::rustc-cfg=souk_no_browser");
        println!("cargo::rerun-if-changed=/usr/bin");
    }
    match python(
        "import importlib.util as u, sysconfig; \
         s = u.find_spec('openapi_spec_validator'); \
         print(s.origin if s else ''); print(sysconfig.get_paths()['purelib'])",
    ) {
        Some(lines) => {
            let mut lines = lines.lines();
            let module = lines.next().unwrap_or_default();
            let packages = lines.next().unwrap_or_default();
            if module.is_empty() {
                println!("cargo::rustc-cfg=souk_no_openapi_validator");
                println!("cargo::rerun-if-changed={packages}");
            } else {
                println!("cargo::rerun-if-changed={module}");
            }
        }
        None => println!("cargo::rustc-cfg=souk_no_openapi_validator"),
    }
}

/// What `python3 -c program` prints, if python3 runs.
fn python(program: &str) -> Option<String> {
    let output = Command::new("python3")
        .args(["-c", program])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}
