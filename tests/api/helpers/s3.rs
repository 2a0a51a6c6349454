//! A real S3-compatible server for the blob store's tests: moto's server (PyPI
//! `moto[server]`, pinned in `.ci/run`), started once per test process on a loopback port,
//! with a fresh bucket for each test. Outside CI, `build.rs` sets `souk_no_s3` when moto is
//! missing and the S3 tests are ignored; in CI a server that does not start fails them.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Starts moto's server and ends it when its parent (the test process) is gone, so that no
/// server outlives the tests however they end.
const LAUNCHER: &str = "\
import os, sys, threading, time
from moto.server import main
parent = os.getppid()
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
main(sys.argv[1:])
";

pub struct S3Server {
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    _child: Child,
}

/// moto takes any credentials; the region is the one its buckets are made in.
pub const REGION: &str = "us-east-1";
pub const ACCESS_KEY_ID: &str = "souk-test";
pub const SECRET_ACCESS_KEY: &str = "souk-test-secret";

impl S3Server {
    /// The server of this test process, started on first use.
    pub fn shared() -> &'static S3Server {
        static SERVER: OnceLock<S3Server> = OnceLock::new();
        SERVER.get_or_init(S3Server::start)
    }

    fn start() -> S3Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new("python3")
            .args(["-c", LAUNCHER, "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 starts moto's server (pip install 'moto[server]')");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "moto's server exited ({status}); is it installed? \
                     python3 -m pip install 'moto[server]' (the version .ci/run pins)"
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "moto's server did not listen on port {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        S3Server {
            endpoint: format!("http://127.0.0.1:{port}"),
            _child: child,
        }
    }

    /// Creates a bucket of its own for one test and answers its name.
    pub async fn new_bucket(&self) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let bucket = format!(
            "souk-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        // A plain unsigned CreateBucket, which moto accepts. (This is the S3 server, not
        // Souk: the answer has nothing to be held to the OpenAPI document.)
        let url = format!("{}/{bucket}", self.endpoint);
        let request = reqwest::Request::new(reqwest::Method::PUT, url.parse().expect("a URL"));
        let response = reqwest::Client::new()
            .execute(request)
            .await
            .expect("moto answers");
        assert!(
            response.status().is_success(),
            "CreateBucket {bucket}: {}",
            response.status()
        );
        bucket
    }
}
/// The settings that put a test server's image blobs in `bucket` of the shared S3 server.
pub fn settings(bucket: &str) -> Vec<(&'static str, String)> {
    let s3 = S3Server::shared();
    vec![
        ("SOUK_S3_BUCKET", bucket.to_owned()),
        ("SOUK_S3_REGION", REGION.to_owned()),
        ("SOUK_S3_ENDPOINT", s3.endpoint.clone()),
        ("SOUK_S3_ACCESS_KEY_ID", ACCESS_KEY_ID.to_owned()),
        ("SOUK_S3_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_owned()),
    ]
}

/// Starts Souk on SQLite with its image blobs in a fresh bucket of the shared S3 server,
/// and `extra` settings.
pub async fn start_on_s3(test: &str, extra: &[(&str, &str)]) -> crate::helpers::TestApp {
    let bucket = S3Server::shared().new_bucket().await;
    let owned = settings(&bucket);
    let mut all: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(extra);
    let app =
        crate::helpers::TestApp::start_with(crate::helpers::Backend::Sqlite, test, &all).await;
    assert_eq!(app.config.s3_bucket, bucket, "the S3 settings took");
    app
}

/// Declares a test that runs on both database backends with blobs on the local filesystem,
/// and on SQLite with blobs on S3: `every_store!(name)` for an `async fn name(app: TestApp)`
/// gives `name::sqlite`, `name::postgres` and `name::sqlite_s3`. The S3 variant is ignored
/// outside CI without moto (`souk_no_s3`).
#[macro_export]
macro_rules! every_store {
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

            #[tokio::test]
            #[cfg_attr(souk_no_s3, ignore = "moto[server] is not installed (pip install 'moto[server]')")]
            async fn sqlite_s3() {
                super::$name($crate::helpers::s3::start_on_s3(module_path!(), &[]).await).await;
            }
        }
    )+};
}
