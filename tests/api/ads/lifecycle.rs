//! The lifecycle of docs/LIFECYCLE.md: the seller's transitions and no others, moderation,
//! expiry on time and the sweep that writes it down.

use serde_json::json;

use super::{ad_in, created, delete, minimal, status};
use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json};

both_backends!(
    the_lifecycle_is_enforced,
    the_sellers_transitions_and_no_others,
    operators_restore_to_where_the_ad_was,
    a_restored_ad_returns_to_its_state_before_the_rejection,
    operators_reject_and_restore,
    ads_expire_on_time,
    the_expiry_sweep_writes_down_what_reads_show,
    the_expiry_sweep_goes_in_batches,
    the_upkeep_expires_ads_by_itself,
    an_ad_deleted_twice_at_once_answers_204_twice,
);

const STATES: [&str; 7] = [
    "draft", "online", "paused", "expired", "closed", "deleted", "rejected",
];

/// docs/LIFECYCLE.md: what a seller may do; sending the current state is no change.
fn seller_may(from: &str, to: &str) -> bool {
    from == to
        || matches!(
            (from, to),
            ("draft", "online")
                | ("online", "paused")
                | ("paused", "online")
                | ("online" | "paused", "closed")
                | (_, "deleted")
        )
}

async fn the_lifecycle_is_enforced(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let mut draft = minimal("Levenscyclus");
    draft["status"] = json!("draft");
    let ad = created(&app, &seller.token, &draft).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let online = expect_json(status(&app, &seller.token, &path, "online").await, 200).await;
    assert_eq!(online["status"], "online");
    assert!(
        online["startDate"].is_string() && online["closeDate"].is_string(),
        "publishing sets the dates"
    );
    let paused = expect_json(status(&app, &seller.token, &path, "paused").await, 200).await;
    assert_eq!(paused["status"], "paused");
    assert_eq!(
        app.get_json(&path, 404).await["code"],
        "advertisement-not-found",
        "paused ads are the seller's"
    );
    expect_json(status(&app, &seller.token, &path, "online").await, 200).await;
    expect_json(status(&app, &seller.token, &path, "closed").await, 200).await;
    let back = expect_json(status(&app, &seller.token, &path, "online").await, 409).await;
    assert_eq!(back["code"], "conflicting-state");
    expect_json(status(&app, &seller.token, &path, "expired").await, 409).await;
    let bogus = expect_json(status(&app, &seller.token, &path, "sold").await, 400).await;
    assert_eq!(bogus["details"][0]["field"], "status");
    let deleted = delete(&app, &seller.token, &path).await;
    assert_eq!(deleted.status(), 204);
    let again = delete(&app, &seller.token, &path).await;
    assert_eq!(again.status(), 204, "DELETE is idempotent");
    expect_json(app.get_with(&path, &seller.token).await, 404).await;
    expect_json(status(&app, &seller.token, &path, "online").await, 404).await;
}

/// Every change of state a seller may ask for (PATCH `status`) against docs/LIFECYCLE.md:
/// the allowed ones land, every other is 409 `conflicting-state` and changes nothing.
async fn the_sellers_transitions_and_no_others(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    for from in STATES.iter().filter(|s| **s != "deleted") {
        for to in STATES {
            let path = ad_in(&app, &seller, from).await;
            let response = status(&app, &seller.token, &path, to).await;
            if seller_may(from, to) {
                assert_eq!(
                    expect_json(response, 200).await["status"],
                    to,
                    "{from} -> {to}"
                );
                let read = app.get_with(&path, &seller.token).await;
                if to == "deleted" {
                    assert_eq!(read.status(), 404, "{from} -> deleted: gone");
                } else {
                    assert_eq!(expect_json(read, 200).await["status"], to);
                }
            } else {
                let refused = expect_json(response, 409).await;
                assert_eq!(refused["code"], "conflicting-state", "{from} -> {to}");
                let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
                assert_eq!(read["status"], *from, "{from} -> {to} changed nothing");
            }
        }
    }
}

/// An operator restores a rejected ad to online if it has running time left, to expired if
/// not, to draft if it was never published; closed, expired and deleted ads cannot be
/// rejected; a reason is text without NUL.
async fn operators_restore_to_where_the_ad_was(app: TestApp) {
    use souk::domain::advertisement::{AdStatus, ItemId};
    use souk::moderation::{ModerationError, reject, restore};
    let seller = app.user("verkoper@souk.test").await;
    let item = |path: &str| ItemId::parse(path.rsplit('/').next().unwrap()).unwrap();
    let now = app.clock.now();
    let draft = ad_in(&app, &seller, "draft").await;
    reject(&app.db, item(&draft), "Namaak", now).await.unwrap();
    assert_eq!(
        restore(&app.db, item(&draft), now).await.unwrap(),
        AdStatus::Draft
    );
    let read = expect_json(app.get_with(&draft, &seller.token).await, 200).await;
    assert_eq!(read["status"], "draft");
    assert!(read["startDate"].is_null());
    let online = ad_in(&app, &seller, "online").await;
    reject(&app.db, item(&online), "Namaak", now).await.unwrap();
    let later = now + 29 * 86_400;
    assert_eq!(
        restore(&app.db, item(&online), later).await.unwrap(),
        AdStatus::Expired
    );
    app.clock.advance(29 * 86_400);
    let token = app.token_of(&seller, None).await;
    let read = expect_json(app.get_with(&online, &token).await, 200).await;
    assert_eq!(read["status"], "expired");
    assert!(read.get("rejectionReason").is_none());
    let now = app.clock.now();
    let seller = User { token, ..seller };
    for state in ["closed", "expired", "deleted"] {
        let path = if state == "deleted" {
            let path = ad_in(&app, &seller, "online").await;
            let deleted = delete(&app, &seller.token, &path).await;
            assert_eq!(deleted.status(), 204);
            path
        } else {
            ad_in(&app, &seller, state).await
        };
        let refused = reject(&app.db, item(&path), "Te laat", now).await;
        assert!(
            matches!(refused, Err(ModerationError::NotAllowed(..))),
            "{state}: {refused:?}"
        );
        let stored = app
            .db
            .read(move |conn| {
                Box::pin(async move { souk::store::ads::get(conn, item(&path).number()).await })
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.rejection_reason, None, "{state}");
    }
    let open = ad_in(&app, &seller, "online").await;
    for reason in ["Namaak\u{0}", "Rood\u{1b}[31m", " "] {
        let refused = reject(&app.db, item(&open), reason, now).await;
        assert!(
            matches!(refused, Err(ModerationError::BadReason)),
            "{reason:?}"
        );
    }
    reject(
        &app.db,
        item(&open),
        "Verboden product.\nZie de regels.",
        now,
    )
    .await
    .unwrap();
    let read = expect_json(app.get_with(&open, &seller.token).await, 200).await;
    assert_eq!(read["rejectionReason"], "Verboden product.\nZie de regels.");
}

/// A paused ad that an operator rejects comes back paused (not online), an online one
/// online, a draft a draft; once its time ran out, expired.
async fn a_restored_ad_returns_to_its_state_before_the_rejection(app: TestApp) {
    use souk::domain::advertisement::{AdStatus, ItemId};
    use souk::moderation::{reject, restore};
    let seller = app.user("verkoper@souk.test").await;
    let item = |path: &str| ItemId::parse(path.rsplit('/').next().unwrap()).unwrap();
    let now = app.clock.now();
    for (state, back) in [
        ("paused", AdStatus::Paused),
        ("online", AdStatus::Online),
        ("draft", AdStatus::Draft),
    ] {
        let path = ad_in(&app, &seller, state).await;
        reject(&app.db, item(&path), "Namaak", now).await.unwrap();
        assert_eq!(restore(&app.db, item(&path), now).await.unwrap(), back);
        let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
        assert_eq!(read["status"], state, "{state} comes back {state}");
        assert!(read.get("rejectionReason").is_none());
    }
    // Rejected while paused, restored after its closeDate: expired, not paused.
    let path = ad_in(&app, &seller, "paused").await;
    reject(&app.db, item(&path), "Namaak", now).await.unwrap();
    assert_eq!(
        restore(&app.db, item(&path), now + 29 * 86_400)
            .await
            .unwrap(),
        AdStatus::Expired
    );
    // Rejected twice (the reason replaced): still back to paused.
    let path = ad_in(&app, &seller, "paused").await;
    reject(&app.db, item(&path), "Namaak", now).await.unwrap();
    reject(&app.db, item(&path), "Nog steeds namaak", now)
        .await
        .unwrap();
    assert_eq!(
        restore(&app.db, item(&path), now).await.unwrap(),
        AdStatus::Paused
    );
}

async fn operators_reject_and_restore(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Twijfelachtig")).await;
    let item = ad["itemId"].as_str().unwrap().to_owned();
    let path = format!("/v1/advertisements/{item}");
    let output = app.souk(&["ads", "reject", &item, "--reason", "Verboden product"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(seen["status"], "rejected");
    assert_eq!(
        seen["rejectionReason"], "Verboden product",
        "the seller sees the reason"
    );
    assert_eq!(
        app.get_json(&path, 404).await["code"],
        "advertisement-not-found"
    );
    let back = expect_json(status(&app, &seller.token, &path, "online").await, 409).await;
    assert_eq!(
        back["code"], "conflicting-state",
        "only an operator restores"
    );
    // Rejecting again replaces the reason.
    let twice = app.souk(&["ads", "reject", &item, "--reason", "Namaak"]);
    assert!(twice.status.success());
    let seen = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(seen["rejectionReason"], "Namaak");
    let empty = app.souk(&["ads", "reject", &item, "--reason", " "]);
    assert!(String::from_utf8_lossy(&empty.stderr).contains("reason"));
    let output = app.souk(&["ads", "restore", &item]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("online"));
    let public = app.get_json(&path, 200).await;
    assert_eq!(public["status"], "online");
    assert!(public.get("rejectionReason").is_none());
    assert!(!app.souk(&["ads", "restore", "m424242"]).status.success());
}

async fn ads_expire_on_time(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Loopt af")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    assert_eq!(ad["renewPossible"], false);
    // Damesfietsen run 28 days; in the last week renewal becomes possible.
    // Tokens live a day: each step gets a fresh one.
    app.clock.advance(22 * 86_400);
    let token = app.client_token(&app.app_client, None).await;
    assert_eq!(
        expect_json(app.get_with(&path, &token).await, 200).await["renewPossible"],
        true
    );
    app.clock.advance(6 * 86_400);
    let token = app.client_token(&app.app_client, None).await;
    expect_json(app.get_with(&path, &token).await, 404).await;
    let seller_token = app.token_of(&seller, None).await;
    let expired = expect_json(app.get_with(&path, &seller_token).await, 200).await;
    assert_eq!(expired["status"], "expired");
    assert_eq!(expired["renewPossible"], true);
    let listed = expect_json(
        app.get_with("/v1/advertisements?status=expired", &seller_token)
            .await,
        200,
    )
    .await;
    assert_eq!(listed["totalCount"], 1);
    let online = expect_json(
        app.get_with(&format!("/v1/users/{}/advertisements", seller.id), &token)
            .await,
        200,
    )
    .await;
    assert_eq!(online["totalCount"], 0);
}

async fn the_expiry_sweep_writes_down_what_reads_show(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Verloopt")).await;
    let number: i64 = ad["itemId"].as_str().unwrap()[1..].parse().unwrap();
    let later = app.clock.now() + 29 * 86_400;
    let expired = app
        .db
        .write(move |conn| {
            Box::pin(async move { souk::usecase::advertisements::expire_due(conn, later).await })
        })
        .await
        .unwrap();
    assert_eq!(expired, 1);
    // The client the seller signed in to hears of it.
    let events = app.get_json("/v1/events", 200).await;
    let newest = &events["_embedded"]["svc:event"][0];
    assert_eq!(newest["eventType"], "advertisement.updated");
    assert_eq!(newest["eventData"]["itemId"], ad["itemId"]);
    assert_eq!(newest["eventData"]["status"], "expired");
    assert_eq!(newest["eventData"]["previousStatus"], "online");
    let stored = app
        .db
        .read(move |conn| Box::pin(async move { souk::store::ads::get(conn, number).await }))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status.as_str(), "expired");
    assert_eq!(stored.version, 2, "the ETag changes with it");
}

/// A backlog is written down a batch at a time, in item order, each ad once.
async fn the_expiry_sweep_goes_in_batches(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let mut numbers = Vec::new();
    for title in ["Een", "Twee", "Drie"] {
        let ad = created(&app, &seller.token, &minimal(title)).await;
        numbers.push(ad["itemId"].as_str().unwrap()[1..].parse::<i64>().unwrap());
    }
    let later = app.clock.now() + 29 * 86_400;
    let mut batches = Vec::new();
    loop {
        let expired = app
            .db
            .write(move |conn| {
                Box::pin(async move { souk::store::ads::expire_due(conn, later, 2).await })
            })
            .await
            .unwrap();
        let batch: Vec<i64> = expired.iter().map(|ad| ad.number).collect();
        assert!(
            expired.iter().all(|ad| ad.status.as_str() == "online"),
            "each as it was before"
        );
        batches.push(batch);
        if expired.len() < 2 {
            break;
        }
    }
    assert_eq!(batches, [numbers[..2].to_vec(), numbers[2..].to_vec()]);
}

/// The upkeep `serve` starts (every minute there) writes expiry down without anyone
/// asking; here it runs every few milliseconds.
async fn the_upkeep_expires_ads_by_itself(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Verloopt vanzelf")).await;
    let number: i64 = ad["itemId"].as_str().unwrap()[1..].parse().unwrap();
    let stored_status = || async {
        app.db
            .read(move |conn| Box::pin(async move { souk::store::ads::get(conn, number).await }))
            .await
            .unwrap()
            .unwrap()
            .status
            .as_str()
    };
    let state = app.another_state();
    let upkeep = tokio::spawn(souk::app::sweep_periodically(
        state,
        std::time::Duration::from_millis(10),
    ));
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(stored_status().await, "online", "not due yet");
    app.clock.advance(28 * 86_400);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while stored_status().await != "expired" {
        assert!(
            std::time::Instant::now() < deadline,
            "the upkeep did not run"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    upkeep.abort();
}

/// Two deletions of one ad at the same moment (a retry after a timeout): both answer 204,
/// as a deletion is idempotent. On PostgreSQL the second read the version the first then
/// changed, and answered 412 though it sent no `If-Match`. Five rounds, since a round may
/// not overlap.
async fn an_ad_deleted_twice_at_once_answers_204_twice(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    for round in 0..5 {
        let ad = created(&app, &seller.token, &minimal("Weg ermee")).await;
        let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
        let (one, other) = tokio::join!(
            delete(&app, &seller.token, &path),
            super::delete(&app, &seller.token, &path)
        );
        assert_eq!(
            (one.status().as_u16(), other.status().as_u16()),
            (204, 204),
            "round {round}"
        );
    }
}
