//! `souk seed --ads N [--users M]`: realistic generated data for demos and the benchmark
//! harness. Ads are valid for their categories (the same checks as the API), spread over
//! the open leaf categories, the three locales (`text`: Dutch and French text with brands
//! and models of each category, Zipf-distributed), Dutch and Belgian postcodes by locale,
//! and a month of start dates. Each
//! ad has three images, each one of a few drawn pictures whose renditions are stored once
//! and shared (`pictures`), so that their blob links answer.
//! Generation is deterministic (a fixed seed), so two runs make the same data.

mod dealings;
mod pictures;
mod text;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value, json};

use crate::domain::advertisement::{AdStatus, Dates, check_content};
use crate::domain::category::{AttributeDefinition, AttributeType, Category, CategoryStatus};
use crate::domain::image::{ImageStatus, media_id};
use crate::domain::locale::Locale;
use crate::domain::user::{Email, UserStatus};
use crate::images::blobs::Blobs;
use crate::oauth::password;
use crate::store::ads::{self, AdWrite, NewAd};
use crate::store::images::{self, ImageRecord};
use crate::store::renditions::{self, NewRendition, RecordError};
use crate::store::users::{self, NewUser};
use crate::store::{Conn, Db, categories};

use crate::usecase::orders::Till;
use dealings::Dealing;

/// Ads per INSERT statement, and statements per write transaction.
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

/// The Dutch areas in [`NL_POSTCODES`] that the shipped locations have (not every number in
/// a range is an area), so that every seeded ad has a place and coordinates.
static NL_AREAS: std::sync::LazyLock<Vec<u32>> = std::sync::LazyLock::new(|| {
    crate::locations::DEFAULT_LOCATIONS
        .lines()
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let dutch = fields.next()? == "NL";
            let area: u32 = fields.next()?.parse().ok()?;
            let seeded = NL_POSTCODES
                .iter()
                .any(|(low, high)| (*low..=*high).contains(&area));
            (dutch && seeded).then_some(area)
        })
        .collect()
});

/// A postcode of the locale's country: Belgian for `nl-BE` and `fr-BE`.
fn postcode(generator: &mut Generator, locale: Locale) -> String {
    if locale != Locale::NlNl {
        generator.pick(BE_POSTCODES).to_string()
    } else {
        let number = *generator.pick(&NL_AREAS);
        let letters: String = (0..2)
            .map(|_| char::from(b'A' + generator.below(26) as u8))
            .collect();
        format!("{number}{letters}")
    }
}

/// Where a numeric attribute's values are drawn: its bounds; a missing one `width` from the
/// other, or from 0 (never past a bound: a freezer's temperature at most -18 is drawn below
/// it).
fn drawn_range(definition: &AttributeDefinition, width: f64) -> (f64, f64) {
    let low = match (definition.min_value, definition.max_value) {
        (Some(min), _) => min,
        (None, Some(max)) if max < 0.0 => max - width,
        (None, _) => 0.0,
    };
    (low, definition.max_value.unwrap_or(low + width))
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
                let (low, high) = drawn_range(definition, 1000.0);
                json!(generator.between(low, high).round() as i64)
            }
            AttributeType::Double => {
                let (low, high) = drawn_range(definition, 100.0);
                // One decimal, within the bounds (rounding may step past one: 0.04 is 0.0).
                json!(((generator.between(low, high) * 10.0).round() / 10.0).clamp(low, high))
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
pub async fn seed(
    db: &Db,
    blobs: &Blobs,
    ads: u64,
    users: u64,
    till: Till,
    now: i64,
) -> anyhow::Result<()> {
    let leaves = open_leaves(db).await?;
    let started = std::time::Instant::now();
    // One hash for every seeded user: argon2 per user would take minutes.
    let hash = password::hash("seed-password".to_owned()).await;
    let sellers = insert_users(db, users, hash, now).await?;
    seed_ads(db, blobs, &leaves, &sellers, ads, till, now).await?;
    // The planner's statistics still describe the tables before the load (PostgreSQL
    // guessed 1,575 images per ad and read them with a bitmap scan), and on PostgreSQL
    // the kept search counts hold a change per ad.
    db.settle_after_bulk_load().await?;
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

/// `ads` online ads in `leaves`, spread over `sellers` (at least one), with a progress bar,
/// and their images in `blobs`. Each is checked as the API checks a new ad: a generator
/// that made an ad the API would refuse stops the seeding.
pub async fn seed_ads(
    db: &Db,
    blobs: &Blobs,
    leaves: &[Category],
    sellers: &[i64],
    ads: u64,
    till: Till,
    now: i64,
) -> anyhow::Result<()> {
    anyhow::ensure!(!sellers.is_empty(), "no sellers to seed ads for");
    let pictures = pictures::store(db, blobs, now).await?;
    let bar = ProgressBar::new(ads);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} ads ({per_sec}, {eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut generator = Generator(0x5EED);
    let vocabulary = text::Vocabulary::new(leaves);
    // The time part of the images' mediaIds: one millisecond apart, from now on, so that
    // they go into the index in order.
    let mut image_clock = now.max(0) as u64 * 1000;
    let mut done = 0;
    while done < ads {
        let batch = (ads - done).min((ROWS_PER_STATEMENT * STATEMENTS_PER_WRITE) as u64);
        let mut new_ads = Vec::with_capacity(batch as usize);
        let mut images = Vec::with_capacity(batch as usize);
        let mut planned = Vec::new();
        for n in 0..batch as usize {
            let (ad, price) = new_ad(&mut generator, &vocabulary, leaves, sellers, now)?;
            if let Some(dealing) = dealing(&mut generator, sellers, ad.seller_id, price) {
                planned.push((n, ad.seller_id, dealing));
            }
            new_ads.push(ad);
            images.push(image_records(&mut generator, &mut image_clock, &pictures));
        }
        let numbers = db
            .write(move |conn| Box::pin(insert_batch(conn, new_ads, images, now)))
            .await?;
        let dealings = planned
            .into_iter()
            .map(|(n, seller, dealing)| (numbers[n], seller, dealing))
            .collect();
        db.write(move |conn| Box::pin(dealings::apply(conn, dealings, till, now)))
            .await
            .map_err(|e| anyhow::anyhow!("a seeded dealing was refused: {e:?}"))?;
        done += batch;
        bar.set_position(done);
    }
    bar.finish_and_clear();
    Ok(())
}

/// Stores a batch of generated ads and their images with their renditions,
/// `ROWS_PER_STATEMENT` ads per statement.
async fn insert_batch(
    conn: &mut dyn Conn,
    ads: Vec<NewAd>,
    images: Vec<Vec<SeededImage>>,
    now: i64,
) -> Result<Vec<i64>, RecordError> {
    let mut all_numbers = Vec::with_capacity(ads.len());
    for (ads, images) in ads
        .chunks(ROWS_PER_STATEMENT)
        .zip(images.chunks(ROWS_PER_STATEMENT))
    {
        let numbers = ads::insert_many(conn, ads, now).await?;
        let by_ad: Vec<(i64, ImageRecord)> = numbers
            .iter()
            .zip(images)
            .flat_map(|(number, images)| {
                images.iter().map(|seeded| (*number, seeded.image.clone()))
            })
            .collect();
        images::insert_many(conn, &by_ad, now).await?;
        all_numbers.extend(numbers);
    }
    // Once for the batch: the blobs' references are raised together, in the order every
    // writer takes blob rows.
    let rendered: Vec<(String, NewRendition)> = images
        .iter()
        .flatten()
        .flat_map(|seeded| {
            seeded
                .renditions
                .iter()
                .map(|rendition| (seeded.image.media_id.clone(), rendition.clone()))
        })
        .collect();
    renditions::add_many(conn, &rendered).await?;
    Ok(all_numbers)
}

/// An image of a seeded ad, and the renditions of its picture.
struct SeededImage {
    image: ImageRecord,
    renditions: Vec<NewRendition>,
}

/// Every seeded ad has this many images (the benchmark's R1 reads ads with three).
const IMAGES_PER_AD: i64 = 3;

/// An ad's photos: each one of the stored pictures.
fn image_records(
    generator: &mut Generator,
    image_clock: &mut u64,
    pictures: &[pictures::Picture],
) -> Vec<SeededImage> {
    (1..=IMAGES_PER_AD)
        .map(|position| {
            let mut random = [0u8; 10];
            random[..8].copy_from_slice(&generator.next().to_le_bytes());
            random[8..].copy_from_slice(&generator.next().to_le_bytes()[..2]);
            *image_clock += 1;
            let picture = generator.pick(pictures);
            SeededImage {
                image: ImageRecord {
                    media_id: media_id(*image_clock, random),
                    position,
                    status: ImageStatus::Available,
                    content_type: "image/jpeg".into(),
                    width: i64::from(picture.width),
                    height: i64::from(picture.height),
                    bytes: picture.bytes as i64,
                    sha256: picture.sha256.clone(),
                },
                renditions: picture.renditions.clone(),
            }
        })
        .collect()
}

/// A generated online ad, checked as the API checks a new one.
/// A generated ad's price: what it asks, and its minimal bid if it takes bids.
#[derive(Clone, Copy)]
struct Price {
    asking: i64,
    minimal_bid: Option<i64>,
}

fn new_ad(
    generator: &mut Generator,
    vocabulary: &text::Vocabulary,
    leaves: &[Category],
    sellers: &[i64],
    now: i64,
) -> anyhow::Result<(NewAd, Price)> {
    let leaf = generator.pick(leaves);
    let Some(details) = leaf.leaf.as_ref() else {
        anyhow::bail!("category {} is not a leaf", leaf.id);
    };
    let locale = text::locale(generator);
    let (title, description) = vocabulary.ad_text(generator, leaf, locale);
    let asking = (generator.below(2000) + 1) as i64 * 500;
    let bidding = generator.below(5) == 0;
    let price = if bidding {
        json!({"modelType": "bidding", "minimalBid": asking / 2, "askingPrice": asking})
    } else {
        json!({"modelType": "fixed", "askingPrice": asking})
    };
    let price_of = Price {
        asking,
        minimal_bid: bidding.then_some(asking / 2),
    };
    // Placed up to 20 days ago, and never so long ago that the ad is already expired.
    let back = (20 * 86_400).min((details.fees.running_days - 1) * 86_400);
    let start = now - generator.below(back.max(1) as u64) as i64;
    let seller = *generator.pick(sellers);
    let mut body = attributes(generator, &details.attributes);
    let postcode = postcode(generator, locale);
    let show_on_map = generator.below(2) == 0;
    body.extend([
        ("title".to_owned(), json!(title)),
        ("description".to_owned(), json!(description)),
        ("categoryId".to_owned(), json!(leaf.id)),
        ("location".to_owned(), json!({"postcode": postcode})),
        ("priceModel".to_owned(), price),
        ("showOnMap".to_owned(), json!(show_on_map)),
    ]);
    let content = check_content(&body, Some(leaf), locale, None).map_err(|errors| {
        anyhow::anyhow!(
            "a generated ad breaks the rules of category {}: {errors:?}",
            leaf.id
        )
    })?;
    let ad = NewAd {
        seller_id: seller,
        content: AdWrite::from_content(&content, seller, leaf.parent_id),
        status: AdStatus::Online,
        dates: Dates::published(start, details.fees.running_days),
    };
    Ok((ad, price_of))
}

/// Whether other users deal with a new ad of `seller`, one ad in [`dealings::ONE_IN`]: one
/// to three of them bid on a bidding ad; the seller buys a feature for a third of the
/// others, and someone buys the rest and reviews the seller.
fn dealing(
    generator: &mut Generator,
    sellers: &[i64],
    seller: i64,
    price: Price,
) -> Option<Dealing> {
    if sellers.len() < 2 || generator.below(dealings::ONE_IN) != 0 {
        return None;
    }
    let (bidders, score) = (1 + generator.below(3), 3 + generator.below(3) as usize);
    let promotion = (generator.below(3) == 0).then(|| *generator.pick(&dealings::PROMOTIONS));
    let mut someone_else = || loop {
        let user = *generator.pick(sellers);
        if user != seller {
            break user;
        }
    };
    Some(match price.minimal_bid {
        Some(minimal_bid) => Dealing::Bids {
            minimal_bid,
            bidders: (0..bidders).map(|_| someone_else()).collect(),
        },
        None => match promotion {
            Some(feature) => Dealing::Promotion { feature },
            None => Dealing::Sale {
                buyer: someone_else(),
                price: price.asking,
                overall_score: score as i64,
                content: dealings::REVIEWS[score - 1],
            },
        },
    })
}

/// Inserts the users; returns their ids. Their addresses are made from the highest id
/// before them, so that seeding again does not take an address twice.
async fn insert_users(db: &Db, count: u64, hash: String, now: i64) -> anyhow::Result<Vec<i64>> {
    let ids = db
        .write(move |conn| {
            Box::pin(async move {
                let offset = users::max_id(conn).await?;
                let emails: Vec<Email> = (0..count)
                    .filter_map(|n| Email::parse(&format!("seed-{}-{n}@souk.test", offset + 1)))
                    .collect();
                let new_users: Vec<NewUser<'_>> = emails
                    .iter()
                    .enumerate()
                    .map(|(n, email)| NewUser {
                        email,
                        password_hash: &hash,
                        name: NAMES[n % NAMES.len()],
                        postcode: None,
                        phone_number: None,
                        locale: text::locale_of(n as u64),
                        status: UserStatus::Confirmed,
                    })
                    .collect();
                users::insert_many(conn, &new_users, now).await
            })
        })
        .await?;
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value drawn is one the API takes: within the bounds, however narrow.
    #[test]
    fn drawn_values_keep_to_narrow_bounds() {
        let definition: AttributeDefinition = serde_json::from_value(json!({
            "key": "thickness", "type": "DOUBLE", "mandatory": true,
            "labels": {"nl-NL": "Dikte", "nl-BE": "Dikte", "fr-BE": "Épaisseur"},
            "minValue": 0.01, "maxValue": 0.04}))
        .unwrap();
        let freezer: AttributeDefinition = serde_json::from_value(json!({
            "key": "temperature", "type": "DOUBLE", "mandatory": true,
            "labels": {"nl-NL": "Temperatuur", "nl-BE": "Temperatuur", "fr-BE": "Température"},
            "maxValue": -18}))
        .unwrap();
        let mut generator = Generator(7);
        for _ in 0..1_000 {
            let values = attributes(&mut generator, &[definition.clone(), freezer.clone()]);
            let value = values["thickness"].as_f64().unwrap();
            assert!((0.01..=0.04).contains(&value), "{value}");
            let value = values["temperature"].as_f64().unwrap();
            assert!(value <= -18.0, "{value}");
        }
    }
}
