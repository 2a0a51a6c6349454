//! The storage model of images: rendition jobs claimed once under a lease, and blobs
//! counted by reference and freed with the last one.

use souk::domain::image::{Format, Size};
use souk::store::renditions::{
    BLOB_HOLD_SECS, Claim, Job, NewRendition, RecordError, Recorded, begin_render, claim,
    claim_unreferenced, enqueue, forget, hold_blobs, record, references, remove_all,
    render_returned,
};
use souk::store::{Backend, Conn, DbError};
use souk::usecase::renditions::drop_image;

use super::{available_image, new_ad};
use crate::helpers::{TestApp, expect_json};
use crate::{both_backends, every_store};

every_store!(every_server_of_a_database_uses_its_image_store);

/// Replicas on one database share one image store. A second server with a folder of its
/// own (unmarked, or marked as another store) does not start: it would have answered 201
/// for images the others could not find. On S3 every server shares the bucket, so another
/// data folder is no other store. After the operator deletes the database's record, a
/// store is adopted.
async fn every_server_of_a_database_uses_its_image_store(app: TestApp) {
    use souk::images::blobs::Blobs;

    let elsewhere = tempfile::tempdir().unwrap();
    let other = souk::config::Config {
        data_dir: elsewhere.path().to_owned(),
        ..app.config.clone()
    };
    // The store the first server started with, again: as after a restart.
    souk::app::open_blobs(&app.config, &app.db).await.unwrap();
    let second = souk::app::open_blobs(&other, &app.db).await;
    if !app.config.s3_bucket.is_empty() {
        second.expect("every server shares the bucket");
        return;
    }
    let refused = second.map(drop).unwrap_err().to_string();
    assert!(
        refused.contains("not the one this database's images are in"),
        "{refused}"
    );
    assert!(refused.contains("without an id"), "{refused}");
    assert!(
        Blobs::local(elsewhere.path())
            .unwrap()
            .store_id()
            .await
            .unwrap()
            .is_none(),
        "the refused server marked nothing"
    );
    // A folder that another database's server marked is refused at once.
    Blobs::local(elsewhere.path())
        .unwrap()
        .mark("another-store")
        .await
        .unwrap();
    let refused = souk::app::open_blobs(&other, &app.db)
        .await
        .map(drop)
        .unwrap_err();
    assert!(refused.to_string().contains("`another-store`"), "{refused}");
    // The first server's store keeps working, and keeps its images out of the listing.
    assert_eq!(app.blobs.keys().await.unwrap(), Vec::<String>::new());
    // Moved deliberately: the operator deletes the record, and the next store is adopted.
    app.execute("DELETE FROM image_store", vec![]).await;
    souk::app::open_blobs(&other, &app.db).await.unwrap();
    let adopted = app
        .db
        .read(|conn| Box::pin(souk::store::images::store_id(conn)))
        .await
        .unwrap();
    assert_eq!(adopted.as_deref(), Some("another-store"));
    let refused = souk::app::open_blobs(&app.config, &app.db)
        .await
        .map(drop)
        .unwrap_err();
    assert!(refused.to_string().contains("not the one"), "{refused}");
    // A database without images adopts no store that holds images: another database's,
    // whose images its upkeep would delete as strays.
    app.execute("DELETE FROM image_store", vec![]).await;
    let used = tempfile::tempdir().unwrap();
    let store = Blobs::local(used.path()).unwrap();
    store.mark("in-use").await.unwrap();
    store
        .put_blob(&"ab".repeat(32), bytes::Bytes::from_static(b"an image"))
        .await
        .unwrap();
    let third = souk::config::Config {
        data_dir: used.path().to_owned(),
        ..app.config.clone()
    };
    let refused = souk::app::open_blobs(&third, &app.db)
        .await
        .map(drop)
        .unwrap_err();
    assert!(refused.to_string().contains("holds images"), "{refused}");
    let recorded = app
        .db
        .read(|conn| Box::pin(souk::store::images::store_id(conn)))
        .await
        .unwrap();
    assert_eq!(recorded, None, "nothing recorded");
}

both_backends!(
    jobs_are_claimed_once_and_again_after_their_lease,
    concurrent_workers_take_each_job_once,
    the_last_reference_frees_a_blob,
    a_blob_held_by_one_worker_outlives_another_workers_image,
    a_rendition_is_recorded_only_on_the_registration_it_held,
    a_worker_that_lost_its_lease_leaves_a_finished_image_whole,
    an_image_whose_original_is_lost_after_its_jpegs_keeps_them,
    an_image_whose_renders_stopped_the_process_is_given_up,
    an_image_deleted_while_renditions_are_recorded_keeps_none,
    an_original_whose_deletion_a_crash_cut_off_goes_at_the_next_sweep,
    an_original_that_no_upload_recorded_goes_after_an_hour,
);

async fn write<T, E>(
    app: &TestApp,
    f: impl for<'c> FnOnce(&'c mut dyn Conn) -> souk::store::BoxFuture<'c, Result<T, E>>
    + Send
    + 'static,
) -> T
where
    T: Send + 'static,
    E: From<DbError> + std::fmt::Debug + Send + 'static,
{
    app.db.write(f).await.unwrap()
}

/// The time these tests claim at: far ahead of the server's clock, so that its own
/// rendition workers never see the jobs made here (leased until then).
fn later(app: &TestApp) -> i64 {
    app.clock.now() + 1_000_000
}

async fn enqueue_jobs(app: &TestApp, names: &[&'static str]) {
    let now = app.clock.now();
    let hidden_until = later(app);
    let names = names.to_vec();
    write(app, move |conn| {
        Box::pin(async move {
            for (n, name) in names.into_iter().enumerate() {
                enqueue(conn, name, &format!("originals/{name}"), now + n as i64).await?;
                conn.execute(
                    "UPDATE image_jobs SET claimed_until = $1 WHERE media_id = $2",
                    souk::params![hidden_until, name],
                )
                .await?;
            }
            Ok::<_, DbError>(())
        })
    })
    .await;
}

async fn claim_at(app: &TestApp, now: i64) -> Option<String> {
    write(app, move |conn| {
        Box::pin(async move {
            Ok::<_, DbError>(claim(conn, now, now + 60).await?.map(|job| job.media_id))
        })
    })
    .await
}

async fn jobs_are_claimed_once_and_again_after_their_lease(app: TestApp) {
    enqueue_jobs(&app, &["a", "b"]).await;
    let now = later(&app);
    assert_eq!(
        claim_at(&app, now).await.as_deref(),
        Some("a"),
        "oldest first"
    );
    assert_eq!(claim_at(&app, now).await.as_deref(), Some("b"));
    assert_eq!(claim_at(&app, now).await, None, "both are leased");
    // A worker that died leaves its lease to run out; then another takes the job.
    let job = write(&app, move |conn| {
        Box::pin(async move { claim(conn, now + 61, now + 121).await })
    })
    .await
    .unwrap();
    assert_eq!(job.media_id, "a");
    assert_eq!(job.phase, Format::Jpeg);
    assert_eq!(job.original_key, "originals/a");
    assert_eq!(job.lease_until, now + 121);
    // Renders that never returned are counted until one returns (migration 0054), and
    // only while the job is in the phase and under the lease the worker claimed it in.
    let begin = |job: Job| {
        write(&app, move |conn| {
            Box::pin(async move { begin_render(conn, &job).await })
        })
    };
    assert_eq!(begin(job.clone()).await, Some(1));
    assert_eq!(begin(job.clone()).await, Some(2));
    let webp = Job {
        phase: Format::Webp,
        ..job.clone()
    };
    assert_eq!(begin(webp).await, None, "not in that phase");
    let lost = Job {
        lease_until: now + 60,
        ..job.clone()
    };
    assert_eq!(begin(lost).await, None, "the first lease, taken over");
    write(&app, |conn| {
        Box::pin(async move { render_returned(conn, "a").await })
    })
    .await;
    assert_eq!(begin(job).await, Some(1));
    // The next claim says so: that job renders alone (`usecase::renditions::RenderTurns`).
    let claims = write(&app, move |conn| {
        Box::pin(async move {
            let b = claim(conn, now + 122, now + 182).await?;
            let a = claim(conn, now + 122, now + 182).await?;
            Ok::<_, DbError>([b, a].map(|job| job.map(|j| (j.media_id, j.interrupted_renders))))
        })
    })
    .await;
    assert_eq!(
        claims,
        [Some(("b".to_owned(), 0)), Some(("a".to_owned(), 1))],
        "b's lease ended first"
    );
}

/// Eight workers (each its own write, on PostgreSQL each its own connection) claim from
/// twenty jobs at once: every job is taken exactly once.
async fn concurrent_workers_take_each_job_once(app: TestApp) {
    const NAMES: [&str; 20] = [
        "j00", "j01", "j02", "j03", "j04", "j05", "j06", "j07", "j08", "j09", "j10", "j11", "j12",
        "j13", "j14", "j15", "j16", "j17", "j18", "j19",
    ];
    enqueue_jobs(&app, &NAMES).await;
    let now = later(&app);
    let mut workers = Vec::new();
    for _ in 0..8 {
        let db = app.db.clone();
        workers.push(tokio::spawn(async move {
            let mut taken = Vec::new();
            let mut idle = 0;
            while idle < 3 {
                let job = db
                    .write(move |conn| Box::pin(async move { claim(conn, now, now + 600).await }))
                    .await
                    .unwrap();
                match job {
                    Some(job) => taken.push(job.media_id),
                    None => idle += 1,
                }
            }
            taken
        }));
    }
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.unwrap());
    }
    all.sort();
    assert_eq!(all, NAMES, "each job once");
}

fn rendition(size: Size, sha256: &str) -> NewRendition {
    NewRendition {
        size,
        format: Format::Jpeg,
        width: 10,
        height: 10,
        sha256: sha256.to_owned(),
        bytes: 100,
        generation: 0,
    }
}

async fn refs(app: &TestApp, sha256: &'static str) -> Option<i64> {
    write(app, move |conn| {
        Box::pin(async move { references(conn, sha256).await })
    })
    .await
}

/// Renditions of the blobs of `shas` (one size each), held at `now` as a worker holds
/// them before it writes their bytes.
async fn hold(app: &TestApp, shas: &[&str], now: i64) -> Result<Vec<NewRendition>, RecordError> {
    let sizes = [Size::Small, Size::Medium, Size::Large, Size::Xlarge];
    let mut made: Vec<NewRendition> = shas
        .iter()
        .zip(sizes)
        .map(|(sha, size)| rendition(size, sha))
        .collect();
    app.db
        .write(move |conn| {
            Box::pin(async move {
                hold_blobs(conn, &mut made, now).await?;
                Ok(made)
            })
        })
        .await
}

/// Records `held` as the renditions of `media`'s JPEG phase.
async fn record_jpeg(
    app: &TestApp,
    media: &'static str,
    held: Vec<NewRendition>,
) -> Result<Recorded, RecordError> {
    app.db
        .write(move |conn| Box::pin(async move { record(conn, media, Format::Jpeg, &held).await }))
        .await
}

async fn claim_blobs_at(app: &TestApp, now: i64) -> Claim {
    let mut claim = write(app, move |conn| {
        Box::pin(async move { claim_unreferenced(conn, now, 100).await })
    })
    .await;
    claim.blobs.sort();
    claim
}

async fn forget_claimed(app: &TestApp, claim: &Claim) {
    let (blobs, until) = (claim.blobs.clone(), claim.until);
    write(app, move |conn| {
        Box::pin(async move {
            for sha in blobs {
                forget(conn, &sha, until).await?;
            }
            Ok::<_, DbError>(())
        })
    })
    .await;
}

async fn remove_renditions(app: &TestApp, media: &'static str) {
    write(app, move |conn| {
        Box::pin(async move { remove_all(conn, &[media]).await })
    })
    .await;
}

async fn the_last_reference_frees_a_blob(app: TestApp) {
    let now = later(&app);
    enqueue_jobs(&app, &["a", "b"]).await;
    // Two images with an identical small rendition share one blob.
    let mut held_by_a = Vec::new();
    for media in ["a", "b"] {
        let held = hold(&app, &["same", media], now).await.unwrap();
        if media == "a" {
            held_by_a = held.clone();
        }
        assert_eq!(
            record_jpeg(&app, media, held).await.unwrap(),
            Recorded::Done
        );
    }
    assert_eq!(refs(&app, "same").await, Some(2));
    let held = hold(&app, &["orphan"], now).await.unwrap();
    let no_job = record_jpeg(&app, "gone", held).await.unwrap();
    assert_eq!(no_job, Recorded::NoJob);
    assert_eq!(refs(&app, "orphan").await, Some(0), "left for the sweep");
    remove_renditions(&app, "a").await;
    assert_eq!(refs(&app, "same").await, Some(1), "b still uses it");
    assert_eq!(refs(&app, "a").await, Some(0));
    let first = claim_blobs_at(&app, now).await;
    assert_eq!(first.blobs, ["a", "orphan"]);
    assert!(
        claim_blobs_at(&app, now + 1).await.blobs.is_empty(),
        "a live claim is not taken over"
    );
    let taken_over = claim_blobs_at(&app, first.until).await;
    assert_eq!(
        taken_over.blobs,
        ["a", "orphan"],
        "the claim of a sweep that stopped ran out"
    );
    // A blob claimed for deletion can be neither held (its bytes are not written) nor
    // referenced until it is gone.
    enqueue_jobs(&app, &["c"]).await;
    let blocked = hold(&app, &["a"], now).await;
    assert!(
        matches!(blocked, Err(RecordError::BlobBeingDeleted)),
        "{blocked:?}"
    );
    // Of the very registration "a" held, so that only the claim refuses it.
    held_by_a.retain(|rendition| rendition.sha256 == "a");
    let blocked = record_jpeg(&app, "c", held_by_a).await;
    assert!(
        matches!(blocked, Err(RecordError::BlobBeingDeleted)),
        "{blocked:?}"
    );
    assert_eq!(refs(&app, "a").await, Some(-1), "rolled back");
    forget_claimed(&app, &first).await;
    assert_eq!(
        refs(&app, "a").await,
        Some(-1),
        "a sweep that stalled past its claim drops nothing"
    );
    forget_claimed(&app, &taken_over).await;
    assert_eq!(refs(&app, "a").await, None);
    assert_eq!(refs(&app, "orphan").await, None);
    let held = hold(&app, &["a"], now).await.unwrap();
    assert_eq!(record_jpeg(&app, "c", held).await.unwrap(), Recorded::Done);
    assert_eq!(refs(&app, "a").await, Some(1));
}

/// Two workers make renditions of the same content at once; the first records, and its
/// image is deleted before the second records: the blob stays, held by the second.
async fn a_blob_held_by_one_worker_outlives_another_workers_image(app: TestApp) {
    let now = later(&app);
    enqueue_jobs(&app, &["first", "second"]).await;
    let second = hold(&app, &["shared"], now).await.unwrap();
    let first = hold(&app, &["shared"], now).await.unwrap();
    assert_eq!(
        record_jpeg(&app, "first", first).await.unwrap(),
        Recorded::Done
    );
    remove_renditions(&app, "first").await;
    assert_eq!(refs(&app, "shared").await, Some(0));
    assert!(
        claim_blobs_at(&app, now).await.blobs.is_empty(),
        "the second worker holds it: its bytes are written"
    );
    assert_eq!(
        record_jpeg(&app, "second", second).await.unwrap(),
        Recorded::Done
    );
    assert_eq!(refs(&app, "shared").await, Some(1));
    remove_renditions(&app, "second").await;
    assert_eq!(
        claim_blobs_at(&app, now).await.blobs,
        ["shared"],
        "nothing holds it any more"
    );
}

/// A worker held a blob and wrote its bytes, but stalled until its hold ran out; a sweep
/// deleted the bytes and dropped the row, and another worker registered the blob anew
/// (its bytes not written yet). The stalled worker's rendition is not recorded on that
/// registration (its job runs again), where it would point at bytes that may never come.
async fn a_rendition_is_recorded_only_on_the_registration_it_held(app: TestApp) {
    let now = later(&app);
    enqueue_jobs(&app, &["stalled"]).await;
    let stalled = hold(&app, &["fresh"], now).await.unwrap();
    assert!(claim_blobs_at(&app, now).await.blobs.is_empty(), "held");
    let claim = claim_blobs_at(&app, now + BLOB_HOLD_SECS).await;
    assert_eq!(claim.blobs, ["fresh"]);
    forget_claimed(&app, &claim).await;
    let anew = hold(&app, &["fresh"], now + BLOB_HOLD_SECS).await.unwrap();
    let late = record_jpeg(&app, "stalled", stalled).await;
    assert!(
        matches!(late, Err(RecordError::BlobBeingDeleted)),
        "{late:?}"
    );
    assert_eq!(refs(&app, "fresh").await, Some(0));
    assert_eq!(
        record_jpeg(&app, "stalled", anew).await.unwrap(),
        Recorded::Done
    );
    assert_eq!(refs(&app, "fresh").await, Some(1));
}

/// How many rows of `table` (of `image_renditions` or `image_jobs`) `media_id` has.
async fn rows_of(app: &TestApp, table: &'static str, media_id: String) -> i64 {
    app.db
        .read(move |conn| {
            Box::pin(async move {
                conn.query_one(
                    &format!("SELECT COUNT(*) AS n FROM {table} WHERE media_id = $1"),
                    souk::params![media_id],
                )
                .await?
                .get::<i64>("n")
            })
        })
        .await
        .unwrap()
}

/// How many rendition rows `media_id` has.
async fn renditions_of(app: &TestApp, media_id: String) -> i64 {
    rows_of(app, "image_renditions", media_id).await
}

/// A rendition worker records a phase while the seller deletes the image: the deletion
/// waits for the worker's transaction and removes what it recorded. On PostgreSQL it
/// used to commit in between, leaving renditions of no image and a blob referenced for
/// ever (never swept).
async fn an_image_deleted_while_renditions_are_recorded_keeps_none(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let item = ad.rsplit('/').next().unwrap().to_owned();
    let media_id = available_image(&app, &seller.token, &item).await;
    // The image as it is while a worker makes it anew: a job and no renditions. The job
    // is leased far ahead, so that the server's own workers leave it to this test.
    let (now, hidden_until, media) = (app.clock.now(), later(&app), media_id.clone());
    write(&app, move |conn| {
        Box::pin(async move {
            // The server's worker may still be finishing the WebP phase: its job then goes.
            conn.run(
                "DELETE FROM image_jobs WHERE media_id = $1",
                souk::params![media.as_str()],
            )
            .await?;
            remove_all(conn, &[media.as_str()]).await?;
            enqueue(conn, &media, "originals/racing", now).await?;
            conn.run(
                "UPDATE image_jobs SET claimed_until = $1 WHERE media_id = $2",
                souk::params![hidden_until, media.as_str()],
            )
            .await
        })
    })
    .await;
    let held = hold(&app, &["racing"], now).await.unwrap();
    let (recorded_tx, recorded_rx) = tokio::sync::oneshot::channel();
    let (db, media) = (app.db.clone(), media_id.clone());
    let worker = tokio::spawn(async move {
        let watcher = db.clone();
        db.write(move |conn| {
            Box::pin(async move {
                let recorded = record(conn, &media, Format::Jpeg, &held).await?;
                let _ = recorded_tx.send(());
                // Still in the transaction: on PostgreSQL, until the deletion waits for it
                // (at most two seconds: without the lock it never does). On SQLite it waits
                // for the one writer anyway.
                if conn.backend() == Backend::Postgres {
                    let pid = conn
                        .query_one("SELECT CAST(pg_backend_pid() AS BIGINT) AS pid", &[])
                        .await?
                        .get::<i64>("pid")?;
                    wait_until_blocking(&watcher, pid).await;
                }
                Ok::<_, RecordError>(recorded)
            })
        })
        .await
        .unwrap()
    });
    recorded_rx.await.unwrap();
    let deleted = app
        .delete(&format!("/v1/images/{media_id}"))
        .token(&seller.token)
        .send()
        .await;
    assert_eq!(deleted.status(), 204);
    assert_eq!(worker.await.unwrap(), Recorded::Done);
    assert_eq!(renditions_of(&app, media_id).await, 0);
    let left = refs(&app, "racing").await;
    assert!(matches!(left, None | Some(0)), "refs {left:?}");
}

/// Waits until a PostgreSQL session waits for a lock that backend `pid` holds, for at most
/// two seconds.
async fn wait_until_blocking(db: &souk::store::Db, pid: i64) {
    for _ in 0..100 {
        let blocked = db
            .read(move |conn| {
                Box::pin(async move {
                    conn.query_one(
                        "SELECT COUNT(*) AS n FROM pg_stat_activity \
                         WHERE CAST($1 AS BIGINT) = ANY(pg_blocking_pids(pid))",
                        souk::params![pid],
                    )
                    .await?
                    .get::<i64>("n")
                })
            })
            .await
            .unwrap();
        if blocked > 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A worker whose lease ran out in the WebP phase finds the original gone, because the
/// worker that took the job over finished it: it leaves the image, now whole, alone (it
/// used to remove it).
async fn a_worker_that_lost_its_lease_leaves_a_finished_image_whole(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let item = ad.rsplit('/').next().unwrap().to_owned();
    let media_id = available_image(&app, &seller.token, &item).await;
    until_no_job(&app, &media_id).await;
    let renditions = renditions_of(&app, media_id.clone()).await;
    assert_eq!(
        renditions, 8,
        "four sizes in JPEG and WebP: the job is done"
    );
    let late = Job {
        media_id: media_id.clone(),
        phase: Format::Webp,
        original_key: "originals/finished".to_owned(),
        lease_until: 0,
        interrupted_renders: 0,
    };
    drop_image(&app.db, &app.blobs, &late, &app.clock)
        .await
        .unwrap();
    assert_eq!(
        image_status(&app, &seller.token, &media_id).await,
        "available"
    );
    assert_eq!(renditions_of(&app, media_id).await, renditions);
}

/// Waits (up to 30 s) until the server's workers have ended the job of `media_id`.
async fn until_no_job(app: &TestApp, media_id: &str) {
    for _ in 0..300 {
        if rows_of(app, "image_jobs", media_id.to_owned()).await == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the job of {media_id} did not end within 30 s");
}

/// A worker in the WebP phase finds the original gone (lost by the object store, say): the
/// image, which clients may already show, keeps its JPEG renditions and the job ends; a
/// client that prefers WebP gets JPEG. It used to remove the whole image.
async fn an_image_whose_original_is_lost_after_its_jpegs_keeps_them(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let item = ad.rsplit('/').next().unwrap().to_owned();
    let media_id = available_image(&app, &seller.token, &item).await;
    until_no_job(&app, &media_id).await;
    // The original is gone. The server's own workers take the job.
    between_the_phases(&app, &media_id, "originals/lost", 0).await;
    until_no_job(&app, &media_id).await;
    assert_eq!(
        image_status(&app, &seller.token, &media_id).await,
        "available"
    );
    assert_eq!(
        renditions_of(&app, media_id.clone()).await,
        4,
        "the four JPEGs"
    );
    let blob = app
        .request(
            reqwest::Method::GET,
            &format!("/v1/images/{media_id}/medium/blob"),
        )
        .token(&seller.token)
        .header("accept", "image/webp")
        .send()
        .await;
    assert_eq!(blob.status(), 200);
    assert_eq!(
        blob.headers()["content-type"],
        "image/jpeg",
        "WebP falls back"
    );
}

/// Puts the image `media_id` (whose job has ended) back as it stands between the phases:
/// its JPEG renditions only, and its job in the WebP phase with the original at
/// `original_key` and `interrupted` renders that never returned.
async fn between_the_phases(app: &TestApp, media_id: &str, original_key: &str, interrupted: i64) {
    let (now, media, key) = (
        app.clock.now(),
        media_id.to_owned(),
        original_key.to_owned(),
    );
    write(app, move |conn| {
        Box::pin(async move {
            conn.execute(
                "UPDATE image_blobs SET refs = refs - 1 WHERE sha256 IN \
                 (SELECT sha256 FROM image_renditions WHERE media_id = $1 AND format = 'webp')",
                souk::params![media.clone()],
            )
            .await?;
            conn.execute(
                "DELETE FROM image_renditions WHERE media_id = $1 AND format = 'webp'",
                souk::params![media.clone()],
            )
            .await?;
            enqueue(conn, &media, &key, now).await?;
            conn.execute(
                "UPDATE image_jobs SET phase = $1, interrupted_renders = $2 WHERE media_id = $3",
                souk::params![Format::Webp.as_str(), interrupted, media],
            )
            .await?;
            Ok::<_, DbError>(())
        })
    })
    .await;
}

/// Renders of an image that stopped the process (a codec that aborts) three times: the
/// next worker gives the image up instead of rendering it again, as it does one that
/// does not decode. Two are not enough.
async fn an_image_whose_renders_stopped_the_process_is_given_up(app: TestApp) {
    let (seller, ad) = new_ad(&app).await;
    let item = ad.rsplit('/').next().unwrap().to_owned();
    for (interrupted, renditions) in [(2, 8), (3, 4)] {
        let media_id = available_image(&app, &seller.token, &item).await;
        until_no_job(&app, &media_id).await;
        let key = app
            .blobs
            // Under a name of its own: the worker that ended the job may still be deleting
            // the first original.
            .put_original(&format!("{media_id}-again"), super::jpeg(40, 30).into())
            .await
            .unwrap();
        between_the_phases(&app, &media_id, &key, interrupted).await;
        until_no_job(&app, &media_id).await;
        assert_eq!(
            renditions_of(&app, media_id.clone()).await,
            renditions,
            "after {interrupted} interrupted renders"
        );
        assert_eq!(
            image_status(&app, &seller.token, &media_id).await,
            "available"
        );
    }
}

/// The status an image's representation gives (which must answer 200).
async fn image_status(app: &TestApp, token: &str, media_id: &str) -> serde_json::Value {
    let image = app.get_with(&format!("/v1/images/{media_id}"), token).await;
    expect_json(image, 200).await["status"].clone()
}

/// A job ends (here: it is queued and ended in one transaction, as an image removed while
/// being made is) and the process stops before it deletes the original: nothing deletes it
/// after the commit. The next sweep does, from the queue that the job's end wrote in its
/// transaction, and then forgets it.
async fn an_original_whose_deletion_a_crash_cut_off_goes_at_the_next_sweep(app: TestApp) {
    use souk::store::renditions::{finish, originals_to_delete};
    let key = app
        .blobs
        .put_original("crash-original", bytes::Bytes::from_static(b"GPS"))
        .await
        .unwrap();
    let now = app.clock.now();
    let queued_key = key.clone();
    let queued = write(&app, move |conn| {
        Box::pin(async move {
            enqueue(conn, "crash-original", &queued_key, now).await?;
            finish(conn, "crash-original", now).await?;
            originals_to_delete(conn, 10).await
        })
    })
    .await;
    assert_eq!(
        queued,
        std::slice::from_ref(&key),
        "queued by the job's end"
    );
    assert!(super::blob_files(&app).await.contains(&key));

    souk::usecase::images::sweep(&app.db, &app.blobs, &app.clock).await;
    assert!(
        !super::blob_files(&app).await.contains(&key),
        "the sweep deleted the original"
    );
    let left = write(&app, |conn| Box::pin(originals_to_delete(conn, 10))).await;
    assert!(left.is_empty(), "and forgot it: {left:?}");
}

/// An upload stores its files first and records its images after: a process that stops in
/// between leaves originals that nothing names. The hourly upkeep deletes an original that
/// no job needs once it is an hour old (younger, its upload may still be recording it),
/// and the file that a local store's write cut short left (which a listing passes over).
async fn an_original_that_no_upload_recorded_goes_after_an_hour(app: TestApp) {
    let put = |name: &'static str| {
        let blobs = app.blobs.clone();
        async move {
            blobs
                .put_original(name, bytes::Bytes::from_static(b"GPS"))
                .await
                .unwrap()
        }
    };
    let stray = put("stray-original").await;
    let being_made = put("being-made").await;
    enqueue_jobs(&app, &["being-made"]).await;
    // A write of the local store cut short: the file it writes before renaming it.
    let cut_short = app.config.data_dir.join("images/originals/cut-short#1");
    std::fs::write(&cut_short, b"GPS").unwrap();
    let stored = || async { super::blob_files(&app).await };
    let sweep_at = |clock: souk::clock::Clock| {
        let (db, blobs) = (app.db.clone(), app.blobs.clone());
        async move { souk::usecase::images::delete_stray_originals(&db, &blobs, &clock).await }
    };

    sweep_at(souk::clock::Clock::default()).await;
    let files = stored().await;
    assert!(
        files.contains(&stray) && files.contains(&being_made),
        "{files:?}"
    );
    assert!(cut_short.exists(), "too new to be cut short for good");

    let an_hour_on = souk::clock::Clock::default();
    an_hour_on.advance(3601);
    sweep_at(an_hour_on).await;
    let files = stored().await;
    assert!(!files.contains(&stray), "the stray went: {files:?}");
    assert!(files.contains(&being_made), "a job needs it: {files:?}");
    assert!(!cut_short.exists(), "the cut-short write went");
}
