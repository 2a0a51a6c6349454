//! Embedded schema migrations, one tree per backend with the same numbering.

use super::{Backend, Conn, Db, DbError};

struct Migration {
    version: i64,
    name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

macro_rules! migration {
    ($version:literal, $file:literal) => {
        Migration {
            version: $version,
            name: $file,
            sqlite: include_str!(concat!("../../migrations/sqlite/", $file, ".sql")),
            postgres: include_str!(concat!("../../migrations/postgres/", $file, ".sql")),
        }
    };
}

const MIGRATIONS: &[Migration] = &[
    migration!(1, "0001_categories"),
    migration!(2, "0002_accounts_and_oauth"),
    migration!(3, "0003_idempotency"),
    migration!(4, "0004_user_brands"),
    migration!(5, "0005_advertisements"),
    migration!(6, "0006_transactions_and_statistics"),
    migration!(7, "0007_images"),
    migration!(8, "0008_token_families"),
    migration!(9, "0009_token_upkeep"),
    migration!(10, "0010_transaction_counter"),
    migration!(11, "0011_status_before_rejection"),
    migration!(12, "0012_image_renditions"),
    migration!(13, "0013_locations"),
    migration!(14, "0014_search"),
    migration!(15, "0015_search_location_attributes"),
    migration!(16, "0016_bids"),
    migration!(17, "0017_saved_searches"),
    migration!(18, "0018_reviews"),
    migration!(19, "0019_orders"),
    migration!(20, "0020_features"),
    migration!(21, "0021_insertion_fees"),
    migration!(22, "0022_website_url"),
    migration!(23, "0023_search_alerts"),
    migration!(24, "0024_search_area"),
    migration!(25, "0025_search_covering_indexes"),
    migration!(26, "0026_search_featured_index"),
    migration!(27, "0027_search_total"),
    migration!(28, "0028_search_area_counts"),
    migration!(29, "0029_search_item_area"),
    migration!(30, "0030_search_featured_words"),
    migration!(31, "0031_search_area_terms"),
    migration!(32, "0032_search_title_postings"),
    migration!(33, "0033_search_total"),
    migration!(34, "0034_search_area_counts"),
    migration!(35, "0035_search_featured_terms"),
    migration!(36, "0036_search_category_covering"),
    migration!(37, "0037_search_featured_covering"),
    migration!(38, "0038_search_term_counts"),
    migration!(39, "0039_search_area_groups"),
    migration!(40, "0040_search_title_term_counts"),
    migration!(41, "0041_search_featured_by_item"),
    migration!(42, "0042_search_related_word_pairs"),
    migration!(43, "0043_search_featured_area"),
    migration!(44, "0044_search_word_category_counts"),
    migration!(45, "0045_search_title_postings_area"),
    migration!(46, "0046_advertisement_place"),
    migration!(47, "0047_search_fts_pending"),
    migration!(48, "0048_advertisement_parent_category"),
    migration!(49, "0049_sign_in_attempts"),
    migration!(50, "0050_image_blob_holds"),
    migration!(51, "0051_mail_queue"),
    migration!(52, "0052_original_deletions"),
    migration!(53, "0053_reindex_not_news"),
    migration!(54, "0054_image_job_interrupted_renders"),
    migration!(55, "0055_refresh_tokens_spent_at"),
    migration!(56, "0056_webhooks"),
    migration!(57, "0057_queue_failures"),
    migration!(58, "0058_mail_link_minted_at_sending"),
    migration!(59, "0059_order_product_days"),
    migration!(60, "0060_alerts_news_only"),
    migration!(61, "0061_image_store"),
    migration!(62, "0062_saved_search_ids"),
    migration!(63, "0063_grants_without_user_scope"),
];

/// Applies the migrations the database lacks, in order, in one transaction; returns how
/// many ran. Safe when several replicas start at once: on PostgreSQL they wait for each
/// other on an advisory lock; on SQLite the single writer serializes them.
pub async fn run(db: &Db) -> Result<usize, DbError> {
    db.write(|conn| Box::pin(apply_through(conn, latest_version())))
        .await
}

/// Applies the migrations the database lacks up to `last` (a test stops short of the
/// latest to hold data as an older release stored it).
async fn apply_through(conn: &mut dyn Conn, last: i64) -> Result<usize, DbError> {
    if conn.backend() == Backend::Postgres {
        // An arbitrary constant naming "souk migrations"; held until the commit.
        conn.execute("SELECT pg_advisory_xact_lock(7361202611)", &[])
            .await?;
    }
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    BIGINT PRIMARY KEY,
             name       TEXT NOT NULL,
             applied_at BIGINT NOT NULL
         )",
    )
    .await?;
    let applied: Vec<i64> = conn
        .column("SELECT version FROM schema_migrations", &[])
        .await?;
    let mut count = 0;
    for migration in MIGRATIONS.iter().take_while(|m| m.version <= last) {
        if applied.contains(&migration.version) {
            continue;
        }
        let sql = match conn.backend() {
            Backend::Sqlite => migration.sqlite,
            Backend::Postgres => migration.postgres,
        };
        conn.execute_batch(sql).await?;
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
            crate::params![
                migration.version,
                migration.name,
                time::OffsetDateTime::now_utc().unix_timestamp()
            ],
        )
        .await?;
        count += 1;
    }
    Ok(count)
}

/// For unit tests: a new SQLite database, `souk.db` in a directory of its own (kept while
/// the directory lives), with every migration run.
#[cfg(test)]
pub async fn migrated_sqlite() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("souk.db").display());
    let db = Db::open(&url, &super::DbOptions::default()).await.unwrap();
    run(&db).await.unwrap();
    (db, dir)
}

/// The highest migration this build knows; `/readyz` compares it with the database.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// The highest migration applied to the database (0 for a new one).
pub async fn current_version(conn: &mut dyn Conn) -> Result<i64, DbError> {
    let row = conn
        .query_one(
            "SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations",
            &[],
        )
        .await?;
    row.get("version")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SQLite database in a directory of its own (kept while the first value lives)
    /// with the migrations up to `last` run, user 1 stored and then `seed` run: data as an
    /// older release stored it.
    async fn sqlite_through(last: i64, seed: &'static str) -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("souk.db").display());
        let db = Db::open(&url, &super::super::DbOptions::default())
            .await
            .unwrap();
        db.write(move |conn| {
            Box::pin(async move {
                apply_through(conn, last).await?;
                conn.execute_batch(
                    "INSERT INTO users (user_id, email, password_hash, name, locale, status,
                                        created_at)
                         VALUES (1, 'a@souk.test', 'x', 'A', 'nl', 'confirmed', 0)",
                )
                .await?;
                conn.execute_batch(seed).await
            })
        })
        .await
        .unwrap();
        (dir, db)
    }

    /// Migration 0062 remakes SQLite's saved searches with AUTOINCREMENT: the searches and
    /// their matches stay, the matches still go with their search, nothing names the
    /// tables' temporary names, and an id deleted after it is not given again.
    #[tokio::test]
    async fn saved_searches_keep_their_matches_when_remade() {
        let seed = "INSERT INTO saved_searches (user_id, request, alert, created_at,
                                                 updated_at, alerted_at)
                         VALUES (1, 'q=fiets', 'daily', 10, 11, 12),
                                (1, 'q=auto', 'none', 20, 21, NULL);
                     INSERT INTO saved_search_matches VALUES (1, 7, 30, NULL), (1, 8, 31, 32);";
        let (_dir, db) = sqlite_through(61, seed).await;
        let schema = || {
            db.write::<_, DbError, _>(|conn| {
                Box::pin(async move {
                    conn.column::<String>(
                        "SELECT type || ' ' || name FROM sqlite_master \
                         WHERE name LIKE 'saved_search%' OR name LIKE 'ads_to_search%' \
                         ORDER BY name",
                        &[],
                    )
                    .await
                })
            })
        };
        let before = schema().await.unwrap();

        run(&db).await.unwrap();
        assert_eq!(
            schema().await.unwrap(),
            before,
            "indexes and triggers as they were"
        );

        let (searches, matches, temporary, next_id, cascaded) = db
            .write::<_, DbError, _>(|conn| {
                Box::pin(async move {
                    let searches: Vec<String> = conn
                        .column(
                            "SELECT saved_search_id || ' ' || request || ' ' || alert || ' ' \
                                    || created_at || ' ' || COALESCE(alerted_at, '-') \
                             FROM saved_searches ORDER BY saved_search_id",
                            &[],
                        )
                        .await?;
                    let matches: Vec<String> = conn
                        .column(
                            "SELECT saved_search_id || ' ' || item_number || ' ' \
                                    || COALESCE(mailed_at, '-') \
                             FROM saved_search_matches ORDER BY item_number",
                            &[],
                        )
                        .await?;
                    let temporary: Vec<String> = conn
                        .column(
                            "SELECT name FROM sqlite_master WHERE sql LIKE '%\\_new%' ESCAPE '\\'",
                            &[],
                        )
                        .await?;
                    conn.execute("DELETE FROM saved_searches WHERE saved_search_id = 2", &[])
                        .await?;
                    let next_id: Vec<i64> = conn
                        .column(
                            "INSERT INTO saved_searches (user_id, request, alert, created_at, \
                                                         updated_at) \
                             VALUES (1, 'q=boot', 'none', 40, 40) RETURNING saved_search_id",
                            &[],
                        )
                        .await?;
                    conn.execute("DELETE FROM saved_searches WHERE saved_search_id = 1", &[])
                        .await?;
                    let cascaded: Vec<i64> = conn
                        .column("SELECT COUNT(*) FROM saved_search_matches", &[])
                        .await?;
                    Ok((searches, matches, temporary, next_id, cascaded))
                })
            })
            .await
            .unwrap();
        assert_eq!(searches, ["1 q=fiets daily 10 12", "2 q=auto none 20 -"]);
        assert_eq!(matches, ["1 7 -", "1 8 32"]);
        assert!(temporary.is_empty(), "{temporary:?}");
        assert_eq!(next_id, [3], "id 2 is not given again");
        assert_eq!(cascaded, [0], "a search's matches go with it");
    }

    /// Migration 0063 revokes the live refresh tokens of grants without a scope (which no
    /// longer carry the user's events), and leaves every other token as it was.
    #[tokio::test]
    async fn grants_without_a_user_scope_are_revoked() {
        let seed = "INSERT INTO clients (client_id, name, redirect_uris, scopes,
                                          default_scopes, grants, created_at)
                         VALUES ('c', 'C', '[]', '', '', '[]', 0);
                     INSERT INTO refresh_tokens (token_hash, client_id, user_id, scope, family,
                                                 state, issued_at, sequence)
                         VALUES ('empty', 'c', 1, '', 'f1', 'live', 5, 1),
                                ('read', 'c', 1, 'read', 'f2', 'live', 5, 1),
                                ('rotated', 'c', 1, '', 'f3', 'rotated', 5, 1);";
        let (_dir, db) = sqlite_through(62, seed).await;

        run(&db).await.unwrap();
        let tokens = db
            .write::<_, DbError, _>(|conn| {
                Box::pin(async move {
                    conn.column::<String>(
                        "SELECT token_hash || ' ' || state || ' ' || (spent_at IS NOT NULL) \
                         FROM refresh_tokens ORDER BY token_hash",
                        &[],
                    )
                    .await
                })
            })
            .await
            .unwrap();
        assert_eq!(
            tokens,
            ["empty revoked 1", "read live 0", "rotated rotated 0"]
        );
    }
}
