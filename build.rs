//! Tells the test suite which of its optional parts cannot run on this machine, so that the
//! test runner counts them as ignored instead of reporting them "ok" without running them.
//! Only outside CI: under `CI=true` no cfg is set, everything runs, and a missing part fails.
//!
//! - `souk_no_postgres`: `SOUK_TEST_POSTGRES_URL` is not set (the PostgreSQL variants).
//! - `souk_no_browser`: no chromedriver (the browser test).
//! - `souk_no_openapi_validator`: no `openapi-spec-validator` for `python3`.
//! - `souk_no_s3`: no `moto[server]` for `python3` (the S3-compatible server that the blob
//!   store's tests start on loopback).
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
        "cargo::rustc-check-cfg=cfg(souk_no_postgres, souk_no_browser, souk_no_openapi_validator, souk_no_s3)"
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
    python_module("openapi_spec_validator", "souk_no_openapi_validator");
    // moto's server needs flask (the `server` extra) besides moto itself.
    python_module("moto", "souk_no_s3");
    python_module("flask", "souk_no_s3");
}

/// Sets `cfg` when `python3` cannot import `module`, and asks to run again when the module
/// changes or, while it is missing, when the place it would be installed in changes.
fn python_module(module: &str, cfg: &str) {
    let program = format!(
        "import importlib.util as u, sysconfig; \
         s = u.find_spec('{module}'); \
         print(s.origin if s else ''); print(sysconfig.get_paths()['purelib'])"
    );
    match python(&program) {
        Some(lines) => {
            let mut lines = lines.lines();
            let origin = lines.next().unwrap_or_default();
            let packages = lines.next().unwrap_or_default();
            if origin.is_empty() {
                println!("cargo::rustc-cfg={cfg}");
                println!("cargo::rerun-if-changed={packages}");
            } else {
                println!("cargo::rerun-if-changed={origin}");
            }
        }
        None => println!("cargo::rustc-cfg={cfg}"),
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
