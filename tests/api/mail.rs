//! The mail queue: mail that a change promises is queued in the change's transaction and
//! sent off the request path, and a mail that cannot go is kept until it can.

use serde_json::json;
use souk::clock::Clock;
use souk::mail::Mailer;
use souk::usecase::mail_queue::{LINK_TOKEN, Sent, send_next};

use crate::both_backends;
use crate::helpers::{Backend, TestApp, expect_json};

both_backends!(a_sender_that_lost_its_lease_changes_nothing);
both_backends!(a_mail_whose_link_was_retired_is_not_sent);

#[tokio::test]
async fn a_mail_that_cannot_go_is_kept_until_it_can_sqlite() {
    a_mail_that_cannot_go_is_kept_until_it_can(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_mail_that_cannot_go_is_kept_until_it_can_postgres() {
    a_mail_that_cannot_go_is_kept_until_it_can(Backend::Postgres).await;
}

/// How many mails wait in the queue, and the most attempts any of them had.
async fn queue(app: &TestApp) -> (i64, i64) {
    app.db
        .read(|conn| {
            Box::pin(async move {
                let row = conn
                    .query_one(
                        "SELECT COUNT(*) AS n, COALESCE(MAX(attempts), 0) AS tried \
                         FROM mail_queue",
                        &[],
                    )
                    .await?;
                Ok::<_, souk::store::DbError>((row.get::<i64>("n")?, row.get::<i64>("tried")?))
            })
        })
        .await
        .unwrap()
}

/// The mail server accepts connections and never answers: the sign-up still answers 201
/// within the request timeout (it used to wait for the mail server, answer 408, and lose
/// the confirmation link for good). The mail stays queued while the server's sender is
/// stuck on it, and a sender that can reach a mail server later sends it.
async fn a_mail_that_cannot_go_is_kept_until_it_can(backend: Backend) {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let smtp = format!("smtp://{}", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let test = format!("mail::kept::{backend:?}");
    let settings = [
        ("SOUK_SMTP_URL", smtp.as_str()),
        ("SOUK_REQUEST_TIMEOUT_SECS", "2"),
    ];
    let app = TestApp::start_with(backend, &test, &settings).await;
    let signed_up = app
        .post("/v1/users")
        .token(&app.token)
        .json(&json!({"email": "geduld@souk.test", "password": "a good password"}))
        .send()
        .await;
    expect_json(signed_up, 201).await;
    let mut seen = (0, 0);
    for _ in 0..100 {
        seen = queue(&app).await;
        if seen.1 > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(seen.0, 1, "the mail is kept");
    assert!(seen.1 >= 1, "the server's sender took it: {seen:?}");
    let queued = queued_bodies(&app).await;
    assert!(
        queued[0].contains(&format!("/accounts/confirm?token={LINK_TOKEN}\n")),
        "the queue holds no usable link, even once a sender took the mail: {queued:?}"
    );
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("\nsouk_mails_waiting 1\n"),
        "the queue's depth in the metrics: {metrics}"
    );

    // Later (past any retry wait), a sender whose mail server answers.
    let later = Clock::default();
    later.advance(4 * 3600);
    let outbox = tempfile::tempdir().unwrap();
    let working = Mailer::Outbox(outbox.path().to_owned());
    assert_eq!(
        send_next(&app.db, &working, &later).await.unwrap(),
        Sent::Sent
    );
    assert_eq!(queue(&app).await.0, 0, "a sent mail leaves the queue");
    let sent: Vec<_> = std::fs::read_dir(outbox.path()).unwrap().collect();
    assert_eq!(sent.len(), 1);
    let mail = std::fs::read_to_string(sent[0].as_ref().unwrap().path()).unwrap();
    assert!(mail.starts_with("To: geduld@souk.test"), "{mail}");
    assert!(!mail.contains(LINK_TOKEN), "{mail}");
    assert_eq!(
        confirm(&app, &mail).await,
        200,
        "the link minted at the last sending works"
    );
    assert_eq!(
        send_next(&app.db, &working, &later).await.unwrap(),
        Sent::Idle,
        "nothing else waits"
    );
}

/// The bodies of the mails queued, oldest first.
async fn queued_bodies(app: &TestApp) -> Vec<String> {
    app.db
        .read(|conn| {
            Box::pin(async move {
                let rows = conn
                    .query("SELECT body FROM mail_queue ORDER BY mail_id", &[])
                    .await?;
                rows.into_iter().map(|mut row| row.take()).collect()
            })
        })
        .await
        .unwrap()
}

/// Follows the confirmation link in `mail` (a POST of its token, as the page's form
/// sends it); the answer's status.
async fn confirm(app: &TestApp, mail: &str) -> u16 {
    let (_, after) = mail.split_once("/accounts/confirm?token=").expect("a link");
    let token = after.split_whitespace().next().unwrap();
    let answer = app
        .post("/accounts/confirm")
        .form(&[("token", token)])
        .send()
        .await;
    answer.status().as_u16()
}

/// An address change asked twice before its first mail went (the mail server down, say):
/// the first mail is never sent, since the second request retired its link, and the second
/// mail's link, minted as it is sent, makes the change. Until then the queue holds no link
/// that works.
async fn a_mail_whose_link_was_retired_is_not_sent(app: TestApp) {
    use souk::domain::locale::Language;
    use souk::domain::user::Email;
    use souk::usecase::accounts::{LinkMail, request_email_change};
    let user = app.user("jan@souk.test").await;
    let how = LinkMail {
        auth_url: app.url(""),
        language: Language::Dutch,
    };
    // Far ahead of the server's clock, whose own sender then never sees these mails.
    let now = app.clock.now() + 1_000_000;
    app.db
        .write(move |conn| {
            Box::pin(async move {
                for address in ["jan.typo@souk.test", "jan.nieuw@souk.test"] {
                    let email = Email::parse(address).unwrap();
                    request_email_change(conn, user.id, &email, &how, now).await?;
                }
                Ok::<_, souk::usecase::Error>(())
            })
        })
        .await
        .unwrap();
    for body in queued_bodies(&app).await {
        assert!(body.contains(&format!("?token={LINK_TOKEN}\n")), "{body}");
    }

    let later = Clock::default();
    later.advance(1_000_001);
    let outbox = tempfile::tempdir().unwrap();
    let working = Mailer::Outbox(outbox.path().to_owned());
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        outcomes.push(send_next(&app.db, &working, &later).await.unwrap());
    }
    assert_eq!(outcomes, [Sent::Stale, Sent::Sent, Sent::Idle]);
    let sent: Vec<_> = std::fs::read_dir(outbox.path()).unwrap().collect();
    assert_eq!(sent.len(), 1, "one mail went");
    let mail = std::fs::read_to_string(sent[0].as_ref().unwrap().path()).unwrap();
    assert!(mail.starts_with("To: jan.nieuw@souk.test"), "{mail}");
    assert_eq!(confirm(&app, &mail).await, 200);
    let own = app
        .get_with(&format!("/v1/users/{}", user.id), &user.token)
        .await;
    assert_eq!(expect_json(own, 200).await["email"], "jan.nieuw@souk.test");
}

/// A sender whose lease ran out (another took the mail over) neither forgets the mail nor
/// moves its next attempt: each taking is named by its count of attempts.
async fn a_sender_that_lost_its_lease_changes_nothing(app: TestApp) {
    use souk::store::mail_queue::{QUEUE, push};
    // Far ahead of the server's clock, whose own sender then never sees this mail.
    let now = app.clock.now() + 1_000_000;
    let taken = app
        .db
        .write(move |conn| {
            Box::pin(async move {
                push(conn, "traag@souk.test", "Onderwerp", "Tekst", None, now).await?;
                let first = QUEUE.take(conn, now, now + 300, None).await?.unwrap();
                let none = QUEUE.take(conn, now + 1, now + 301, None).await?;
                let second = QUEUE.take(conn, now + 300, now + 600, None).await?.unwrap();
                Ok::<_, souk::store::DbError>((first, none, second))
            })
        })
        .await
        .unwrap();
    let (first, none, second) = taken;
    assert!(none.is_none(), "taken once within its lease");
    assert_eq!((first.attempts, second.attempts), (1, 2));
    let (late, current) = (first.clone(), second.clone());
    let left = app
        .db
        .write(move |conn| {
            Box::pin(async move {
                let failure = souk::store::leased::Failure {
                    error: "too late".into(),
                    at: now,
                };
                QUEUE.retry_at(conn, &late, now, &failure).await?;
                let moved = QUEUE.any_due(conn, now + 599, None).await?;
                QUEUE.forget(conn, &late).await?;
                let after_late = QUEUE.waiting(conn).await?;
                let after_late_note = noted(conn).await?;
                // The current sender's failure is kept with the mail, for an operator.
                let failure = souk::store::leased::Failure {
                    error: "451 mailbox busy".into(),
                    at: now + 301,
                };
                QUEUE.retry_at(conn, &current, now + 900, &failure).await?;
                let current_note = noted(conn).await?;
                QUEUE.forget(conn, &current).await?;
                let after_current = QUEUE.waiting(conn).await?.count;
                let notes = (after_late_note, current_note);
                Ok::<_, souk::store::DbError>((moved, after_late, notes, after_current))
            })
        })
        .await
        .unwrap();
    let (moved, after_late, (after_late_note, current_note), after_current) = left;
    let waiting = souk::store::leased::Waiting {
        count: 1,
        first_due: Some(now + 600),
    };
    assert_eq!(
        (moved, after_late, after_late_note, after_current),
        (false, waiting, (None, None, now + 600), 0),
        "the late sender's retry and forget change nothing; the current one's forget does"
    );
    let busy = Some("451 mailbox busy".to_owned());
    assert_eq!(current_note, (busy, Some(now + 301), now + 900));
}

/// The failure noted on the one mail queued, and when it is due.
async fn noted(
    conn: &mut dyn souk::store::Conn,
) -> Result<(Option<String>, Option<i64>, i64), souk::store::DbError> {
    let sql = "SELECT last_error, failed_at, due_at FROM mail_queue";
    let mut row = conn.query_one(sql, &[]).await?;
    Ok((row.take()?, row.take()?, row.take()?))
}

/// On SQLite one process sends every mail, so a mail that a sender took just before the
/// process stopped is sent as soon as the next process starts, not when the stopped
/// sender's five-minute lease would have run out. A mail waiting an hour to be tried again
/// keeps its wait: a restart is no reason to try a failing mail server sooner.
#[tokio::test]
async fn a_mail_taken_before_a_crash_goes_at_the_next_start() {
    use souk::store::leased::Failure;
    use souk::store::mail_queue::{QUEUE, push};
    let app = TestApp::start(Backend::Sqlite, "mail::restart").await;
    let now = app.clock.now();
    let retry_at = now + 3600;
    app.db
        .write(move |conn| {
            Box::pin(async move {
                push(conn, "later@souk.test", "Onderwerp", "Tekst", None, now - 1).await?;
                let failing = QUEUE.take(conn, now, now + 300, None).await?.unwrap();
                let failure = Failure {
                    error: "connection refused".into(),
                    at: now,
                };
                QUEUE.retry_at(conn, &failing, retry_at, &failure).await?;
                push(conn, "herstart@souk.test", "Onderwerp", "Tekst", None, now).await?;
                QUEUE.take(conn, now, now + 300, None).await
            })
        })
        .await
        .unwrap()
        .expect("taken, as by a sender that then stopped");

    // The next start, on the same database.
    let state = app.another_state();
    souk::app::start_workers(&state).await.unwrap();
    let sent = app.outbox_leaving(1).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].starts_with("To: herstart@souk.test"), "{}", sent[0]);
    let waiting = app
        .db
        .read(|conn| Box::pin(async move { noted(conn).await }))
        .await
        .unwrap();
    assert_eq!(
        waiting,
        (Some("connection refused".into()), Some(now), retry_at),
        "the failed mail keeps its wait"
    );
}
