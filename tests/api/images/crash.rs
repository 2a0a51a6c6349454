//! A crash while renditions are made: the real `souk serve`, killed with SIGKILL right after
//! an upload of large photos, with a rendition job claimed. A second start on the same data
//! makes every rendition, and no client ever sees half an image: an image is `processing`
//! (no rendition served) or `available` with all four sizes, and every blob served is
//! whole (its SHA-256 is the one `meta` and its `ETag` give).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use super::media_ids;
use crate::ads::minimal;
use crate::helpers::{
    Backend, FreshDatabase, Http, Served, expect_json, in_ci, try_expect_json, user_with_token,
};
use souk::images::blobs::{Blobs, sha256_hex};
use souk::store::Db;

const SIZES: [&str; 4] = ["small", "medium", "large", "xlarge"];
/// Photos in the one upload: enough work that the server is still busy when it is killed.
const PHOTOS: u32 = 4;

#[tokio::test]
async fn killed_while_making_renditions_sqlite() {
    killed_while_making_renditions(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn killed_while_making_renditions_postgres() {
    killed_while_making_renditions(Backend::Postgres).await;
}

/// A photo of `width` x `height`, different for every `seed` (so no two share a blob).
fn photo(seed: u32, width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        let wave = ((x / 7 + y / 11 + seed * 37) % 256) as u8;
        image::Rgb([wave, ((x ^ y) % 251) as u8, (seed * 40 % 256) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

async fn killed_while_making_renditions(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let database = FreshDatabase::create(backend, dir.path(), "images::crash").await;
    let data_dir = dir.path().display().to_string();
    let env = [
        ("SOUK_DATA_DIR", data_dir.as_str()),
        ("SOUK_DATABASE_URL", database.url.as_str()),
        ("SOUK_ENVIRONMENT", "production"),
        ("SOUK_IMAGE_WORKERS", "1"),
        // On PostgreSQL the dead server's lease must run out before the job runs again.
        ("SOUK_IMAGE_JOB_LEASE_SECS", "2"),
        ("RUST_LOG", "info,souk::http=warn"),
    ];
    let (db, token) = user_with_token(&env).await;

    let first = Served::start(&env);
    let server = Http::connect(&first.base_url).await;
    let ad = expect_json(
        server
            .request(Method::POST, "/v1/advertisements")
            .token(&token)
            .json(&minimal("Fiets, veel foto's"))
            .send()
            .await,
        201,
    )
    .await;
    let ad_path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let parts: Vec<_> = (0..PHOTOS)
        .map(|n| ("file", Some("image/jpeg"), photo(n, 2400, 1800)))
        .collect();
    let (content_type, body) = super::multipart(&parts);
    let answer = expect_json(
        server
            .request(Method::POST, &format!("{ad_path}/images"))
            .token(&token)
            .bytes(&content_type, body)
            .send()
            .await,
        201,
    )
    .await;
    let media_ids = media_ids(&answer);
    assert_eq!(media_ids.len(), PHOTOS as usize);

    // Clients watch the images from the upload on, through the crash and the restart.
    let watcher = Watcher::start(&server, &token, &media_ids);
    // Killed as soon as a worker has claimed a job: renditions are being made.
    wait_for(&db, "a claimed rendition job", |db| async move {
        count(
            &db,
            "SELECT COUNT(*) AS n FROM image_jobs WHERE claimed_until > 0",
        )
        .await
            > 0
    })
    .await;
    let _log = first.kill();
    let unfinished = count(&db, "SELECT COUNT(*) AS n FROM image_jobs").await;
    assert!(unfinished > 0, "killed before the work was done");
    // The server is gone: the watcher stops by itself.
    let seen_before = watcher.seen().await;
    // In the database too: an image is processing without renditions, or available with
    // its four JPEG sizes.
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) AS n FROM images i WHERE (i.status = 'available') <> \
             ((SELECT COUNT(*) FROM image_renditions r WHERE r.media_id = i.media_id \
               AND r.format = 'jpeg') = 4)"
        )
        .await,
        0,
        "no half image in the database after the crash"
    );

    let restarted = Instant::now();
    let second = Served::start(&env);
    let server = Http::connect(&second.base_url).await;
    let watcher = Watcher::start(&server, &token, &media_ids);
    wait_for(&db, "every rendition job done", |db| async move {
        count(&db, "SELECT COUNT(*) AS n FROM image_jobs").await == 0
    })
    .await;
    let finished_in = restarted.elapsed();
    let seen_after = watcher.stop().await;
    assert!(
        seen_after.passes > 0,
        "the watcher looked at least once after the restart"
    );

    // Every image is available with all four sizes, in JPEG and in WebP.
    for media_id in &media_ids {
        let image = expect_json(
            server
                .request(Method::GET, &format!("/v1/images/{media_id}"))
                .token(&token)
                .send()
                .await,
            200,
        )
        .await;
        assert_eq!(image["status"], "available", "{image}");
        for size in SIZES {
            let meta = expect_json(
                server
                    .request(Method::GET, &format!("/v1/images/{media_id}/{size}/meta"))
                    .token(&token)
                    .send()
                    .await,
                200,
            )
            .await;
            let jpeg = whole_blob(&server, &token, media_id, size, "image/jpeg")
                .await
                .expect("the server answers");
            assert_eq!(jpeg.content_type, "image/jpeg");
            assert_eq!(jpeg.sha256, meta["sha256"], "{media_id} {size}");
            assert_eq!(jpeg.bytes.len() as u64, meta["bytes"].as_u64().unwrap());
            image::load_from_memory(&jpeg.bytes).expect("the whole JPEG decodes");
            let webp = whole_blob(&server, &token, media_id, size, "image/webp")
                .await
                .expect("the server answers");
            assert_eq!(webp.content_type, "image/webp", "{media_id} {size}");
            image::load_from_memory(&webp.bytes).expect("the whole WebP decodes");
        }
    }
    assert_eq!(
        count(&db, "SELECT COUNT(*) AS n FROM image_renditions").await,
        i64::from(PHOTOS) * 8
    );
    // The originals (which may carry a GPS position) are gone; every blob the database
    // knows is stored whole.
    let blobs = Blobs::local(dir.path()).unwrap();
    let keys = blobs.keys().await.unwrap();
    assert!(
        !keys.iter().any(|k| k.starts_with("originals/")),
        "{keys:?}"
    );
    let known: Vec<String> = db
        .read(|conn| {
            Box::pin(async move {
                conn.column("SELECT sha256 FROM image_blobs WHERE refs > 0", &[])
                    .await
            })
        })
        .await
        .unwrap();
    assert_eq!(known.len(), PHOTOS as usize * 8, "no two renditions alike");
    for sha256 in known {
        assert_eq!(sha256_hex(&blobs.get_blob(&sha256).await.unwrap()), sha256);
    }
    second.stop();
    eprintln!(
        "{backend:?}: killed with {unfinished} of {PHOTOS} jobs left; before the kill the \
         watcher saw {} available and {} processing, after the restart {} and {}; the \
         restarted server finished in {finished_in:?}",
        seen_before.available, seen_before.processing, seen_after.available, seen_after.processing
    );
}

async fn count(db: &Db, sql: &'static str) -> i64 {
    db.read(move |conn| Box::pin(async move { conn.query_one(sql, &[]).await?.get::<i64>("n") }))
        .await
        .unwrap()
}

/// Polls `done` every 10 ms until it holds; fails after a minute (three in CI, where the
/// machine is shared).
async fn wait_for<F, Fut>(db: &Db, what: &str, done: F)
where
    F: Fn(Db) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(if in_ci() { 180 } else { 60 });
    while !done(db.clone()).await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// What a watcher saw.
#[derive(Debug, Default)]
struct Seen {
    passes: u64,
    available: u64,
    processing: u64,
}

/// A client that watches the images in the background.
struct Watcher {
    watching: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Seen>,
}

impl Watcher {
    fn start(server: &Http, token: &str, media_ids: &[String]) -> Watcher {
        let watching = Arc::new(AtomicBool::new(true));
        let task = tokio::spawn(watch(
            server.clone(),
            token.to_owned(),
            media_ids.to_vec(),
            watching.clone(),
        ));
        Watcher { watching, task }
    }

    /// What it saw until it stopped by itself (its server went away).
    async fn seen(self) -> Seen {
        self.task.await.expect("no client saw half an image")
    }

    async fn stop(self) -> Seen {
        self.watching.store(false, Ordering::SeqCst);
        self.seen().await
    }
}

/// Reads every image and what it serves, again and again, until `watching` is false or
/// the server stops answering; panics on half an image.
async fn watch(
    server: Http,
    token: String,
    media_ids: Vec<String>,
    watching: Arc<AtomicBool>,
) -> Seen {
    let mut seen = Seen::default();
    while watching.load(Ordering::SeqCst) {
        for media_id in &media_ids {
            let Some(image) = json(&server, &token, &format!("/v1/images/{media_id}")).await else {
                return seen;
            };
            match image["status"].as_str() {
                Some("processing") => {
                    seen.processing += 1;
                    // Nothing is served yet: 409, or (made meanwhile) the whole rendition.
                    let Some(answer) = get(
                        &server,
                        &token,
                        &format!("/v1/images/{media_id}/small/blob"),
                        "image/jpeg",
                    )
                    .await
                    else {
                        return seen;
                    };
                    assert!(
                        [200, 409].contains(&answer.0),
                        "{media_id} processing: its blob answered {}",
                        answer.0
                    );
                }
                Some("available") => {
                    seen.available += 1;
                    for size in SIZES {
                        let path = format!("/v1/images/{media_id}/{size}/meta");
                        let Some(meta) = json(&server, &token, &path).await else {
                            return seen;
                        };
                        assert!(meta["sha256"].is_string(), "{media_id} {size}: {meta}");
                        let Some(blob) =
                            whole_blob(&server, &token, media_id, size, "image/jpeg").await
                        else {
                            return seen;
                        };
                        assert_eq!(blob.sha256, meta["sha256"], "{media_id} {size}");
                        assert_eq!(blob.bytes.len() as u64, meta["bytes"].as_u64().unwrap());
                    }
                }
                _ => panic!("{media_id} is neither processing nor available: {image}"),
            }
        }
        seen.passes += 1;
        // A pause, so that watching does not take the CPU the renditions need.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    seen
}

/// A GET's status and body; None when the server did not answer.
async fn get(
    server: &Http,
    token: &str,
    path: &str,
    accept: &str,
) -> Option<(u16, Vec<u8>, reqwest::header::HeaderMap)> {
    let response = send_get(server, token, path, accept).await?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.ok()?;
    Some((status, body.to_vec(), headers))
}

/// A JSON answer that must be 200 and match its schema in the OpenAPI document; None when
/// the server did not answer.
async fn json(server: &Http, token: &str, path: &str) -> Option<Value> {
    let response = send_get(server, token, path, "application/json").await?;
    try_expect_json(response, 200).await
}

/// A GET of `path`; None when the server did not answer.
async fn send_get(
    server: &Http,
    token: &str,
    path: &str,
    accept: &str,
) -> Option<reqwest::Response> {
    server
        .request(Method::GET, path)
        .token(token)
        .header("accept", accept)
        .try_send()
        .await
        .ok()
}

/// A blob that was served.
struct Blob {
    content_type: String,
    sha256: String,
    bytes: Vec<u8>,
}

/// A rendition's bytes, which must be whole: their SHA-256 is the strong `ETag`, and they
/// begin as an image of the content type. None when the server did not answer.
async fn whole_blob(
    server: &Http,
    token: &str,
    media_id: &str,
    size: &str,
    accept: &str,
) -> Option<Blob> {
    let path = format!("/v1/images/{media_id}/{size}/blob");
    let (status, body, headers) = get(server, token, &path, accept).await?;
    assert_eq!(status, 200, "{path}");
    let sha256 = sha256_hex(&body);
    assert_eq!(
        headers["etag"],
        format!("\"{sha256}\"").as_str(),
        "{path}: whole"
    );
    let content_type = headers["content-type"].to_str().unwrap().to_owned();
    let format = image::guess_format(&body).expect("an image");
    assert_eq!(format.to_mime_type(), content_type, "{path}");
    Some(Blob {
        content_type,
        sha256,
        bytes: body,
    })
}
