//! Saved-search alerts on both backends: mail about new matches at once or as a daily
//! digest, each ad once, never the owner's own, never for an ad that does not match; the
//! queue is written with the ad, so a restart loses nothing.

use serde_json::{Value, json};

use crate::ads::{car, created, json_patch, minimal, path_of};
use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json};
use crate::storage::{import_categories, move_ladies_bikes_under_a_new_parent};
use souk::accounts::UserSpec;
use souk::domain::search::request::SearchRequest;
use souk::mail::Mailer;
use souk::params;
use souk::store::{DbError, search};
use souk::usecase::alerts::{Round, round};

both_backends!(
    an_immediate_alert_mails_each_new_match_once,
    a_daily_alert_is_one_digest_a_day,
    ads_are_queued_with_their_write_only_while_alerts_are_asked_for,
    a_search_in_a_write_finds_what_its_transaction_changed,
    a_search_that_gathered_a_great_many_matches_still_mails,
    a_reindex_is_not_news,
    an_alert_mail_that_cannot_go_for_a_week_is_given_up,
    a_sender_whose_lease_was_taken_over_leaves_it,
    a_replaced_search_forgets_the_old_ones_matches,
    a_mail_of_a_replaced_search_marks_none_of_the_new_ones_matches,
    an_ad_online_before_the_search_is_news_only_when_search_sees_it_change,
    an_ads_first_image_is_news_to_a_search_with_images,
    a_digest_leaves_out_an_ad_that_changed_out_of_the_search,
    renewing_a_running_ad_is_no_news,
    an_ad_renewed_after_it_expired_is_news_once,
    a_resumed_ad_is_news_once,
    a_mail_lists_twenty_ads_and_how_many_more_in_the_owners_language,
);

const DAY: i64 = 86_400;

async fn save(app: &TestApp, user: &User, request: Value, alert: &str) -> i64 {
    let saved = expect_json(
        app.post("/v1/savedsearches")
            .token(&user.token)
            .json(&json!({"searchRequest": request, "alert": alert}))
            .send()
            .await,
        201,
    )
    .await;
    saved["savedSearchId"].as_i64().unwrap()
}

/// One round of the alert worker at `now`, writing mail to the app's outbox.
async fn alert_round(app: &TestApp, now: i64) -> Round {
    let mailer = Mailer::new(None, "souk@souk.test", &app.config.data_dir).unwrap();
    round_with(app, &mailer, now).await
}

async fn round_with(app: &TestApp, mailer: &Mailer, now: i64) -> Round {
    // A clock of the round's own, set to `now` (the app's clock drives its own workers).
    let clock = souk::clock::Clock::default();
    clock.advance(now - clock.now());
    round(&app.db, mailer, &app.config.base_url, &clock)
        .await
        .unwrap()
}

/// The mails in the outbox to `to`.
async fn mails_to(app: &TestApp, to: &str) -> Vec<String> {
    app.outbox()
        .await
        .into_iter()
        .filter(|mail| mail.starts_with(&format!("To: {to}\n")))
        .collect()
}

/// A round that found one new match and mailed it.
const ONE_MAILED: Round = Round {
    matched: 1,
    mailed: 1,
};

/// Gives the ad at `path` a new title: a change that search, and so alerts, see.
async fn retitle(app: &TestApp, token: &str, path: &str, title: &str) {
    let patch = json!([{"op": "replace", "path": "/title", "value": title}]);
    expect_json(json_patch(app, token, path, patch, None).await, 200).await;
}

async fn queued(app: &TestApp) -> i64 {
    app.db
        .read(|conn| Box::pin(souk::store::alerts::queued(conn)))
        .await
        .unwrap()
}

async fn an_immediate_alert_mails_each_new_match_once(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let quiet = app.user("stil@souk.test").await;
    let audi = json!({"query": "audi", "categoryId": 101});
    let id = save(&app, &buyer, audi.clone(), "immediate").await;
    save(&app, &quiet, audi, "none").await;

    let a4 = created(&app, &seller.token, &car("Audi A4")).await;
    let bmw = created(&app, &seller.token, &car("BMW 320")).await;
    created(&app, &buyer.token, &car("Audi Q5 van de zoeker zelf")).await;
    let now = app.clock.now();
    assert_eq!(
        alert_round(&app, now).await,
        ONE_MAILED,
        "the Audi of another seller matches; the BMW and the owner's own Audi do not"
    );
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    let mail = &mails[0];
    assert!(
        mail.contains("Subject: Nieuwe advertenties voor \"audi\""),
        "{mail}"
    );
    let a4_item = a4["itemId"].as_str().unwrap();
    assert!(
        mail.contains(&format!("- Audi A4: {}/a/{a4_item}", app.config.base_url)),
        "{mail}"
    );
    assert!(!mail.contains("BMW") && !mail.contains("Q5"), "{mail}");
    assert!(mail.contains(&format!("/v1/savedsearches/{id}")), "{mail}");
    assert!(
        mails_to(&app, "stil@souk.test").await.is_empty(),
        "no alert asked, none sent"
    );

    // Changed and still matching: not news again.
    let a4_path = a4["_links"]["self"]["href"].as_str().unwrap();
    let patch = json!([{"op": "replace", "path": "/priceModel/askingPrice", "value": 450000}]);
    expect_json(
        json_patch(&app, &seller.token, a4_path, patch, None).await,
        200,
    )
    .await;
    assert_eq!(alert_round(&app, now).await, Round::default());

    // A changed ad that matches now is news.
    retitle(&app, &seller.token, &path_of(&bmw), "Audi A3 (was BMW)").await;
    assert_eq!(alert_round(&app, now).await, ONE_MAILED);
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 2);
    assert!(
        mails[1].contains("Audi A3 (was BMW)") && !mails[1].contains("Audi A4"),
        "{}",
        mails[1]
    );
}

async fn a_daily_alert_is_one_digest_a_day(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let saved_at = app.clock.now();
    save(
        &app,
        &buyer,
        json!({"query": "audi", "filters": {"price": {"to": 600000}}}),
        "daily",
    )
    .await;
    created(&app, &seller.token, &car("Audi A4")).await;
    created(&app, &seller.token, &car("Audi A6")).await;
    let mut dear = car("Audi R8");
    dear["priceModel"]["askingPrice"] = json!(9_000_000);
    created(&app, &seller.token, &dear).await;

    let round_now = alert_round(&app, saved_at + 10).await;
    assert_eq!(round_now.matched, 2, "the R8 is above the price filter");
    assert_eq!(round_now.mailed, 0, "a digest waits a day");
    assert!(mails_to(&app, "zoeker@souk.test").await.is_empty());

    let first_digest = saved_at + DAY + 10;
    assert_eq!(alert_round(&app, first_digest).await.mailed, 1);
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 1);
    assert!(
        mails[0].contains("2 nieuwe advertenties")
            && mails[0].contains("Audi A4")
            && mails[0].contains("Audi A6")
            && !mails[0].contains("R8"),
        "{}",
        mails[0]
    );

    created(&app, &seller.token, &car("Audi A1")).await;
    let later = alert_round(&app, first_digest + DAY - 10).await;
    assert_eq!(
        (later.matched, later.mailed),
        (1, 0),
        "the next digest waits"
    );
    assert_eq!(alert_round(&app, first_digest + DAY).await.mailed, 1);
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 2);
    assert!(
        mails[1].contains("Audi A1") && !mails[1].contains("Audi A4"),
        "{}",
        mails[1]
    );
}

async fn ads_are_queued_with_their_write_only_while_alerts_are_asked_for(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    created(&app, &seller.token, &car("Audi A4")).await;
    assert_eq!(queued(&app).await, 0, "no saved search asks for alerts");
    save(&app, &buyer, json!({"query": "audi"}), "immediate").await;
    created(&app, &seller.token, &car("Audi A6")).await;
    created(&app, &seller.token, &car("BMW 320")).await;
    // The queue is a table written in each ad's own transaction: whatever happens to the
    // process now, a later round (of this or another replica) finds both.
    assert_eq!(queued(&app).await, 2);
    let now = app.clock.now();
    assert_eq!(alert_round(&app, now).await.matched, 1);
    assert_eq!(queued(&app).await, 0);
    assert_eq!(mails_to(&app, "zoeker@souk.test").await.len(), 1);
}

/// The alert worker searches inside a write job: the ads that its transaction changed (in
/// its own job, or in an earlier job of the same group commit) are found, though SQLite's
/// FTS5 index takes an ad's changes only when the writer commits (migration 0047); and once
/// committed, every reader finds them.
async fn a_search_in_a_write_finds_what_its_transaction_changed(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &car("Volvo 240")).await;
    let number: i64 = ad["itemId"].as_str().unwrap()[1..].parse().unwrap();
    let now = app.clock.now();
    let found = app
        .db
        .write(move |conn| {
            Box::pin(async move {
                let request =
                    SearchRequest::parse(&[("query".to_owned(), "trabant".to_owned())]).unwrap();
                let mut query =
                    souk::usecase::search::query_of::<std::convert::Infallible>(conn, &request)
                        .await
                        .map_err(|e| DbError::Other(format!("{e:?}")))?;
                query.among = Some(vec![number]);
                let before = search::matching(conn, &query, now).await?;
                conn.execute(
                    "UPDATE advertisements SET search_title = 'trabant ' WHERE item_number = $1",
                    params![number],
                )
                .await?;
                let after = search::matching(conn, &query, now).await?;
                Ok::<_, DbError>((before, after))
            })
        })
        .await
        .unwrap();
    assert_eq!(found, (vec![], vec![number]));
    let results = app.get_json("/v1/search?query=trabant", 200).await;
    assert_eq!(results["totalCount"], 1);
}

/// A saved search may gather more matches than one statement can name (a category moved
/// by an import re-indexes all its ads; a mail that keeps failing lets them pile up): its
/// mail still goes, and every match is marked mailed. Here 70,000 matches of ads that no
/// longer exist (past both backends' bound on a statement's parameters) wait before a new
/// one.
async fn a_search_that_gathered_a_great_many_matches_still_mails(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let id = save(&app, &buyer, json!({"query": "audi"}), "immediate").await;
    let now = app.clock.now();
    app.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70000) \
         INSERT INTO saved_search_matches (saved_search_id, item_number, matched_at) \
         SELECT CAST($1 AS BIGINT), 10000000 + i, CAST($2 AS BIGINT) FROM n",
        params![id, now - 60].to_vec(),
    )
    .await;
    created(&app, &seller.token, &car("Audi A4")).await;
    assert_eq!(alert_round(&app, now).await, ONE_MAILED);
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert!(
        mails[0].contains("1 nieuwe advertentie past"),
        "{}",
        mails[0]
    );
    assert!(mails[0].contains("- Audi A4: "), "{}", mails[0]);
    let unmailed = app
        .db
        .read(move |conn| Box::pin(souk::store::alerts::unmailed(conn, id)))
        .await
        .unwrap();
    assert!(unmailed.is_empty(), "{} left unmailed", unmailed.len());
}

/// A re-index puts ads back into search without changing them (here, the one a category
/// import runs when it moves Damesfietsen under another parent): not news to a saved search
/// that only the move makes them match. A change of such an ad afterwards is.
async fn a_reindex_is_not_news(app: TestApp) {
    let labels = json!({"nl-NL": "Proef", "nl-BE": "Proef", "fr-BE": "Essai"});
    import_categories(
        &app,
        &json!({"categories": [{"categoryId": 990, "labels": labels, "status": "open",
            "children": [{"categoryId": 99001, "labels": labels, "status": "open",
                "fees": {"insertionFee": 150, "runningDays": 14,
                    "runningSubscriptions": [{"durationDays": 7, "fee": 99}]},
                "attributes": []}]}]}),
    );
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    save(&app, &buyer, json!({"categoryId": 990}), "immediate").await;
    let bike = created(&app, &seller.token, &minimal("Damesfiets")).await;
    let now = app.clock.now();
    assert_eq!(
        alert_round(&app, now).await,
        Round::default(),
        "Damesfietsen are not under 990 yet"
    );

    move_ladies_bikes_under_a_new_parent(&app);
    let found = app.get_json("/v1/search?categoryId=990", 200).await;
    assert_eq!(found["totalCount"], 1, "re-indexed under its new parent");
    assert_eq!(queued(&app).await, 0, "the re-index queued nothing");
    assert_eq!(alert_round(&app, now).await, Round::default());

    retitle(
        &app,
        &seller.token,
        &path_of(&bike),
        "Damesfiets, als nieuw",
    )
    .await;
    assert_eq!(
        alert_round(&app, now).await,
        ONE_MAILED,
        "a change is news: the re-index left the queue taking ads"
    );
}

/// A buyer's immediate alert on "audi" and a seller's Audi that matches it: the seller and
/// the saved search's id.
async fn an_audi_alert_with_a_match(app: &TestApp) -> (User, i64) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let id = save(app, &buyer, json!({"query": "audi"}), "immediate").await;
    created(app, &seller.token, &car("Audi A4")).await;
    (seller, id)
}

/// A mailer whose every send fails (its outbox would be inside a file), and that file.
fn failing_mailer() -> (tempfile::NamedTempFile, Mailer) {
    let blocker = tempfile::NamedTempFile::new().unwrap();
    let failing = Mailer::Outbox(blocker.path().join("outbox"));
    (blocker, failing)
}

/// Saved search `id`'s mail lease (until when a sender holds it; 0: none) and its matches
/// not mailed yet.
async fn lease_and_unmailed(app: &TestApp, id: i64) -> (i64, Vec<i64>) {
    app.db
        .read(move |conn| {
            Box::pin(async move {
                let lease: i64 = conn
                    .query_one(
                        "SELECT alert_lease_until FROM saved_searches \
                         WHERE saved_search_id = $1",
                        params![id],
                    )
                    .await?
                    .get("alert_lease_until")?;
                let unmailed = souk::store::alerts::unmailed(conn, id).await?;
                Ok::<_, DbError>((lease, unmailed))
            })
        })
        .await
        .unwrap()
}

/// A search whose mail cannot go is tried again in later rounds, for a week from each
/// match; then the matches that old are given up, and the newer ones still go.
async fn an_alert_mail_that_cannot_go_for_a_week_is_given_up(app: TestApp) {
    let (seller, id) = an_audi_alert_with_a_match(&app).await;
    let (_blocker, failing) = failing_mailer();
    let unmailed = || {
        let db = app.db.clone();
        async move {
            db.read(move |conn| Box::pin(souk::store::alerts::unmailed(conn, id)))
                .await
                .unwrap()
                .len()
        }
    };
    let now = app.clock.now();
    for (at, left) in [(now, 1), (now + 600, 1)] {
        assert_eq!(round_with(&app, &failing, at).await.mailed, 0);
        assert_eq!(unmailed().await, left, "{} s after the match", at - now);
    }
    // A newer match, found in a round ten minutes before the first one's week is up.
    created(&app, &seller.token, &car("Audi A6")).await;
    for (at, left) in [(now + 7 * DAY - 600, 2), (now + 7 * DAY + 600, 1)] {
        assert_eq!(round_with(&app, &failing, at).await.mailed, 0);
        assert_eq!(unmailed().await, left, "{} s after the match", at - now);
    }
    assert!(mails_to(&app, "zoeker@souk.test").await.is_empty());
    assert_eq!(
        alert_round(&app, now + 7 * DAY + 1200).await,
        Round {
            matched: 0,
            mailed: 1
        },
        "the newer match still goes"
    );
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert!(mails.len() == 1 && mails[0].contains("Audi A6") && !mails[0].contains("Audi A4"));
}

/// A sender that finishes after its lease ran out, and another sender took the search,
/// leaves that sender's lease and the matches alone: giving the lease back let a third
/// sender take the search and mail the same news again.
async fn a_sender_whose_lease_was_taken_over_leaves_it(app: TestApp) {
    let (_, id) = an_audi_alert_with_a_match(&app).await;
    let (_blocker, failing) = failing_mailer();
    let state = || lease_and_unmailed(&app, id);
    // The first sender claims the search and is slow (here: its mail fails, and its lease
    // stays until it runs out); a second claims it after that.
    let now = app.clock.now();
    round_with(&app, &failing, now).await;
    let (first_lease, numbers) = state().await;
    assert!(first_lease > now && numbers.len() == 1);
    round_with(&app, &failing, first_lease + 1).await;
    let (second_lease, _) = state().await;
    assert!(second_lease > first_lease);
    // The first sender's mail went after all, and it marks what it mailed.
    let unmailed = numbers.clone();
    app.db
        .write(move |conn| {
            Box::pin(async move {
                souk::store::alerts::mailed(conn, id, first_lease, &numbers, now).await
            })
        })
        .await
        .unwrap();
    assert_eq!(
        state().await,
        (second_lease, unmailed),
        "the second sender's lease and matches stay"
    );
}

/// A search replaced while a mail of its old matches is being sent: the mail, once sent,
/// marks none of the new request's matches mailed (replacing the request ends its lease),
/// though one names the same ad.
async fn a_mail_of_a_replaced_search_marks_none_of_the_new_ones_matches(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let id = save(&app, &buyer, json!({"query": "audi"}), "immediate").await;
    created(&app, &seller.token, &car("Audi A4")).await;
    // A sender claims the search and is slow (here: its mail fails, its lease stays).
    let (_blocker, failing) = failing_mailer();
    let now = app.clock.now();
    round_with(&app, &failing, now).await;
    let (lease, numbers) = lease_and_unmailed(&app, id).await;
    assert!(lease > now && numbers.len() == 1);

    let replaced = app
        .put(&format!("/v1/savedsearches/{id}"))
        .token(&buyer.token)
        .json(&json!({"searchRequest": {"query": "a4"}, "alert": "immediate"}))
        .send()
        .await;
    expect_json(replaced, 200).await;
    // The new request matches the same ad (as a later round would record it).
    app.execute(
        "INSERT INTO saved_search_matches (saved_search_id, item_number, matched_at) \
         VALUES ($1, $2, $3)",
        vec![
            souk::store::Value::Int(id),
            souk::store::Value::Int(numbers[0]),
            souk::store::Value::Int(now + 1),
        ],
    )
    .await;
    // The slow sender's mail of the old match went after all.
    let old = numbers.clone();
    app.db
        .write(move |conn| {
            Box::pin(async move { souk::store::alerts::mailed(conn, id, lease, &old, now).await })
        })
        .await
        .unwrap();
    assert_eq!(
        lease_and_unmailed(&app, id).await,
        (0, numbers),
        "the new match still waits for its own mail"
    );
}

/// A daily search whose request is replaced before its digest: what matched the old
/// request is not mailed under the new one's name, even where the new one finds it too
/// (its matches start afresh). Replaced with the same request (only its alert changed),
/// the matches stay.
async fn a_replaced_search_forgets_the_old_ones_matches(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let saved_at = app.clock.now();
    let audi = json!({"query": "audi", "categoryId": 101});
    let id = save(&app, &buyer, audi.clone(), "daily").await;
    created(&app, &seller.token, &car("Audi A4")).await;
    assert_eq!(alert_round(&app, saved_at + 10).await.matched, 1);
    let replace = |request: Value, alert: &str| {
        app.put(&format!("/v1/savedsearches/{id}"))
            .token(&buyer.token)
            .json(&json!({"searchRequest": request, "alert": alert}))
            .send()
    };
    expect_json(replace(audi, "immediate").await, 200).await;
    assert_eq!(
        alert_round(&app, saved_at + 20).await.mailed,
        1,
        "the same request keeps its match, mailed now that the alert is immediate"
    );
    created(&app, &seller.token, &car("Audi A6")).await;
    let audi = json!({"query": "audi", "categoryId": 101});
    expect_json(replace(audi, "daily").await, 200).await;
    assert_eq!(alert_round(&app, saved_at + 30).await.matched, 1, "the A6");
    // Another request that finds the A6 as well: the old request's match of it goes.
    let any_audi = json!({"query": "audi"});
    expect_json(replace(any_audi, "daily").await, 200).await;
    let digest = alert_round(&app, saved_at + DAY + 40).await;
    assert_eq!((digest.matched, digest.mailed), (0, 0));
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 1, "only the first: {mails:?}");
    assert!(
        mails[0].contains("Audi A4") && !mails[0].contains("A6"),
        "{}",
        mails[0]
    );
}

/// An ad online before the search was saved is not news when a write touches it without
/// changing what a search looks at: its `showOnMap` flag, a bought feature (which changes
/// its place in search's order). It was: each such write queued it, and it was mailed as a
/// new ad. A change of what a search looks at (its price) is news, as documented.
async fn an_ad_online_before_the_search_is_news_only_when_search_sees_it_change(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let a4 = path_of(&created(&app, &seller.token, &car("Audi A4")).await);
    save(&app, &buyer, json!({"query": "audi"}), "immediate").await;
    let now = app.clock.now();
    assert_eq!(alert_round(&app, now).await.matched, 0);

    let unmapped = json!([{"op": "replace", "path": "/showOnMap", "value": false}]);
    expect_json(
        json_patch(&app, &seller.token, &a4, unmapped, None).await,
        200,
    )
    .await;
    assert_eq!(queued(&app).await, 0, "the map is not searched");
    let sticker = app
        .post(&format!("{a4}/features/opvalsticker/buy-feature"))
        .token(&seller.token)
        .json(&json!({"pay": true}))
        .send()
        .await;
    expect_json(sticker, 201).await;
    let top = app
        .post(&format!("{a4}/features/dagtopper/buy-feature"))
        .token(&seller.token)
        .json(&json!({"pay": true}))
        .send()
        .await;
    expect_json(top, 201).await;
    assert_eq!(queued(&app).await, 0, "nothing a search looks at changed");
    let round_after = alert_round(&app, now + 10).await;
    assert_eq!((round_after.matched, round_after.mailed), (0, 0));

    let cheaper = json!([{"op": "replace", "path": "/priceModel/askingPrice", "value": 450000}]);
    expect_json(
        json_patch(&app, &seller.token, &a4, cheaper, None).await,
        200,
    )
    .await;
    assert_eq!(alert_round(&app, now + 20).await, ONE_MAILED);
    assert_eq!(mails_to(&app, "zoeker@souk.test").await.len(), 1);
}

/// A search `withImages` hears of an ad once it has an image: the ad placed without one
/// does not match, and its first image (added after the alert worker looked) makes it
/// match. The image changes no column of the ad, so nothing queued the ad then, and the
/// search never heard of it.
async fn an_ads_first_image_is_news_to_a_search_with_images(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    save(
        &app,
        &buyer,
        json!({"query": "fiets", "withImages": true}),
        "immediate",
    )
    .await;
    let ad = created(&app, &seller.token, &minimal("Gazelle fiets")).await;
    let now = app.clock.now();
    let first = alert_round(&app, now).await;
    assert_eq!((first.matched, first.mailed), (0, 0), "no image yet");
    let item = ad["itemId"].as_str().unwrap();
    crate::images::new_image(&app, &seller.token, item).await;
    assert_eq!(alert_round(&app, now + 10).await, ONE_MAILED);
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert!(mails[0].contains("Gazelle fiets"), "{}", mails[0]);
    // A second image is no news.
    crate::images::new_image(&app, &seller.token, item).await;
    assert_eq!(queued(&app).await, 0);
}

/// An ad that matched in the morning and whose price rose past the search's filter before
/// the digest is no news: the digest lists only what the search still finds.
async fn a_digest_leaves_out_an_ad_that_changed_out_of_the_search(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let saved_at = app.clock.now();
    let cheap = json!({"query": "audi", "filters": {"price": {"to": 600000}}});
    save(&app, &buyer, cheap, "daily").await;
    created(&app, &seller.token, &car("Audi A4")).await;
    let a6 = path_of(&created(&app, &seller.token, &car("Audi A6")).await);
    assert_eq!(alert_round(&app, saved_at + 10).await.matched, 2);
    let dearer = json!([{"op": "replace", "path": "/priceModel/askingPrice", "value": 900000}]);
    expect_json(
        json_patch(&app, &seller.token, &a6, dearer, None).await,
        200,
    )
    .await;
    assert_eq!(alert_round(&app, saved_at + DAY + 10).await.mailed, 1);
    let mails = mails_to(&app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 1);
    assert!(
        mails[0].contains("Audi A4") && !mails[0].contains("Audi A6"),
        "{}",
        mails[0]
    );
}

/// Renews the ad at `path` for its seller (in the sandbox the order is paid, and the
/// renewal done, at once).
async fn renew(app: &TestApp, token: &str, path: &str) {
    let order = app
        .post(&format!("{path}/renew"))
        .token(token)
        .json(&json!({"pay": true}))
        .send()
        .await;
    assert_eq!(expect_json(order, 201).await["status"], "paid");
}

/// Sets the close date of `ad` (as `created` answers it) to `close`, where the passing of
/// time would bring it (the app's clock also drives its workers, and tokens live a day).
/// Done before any search is saved, so that the write itself queues nothing.
async fn close_at(app: &TestApp, ad: &Value, close: i64) {
    let number: i64 = ad["itemId"].as_str().unwrap()[1..].parse().unwrap();
    app.execute(
        "UPDATE advertisements SET close_date = $1 WHERE item_number = $2",
        params![close, number].to_vec(),
    )
    .await;
}

/// The ads a mail lists, a line each (`- title: page`).
fn listed(mail: &str) -> Vec<String> {
    mail.lines()
        .filter(|line| line.starts_with("- "))
        .map(str::to_owned)
        .collect()
}

/// A confirmed user of `locale` (`TestApp::user` makes them nl-NL), signed in.
async fn user_in(app: &TestApp, email: &str, locale: &str) -> User {
    app.user_with(UserSpec {
        email: email.into(),
        locale: locale.into(),
        ..UserSpec::default()
    })
    .await
}

/// The alert round at `at` finds the Audi A4 `ad` (as `created` answers it) for
/// zoeker@souk.test's immediate search and mails it: one match, one mail, the only one in
/// the outbox to them, which lists the ad with its page.
async fn the_audi_is_mailed(app: &TestApp, ad: &Value, at: i64) {
    assert_eq!(alert_round(app, at).await, ONE_MAILED);
    let mails = mails_to(app, "zoeker@souk.test").await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    let item = ad["itemId"].as_str().unwrap();
    assert!(
        mails[0].contains(&format!("- Audi A4: {}/a/{item}", app.config.base_url)),
        "{}",
        mails[0]
    );
}

/// The alert round at `at` finds no news (`why`), and zoeker@souk.test still has the one
/// mail `the_audi_is_mailed` saw.
async fn no_news_at(app: &TestApp, at: i64, why: &str) {
    assert_eq!(alert_round(app, at).await, Round::default(), "{why}");
    assert_eq!(mails_to(app, "zoeker@souk.test").await.len(), 1);
}

/// A renewal of an ad that still runs moves only its close date, which no search looks at:
/// it queues nothing, so an ad that was online before the search was saved is not mailed
/// as new (docs/API.md "Saved searches"; migration 0060: renewals used to queue the ad).
async fn renewing_a_running_ad_is_no_news(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let a4 = created(&app, &seller.token, &car("Audi A4")).await;
    let now = app.clock.now();
    // In its last week, where it may be renewed.
    close_at(&app, &a4, now + 3 * DAY).await;
    save(&app, &buyer, json!({"query": "audi"}), "immediate").await;
    assert_eq!(queued(&app).await, 0);

    let path = path_of(&a4);
    renew(&app, &seller.token, &path).await;
    let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(
        read["closeDate"],
        souk::domain::time::format_timestamp(now + 3 * DAY + 56 * DAY),
        "renewed from its old close date"
    );
    assert_eq!(read["status"], "online");
    assert_eq!(
        queued(&app).await,
        0,
        "a renewal of a running ad is no news"
    );
    assert_eq!(alert_round(&app, now + 10).await, Round::default());
    assert!(mails_to(&app, "zoeker@souk.test").await.is_empty());
}

/// An ad renewed in its grace period after it expired is back in search: news to a saved
/// search made while it was away, mailed once. (Its old close date lies before the
/// renewal's moment, so it is news also before the minute's sweep has stored it
/// `expired`.)
async fn an_ad_renewed_after_it_expired_is_news_once(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let a4 = created(&app, &seller.token, &car("Audi A4")).await;
    let now = app.clock.now();
    close_at(&app, &a4, now - DAY).await;
    let path = path_of(&a4);
    let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(read["status"], "expired");
    save(&app, &buyer, json!({"query": "audi"}), "immediate").await;
    assert_eq!(queued(&app).await, 0);

    renew(&app, &seller.token, &path).await;
    let read = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(read["status"], "online");
    assert_eq!(queued(&app).await, 1, "back from expiry: news");
    the_audi_is_mailed(&app, &a4, now + 10).await;
    no_news_at(&app, now + 20, "mailed once").await;
}

/// A paused ad leaves search and a resumed one enters it again: news to a search saved
/// while it was online before (it had not matched, as the search did not exist). Once it
/// has been mailed, pausing and resuming it again is no news: each ad is news once per
/// saved search.
async fn a_resumed_ad_is_news_once(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let buyer = app.user("zoeker@souk.test").await;
    let a4 = created(&app, &seller.token, &car("Audi A4")).await;
    let path = path_of(&a4);
    save(&app, &buyer, json!({"query": "audi"}), "immediate").await;
    let now = app.clock.now();
    assert_eq!(
        queued(&app).await,
        0,
        "placed before the search: not queued"
    );

    let paused = crate::ads::status(&app, &seller.token, &path, "paused").await;
    expect_json(paused, 200).await;
    assert_eq!(queued(&app).await, 0, "a paused ad leaves search");
    let resumed = crate::ads::status(&app, &seller.token, &path, "online").await;
    expect_json(resumed, 200).await;
    assert_eq!(queued(&app).await, 1, "resumed, it enters search again");
    the_audi_is_mailed(&app, &a4, now + 10).await;

    for state in ["paused", "online"] {
        let changed = crate::ads::status(&app, &seller.token, &path, state).await;
        expect_json(changed, 200).await;
    }
    no_news_at(&app, now + 20, "mailed once: a second return is no news").await;
}

/// A mail lists at most 20 ads (`LISTED`), the first to match in the order they matched,
/// and then says how many more there are, in its owner's language: a Dutch owner's list
/// ends with "en 3 meer.", a fr-BE owner's mail has the French subject and text and ends
/// its list with "et 3 de plus.".
async fn a_mail_lists_twenty_ads_and_how_many_more_in_the_owners_language(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let dutch = app.user("zoeker@souk.test").await;
    let french = user_in(&app, "chercheur@souk.test", "fr-BE").await;
    let dutch_id = save(&app, &dutch, json!({"query": "audi"}), "immediate").await;
    let french_id = save(&app, &french, json!({"query": "audi"}), "immediate").await;
    let mut items = Vec::new();
    for n in 1..=23 {
        let ad = created(&app, &seller.token, &car(&format!("Audi nr. {n:02}"))).await;
        items.push(ad["itemId"].as_str().unwrap().to_owned());
    }
    let now = app.clock.now();
    assert_eq!(
        alert_round(&app, now).await,
        Round {
            matched: 46,
            mailed: 2
        },
        "23 ads for each of two searches, one mail each"
    );
    let base = &app.config.base_url;
    // The first twenty placed (they matched in one round, so in the order of their numbers).
    let first_twenty: Vec<String> = items
        .iter()
        .take(20)
        .enumerate()
        .map(|(n, item)| format!("- Audi nr. {:02}: {base}/a/{item}", n + 1))
        .collect();

    // Each owner's mail in their language: subject, count, the list, the rest, the search.
    let in_dutch = (
        "zoeker@souk.test",
        "Subject: Nieuwe advertenties voor \"audi\"\n",
        "\n23 nieuwe advertenties passen bij je zoekopdracht:\n",
        "en 3 meer.",
        format!("\nJe bewaarde zoekopdracht: {base}/v1/savedsearches/{dutch_id}\n"),
    );
    let in_french = (
        "chercheur@souk.test",
        "Subject: Nouvelles annonces pour « audi »\n",
        "\n23 nouvelles annonces répondent à votre recherche :\n",
        "et 3 de plus.",
        format!("\nVotre recherche enregistrée : {base}/v1/savedsearches/{french_id}\n"),
    );
    for (owner, subject, count, more, search) in [in_dutch, in_french] {
        let mails = mails_to(&app, owner).await;
        assert_eq!(mails.len(), 1, "{mails:?}");
        let mail = &mails[0];
        assert!(mail.contains(subject), "{mail}");
        assert!(mail.contains(count), "{mail}");
        assert_eq!(listed(mail), first_twenty);
        assert!(
            mail.contains(&format!("{}\n{more}\n", first_twenty[19])),
            "the list ends with how many more: {mail}"
        );
        assert!(mail.contains(&search), "{mail}");
    }
}
