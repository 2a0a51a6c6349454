//! The mail queue: mail that a change promises is queued in the change's transaction and
//! sent off the request path, and a mail that cannot go is kept until it can.

use serde_json::json;
use souk::clock::Clock;
use souk::mail::Mailer;
use souk::usecase::mail_queue::{Sent, send_next};

use crate::helpers::{Backend, TestApp, expect_json};

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

/// The mail server refuses connections: the sign-up still answers 201 at once (it used to
/// wait for the mail server, and a failure lost the confirmation link for good). The mail
/// stays queued after the server's sender failed at it, and a sender that can reach a mail
/// server later sends it.
async fn a_mail_that_cannot_go_is_kept_until_it_can(backend: Backend) {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let smtp = format!("smtp://{}", closed.local_addr().unwrap());
    drop(closed);
    let test = format!("mail::kept::{backend:?}");
    let app = TestApp::start_with(backend, &test, &[("SOUK_SMTP_URL", &smtp)]).await;
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
    assert!(seen.1 >= 1, "the server's sender tried it: {seen:?}");

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
    assert!(mail.contains("/accounts/confirm?token="), "{mail}");
    assert_eq!(
        send_next(&app.db, &working, &later).await.unwrap(),
        Sent::Idle,
        "nothing else waits"
    );
}
