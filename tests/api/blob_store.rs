//! The blob store against both of its backends: the local filesystem and a real
//! S3-compatible server (moto's, see `helpers::s3`).

use bytes::Bytes;
use souk::images::blobs::{BlobConfig, BlobError, Blobs};

use crate::helpers::s3::{ACCESS_KEY_ID, REGION, S3Server, SECRET_ACCESS_KEY};

/// A blob and an original go in, come back out byte for byte, and are gone once deleted
/// (deleting twice is fine).
async fn round_trip(blobs: &Blobs) {
    let rendition = Bytes::from_static(b"\xFF\xD8\xFF\xDB rendition bytes");
    let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    blobs.put_blob(sha, rendition.clone()).await.expect("put");
    assert_eq!(blobs.get_blob(sha).await.expect("get"), rendition);
    // The same bytes again: one blob, still readable.
    blobs
        .put_blob(sha, rendition.clone())
        .await
        .expect("put again");
    assert_eq!(blobs.get_blob(sha).await.expect("get"), rendition);
    blobs.delete_blob(sha).await.expect("delete");
    assert!(matches!(
        blobs.get_blob(sha).await,
        Err(BlobError::NotFound)
    ));
    blobs.delete_blob(sha).await.expect("deleting what is gone");

    let original = Bytes::from(vec![7u8; 300_000]);
    let key = blobs
        .put_original("0b6f3c3e-0000-4000-8000-000000000001", original.clone())
        .await
        .expect("put original");
    assert_eq!(
        blobs.get_original(&key).await.expect("get original"),
        original
    );
    blobs.delete_original(&key).await.expect("delete original");
    assert!(matches!(
        blobs.get_original(&key).await,
        Err(BlobError::NotFound)
    ));
}

#[tokio::test]
async fn blobs_round_trip_on_the_local_filesystem() {
    let dir = tempfile::tempdir().expect("temp dir");
    round_trip(&Blobs::local(dir.path()).expect("local store")).await;
}

#[tokio::test]
#[cfg_attr(
    souk_no_s3,
    ignore = "moto[server] is not installed (pip install 'moto[server]')"
)]
async fn blobs_round_trip_on_s3() {
    let s3 = S3Server::shared();
    let blobs = Blobs::open(&BlobConfig::S3 {
        bucket: s3.new_bucket().await,
        region: REGION.to_owned(),
        endpoint: Some(s3.endpoint.clone()),
        access_key_id: Some(ACCESS_KEY_ID.to_owned()),
        secret_access_key: Some(SECRET_ACCESS_KEY.to_owned()),
    })
    .expect("S3 store");
    round_trip(&blobs).await;
}

/// Without Souk's own keys, the S3 credentials come from the environment as every AWS SDK
/// reads them (`AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, a session token, a task
/// role's or a web identity's): how a service on ECS or EKS gets its credentials. They
/// were read from the instance metadata service only. The real binary, whose environment
/// is the test's to set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    souk_no_s3,
    ignore = "moto[server] is not installed (pip install 'moto[server]')"
)]
async fn s3_credentials_come_from_the_environment_without_souks_own() {
    use crate::helpers::{Http, Served, expect_json, user_with_token};

    let s3 = S3Server::shared();
    let bucket = s3.new_bucket().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let data_dir = dir.path().display().to_string();
    let env = [
        ("SOUK_DATA_DIR", data_dir.as_str()),
        ("SOUK_S3_BUCKET", bucket.as_str()),
        ("SOUK_S3_REGION", REGION),
        ("SOUK_S3_ENDPOINT", s3.endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY),
    ];
    let (_db, token) = user_with_token(&env).await;
    let served = Served::start(&env);
    let server = Http::connect(&served.base_url).await;
    let ad = server
        .request(reqwest::Method::POST, "/v1/advertisements")
        .token(&token)
        .json(&crate::ads::minimal("Fiets"))
        .send()
        .await;
    let ad = expect_json(ad, 201).await;
    let images = format!("{}/images", ad["_links"]["self"]["href"].as_str().unwrap());
    let (content_type, body) =
        crate::images::multipart(&[("file", Some("image/jpeg"), crate::images::jpeg(64, 48))]);
    let uploaded = server
        .request(reqwest::Method::POST, &images)
        .token(&token)
        .bytes(&content_type, body)
        .send()
        .await;
    expect_json(uploaded, 201).await;
    served.stop();
}
