//! TLS to PostgreSQL as the URL's `sslmode` says (`store::postgres::tls`), against the
//! test's server, which must have `ssl = on` (Debian's default, with its self-signed
//! certificate for `localhost`).

use souk::store::{Db, DbError, DbOptions};

use crate::helpers::{Backend, TestApp};

/// The server's certificate file, which as a root makes its self-signed certificate
/// trusted.
async fn server_certificate() -> String {
    let admin = std::env::var("SOUK_TEST_POSTGRES_URL").unwrap();
    tokio::task::spawn_blocking(move || {
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        let ssl: String = client.query_one("SHOW ssl", &[]).unwrap().get(0);
        assert_eq!(ssl, "on", "the test's PostgreSQL server must have ssl = on");
        client.query_one("SHOW ssl_cert_file", &[]).unwrap().get(0)
    })
    .await
    .unwrap()
}

/// `url` with `parameters` added to its query.
fn with(url: &str, parameters: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{parameters}")
}

/// Whether the database's connection (a read's) is encrypted.
async fn encrypted(url: &str) -> Result<bool, DbError> {
    let db = Db::open(url, &DbOptions::default()).await?;
    db.read(|conn| {
        Box::pin(async move {
            conn.query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .await?
            .get::<bool>("ssl")
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn sslmode_says_whether_and_how_the_connection_is_encrypted() {
    let app = TestApp::start(Backend::Postgres, "postgres_tls").await;
    let certificate = server_certificate().await;
    let url = app.database_url.as_str();
    // As libpq: TLS where the server offers it, by default; any certificate for `prefer`
    // and `require`.
    assert!(encrypted(url).await.unwrap(), "the default is prefer");
    assert!(encrypted(&with(url, "sslmode=require")).await.unwrap());
    assert!(!encrypted(&with(url, "sslmode=disable")).await.unwrap());

    // Verified: the server's self-signed certificate is trusted as the root named. It is
    // for `localhost`: `verify-ca` takes it at 127.0.0.1, `verify-full` only at localhost.
    let root = format!("sslrootcert={certificate}");
    let verify_ca = with(url, &format!("sslmode=verify-ca&{root}"));
    assert!(encrypted(&verify_ca).await.unwrap());
    let verify_full = with(url, &format!("sslmode=verify-full&{root}"));
    assert!(verify_full.contains("@127.0.0.1:"), "{verify_full}");
    let refused = encrypted(&verify_full).await;
    assert!(
        matches!(&refused, Err(DbError::Unavailable(cause)) if cause.contains("certificate")),
        "{refused:?}"
    );
    let by_name = verify_full.replacen("@127.0.0.1:", "@localhost:", 1);
    assert!(encrypted(&by_name).await.unwrap());
    // `require` with a root verifies the chain, as libpq does: a root that did not sign
    // the server's certificate fails it.
    let stranger = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(stranger.path(), include_str!("postgres_tls/stranger.pem")).unwrap();
    let untrusted = with(
        url,
        &format!("sslmode=require&sslrootcert={}", stranger.path().display()),
    );
    let refused = encrypted(&untrusted).await;
    assert!(
        matches!(&refused, Err(DbError::Unavailable(cause)) if cause.contains("certificate")),
        "{refused:?}"
    );

    // What cannot work is refused at once, with the reason.
    let unknown_mode = Db::open(&with(url, "sslmode=allow"), &DbOptions::default()).await;
    assert!(
        matches!(&unknown_mode, Err(DbError::Other(cause)) if cause.contains("sslmode")),
        "{:?}",
        unknown_mode.err()
    );
    let missing = with(url, "sslmode=verify-ca&sslrootcert=/nonexistent/root.pem");
    let missing = Db::open(&missing, &DbOptions::default()).await;
    assert!(
        matches!(&missing, Err(DbError::Other(cause)) if cause.contains("/nonexistent/root.pem")),
        "{:?}",
        missing.err()
    );
}
