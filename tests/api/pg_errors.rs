//! What PostgreSQL refuses where SQLite does not: a lock waited for past the operator's
//! `lock_timeout` (SQLSTATE 55P03), which is contention like a deadlock (503 with
//! `Retry-After: 1`, nothing changed), and category ids past a 32-bit integer, which the
//! search re-index binds as BIGINT.

use reqwest::Method;
use serde_json::{Value, json};
use souk::domain::advertisement::ItemId;
use souk::state::AppState;

use crate::ads::{created, minimal, path_of};
use crate::both_backends;
use crate::helpers::{Backend, Http, TestApp, expect_json};
use crate::search::found;
use crate::storage::import_categories;

both_backends!(categories_numbered_past_32_bits_are_found_after_a_reindex);

/// A replica of `app`'s server (its database and image store, its workers not started)
/// whose PostgreSQL connections wait at most `timeout` for a lock, as a URL carrying
/// `options=-c lock_timeout=...` makes them; a client of it. Not a TestApp of its own: its
/// start takes the migrations' advisory lock, which other tests' starts hold for longer.
async fn replica_with_lock_timeout(app: &TestApp, timeout: &str) -> Http {
    let url = app.database_url.replacen(
        "options=",
        &format!("options=-clock_timeout%3D{timeout}%20"),
        1,
    );
    assert_ne!(url, app.database_url);
    let db = souk::store::Db::open(&url, &souk::app::db_options(&app.config))
        .await
        .expect("the replica's database");
    let setting = db
        .read(|conn| {
            Box::pin(async move {
                conn.query_one("SELECT current_setting('lock_timeout') AS t", &[])
                    .await?
                    .get::<String>("t")
            })
        })
        .await
        .unwrap();
    assert_eq!(
        setting, timeout,
        "the URL's setting reaches the connections"
    );
    let state = AppState::new(app.config.clone(), db, app.blobs.clone(), app.clock.clone())
        .expect("the replica's state");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let connections = state.connections.clone();
    tokio::spawn(souk::http::serve(
        listener,
        souk::http::router(state),
        connections,
        std::future::pending(),
        souk::http::ServeLimits::of(&app.config),
    ));
    Http::connect(&format!("http://{address}")).await
}

/// Renames the ad at `path` by a JSON Patch sent to `server`.
async fn retitle(server: &Http, token: &str, path: &str, title: &str) -> reqwest::Response {
    let patch = json!([{"op": "replace", "path": "/title", "value": title}]);
    server
        .request(Method::PATCH, path)
        .token(token)
        .json_patch(&patch)
        .send()
        .await
}

/// A write that waits for a row lock past the operator's `lock_timeout` is undone by
/// PostgreSQL (55P03): answered as contention, 503 `service-unavailable` with
/// `Retry-After: 1` (it was a 500), having changed nothing; once the lock is gone the same
/// request works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_postgres_lock_timeout_undoes_the_write_as_contention() {
    let app = TestApp::start(Backend::Postgres, "lock_timeout").await;
    let replica = replica_with_lock_timeout(&app, "200ms").await;
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Damesfiets")).await;
    let path = path_of(&ad);
    let number = ItemId::parse(ad["itemId"].as_str().unwrap())
        .unwrap()
        .number();
    let before = expect_json(app.get_with(&path, &seller.token).await, 200).await;

    // Another client holds the ad's row, as an operator's long transaction would.
    let (mut other, connection) = tokio_postgres::connect(&app.database_url, tokio_postgres::NoTls)
        .await
        .expect("a connection of the test's own");
    tokio::spawn(connection);
    let holding = other.transaction().await.unwrap();
    let held = holding
        .execute(
            "SELECT item_number FROM advertisements WHERE item_number = $1 FOR UPDATE",
            &[&number],
        )
        .await
        .unwrap();
    assert_eq!(held, 1, "the ad's row is held");

    let refused = retitle(&replica, &seller.token, &path, "Herenfiets").await;
    let retry_after = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let error = expect_json(refused, 503).await;
    assert_eq!(error["code"], "service-unavailable");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("niets gewijzigd"),
        "{error}"
    );
    assert_eq!(retry_after.as_deref(), Some("1"));
    let after = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(after, before, "the refused change changed nothing");

    holding.rollback().await.unwrap();
    let changed = expect_json(
        retitle(&replica, &seller.token, &path, "Herenfiets").await,
        200,
    )
    .await;
    assert_eq!(changed["title"], "Herenfiets");
    assert_eq!(app.get_json(&path, 200).await["title"], "Herenfiets");
}

/// The first id that a 32-bit signed integer cannot hold.
const PAST_32_BITS: i64 = 1 << 31;

/// A taxonomy of L1 category `l1` with one leaf: Damesfietsen as the default taxonomy has
/// it (its fees and attributes, which `ads::minimal` fits), numbered `leaf`.
fn ladies_bikes_numbered(l1: i64, leaf: i64) -> Value {
    let taxonomy: Value = serde_json::from_str(souk::app::DEFAULT_TAXONOMY).unwrap();
    let mut bikes = taxonomy["categories"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|parent| parent["children"].as_array().unwrap())
        .find(|c| c["categoryId"] == 402)
        .unwrap()
        .clone();
    bikes["categoryId"] = json!(leaf);
    json!({"categories": [{"categoryId": l1,
        "labels": {"nl-NL": "Proef", "nl-BE": "Proef", "fr-BE": "Essai"},
        "status": "open", "children": [bikes]}]})
}

/// Category ids past a 32-bit integer (the taxonomy and both schemas take any positive
/// 64-bit id) are re-indexed like any other: an import that moves such a leaf under another
/// such L1 makes its ads' search terms again before it ends, and they are found under the
/// leaf and the new parent, not the old one. (Every such re-index failed on PostgreSQL.)
async fn categories_numbered_past_32_bits_are_found_after_a_reindex(app: TestApp) {
    let (first_l1, leaf, second_l1) = (PAST_32_BITS, PAST_32_BITS + 1, PAST_32_BITS + 2);
    import_categories(&app, &ladies_bikes_numbered(first_l1, leaf));
    let seller = app.user("verkoper@souk.test").await;
    let mut body = minimal("Damesfiets");
    body["categoryId"] = json!(leaf);
    let bike = created(&app, &seller.token, &body).await;
    let bike_id = bike["itemId"].as_str().unwrap();
    assert_eq!(
        found(&app, &format!("categoryId={first_l1}")).await,
        [bike_id]
    );

    // Bound as `COALESCE($7, 0)`, the parent id took the literal's type, `integer`, and failed.
    import_categories(&app, &ladies_bikes_numbered(second_l1, leaf));
    let moved = app.get_json(&path_of(&bike), 200).await;
    assert_eq!(
        moved["_links"]["svc:category"]["href"],
        format!("/v1/categories/{second_l1}/{leaf}")
    );
    for id in [leaf, second_l1] {
        for query in [
            format!("categoryId={id}"),
            format!("query=damesfiets&categoryId={id}"),
        ] {
            assert_eq!(found(&app, &query).await, [bike_id], "{query}");
        }
    }
    for query in [
        format!("categoryId={first_l1}"),
        format!("query=damesfiets&categoryId={first_l1}"),
    ] {
        assert!(found(&app, &query).await.is_empty(), "{query}");
    }
}
