//! An operator's command (an import, a secret's rotation) racing requests and a first
//! start, on PostgreSQL, whose writes run READ COMMITTED side by side. Each test holds the
//! command's transaction open on a pool of its own (the CLI's process), sends the request,
//! and lets the command commit once the request has ended or waits for one of its locks;
//! then it checks what was kept. SQLite serializes writes (`BEGIN IMMEDIATE`): the
//! sequential tests of the commands in storage.rs and locations.rs cover both backends.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use souk::app::{DEFAULT_TAXONOMY, prepare_database};
use souk::clock::Clock;
use souk::config::Config;
use souk::domain::category::Category;
use souk::domain::places::{Postcode, parse_geonames_line};
use souk::domain::taxonomy::parse_taxonomy;
use souk::store::{BoxFuture, Conn, Db, DbOptions, categories, locations, migrations};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::ads::{create, created, json_patch, minimal, path_of};
use crate::helpers::{Backend, FreshDatabase, TestApp, expect_json};
use crate::search::found;

/// How long any one step may take.
const PATIENCE: Duration = Duration::from_secs(10);

/// The L1 category that the held import moves Damesfietsen (402) under, from Fietsen (4).
const NEW_PARENT: i64 = 990;

/// GeoNames' line of Emmeloord's area (8301) under another place name.
const PROEFPLAATS: &str = "NL\t8301\tProefplaats\tFlevoland\t16\t\t\t\t\t52.7108\t5.7486\t4";

/// A write transaction of another pool, open, its work done and its locks held.
struct Held {
    /// Its backend, whose locks the request is to wait for.
    pid: i64,
    release: oneshot::Sender<()>,
    transaction: tokio::task::JoinHandle<anyhow::Result<()>>,
}

/// Runs `work` in a write transaction of `db`, and keeps it open until [`Held::commit`].
async fn hold<W>(db: &Db, work: W) -> Held
where
    W: for<'c> FnOnce(&'c mut dyn Conn) -> BoxFuture<'c, anyhow::Result<()>> + Send + 'static,
{
    let (done, work_done) = oneshot::channel();
    let (release, released) = oneshot::channel();
    let db = db.clone();
    let transaction = tokio::spawn(async move {
        db.write(move |conn| {
            Box::pin(async move {
                let pid: i64 = conn
                    .query_one("SELECT pg_backend_pid() AS pid", &[])
                    .await?
                    .get("pid")?;
                work(conn).await?;
                let _ = done.send(pid);
                // A test that fails first drops the sender: the schema goes anyway.
                let _ = released.await;
                Ok::<_, anyhow::Error>(())
            })
        })
        .await
    });
    match within("the held transaction's work", work_done).await {
        Ok(pid) => Held {
            pid,
            release,
            transaction,
        },
        Err(_) => panic!(
            "the held transaction failed: {:?}",
            within("the failed transaction's end", transaction).await
        ),
    }
}

impl Held {
    /// Lets the transaction commit, and waits until it has.
    async fn commit(self) {
        self.release.send(()).expect("the held transaction waits");
        within("the held transaction's commit", self.transaction)
            .await
            .expect("the held transaction's task")
            .expect("the held transaction");
    }
}

/// Runs `request` until it ends or waits for a lock of `held`'s, then lets `held` commit;
/// what `request` came to, and whether it waited. Against a request that waits only once
/// a fix is in, both outcomes go on.
async fn while_held<T>(db: &Db, held: Held, request: impl Future<Output = T>) -> (T, bool) {
    let mut request = std::pin::pin!(request);
    let ended = tokio::select! {
        ended = &mut request => Some(ended),
        () = wait_for_lock_waiter(db, held.pid) => None,
    };
    let waited = ended.is_none();
    held.commit().await;
    let ended = match ended {
        Some(ended) => ended,
        None => within("the request's end after the commit", request).await,
    };
    (ended, waited)
}

/// Polls `db` until a backend of this test waits for a lock that backend `pid` holds. A
/// test's backends carry its schema's name as their application name (the schema's URL,
/// `helpers::PostgresSchema`), and `pid` is one of them: other tests' backends never count.
/// While one of this test's backends waits for another lock (the migrations' advisory lock
/// that another test's start holds, which `prepare_database` takes first), the 10 s start
/// again, up to a minute in all.
async fn wait_for_lock_waiter(db: &Db, pid: i64) {
    const WAITERS: &str = "SELECT count(*) FILTER (WHERE $1::bigint = ANY (blockers)) AS on_held, \
         count(*) AS waiting \
         FROM (SELECT pg_blocking_pids(pid) AS blockers FROM pg_stat_activity \
               WHERE application_name = current_setting('application_name') \
                 AND pid <> pg_backend_pid()) AS ours \
         WHERE cardinality(blockers) > 0";
    let started = Instant::now();
    let mut deadline = started + PATIENCE;
    loop {
        // A statement of its own, so a transaction of its own: the activity as it is now.
        let row = db
            .read(move |conn| {
                Box::pin(async move {
                    conn.query_one(WAITERS, &[souk::store::Value::Int(pid)])
                        .await
                })
            })
            .await
            .expect("this test's backends");
        let (on_held, waiting): (i64, i64) =
            (row.get("on_held").unwrap(), row.get("waiting").unwrap());
        if on_held > 0 {
            return;
        }
        if waiting > 0 {
            deadline = (Instant::now() + PATIENCE).min(started + 6 * PATIENCE);
        }
        assert!(
            Instant::now() < deadline,
            "no backend of this test waited for the held transaction's locks within {PATIENCE:?} \
             (nor ended): the request never reached them"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `future`'s output, which must come within [`PATIENCE`].
async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(PATIENCE, future).await {
        Ok(output) => output,
        Err(_) => panic!("{what}: not within {PATIENCE:?}"),
    }
}

/// A pool of its own on `app`'s database, as the CLI's process opens one.
async fn another_db(app: &TestApp) -> Db {
    Db::open(&app.database_url, &souk::app::db_options(&app.config))
        .await
        .expect("a second pool")
}

/// The taxonomy that `storage::move_ladies_bikes_under_a_new_parent` imports, as the import
/// takes it: Damesfietsen (402) under a new L1 category, [`NEW_PARENT`].
fn ladies_bikes_under_a_new_parent() -> Vec<Category> {
    let default = parse_taxonomy(DEFAULT_TAXONOMY).expect("the default taxonomy");
    let of = |id: i64| default.iter().find(|c| c.id == id).cloned().unwrap();
    let (mut parent, mut bikes) = (of(4), of(402));
    parent.id = NEW_PARENT;
    bikes.parent_id = Some(NEW_PARENT);
    vec![parent, bikes]
}

/// Holds an import, on another pool, that moves Damesfietsen (402) under [`NEW_PARENT`].
async fn hold_category_move(app: &TestApp) -> Held {
    let (moved, now) = (ladies_bikes_under_a_new_parent(), app.clock.now());
    let db = another_db(app).await;
    hold(&db, move |conn| {
        Box::pin(async move {
            categories::import(conn, &moved, false, now).await?;
            Ok::<_, anyhow::Error>(())
        })
    })
    .await
}

/// Holds a locations import on `db` that renames Emmeloord's area (8301) Proefplaats.
async fn hold_proefplaats(db: &Db) -> Held {
    let location = parse_geonames_line(1, PROEFPLAATS).unwrap().unwrap();
    hold(db, move |conn| {
        Box::pin(async move {
            locations::upsert(conn, &[location], |_| {}).await?;
            Ok::<_, anyhow::Error>(())
        })
    })
    .await
}

/// `ad` is under [`NEW_PARENT`] in its answer and read again, and after the re-index that
/// the CLI runs after an import, found under it and not under Fietsen (4).
async fn assert_under_the_new_parent(app: &TestApp, ad: &Value) {
    let category = format!("/v1/categories/{NEW_PARENT}/402");
    assert_eq!(ad["_links"]["svc:category"]["href"], category, "the answer");
    let read = app.get_json(&path_of(ad), 200).await;
    assert_eq!(read["_links"]["svc:category"]["href"], category, "read");
    souk::app::reindex_search(&app.db).await.expect("re-index");
    let id = ad["itemId"].as_str().unwrap();
    let under_the_new_parent = format!("categoryId={NEW_PARENT}");
    assert_eq!(found(app, &under_the_new_parent).await, [id]);
    assert!(found(app, "categoryId=4").await.is_empty(), "under 4");
}

/// A bike for sale in Emmeloord's area.
fn in_emmeloord() -> Value {
    let mut body = minimal("Fiets in Emmeloord");
    body["location"] = json!({"postcode": "8301AA"});
    body
}

/// `ad` is in Proefplaats in its answer and read again.
async fn assert_in_proefplaats(app: &TestApp, ad: &Value) {
    assert_eq!(ad["location"]["cityName"], "Proefplaats", "the answer");
    let read = app.get_json(&path_of(ad), 200).await;
    assert_eq!(read["location"]["cityName"], "Proefplaats", "read");
}

/// A PATCH of the ad at `path` that changes its title only.
async fn retitle(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    let patch = json!([{"op": "replace", "path": "/title", "value": "Herenfiets"}]);
    json_patch(app, token, path, patch, None).await
}

/// A new schema with every migration and nothing loaded, as a first start finds a new
/// database, and a pool on it.
async fn empty_schema(data_dir: &Path, test: &str) -> (FreshDatabase, Db) {
    let fresh = FreshDatabase::create(Backend::Postgres, data_dir, test).await;
    let db = Db::open(&fresh.url, &DbOptions::default())
        .await
        .expect("the new schema");
    migrations::run(&db).await.expect("migrations");
    (fresh, db)
}

const WAITED: &str = "the request did not wait for the held import: nothing raced";

/// An edit of an ad whose category an import moves meanwhile answers, and is searched,
/// under the new parent. (It read the old parent before waiting for the import's lock on the
/// ad, then wrote Fietsen's search terms over the import's mark: 4/402, not found under 990.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn an_edit_racing_a_category_move_is_indexed_under_the_new_parent() {
    let app = TestApp::start(Backend::Postgres, "edit_racing_a_category_move").await;
    let seller = app.user("verkoper@souk.test").await;
    let bike = created(&app, &seller.token, &minimal("Damesfiets")).await;
    let held = hold_category_move(&app).await;
    let path = path_of(&bike);
    let edit = retitle(&app, &seller.token, &path);
    let (answer, waited) = while_held(&app.db, held, edit).await;
    assert!(waited, "{WAITED}");
    assert_under_the_new_parent(&app, &expect_json(answer, 200).await).await;
}

/// An ad placed while an import moves its category gets the new parent. (The POST waited
/// for nothing: it kept Fietsen (4) in its answer, its parent column and its search terms.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn an_ad_placed_during_a_category_move_gets_the_new_parent() {
    let app = TestApp::start(Backend::Postgres, "placed_during_a_category_move").await;
    let seller = app.user("verkoper@souk.test").await;
    let held = hold_category_move(&app).await;
    let body = minimal("Damesfiets");
    let (answer, _) = while_held(&app.db, held, create(&app, &seller.token, &body)).await;
    assert_under_the_new_parent(&app, &expect_json(answer, 201).await).await;
}

/// An ad placed while a locations import renames its place shows the new name. (The POST
/// waited for nothing and kept Emmeloord; the import's pass over the ads had not seen it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn an_ad_placed_during_a_locations_import_shows_the_new_place() {
    let app = TestApp::start(Backend::Postgres, "placed_during_a_locations_import").await;
    let seller = app.user("verkoper@souk.test").await;
    let held = hold_proefplaats(&another_db(&app).await).await;
    let body = in_emmeloord();
    let (answer, _) = while_held(&app.db, held, create(&app, &seller.token, &body)).await;
    assert_in_proefplaats(&app, &expect_json(answer, 201).await).await;
}

/// An edit of an ad whose place a locations import renames meanwhile keeps the new name.
/// (It waited for the import's lock on the ad, then wrote the place it had looked up before.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn an_ad_edited_during_a_locations_import_keeps_the_new_place() {
    let app = TestApp::start(Backend::Postgres, "edited_during_a_locations_import").await;
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &in_emmeloord()).await;
    assert_eq!(ad["location"]["cityName"], "Emmeloord");
    let held = hold_proefplaats(&another_db(&app).await).await;
    let path = path_of(&ad);
    let edit = retitle(&app, &seller.token, &path);
    let (answer, waited) = while_held(&app.db, held, edit).await;
    assert!(waited, "{WAITED}");
    assert_in_proefplaats(&app, &expect_json(answer, 200).await).await;
}

/// A first start on a new database, while the operator's first import is under way, keeps
/// the import. (It counted no categories, waited for the import's rows, then wrote the
/// default taxonomy over them: 402 back under 4.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_first_start_never_undoes_an_operator_import() {
    let dir = tempfile::tempdir().unwrap();
    let (fresh, db) = empty_schema(dir.path(), "first_start_during_an_import").await;
    let clock = Clock::default();
    // The CLI's own first start and the operator's import, in one transaction.
    let default = parse_taxonomy(DEFAULT_TAXONOMY).unwrap();
    let (moved, now) = (ladies_bikes_under_a_new_parent(), clock.now());
    let held = hold(&db, move |conn| {
        Box::pin(async move {
            categories::import(conn, &default, false, now).await?;
            categories::import(conn, &moved, false, now).await?;
            Ok::<_, anyhow::Error>(())
        })
    })
    .await;
    let data_dir = dir.path().display().to_string();
    let env = [
        ("SOUK_DATA_DIR", data_dir.as_str()),
        ("SOUK_DATABASE_URL", fresh.url.as_str()),
        ("SOUK_DATABASE_MAX_CONNECTIONS", "4"),
    ];
    let config = Config::from_sources(None, |name| {
        env.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    })
    .expect("test configuration");
    let (started, waited) = while_held(&db, held, prepare_database(&config, &clock)).await;
    assert!(waited, "{WAITED}");
    started.expect("the first start");
    let bikes = db
        .read(|conn| Box::pin(categories::get(conn, 402)))
        .await
        .unwrap()
        .expect("Damesfietsen");
    assert_eq!(bikes.parent_id, Some(NEW_PARENT));
}

/// A first start on a new database, while the operator's first locations import is under
/// way, keeps the import. (It counted no rows, waited for the import's, then wrote the
/// shipped file over them: Emmeloord again.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_first_start_never_overwrites_an_operators_locations() {
    let dir = tempfile::tempdir().unwrap();
    let (_fresh, db) = empty_schema(dir.path(), "first_start_during_a_locations_import").await;
    let held = hold_proefplaats(&db).await;
    let (loaded, waited) = while_held(&db, held, souk::locations::load_default(&db)).await;
    assert!(waited, "{WAITED}");
    assert_eq!(loaded.expect("the default load"), 0, "rows loaded");
    let kept = db
        .read(|conn| {
            Box::pin(
                async move { locations::find(conn, &Postcode::parse("8301AA").unwrap()).await },
            )
        })
        .await
        .unwrap()
        .expect("Emmeloord's area");
    assert_eq!(kept.place, "Proefplaats");
}

/// A locations import that waits for a transaction holding an ad (an operator's session
/// left open, say) does not stop the other ads' writes meanwhile: it asks for its lock in
/// short tries, and they go on between them; once the session ends, the import goes
/// through. (Its lock request, queued, held every ad write behind it for as long as the
/// session lasted.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_locations_import_waiting_for_a_held_ad_lets_other_writes_go_on() {
    let app = TestApp::start(Backend::Postgres, "import_waits_in_tries").await;
    let seller = app.user("verkoper@souk.test").await;
    let ad = created(&app, &seller.token, &in_emmeloord()).await;
    let number = souk::domain::advertisement::ItemId::parse(ad["itemId"].as_str().unwrap())
        .unwrap()
        .number();
    let session = hold(&another_db(&app).await, move |conn| {
        Box::pin(async move {
            let hold = "SELECT item_number FROM advertisements WHERE item_number = $1 FOR UPDATE";
            conn.run(hold, &[souk::store::Value::Int(number)]).await?;
            Ok::<_, anyhow::Error>(())
        })
    })
    .await;
    let location = parse_geonames_line(1, PROEFPLAATS).unwrap().unwrap();
    let importer = another_db(&app).await;
    let import = tokio::spawn(async move {
        importer
            .write(move |conn| {
                Box::pin(async move { locations::upsert(conn, &[location], |_| {}).await })
            })
            .await
    });
    wait_for_lock_waiter(&app.db, session.pid).await;
    for title in ["Stadsfiets", "Bakfiets", "Tandem"] {
        let placed = within(
            "a placing while the import waits",
            create(&app, &seller.token, &minimal(title)),
        )
        .await;
        expect_json(placed, 201).await;
    }
    assert!(!import.is_finished(), "the import waits for the session");
    session.commit().await;
    within("the import", import)
        .await
        .expect("the import's task")
        .expect("the import");
    let read = app.get_json(&path_of(&ad), 200).await;
    assert_eq!(read["location"]["cityName"], "Proefplaats");
}

/// A client-credentials grant whose secret was checked while the secret's rotation was
/// under way is refused once the rotation commits, rather than issued a token of the old
/// secret that the rotation's revocation did not see. (It was issued: 200.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_grant_racing_its_clients_secret_rotation_is_refused() {
    let app = TestApp::start(Backend::Postgres, "grant_racing_a_rotation").await;
    let client = app.app_client.clone();
    let (id, now) = (client.id.clone(), app.clock.now());
    let hash = souk::oauth::secret::hash("the new secret");
    let rotation = hold(&another_db(&app).await, move |conn| {
        Box::pin(async move {
            let rotated = souk::store::oauth::rotate_client_secret(conn, &id, &hash, now).await?;
            assert_eq!(rotated, souk::store::oauth::SecretRotation::Rotated);
            Ok::<_, anyhow::Error>(())
        })
    })
    .await;
    let grant = app.token_request(&client, &[("grant_type", "client_credentials")]);
    let (answer, waited) = while_held(&app.db, rotation, grant).await;
    assert!(
        waited,
        "the grant did not wait for the rotation: nothing raced"
    );
    assert_eq!(answer.status(), 401, "{:?}", answer.text().await);
}
