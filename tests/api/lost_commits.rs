//! A PostgreSQL connection lost at COMMIT (`store::postgres::commit`): the write is told
//! what the server did with it, not "nothing changed" whatever happened.
//!
//! Souk reaches the test's server through a relay of this test that, once armed, cuts the
//! connection that sends the next COMMIT: before passing it on, or after the server's
//! answer (which it keeps from Souk).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use parking_lot::Mutex;
use souk::store::{Db, DbError, DbOptions, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::helpers::{Backend, TestApp};

/// Where the relay cuts the connection that sends the next COMMIT.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cut {
    /// The server never receives the COMMIT.
    BeforeCommit,
    /// The server commits; its answer is kept from Souk.
    AfterAnswer,
}

#[derive(Default)]
struct RelayState {
    armed: Mutex<Option<Cut>>,
    cuts: AtomicU32,
    /// New connections are refused (a server that cannot be reached after the cut).
    refusing: AtomicBool,
}

/// A TCP relay to the test's PostgreSQL server that reads what Souk sends.
struct Relay {
    url: String,
    state: Arc<RelayState>,
}

impl Relay {
    /// A relay to the server of `database_url`, and that URL through it.
    async fn start(database_url: &str) -> Relay {
        let config: postgres::Config = database_url.parse().expect("a PostgreSQL URL");
        let host = match config.get_hosts() {
            [postgres::config::Host::Tcp(host)] => host.clone(),
            hosts => panic!("the relay needs one TCP host in the test's URL: {hosts:?}"),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let server = format!("{host}:{port}");
        let authority = database_url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split(['/', '?']).next())
            .expect("a URL with an authority");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let through = listener.local_addr().unwrap();
        let host_part = authority.rsplit('@').next().unwrap();
        // Without TLS: the relay reads the messages.
        let url = database_url.replacen(
            authority,
            &authority.replacen(host_part, &through.to_string(), 1),
            1,
        ) + if database_url.contains('?') {
            "&sslmode=disable"
        } else {
            "?sslmode=disable"
        };
        let state = Arc::new(RelayState::default());
        let relay_state = state.clone();
        tokio::spawn(async move {
            while let Ok((souk, _)) = listener.accept().await {
                if relay_state.refusing.load(Ordering::SeqCst) {
                    continue;
                }
                let server = server.clone();
                let state = relay_state.clone();
                tokio::spawn(async move {
                    if let Ok(db) = TcpStream::connect(&server).await {
                        relay(souk, db, state).await;
                    }
                });
            }
        });
        Relay { url, state }
    }

    fn arm(&self, cut: Cut) {
        *self.state.armed.lock() = Some(cut);
    }

    fn cuts(&self) -> u32 {
        self.state.cuts.load(Ordering::SeqCst)
    }
}

/// Passes Souk's messages to the server and its answers back, until an armed COMMIT.
async fn relay(souk: TcpStream, db: TcpStream, state: Arc<RelayState>) {
    let (mut from_souk, mut to_souk) = souk.into_split();
    let (mut from_db, mut to_db) = db.into_split();
    let answer_kept = Arc::new(AtomicBool::new(false));
    let keep_answer = answer_kept.clone();
    // The server's answers: once the answer is to be kept, the first bytes that come are
    // the COMMIT's, and the connection to Souk ends without them.
    let answers = tokio::spawn(async move {
        let mut buffer = vec![0_u8; 16 * 1024];
        loop {
            let n = match from_db.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if keep_answer.load(Ordering::SeqCst) || to_souk.write_all(&buffer[..n]).await.is_err()
            {
                return;
            }
        }
    });
    let mut started = false;
    while let Some(message) = next_message(&mut from_souk, &mut started).await {
        if message == b"Q\0\0\0\x0bCOMMIT\0" {
            let cut = state.armed.lock().take();
            match cut {
                Some(Cut::BeforeCommit) => {
                    state.cuts.fetch_add(1, Ordering::SeqCst);
                    answers.abort();
                    return;
                }
                Some(Cut::AfterAnswer) => {
                    state.cuts.fetch_add(1, Ordering::SeqCst);
                    answer_kept.store(true, Ordering::SeqCst);
                    let _ = to_db.write_all(&message).await;
                    // Ends when the answer came; dropping the halves closes both sides.
                    let _ = answers.await;
                    return;
                }
                None => {}
            }
        }
        if to_db.write_all(&message).await.is_err() {
            return;
        }
    }
}

/// The next whole message Souk sends: the start-up message has no type byte (nor has the
/// request for TLS before it, which the server declines), the others have one.
async fn next_message(
    from: &mut tokio::net::tcp::OwnedReadHalf,
    started: &mut bool,
) -> Option<Vec<u8>> {
    let mut message = Vec::new();
    if *started {
        message.push(from.read_u8().await.ok()?);
    }
    let length = from.read_u32().await.ok()?;
    message.extend_from_slice(&length.to_be_bytes());
    let mut body = vec![0_u8; usize::try_from(length).ok()?.checked_sub(4)?];
    from.read_exact(&mut body).await.ok()?;
    const TLS_REQUEST: [u8; 4] = 80_877_103_u32.to_be_bytes();
    *started = *started || body != TLS_REQUEST;
    message.extend_from_slice(&body);
    Some(message)
}

async fn prepared(test: &str) -> (TestApp, Relay, Db) {
    let app = TestApp::start(Backend::Postgres, test).await;
    app.execute("CREATE TABLE commit_probe (id BIGINT PRIMARY KEY)", vec![])
        .await;
    let relay = Relay::start(&app.database_url).await;
    let db = Db::open(&relay.url, &DbOptions::default())
        .await
        .expect("the database through the relay");
    (app, relay, db)
}

async fn insert(db: &Db, id: i64) -> Result<(), DbError> {
    db.write(move |conn| {
        Box::pin(async move {
            conn.execute("INSERT INTO commit_probe (id) VALUES ($1)", &[id.into()])
                .await
                .map(drop)
        })
    })
    .await
}

async fn kept(app: &TestApp, id: i64) -> bool {
    app.db
        .read(move |conn| {
            Box::pin(async move {
                let rows = conn
                    .query(
                        "SELECT id FROM commit_probe WHERE id = $1",
                        &[Value::from(id)],
                    )
                    .await?;
                Ok::<_, DbError>(!rows.is_empty())
            })
        })
        .await
        .unwrap()
}

/// The server committed and its answer was lost: the write succeeded, and says so (it
/// was a 503 "unavailable", which frees an `Idempotency-Key` for a retry that writes again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_commit_whose_answer_was_lost_is_found_committed() {
    let (app, relay, db) = prepared("lost_commit_answer").await;
    insert(&db, 1).await.expect("a write through the relay");
    relay.arm(Cut::AfterAnswer);
    let outcome = insert(&db, 2).await;
    assert_eq!(relay.cuts(), 1, "the relay cut the COMMIT's connection");
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(kept(&app, 2).await);
    // Writes go on, on another connection.
    insert(&db, 3).await.expect("a write after the loss");
    assert!(kept(&app, 3).await);
}

/// The server never had the COMMIT: the write is unavailable, and nothing of it was kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_commit_never_received_changed_nothing() {
    let (app, relay, db) = prepared("lost_commit_unsent").await;
    relay.arm(Cut::BeforeCommit);
    let outcome = insert(&db, 1).await;
    assert_eq!(relay.cuts(), 1, "the relay cut the COMMIT's connection");
    assert!(
        matches!(&outcome, Err(DbError::Unavailable(cause)) if cause.contains("rolled back")),
        "{outcome:?}"
    );
    assert!(!kept(&app, 1).await);
    insert(&db, 1).await.expect("the same write again");
    assert!(kept(&app, 1).await);
}

/// The server cannot be asked after the loss: the write's outcome is unknown, which is not
/// "unavailable" (that says nothing changed), although the server did commit it here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_commit_that_cannot_be_asked_about_is_of_unknown_outcome() {
    let (app, relay, db) = prepared("lost_commit_unknown").await;
    // A write connection opened before the server turns unreachable.
    insert(&db, 0).await.expect("a write through the relay");
    relay.arm(Cut::AfterAnswer);
    relay.state.refusing.store(true, Ordering::SeqCst);
    let outcome = insert(&db, 1).await;
    assert_eq!(relay.cuts(), 1, "the relay cut the COMMIT's connection");
    assert!(
        matches!(&outcome, Err(DbError::OutcomeUnknown(_))),
        "{outcome:?}"
    );
    assert!(kept(&app, 1).await);
}

/// A flush of view counts whose COMMIT's outcome is unknown keeps none of them for the
/// next flush: the server did commit them here, and written again they would count twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn views_of_a_flush_of_unknown_outcome_are_not_written_again() {
    let (app, relay, db) = prepared("lost_commit_views").await;
    let seller = app.user("verkoper@souk.test").await;
    let ad = crate::ads::created(&app, &seller.token, &crate::ads::minimal("Racefiets")).await;
    let item = ad["itemId"].as_str().unwrap().to_owned();
    let number: i64 = item[1..].parse().unwrap();
    let views = souk::statistics::ViewCounter::default();
    for _ in 0..3 {
        views.record(number);
    }
    // A write connection opened before the server turns unreachable.
    insert(&db, 0).await.expect("a write through the relay");
    relay.arm(Cut::AfterAnswer);
    relay.state.refusing.store(true, Ordering::SeqCst);
    let outcome = views.flush(&db).await;
    assert!(
        matches!(&outcome, Err(DbError::OutcomeUnknown(_))),
        "{outcome:?}"
    );
    assert_eq!(views.pending(number), 0, "none kept for the next flush");
    relay.state.refusing.store(false, Ordering::SeqCst);
    views.flush(&db).await.expect("nothing to write");
    let path = format!("/v1/advertisements/{item}/statistics");
    let stats = crate::helpers::expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(stats["numberOfViews"], 3, "counted once");
}
