//! `souk seed --ads N [--users M]`: realistic generated data for demos and the benchmark
//! harness. Ads are valid for their categories (the same checks as the API), spread over
//! the open leaf categories, Dutch and Belgian postcodes, and a month of start dates. Each
//! ad has three images' metadata (mediaId, size, type, hash); their bytes are not made, so
//! their blob links do not answer yet.
//! Generation is deterministic (a fixed seed), so two runs make the same data.

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value, json};

use crate::domain::category::{AttributeDefinition, AttributeType, Category, CategoryStatus};
use crate::domain::image::media_id;
use crate::oauth::password;
use crate::store::{Conn, Db, DbError, Value as SqlValue, categories};

/// Rows per INSERT statement and per write transaction.
const ROWS_PER_STATEMENT: usize = 200;
const STATEMENTS_PER_WRITE: usize = 25;

/// A small, fast, deterministic generator (splitmix64): no cryptography needed here.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    fn between(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * (self.next() as f64 / u64::MAX as f64)
    }
}

const ADJECTIVES: &[&str] = &[
    "Mooie",
    "Nette",
    "Zo goed als nieuwe",
    "Prachtige",
    "Stevige",
    "Complete",
    "Zeldzame",
    "Klassieke",
    "Moderne",
    "Vintage",
    "Degelijke",
    "Luxe",
    "Compacte",
    "Ruime",
];
const EXTRAS: &[&str] = &[
    "in topstaat",
    "met garantie",
    "weinig gebruikt",
    "inclusief toebehoren",
    "direct leverbaar",
    "met bon",
    "ophalen in de buurt",
    "nieuw in doos",
    "rookvrij huis",
    "onderhouden",
];
const SENTENCES: &[&str] = &[
    "Wegens verhuizing te koop.",
    "Altijd binnen gestaan en goed onderhouden.",
    "Kleine gebruikssporen, verder in prima staat.",
    "Bieden vanaf de vraagprijs, redelijke biedingen worden bekeken.",
    "Kan eventueel verzonden worden tegen meerprijs.",
    "Bij vragen bel of app gerust.",
    "Foto's zijn van het echte product.",
    "Ophalen in overleg, ook in het weekend mogelijk.",
    "Zie foto's voor de staat van het artikel.",
    "Eerst komen, eerst maalt.",
];
const NL_POSTCODES: &[(u32, u32)] = &[
    (1011, 1109),
    (2511, 2599),
    (3011, 3089),
    (3511, 3585),
    (5611, 5658),
    (9711, 9747),
    (6811, 6846),
    (7511, 7548),
    (4811, 4839),
    (2011, 2037),
];
const BE_POSTCODES: &[u32] = &[
    1000, 1050, 2000, 2018, 3000, 8000, 9000, 4000, 5000, 6000, 3500, 2800,
];
const NAMES: &[&str] = &[
    "Jan", "Sanne", "Pieter", "Emma", "Lucas", "Julia", "Daan", "Sophie", "Thomas", "Lotte",
    "Bram", "Eva", "Noah", "Marie", "Lars", "Anna", "Milan", "Fleur", "Ruben", "Lisa",
];

fn postcode(generator: &mut Generator) -> String {
    if generator.below(4) == 0 {
        generator.pick(BE_POSTCODES).to_string()
    } else {
        let (low, high) = *generator.pick(NL_POSTCODES);
        let number = low + generator.below(u64::from(high - low + 1)) as u32;
        let letters: String = (0..2)
            .map(|_| char::from(b'A' + generator.below(26) as u8))
            .collect();
        format!("{number}{letters}")
    }
}

/// Values for the category's attributes: every mandatory one and about half the others,
/// each within its definition.
fn attributes(
    generator: &mut Generator,
    definitions: &[AttributeDefinition],
) -> Map<String, Value> {
    let mut values = Map::new();
    for definition in definitions {
        if !definition.writable || (!definition.mandatory && generator.below(2) == 0) {
            continue;
        }
        let value = match definition.kind {
            AttributeType::List => json!(generator.pick(&definition.options).key),
            AttributeType::Number => {
                let low = definition.min_value.unwrap_or(0.0);
                let high = definition.max_value.unwrap_or(low + 1000.0);
                json!(generator.between(low, high).round() as i64)
            }
            AttributeType::Double => {
                let low = definition.min_value.unwrap_or(0.0);
                let high = definition.max_value.unwrap_or(low + 100.0);
                json!((generator.between(low, high) * 10.0).round() / 10.0)
            }
            AttributeType::String => json!(format!(
                "{} {}",
                generator.pick(NAMES),
                generator.below(900) + 100
            )),
        };
        values.insert(definition.key.clone(), value);
    }
    values
}

/// Seeds `users` confirmed users (all with the password `seed-password`) and `ads` online
/// ads; prints progress and a summary.
pub async fn seed(db: &Db, ads: u64, users: u64, now: i64) -> anyhow::Result<()> {
    let leaves = open_leaves(db).await?;
    let started = std::time::Instant::now();
    // One hash for every seeded user: argon2 per user would take minutes.
    let hash = password::hash("seed-password".to_owned()).await;
    let first_user = insert_users(db, users, &hash, now).await?;
    let sellers: Vec<i64> = (first_user..first_user + users as i64).collect();
    seed_ads(db, &leaves, &sellers, ads, now).await?;
    // The planner's statistics still describe the tables before the load: PostgreSQL
    // guessed 1,575 images per ad and read them with a bitmap scan. (Autovacuum would get
    // there, but not before the first reads.)
    db.write(|conn| Box::pin(async move { conn.execute_batch("ANALYZE").await }))
        .await?;
    println!(
        "seeded {users} users and {ads} ads in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The open leaf categories, which ads can be placed in; an error if there are none.
pub async fn open_leaves(db: &Db) -> anyhow::Result<Vec<Category>> {
    let leaves: Vec<Category> = db
        .read(|conn| Box::pin(categories::all(conn)))
        .await?
        .into_iter()
        .filter(|c| c.leaf.is_some() && c.status == CategoryStatus::Open)
        .collect();
    anyhow::ensure!(!leaves.is_empty(), "no open leaf categories to seed into");
    Ok(leaves)
}

/// `ads` online ads in `leaves`, spread over `sellers` (at least one), with a progress bar.
pub async fn seed_ads(
    db: &Db,
    leaves: &[Category],
    sellers: &[i64],
    ads: u64,
    now: i64,
) -> anyhow::Result<()> {
    anyhow::ensure!(!sellers.is_empty(), "no sellers to seed ads for");
    let bar = ProgressBar::new(ads);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} ads ({per_sec}, {eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut generator = Generator(0x5EED);
    // The time part of the images' mediaIds: one millisecond apart, from now on, so that
    // they go into the index in order.
    let mut image_clock = now.max(0) as u64 * 1000;
    let mut done = 0;
    while done < ads {
        let batch = (ads - done).min((ROWS_PER_STATEMENT * STATEMENTS_PER_WRITE) as u64);
        let mut rows = Vec::with_capacity(batch as usize);
        let mut images = Vec::with_capacity(batch as usize);
        for _ in 0..batch {
            rows.push(ad_row(&mut generator, leaves, sellers, now));
            images.push(image_rows(&mut generator, &mut image_clock));
        }
        db.write(move |conn| Box::pin(insert_batch(conn, rows, images, now)))
            .await?;
        done += batch;
        bar.set_position(done);
    }
    bar.finish_and_clear();
    Ok(())
}

const AD_COLUMNS: usize = 16;
/// Stores a batch of generated ads and their images, `ROWS_PER_STATEMENT` ads per statement.
async fn insert_batch(
    conn: &mut dyn Conn,
    ads: Vec<Vec<SqlValue>>,
    images: Vec<Vec<Vec<SqlValue>>>,
    now: i64,
) -> Result<(), DbError> {
    for (ads, images) in ads
        .chunks(ROWS_PER_STATEMENT)
        .zip(images.chunks(ROWS_PER_STATEMENT))
    {
        let inserted = conn
            .query(
                &format!(
                    "INSERT INTO advertisements (seller_id, category_id, status, title, \
                     description, price_model, attributes, postcode, locale, reserved, \
                     show_on_map, start_date, close_date, version, created_at, updated_at) \
                     VALUES {} RETURNING item_number",
                    placeholders(ads.len(), AD_COLUMNS)
                ),
                &ads.concat(),
            )
            .await?;
        let mut numbers: Vec<i64> = inserted
            .iter()
            .map(|row| row.get("item_number"))
            .collect::<Result<_, _>>()?;
        // The rows come back in no promised order; the numbers were handed out in the order
        // of the VALUES.
        numbers.sort_unstable();
        let mut values = Vec::with_capacity(ads.len() * IMAGES_PER_AD * IMAGE_COLUMNS);
        for (number, images) in numbers.iter().zip(images) {
            for image in images {
                values.push(SqlValue::Int(*number));
                values.extend(image.iter().cloned());
                values.push(SqlValue::Int(now));
            }
        }
        conn.execute(
            &format!(
                "INSERT INTO images (item_number, media_id, position, status, content_type, \
                 width, height, bytes, sha256, created_at) VALUES {}",
                placeholders(values.len() / IMAGE_COLUMNS, IMAGE_COLUMNS)
            ),
            &values,
        )
        .await?;
    }
    Ok(())
}

/// Every seeded ad has this many images (the benchmark's R1 reads ads with three).
const IMAGES_PER_AD: usize = 3;
const IMAGE_COLUMNS: usize = 10;

/// `($1, $2), ($3, $4)` for `rows` rows of `columns` values.
fn placeholders(rows: usize, columns: usize) -> String {
    (0..rows)
        .map(|row| {
            let list: Vec<String> = (1..=columns)
                .map(|column| format!("${}", row * columns + column))
                .collect();
            format!("({})", list.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The metadata of an ad's photos (from a phone or a camera); the bytes are not made.
fn image_rows(generator: &mut Generator, image_clock: &mut u64) -> Vec<Vec<SqlValue>> {
    const SHAPES: &[(i64, i64)] = &[
        (4032, 3024),
        (3024, 4032),
        (4000, 3000),
        (1920, 1080),
        (1600, 1200),
        (1024, 768),
    ];
    (1..=IMAGES_PER_AD as i64)
        .map(|position| {
            let mut random = [0u8; 10];
            random[..8].copy_from_slice(&generator.next().to_le_bytes());
            random[8..].copy_from_slice(&generator.next().to_le_bytes()[..2]);
            *image_clock += 1;
            let (width, height) = *generator.pick(SHAPES);
            // A JPEG photo takes about a quarter to a half byte per pixel.
            let bytes = (width * height) / 4 + generator.below((width * height / 4) as u64) as i64;
            let sha256: String = (0..4)
                .map(|_| format!("{:016x}", generator.next()))
                .collect();
            vec![
                SqlValue::from(media_id(*image_clock, random)),
                SqlValue::Int(position),
                SqlValue::from("available"),
                SqlValue::from("image/jpeg"),
                SqlValue::Int(width),
                SqlValue::Int(height),
                SqlValue::Int(bytes),
                SqlValue::from(sha256),
            ]
        })
        .collect()
}

fn ad_row(
    generator: &mut Generator,
    leaves: &[Category],
    sellers: &[i64],
    now: i64,
) -> Vec<SqlValue> {
    let leaf = generator.pick(leaves);
    let Some(details) = leaf.leaf.as_ref() else {
        return Vec::new();
    };
    let noun = leaf.labels.nl_nl.to_lowercase();
    let title: String = format!(
        "{} {noun} {}",
        generator.pick(ADJECTIVES),
        generator.pick(EXTRAS)
    )
    .chars()
    .take(60)
    .collect();
    let description = (0..3)
        .map(|_| *generator.pick(SENTENCES))
        .collect::<Vec<_>>()
        .join(" ");
    let asking = (generator.below(2000) + 1) as i64 * 500;
    let price = if generator.below(5) == 0 {
        json!({"modelType": "bidding", "minimalBid": asking / 2, "askingPrice": asking})
    } else {
        json!({"modelType": "fixed", "askingPrice": asking})
    };
    let start = now - generator.below(20 * 86_400) as i64;
    let seller = *generator.pick(sellers);
    vec![
        SqlValue::Int(seller),
        SqlValue::Int(leaf.id),
        SqlValue::from("online"),
        SqlValue::from(title),
        SqlValue::from(description),
        SqlValue::from(price.to_string()),
        SqlValue::from(Value::Object(attributes(generator, &details.attributes)).to_string()),
        SqlValue::from(postcode(generator)),
        SqlValue::from("nl-NL"),
        SqlValue::Bool(false),
        SqlValue::Bool(generator.below(2) == 0),
        SqlValue::Int(start),
        SqlValue::Int(start + details.fees.running_days * 86_400),
        SqlValue::Int(1),
        SqlValue::Int(now),
        SqlValue::Int(now),
    ]
}

/// Inserts the users; returns the id of the first.
async fn insert_users(db: &Db, users: u64, hash: &str, now: i64) -> anyhow::Result<i64> {
    let hash = hash.to_owned();
    let first = db
        .write(move |conn| {
            Box::pin(async move {
                let offset: i64 = conn
                    .query_one("SELECT COALESCE(MAX(user_id), 0) AS n FROM users", &[])
                    .await?
                    .get("n")?;
                for chunk_start in (0..users).step_by(ROWS_PER_STATEMENT) {
                    let chunk_end = (chunk_start + ROWS_PER_STATEMENT as u64).min(users);
                    let mut placeholders = Vec::new();
                    let mut values = Vec::new();
                    for (i, n) in (chunk_start..chunk_end).enumerate() {
                        let base = i * 5;
                        placeholders.push(format!(
                            "(${}, ${}, ${}, 'nl-NL', 'confirmed', ${}, ${})",
                            base + 1,
                            base + 2,
                            base + 3,
                            base + 4,
                            base + 5
                        ));
                        values.push(SqlValue::from(format!("seed-{}-{n}@souk.test", offset + 1)));
                        values.push(SqlValue::from(hash.as_str()));
                        values.push(SqlValue::from(NAMES[n as usize % NAMES.len()]));
                        values.push(SqlValue::Int(now));
                        values.push(SqlValue::Int(now));
                    }
                    conn.execute(
                        &format!(
                            "INSERT INTO users (email, password_hash, name, locale, status, \
                         confirm_date, created_at) VALUES {}",
                            placeholders.join(", ")
                        ),
                        &values,
                    )
                    .await?;
                }
                let first: i64 = conn
                    .query_one(
                        "SELECT MIN(user_id) AS n FROM users WHERE user_id > $1",
                        crate::params![offset],
                    )
                    .await?
                    .get("n")?;
                Ok::<_, DbError>(first)
            })
        })
        .await?;
    Ok(first)
}
