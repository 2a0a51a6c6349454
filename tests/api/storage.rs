//! The storage layer on both backends: group commit, savepoints, placeholders, migrations,
//! the bounded WAL, and the taxonomy import.

use souk::store::{Backend as DbBackend, DbError, Row, Value, categories, migrations};

use crate::ads::{car, created, minimal, path_of, put};
use crate::both_backends;
use crate::helpers::{Backend, TestApp, expect_json};

both_backends!(
    concurrent_writes_are_all_kept_and_failures_roll_back_alone,
    placeholders_bind_by_number,
    lists_bind_on_postgres_only,
    unique_violations_are_recognised,
    migrations_run_once,
    import_refuses_a_malformed_file_and_changes_nothing,
    import_extends_and_replace_closes,
    the_database_keeps_each_ads_parent_category,
    search_follows_a_moved_category_to_its_new_parent,
    the_upgrade_to_kept_parents_fills_every_ad,
    client_and_user_commands,
);

/// The one row `sql` answers with `values`, read on a shared read connection.
async fn read_one(app: &TestApp, sql: &'static str, values: Vec<Value>) -> Result<Row, DbError> {
    app.db
        .read(move |conn| Box::pin(async move { conn.query_one(sql, &values).await }))
        .await
}

/// Runs `sql` (statements without parameters) in a write transaction.
async fn write_batch(app: &TestApp, sql: &'static str) {
    app.db
        .write(move |conn| Box::pin(async move { conn.execute_batch(sql).await }))
        .await
        .unwrap();
}

async fn create_probe(app: &TestApp) {
    write_batch(
        app,
        "CREATE TABLE probe (id BIGINT PRIMARY KEY, payload TEXT NOT NULL, n BIGINT)",
    )
    .await;
}

async fn concurrent_writes_are_all_kept_and_failures_roll_back_alone(app: TestApp) {
    create_probe(&app).await;
    let mut tasks = Vec::new();
    for i in 0..200_i64 {
        let db = app.db.clone();
        tasks.push(tokio::spawn(async move {
            db.write(move |conn| {
                Box::pin(async move {
                    conn.execute(
                        "INSERT INTO probe (id, payload) VALUES ($1, $2)",
                        &[Value::Int(i), Value::from(format!("row {i}"))],
                    )
                    .await?;
                    if i % 10 == 0 {
                        // Fails after writing: its row must vanish, the batch must not.
                        return Err(DbError::Other("refused".into()));
                    }
                    Ok(i)
                })
            })
            .await
        }));
    }
    let mut acknowledged = Vec::new();
    for task in tasks {
        if let Ok(i) = task.await.unwrap() {
            acknowledged.push(i);
        }
    }
    assert_eq!(acknowledged.len(), 180);
    let stored: Vec<i64> = app
        .db
        .read(|conn| {
            Box::pin(async move {
                conn.query("SELECT id FROM probe ORDER BY id", &[])
                    .await?
                    .iter()
                    .map(|r| r.get::<i64>("id"))
                    .collect::<Result<Vec<_>, _>>()
            })
        })
        .await
        .unwrap();
    acknowledged.sort();
    assert_eq!(
        stored, acknowledged,
        "exactly the acknowledged writes are stored"
    );
}

async fn placeholders_bind_by_number(app: TestApp) {
    create_probe(&app).await;
    let row = app
        .db
        .write(|conn| {
            Box::pin(async move {
                conn.query_one(
                    "INSERT INTO probe (n, payload, id) VALUES ($3, $2, $1) \
                     RETURNING id, payload, n",
                    &[Value::Int(7), Value::from("seven"), Value::Int(49)],
                )
                .await
            })
        })
        .await
        .unwrap();
    assert_eq!(row.get::<i64>("id").unwrap(), 7);
    assert_eq!(row.get::<String>("payload").unwrap(), "seven");
    assert_eq!(row.get::<i64>("n").unwrap(), 49);
    // A row shows its values, as PostgreSQL's are decoded lazily too (for error messages).
    let shown = format!("{row:?}");
    assert!(
        shown.contains(r#"[Int(7), Text("seven"), Int(49)]"#),
        "{shown}"
    );
    let found = read_one(
        &app,
        "SELECT payload FROM probe WHERE n = $2 AND id = $1",
        vec![Value::Int(7), Value::Int(49)],
    )
    .await
    .unwrap();
    assert_eq!(found.get::<String>("payload").unwrap(), "seven");
    let error = row.get::<String>("id").unwrap_err();
    assert!(matches!(error, DbError::Decode(_)));
}

/// A list binds as a PostgreSQL array (search binds a radius's areas so); SQLite has no
/// arrays, and binding one there is an error, not a panic.
async fn lists_bind_on_postgres_only(app: TestApp) {
    let found = read_one(
        &app,
        "SELECT count(*) AS n FROM (SELECT 'b' AS v) x WHERE v = ANY($1)",
        vec![Value::TextList(vec!["a".to_owned(), "b".to_owned()])],
    )
    .await;
    match app.backend {
        Backend::Postgres => assert_eq!(found.unwrap().get::<i64>("n").unwrap(), 1),
        Backend::Sqlite => assert!(found.is_err(), "{found:?}"),
    }
}

/// Heavy reads (searches) run on PostgreSQL connections of their own, not on the shared
/// read connection where point reads would queue behind them, with plans made for the
/// values bound, no parallel workers, random reads priced as cached ones, a larger
/// `work_mem` and no JIT compilation; the shared connection keeps PostgreSQL's default
/// plan cache (point reads reuse their generic plans) and parallel workers, and has no JIT
/// either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn postgres_heavy_reads_have_connections_of_their_own() {
    let app = TestApp::start(Backend::Postgres, "heavy_reads").await;
    const SETTINGS: &str = "SELECT pg_backend_pid() AS pid, \
        current_setting('plan_cache_mode') AS plan, current_setting('jit') AS jit, \
        current_setting('max_parallel_workers_per_gather') AS workers, \
        current_setting('random_page_cost') AS page_cost, current_setting('work_mem') AS work_mem";
    let heavy = app
        .db
        .read_heavy(|conn| Box::pin(async move { conn.query_one(SETTINGS, &[]).await }))
        .await
        .unwrap();
    let shared = read_one(&app, SETTINGS, Vec::new()).await.unwrap();
    assert_ne!(
        heavy.get::<i64>("pid").unwrap(),
        shared.get::<i64>("pid").unwrap()
    );
    assert_eq!(heavy.get::<String>("plan").unwrap(), "force_custom_plan");
    assert_eq!(shared.get::<String>("plan").unwrap(), "auto");
    assert_eq!(heavy.get::<String>("jit").unwrap(), "off");
    assert_eq!(shared.get::<String>("jit").unwrap(), "off");
    assert_eq!(heavy.get::<String>("workers").unwrap(), "0");
    assert_ne!(shared.get::<String>("workers").unwrap(), "0");
    assert_eq!(heavy.get::<String>("page_cost").unwrap(), "1.1");
    assert_eq!(heavy.get::<String>("work_mem").unwrap(), "16MB");

    // A heavy read that keeps plans from some point on (a search's page of ads) keeps them
    // from its next statement; the next heavy read, on the same connection (the only one
    // idle), plans for the values again from its first.
    let kept = app
        .db
        .read_heavy(|conn| {
            Box::pin(async move {
                let before = conn.query_one(SETTINGS, &[]).await?;
                conn.keep_plans();
                let after = conn.query_one(SETTINGS, &[]).await?;
                Ok::<_, DbError>((before, after))
            })
        })
        .await
        .unwrap();
    let next = app
        .db
        .read_heavy(|conn| Box::pin(async move { conn.query_one(SETTINGS, &[]).await }))
        .await
        .unwrap();
    for (row, plan) in [
        (&kept.0, "force_custom_plan"),
        (&kept.1, "auto"),
        (&next, "force_custom_plan"),
    ] {
        assert_eq!(
            row.get::<i64>("pid").unwrap(),
            heavy.get::<i64>("pid").unwrap()
        );
        assert_eq!(row.get::<String>("plan").unwrap(), plan);
        assert_eq!(row.get::<String>("work_mem").unwrap(), "16MB");
    }
}

async fn unique_violations_are_recognised(app: TestApp) {
    create_probe(&app).await;
    let insert = |db: souk::store::Db| async move {
        db.write(|conn| {
            Box::pin(async move {
                conn.execute("INSERT INTO probe (id, payload) VALUES (1, 'x')", &[])
                    .await
            })
        })
        .await
    };
    insert(app.db.clone()).await.unwrap();
    let error = insert(app.db.clone()).await.unwrap_err();
    assert!(matches!(error, DbError::UniqueViolation(_)), "{error:?}");
}

async fn migrations_run_once(app: TestApp) {
    assert_eq!(migrations::run(&app.db).await.unwrap(), 0);
    let version = app
        .db
        .read(|conn| Box::pin(migrations::current_version(conn)))
        .await
        .unwrap();
    assert_eq!(version, migrations::latest_version());
    let expected = match app.backend {
        Backend::Sqlite => DbBackend::Sqlite,
        Backend::Postgres => DbBackend::Postgres,
    };
    assert_eq!(app.db.backend(), expected, "the backend the test asked for");
}

fn import(app: &TestApp, file: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let file = file.to_str().expect("a UTF-8 path");
    app.souk(&[&["categories", "import", file], extra].concat())
}

async fn all_categories(app: &TestApp) -> Vec<souk::domain::category::Category> {
    app.db
        .read(|conn| Box::pin(categories::all(conn)))
        .await
        .unwrap()
}

async fn import_refuses_a_malformed_file_and_changes_nothing(app: TestApp) {
    let before = all_categories(&app).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    let cases = [
        (
            "{\"categories\": [\n  {\"categoryId\": 1,\n  \"labels\": }]}",
            "line 3",
        ),
        (
            &souk::app::DEFAULT_TAXONOMY.replacen("\"LIST\"", "\"ENUM\"", 1) as &str,
            ".type",
        ),
        (
            &souk::app::DEFAULT_TAXONOMY.replacen("\"categoryId\": 2,", "\"categoryId\": 1,", 1),
            "appears twice",
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(&file, text).unwrap();
        let output = import(&app, &file, &[]);
        assert!(!output.status.success());
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(message.contains(expected), "{expected:?} not in {message}");
        assert!(message.contains("nothing changed"), "{message}");
    }
    assert_eq!(all_categories(&app).await, before);
}

async fn import_extends_and_replace_closes(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("extra.json");
    std::fs::write(
        &file,
        r#"{"categories": [{"categoryId": 990,
            "labels": {"nl-NL": "Proef", "nl-BE": "Proef", "fr-BE": "Essai"},
            "status": "open",
            "children": [{"categoryId": 99001,
                "labels": {"nl-NL": "Proefjes", "nl-BE": "Proefjes", "fr-BE": "Essais"},
                "status": "open",
                "fees": {"insertionFee": 150, "runningDays": 14,
                         "runningSubscriptions": [{"durationDays": 7, "fee": 99}]},
                "attributes": []}]}]}"#,
    )
    .unwrap();
    let before = all_categories(&app).await.len();
    let output = import(&app, &file, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("2 categories added"));
    assert_eq!(all_categories(&app).await.len(), before + 2);
    let fees = app.get_json("/v1/categories/990/99001/fees", 200).await;
    assert_eq!(fees["insertionFee"], 150);
    assert_eq!(fees["runningSubscriptions"][0]["fee"], 99);
    assert_eq!(
        app.get_json("/v1/categories/1", 200).await["status"],
        "open"
    );

    let open_before = all_categories(&app)
        .await
        .iter()
        .filter(|c| {
            c.status == souk::domain::category::CategoryStatus::Open && c.id != 990 && c.id != 99001
        })
        .count();
    let output = import(&app, &file, &["--replace"]);
    assert!(output.status.success());
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        printed.contains(&format!("{open_before} closed")),
        "{printed}"
    );
    assert_eq!(
        app.get_json("/v1/categories/1", 200).await["status"],
        "closed"
    );
    assert_eq!(
        app.get_json("/v1/categories/990", 200).await["status"],
        "open"
    );
    let tree = app.get_json("/v1/categories", 200).await;
    assert_eq!(
        tree["_embedded"]["svc:category"].as_array().unwrap().len() as i64,
        all_categories(&app)
            .await
            .iter()
            .filter(|c| c.parent_id.is_none())
            .count() as i64
    );
}

/// Runs `souk categories import` on `taxonomy`, which must succeed.
pub(crate) fn import_categories(app: &TestApp, taxonomy: &serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taxonomy.json");
    std::fs::write(&file, taxonomy.to_string()).unwrap();
    let output = import(app, &file, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `souk categories import` on a file that puts Damesfietsen (402), as the default
/// taxonomy has it, under L1 category 990 (new, or as an earlier import made it).
pub(crate) fn move_ladies_bikes_under_a_new_parent(app: &TestApp) {
    let taxonomy: serde_json::Value = serde_json::from_str(souk::app::DEFAULT_TAXONOMY).unwrap();
    let leaf = taxonomy["categories"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l1| l1["children"].as_array().unwrap())
        .find(|leaf| leaf["categoryId"] == 402)
        .unwrap()
        .clone();
    let moved = serde_json::json!({"categories": [{"categoryId": 990,
        "labels": {"nl-NL": "Proef", "nl-BE": "Proef", "fr-BE": "Essai"},
        "status": "open", "children": [leaf]}]});
    import_categories(app, &moved);
}

/// The database keeps each ad's parent category (migration 0048), whoever writes: on
/// insert, on a change of category, and when an import moves a category to another parent,
/// which moves the category's ads and no other.
async fn the_database_keeps_each_ads_parent_category(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let bike = created(&app, &seller.token, &minimal("Damesfiets")).await;
    let was_a_car = created(&app, &seller.token, &car("Stationwagen")).await;
    let still_a_car = created(&app, &seller.token, &car("Cabriolet")).await;
    let category_of = |ad: &serde_json::Value| ad["_links"]["svc:category"]["href"].clone();
    let read = |ad: &serde_json::Value| {
        let path = path_of(ad);
        let app = &app;
        async move { app.get_json(&path, 200).await }
    };
    assert_eq!(category_of(&read(&bike).await), "/v1/categories/4/402");
    assert_eq!(category_of(&read(&was_a_car).await), "/v1/categories/1/101");
    expect_json(
        put(
            &app,
            &seller.token,
            &path_of(&was_a_car),
            &minimal("Herenfiets"),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(category_of(&read(&was_a_car).await), "/v1/categories/4/402");

    move_ladies_bikes_under_a_new_parent(&app);
    for ad in [&bike, &was_a_car] {
        assert_eq!(category_of(&read(ad).await), "/v1/categories/990/402");
    }
    assert_eq!(
        category_of(&read(&still_a_car).await),
        "/v1/categories/1/101"
    );
}

/// A category import that moves a category to another parent makes the search terms of its
/// ads again before it ends: they are found under the new parent, not under the old one.
async fn search_follows_a_moved_category_to_its_new_parent(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let bike = created(&app, &seller.token, &minimal("Damesfiets")).await;
    let a_car = created(&app, &seller.token, &car("Stationwagen")).await;
    let found = |query: String| {
        let app = &app;
        async move {
            let answer = app.get_json(&format!("/v1/search?{query}"), 200).await;
            let results = answer["_embedded"]["svc:search-result"].as_array().cloned();
            let ids: Vec<String> = results
                .unwrap_or_default()
                .iter()
                .map(|r| r["itemId"].as_str().unwrap().to_owned())
                .collect();
            ids
        }
    };
    let (bike_id, car_id) = (
        bike["itemId"].as_str().unwrap(),
        a_car["itemId"].as_str().unwrap(),
    );
    assert_eq!(found("categoryId=4".into()).await, [bike_id]);
    assert_eq!(found("categoryId=1".into()).await, [car_id]);

    move_ladies_bikes_under_a_new_parent(&app);
    for query in [
        "categoryId=990",
        "categoryId=402",
        "query=damesfiets&categoryId=990",
    ] {
        assert_eq!(found(query.into()).await, [bike_id], "{query}");
    }
    for query in ["categoryId=4", "query=damesfiets&categoryId=4"] {
        assert!(found(query.into()).await.is_empty(), "{query}");
    }
    assert_eq!(found("categoryId=1".into()).await, [car_id]);
    let search_version: i64 = read_one(
        &app,
        "SELECT search_version FROM advertisements WHERE category_id = 402",
        vec![],
    )
    .await
    .unwrap()
    .get("search_version")
    .unwrap();
    assert!(search_version > 0, "re-indexed, not left for the upkeep");
}

/// Migration 0048 gives each ad stored before it the parent of its category.
async fn the_upgrade_to_kept_parents_fills_every_ad(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let ads = [
        created(&app, &seller.token, &minimal("Damesfiets")).await,
        created(&app, &seller.token, &car("Stationwagen")).await,
    ];
    // The database as it was before the migration.
    let undo: &[&str] = match app.backend {
        Backend::Sqlite => &[
            "DROP TRIGGER ads_parent_category_insert",
            "DROP TRIGGER ads_parent_category_update",
            "DROP TRIGGER categories_parent_to_ads",
        ],
        Backend::Postgres => &[
            "DROP FUNCTION ads_parent_category() CASCADE",
            "DROP FUNCTION categories_parent_to_ads() CASCADE",
        ],
    };
    for sql in undo.iter().chain([
        &"ALTER TABLE advertisements DROP COLUMN parent_category_id",
        &"DELETE FROM schema_migrations WHERE version = 48",
    ]) {
        app.execute(sql, vec![]).await;
    }
    assert_eq!(migrations::run(&app.db).await.unwrap(), 1);
    for ad in ads {
        let path = path_of(&ad);
        assert_eq!(app.get_json(&path, 200).await, ad, "{path}");
    }
}

/// performance.md: a driver that leaves `INSERT ... RETURNING` statements unfinished keeps
/// the WAL from being checkpointed and it grows without end. Sustained writes with
/// RETURNING, interleaved with reads, must leave it bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_wal_stays_bounded_under_sustained_writes() {
    let app = TestApp::start(Backend::Sqlite, "wal").await;
    create_probe(&app).await;
    let payload = "x".repeat(2048);
    let mut tasks = Vec::new();
    for worker in 0..16_i64 {
        let db = app.db.clone();
        let payload = payload.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..1250_i64 {
                let id = worker * 100_000 + i;
                let payload = payload.clone();
                db.write(move |conn| {
                    Box::pin(async move {
                        conn.query_one(
                            "INSERT INTO probe (id, payload) VALUES ($1, $2) RETURNING id",
                            &[Value::Int(id), Value::from(payload)],
                        )
                        .await
                    })
                })
                .await
                .unwrap();
                if i % 10 == 0 {
                    db.read(move |conn| {
                        Box::pin(async move {
                            conn.query_opt("SELECT id FROM probe WHERE id = $1", &[Value::Int(id)])
                                .await
                        })
                    })
                    .await
                    .unwrap();
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    // 20,000 rows of 2 KiB: about 40 MB went through the WAL.
    let count: i64 = app
        .db
        .read(|conn| {
            Box::pin(async move {
                conn.query_one("SELECT COUNT(*) AS n FROM probe", &[])
                    .await?
                    .get("n")
            })
        })
        .await
        .unwrap();
    assert_eq!(count, 20_000);
    let wal = app.db.sqlite_wal_bytes().unwrap();
    assert!(wal < 16 * 1024 * 1024, "the WAL grew to {wal} bytes");
}

fn json_output(output: &std::process::Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

async fn client_and_user_commands(app: TestApp) {
    let created = json_output(&app.souk(&[
        "client",
        "create",
        "--name",
        "Partner",
        "--redirect-uri",
        "https://partner.test/cb",
        "--scopes",
        "read write confirm_upcall",
        "--default-scopes",
        "read",
    ]));
    let id = created["client_id"].as_str().unwrap().to_owned();
    let secret = created["client_secret"].as_str().unwrap().to_owned();
    let partner = crate::helpers::TestClient {
        id: id.clone(),
        secret: Some(secret.clone()),
        redirect_uri: "https://partner.test/cb".into(),
    };
    let token = app.client_token(&partner, None).await;
    assert!(!token.is_empty());
    let listed = json_output(&app.souk(&["client", "list"]));
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client_id"] == id.as_str())
        .unwrap();
    assert_eq!(
        entry["grants"],
        serde_json::json!(["authorization_code", "refresh_token", "client_credentials"])
    );
    assert!(
        !listed.to_string().contains(&secret),
        "no secret in the listing"
    );
    let rotated = json_output(&app.souk(&["client", "rotate-secret", &id]));
    assert_ne!(rotated["client_secret"], secret.as_str());
    let old = app
        .token_request(&partner, &[("grant_type", "client_credentials")])
        .await;
    assert_eq!(old.status(), 401, "the old secret stops working");
    let user = json_output(&app.souk(&[
        "user",
        "create",
        "--email",
        "cli@souk.test",
        "--password",
        "cli-password",
        "--name",
        "Cli",
    ]));
    assert!(user["userId"].as_i64().unwrap() > 0);
    let partner = crate::helpers::TestClient {
        secret: rotated["client_secret"].as_str().map(str::to_owned),
        ..partner
    };
    app.user_token(&partner, "cli@souk.test", "cli-password", None)
        .await;
    let refused = app.souk(&[
        "user",
        "create",
        "--email",
        "cli@souk.test",
        "--password",
        "cli-password",
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("taken"));
    let bad = app.souk(&["client", "create", "--name", "X", "--scopes", "read admin"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("admin"));
    assert!(app.souk(&["client", "delete", &id]).status.success());
    assert!(!app.souk(&["client", "delete", &id]).status.success());
}

/// While a heavy read (a search) runs, point reads share a spare connection too: the
/// server shares its cores out by process, and one process of point reads beside the
/// searches' got too few of them (docs/OPERATIONS.md). A read sent while another holds the
/// shared connection goes to the spare then, and queues on the shared connection otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn postgres_point_reads_share_a_spare_connection_while_searches_run() {
    let app = TestApp::start(Backend::Postgres, "spare_reader").await;
    // The backends of a slow read and of a read sent right after it, at once.
    async fn two_reads(app: &TestApp) -> (i64, i64) {
        let (slow, quick) = tokio::join!(
            read_one(
                app,
                "SELECT pg_backend_pid() AS pid FROM pg_sleep(0.2)",
                Vec::new()
            ),
            read_one(app, "SELECT pg_backend_pid() AS pid", Vec::new()),
        );
        (
            slow.unwrap().get("pid").unwrap(),
            quick.unwrap().get("pid").unwrap(),
        )
    }
    let (slow, quick) = two_reads(&app).await;
    assert_eq!(slow, quick, "without a search, reads share one connection");

    let (started, searching) = tokio::sync::oneshot::channel();
    let (finish, finished) = tokio::sync::oneshot::channel::<()>();
    let db = app.db.clone();
    let search = tokio::spawn(async move {
        db.read_heavy(move |conn| {
            Box::pin(async move {
                let pid: i64 = conn
                    .query_one("SELECT pg_backend_pid() AS pid", &[])
                    .await?
                    .get("pid")?;
                started.send(pid).unwrap();
                finished.await.unwrap();
                Ok::<_, DbError>(())
            })
        })
        .await
    });
    let searcher = searching.await.unwrap();
    let (slow_during, quick_during) = two_reads(&app).await;
    assert_eq!(
        slow_during, slow,
        "the shared connection serves the first read"
    );
    assert_ne!(quick_during, slow, "the second read went round it");
    assert_ne!(
        quick_during, searcher,
        "on the spare, not the search's connection"
    );
    finish.send(()).unwrap();
    search.await.unwrap().unwrap();

    let (slow_after, quick_after) = two_reads(&app).await;
    assert_eq!(
        (slow_after, quick_after),
        (slow, slow),
        "one connection again"
    );
}

/// Two writers that lock two rows in opposite orders deadlock on PostgreSQL: the server
/// undoes one of them, which reads as `DbError::Contention` (answered 503 with
/// `Retry-After`, not 500), writes nothing, and leaves the other to commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn a_postgres_deadlock_undoes_one_writer_as_contention() {
    let app = TestApp::start(Backend::Postgres, "deadlock").await;
    create_probe(&app).await;
    write_batch(
        &app,
        "INSERT INTO probe (id, payload, n) VALUES (1, 'one', 0), (2, 'two', 0)",
    )
    .await;
    // Each writer holds its first row before either asks for its second.
    let both_hold_one = std::sync::Arc::new(tokio::sync::Barrier::new(2));
    let writer = |first: i64, second: i64| {
        let (db, both_hold_one) = (app.db.clone(), both_hold_one.clone());
        tokio::spawn(async move {
            db.write(move |conn| {
                Box::pin(async move {
                    for (step, id) in [first, second].into_iter().enumerate() {
                        conn.execute(
                            "UPDATE probe SET n = n + $2 WHERE id = $1",
                            &[Value::Int(id), Value::Int(first * 10)],
                        )
                        .await?;
                        if step == 0 {
                            both_hold_one.wait().await;
                        }
                    }
                    Ok::<_, DbError>(())
                })
            })
            .await
        })
    };
    let (one_then_two, two_then_one) = (writer(1, 2), writer(2, 1));
    let outcomes = [one_then_two.await.unwrap(), two_then_one.await.unwrap()];
    let undone: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert_eq!(undone.len(), 1, "{outcomes:?}");
    assert!(
        matches!(undone[0], DbError::Contention(cause) if cause.starts_with("40P01")),
        "{undone:?}"
    );
    // Only the writer that committed added its share to both rows.
    let committed = if outcomes[0].is_ok() { 10 } else { 20 };
    for id in [1, 2] {
        let row = read_one(
            &app,
            "SELECT n FROM probe WHERE id = $1",
            vec![Value::Int(id)],
        )
        .await
        .unwrap();
        assert_eq!(row.get::<i64>("n").unwrap(), committed, "row {id}");
    }
}

/// A PostgreSQL connection that the server ends (a restart, a failover, an operator's
/// `pg_terminate_backend`) is replaced by the next request that needs one: meanwhile
/// requests answer 503 `service-unavailable`, never 500, and no restart of Souk is needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn lost_postgres_connections_are_opened_again() {
    let app = TestApp::start(Backend::Postgres, "lost_connections").await;
    create_probe(&app).await;
    app.get_json("/v1/categories", 200).await;
    let name = app
        .database_url
        .split("application_name=")
        .nth(1)
        .expect("the test URL names the application")
        .to_owned();
    let admin = std::env::var("SOUK_TEST_POSTGRES_URL").unwrap();
    let terminated: i64 = tokio::task::spawn_blocking(move || {
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        client
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name = $1",
                &[&name],
            )
            .unwrap()
            .get(0)
    })
    .await
    .unwrap();
    assert!(
        terminated >= 2,
        "a read and a write connection: {terminated}"
    );

    let mut statuses = Vec::new();
    for _ in 0..20 {
        let status = app.get("/v1/categories").await.status().as_u16();
        statuses.push(status);
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(statuses.last(), Some(&200), "reads came back: {statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 503),
        "{statuses:?}"
    );

    let mut written = false;
    for id in 0..20_i64 {
        let outcome = app
            .db
            .write(move |conn| {
                Box::pin(async move {
                    conn.execute(
                        "INSERT INTO probe (id, payload) VALUES ($1, 'after the loss')",
                        &[Value::Int(id)],
                    )
                    .await
                })
            })
            .await;
        match outcome {
            Ok(_) => {
                written = true;
                break;
            }
            Err(DbError::Unavailable(_)) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await
            }
            Err(e) => panic!("a lost connection must read as unavailable: {e}"),
        }
    }
    assert!(written, "writes came back");
}
