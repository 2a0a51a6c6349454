//! The storage model of images: rendition jobs claimed once under a lease, and blobs
//! counted by reference and freed with the last one.

use souk::domain::image::{Format, Size};
use souk::store::renditions::{
    NewRendition, RecordError, Recorded, claim, claim_unreferenced, enqueue, forget, record,
    references, remove_all,
};
use souk::store::{Conn, DbError};

use crate::both_backends;
use crate::helpers::TestApp;

both_backends!(
    jobs_are_claimed_once_and_again_after_their_lease,
    concurrent_workers_take_each_job_once,
    the_last_reference_frees_a_blob,
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
    assert_eq!(job.attempts, 2);
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
    }
}

async fn refs(app: &TestApp, sha256: &'static str) -> Option<i64> {
    write(app, move |conn| {
        Box::pin(async move { references(conn, sha256).await })
    })
    .await
}

async fn the_last_reference_frees_a_blob(app: TestApp) {
    enqueue_jobs(&app, &["a", "b"]).await;
    // Two images with an identical small rendition share one blob.
    for media in ["a", "b"] {
        let recorded = write(&app, move |conn| {
            Box::pin(async move {
                record(
                    conn,
                    media,
                    Format::Jpeg,
                    &[
                        rendition(Size::Small, "same"),
                        rendition(Size::Large, media),
                    ],
                )
                .await
            })
        })
        .await;
        assert_eq!(recorded, Recorded::Done);
    }
    assert_eq!(refs(&app, "same").await, Some(2));
    let no_job = write(&app, |conn| {
        Box::pin(async move {
            record(
                conn,
                "gone",
                Format::Jpeg,
                &[rendition(Size::Small, "orphan")],
            )
            .await
        })
    })
    .await;
    assert_eq!(no_job, Recorded::NoJob);
    assert_eq!(refs(&app, "orphan").await, Some(0), "left for the sweep");
    write(&app, |conn| {
        Box::pin(async move { remove_all(conn, "a").await })
    })
    .await;
    assert_eq!(refs(&app, "same").await, Some(1), "b still uses it");
    assert_eq!(refs(&app, "a").await, Some(0));
    let mut claimed = write(&app, |conn| {
        Box::pin(async move { claim_unreferenced(conn, 100).await })
    })
    .await;
    claimed.sort();
    assert_eq!(claimed, ["a", "orphan"]);
    // A blob claimed for deletion cannot be referenced until it is gone.
    enqueue_jobs(&app, &["c"]).await;
    let blocked = app
        .db
        .write(|conn| {
            Box::pin(async move {
                record(conn, "c", Format::Jpeg, &[rendition(Size::Small, "a")]).await
            })
        })
        .await;
    assert!(
        matches!(blocked, Err(RecordError::BlobBeingDeleted)),
        "{blocked:?}"
    );
    assert_eq!(refs(&app, "a").await, Some(-1), "rolled back");
    for sha in claimed {
        write(&app, move |conn| {
            Box::pin(async move { forget(conn, &sha).await })
        })
        .await;
    }
    assert_eq!(refs(&app, "a").await, None);
    assert_eq!(refs(&app, "orphan").await, None);
    let again = write(&app, |conn| {
        Box::pin(
            async move { record(conn, "c", Format::Jpeg, &[rendition(Size::Small, "a")]).await },
        )
    })
    .await;
    assert_eq!(again, Recorded::Done);
    assert_eq!(refs(&app, "a").await, Some(1));
}
