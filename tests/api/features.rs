//! Features on both backends: the price list (shipped default, a category's own prices,
//! `souk features import`), buying one into an order, what each effect does while it
//! lasts (top of the day and the bump in search, the sticker on the ad) and that it ends,
//! the purchased features, and every refusal.

use serde_json::{Value, json};

use crate::ads::{created, path_of};
use crate::both_backends;
use crate::helpers::{Backend, TestApp, User, expect_json, field_codes, location, pairs};
use crate::search::found;

both_backends!(
    a_feature_is_bought_into_a_paid_order_and_runs_for_its_days,
    top_of_the_day_comes_first_in_search_and_a_bump_sorts_by_its_date,
    featured_ads_among_fewer_matches_come_first_too,
    buying_is_refused_as_documented_and_changes_nothing,
    the_url_feature_shows_the_sellers_website,
    features_bought_at_the_same_moment_each_add_their_days,
    a_second_bump_ranks_the_ad_again_from_its_own_payment,
    a_shorter_second_bump_keeps_what_the_first_had_left,
    the_longer_top_features_and_the_homepage_run_for_their_days,
    purchased_features_come_newest_first_with_their_payment,
);

/// Like `both_backends!`, in production: an order waits for `souk orders pay`, so a
/// purchase can meet a new price list before it is paid, and an open order takes more
/// products.
macro_rules! in_production {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            use crate::helpers::{Backend, TestApp};

            async fn start(backend: Backend) -> TestApp {
                let production = [("SOUK_ENVIRONMENT", "production")];
                TestApp::start_with(backend, module_path!(), &production).await
            }

            #[tokio::test]
            async fn sqlite() {
                super::$name(start(Backend::Sqlite).await).await;
            }

            #[tokio::test]
            #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
            async fn postgres() {
                super::$name(start(Backend::Postgres).await).await;
            }
        }
    )+};
}

in_production!(
    a_feature_runs_for_the_days_it_was_bought_for,
    an_order_of_several_products_costs_their_sum,
);

const DAY: i64 = 86_400;
const HOUR: i64 = 3_600;

/// A room to let in category 1903 (the default prices); its path.
async fn room(app: &TestApp, seller: &User, title: &str) -> String {
    let body = json!({"title": title, "description": "Gemeubelde studentenkamer.",
                      "categoryId": 1903, "surface": 14, "location": {"postcode": "9000"},
                      "priceModel": {"modelType": "fixed", "askingPrice": 45000}});
    path_of(&created(app, &seller.token, &body).await)
}

async fn buy(
    app: &TestApp,
    token: &str,
    ad: &str,
    feature: &str,
    body: Value,
) -> reqwest::Response {
    app.post(&format!("{ad}/features/{feature}/buy-feature"))
        .token(token)
        .json(&body)
        .send()
        .await
}

/// Buys `feature` for `ad`, paying at once (the sandbox): the order.
async fn buy_paid(app: &TestApp, token: &str, ad: &str, feature: &str) -> Value {
    expect_json(
        buy(app, token, ad, feature, json!({"pay": true})).await,
        201,
    )
    .await
}

/// Moves the clock; tokens live a day, so the app's and `users`' are issued again.
async fn advance(app: &mut TestApp, seconds: i64, users: &mut [&mut User]) {
    app.clock.advance(seconds);
    app.token = app.client_token(&app.app_client, None).await;
    for user in users.iter_mut() {
        user.token = app.token_of(user, None).await;
    }
}

/// The features of `ad` by name, as the app's client token reads them.
async fn features(app: &TestApp, ad: &str) -> Vec<Value> {
    let list = expect_json(app.get(&format!("{ad}/features")).await, 200).await;
    list["_embedded"]["svc:advertisement-feature"]
        .as_array()
        .unwrap()
        .clone()
}

/// A car in category 101 (its L1, 1, has its own top-of-the-day prices and sells the
/// homepage spot; no insertion fee); its path.
async fn car(app: &TestApp, seller: &User, title: &str) -> String {
    let body = json!({"title": title, "description": "Nette auto.", "categoryId": 101,
                      "fuel": "diesel", "location": {"postcode": "9000"},
                      "priceModel": {"modelType": "fixed", "askingPrice": 1250000}});
    path_of(&created(app, &seller.token, &body).await)
}

/// What the shipped price list (data/features.json, which a new database loads) asks for
/// `feature`, as `(price, days)`: the entry of the first of `categories` (the leaf, then
/// its L1) that has one, else the default. Read here as plain JSON, so that the server's
/// own reading of the list is what the tests hold to it.
fn shipped(categories: &[&str], feature: &str) -> (i64, i64) {
    let list: Value = serde_json::from_str(souk::app::DEFAULT_FEATURE_PRICES).unwrap();
    let entry = categories
        .iter()
        .find_map(|category| list["categories"][*category].get(feature))
        .unwrap_or(&list["default"][feature]);
    let number = |key: &str| {
        entry[key]
            .as_i64()
            .unwrap_or_else(|| panic!("data/features.json does not sell {feature}: {entry}"))
    };
    (number("price"), number("days"))
}

/// The VAT included in `price` at the default rate of 21%, to the nearest cent (docs/API.md,
/// "Money"; at 21% no price falls on half a cent).
fn vat_of(price: i64) -> i64 {
    let (cents, rest) = (price * 21 / 121, price * 21 % 121);
    cents + i64::from(2 * rest > 121)
}

/// Writes the price list `prices` to a file of its own and runs `souk features import` on
/// it: what the command did (the caller judges it).
fn run_import(app: &TestApp, prices: Value) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("features.json");
    std::fs::write(&file, prices.to_string()).unwrap();
    app.souk(&["features", "import", file.to_str().unwrap()])
}

/// Puts the price list `prices` in force with `souk features import`, which must succeed
/// (else the command's error output is the failure's message).
fn import_prices(app: &TestApp, prices: Value) {
    let imported = run_import(app, prices);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
}

fn named<'a>(features: &'a [Value], name: &str) -> &'a Value {
    features.iter().find(|f| f["name"] == name).unwrap()
}

async fn active_features(app: &TestApp, ad: &str) -> Value {
    expect_json(app.get(ad).await, 200).await["activeFeatures"].clone()
}

/// Five stickers (seven days each) bought for one ad at once, each order paid at once: the
/// sticker runs 35 days, not seven (on PostgreSQL each payment would otherwise add its
/// days to the date all five read).
async fn features_bought_at_the_same_moment_each_add_their_days(app: TestApp) {
    let seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    let racing = (0..5).map(|_| {
        let (app, token, ad) = (&app, &seller.token, &ad);
        async move {
            let answer = buy(app, token, ad, "opvalsticker", json!({"pay": true})).await;
            expect_json(answer, 201).await["status"].clone()
        }
    });
    let before = app.clock.now();
    let orders = futures_util::future::join_all(racing).await;
    let after = app.clock.now();
    assert_eq!(orders, vec![json!("paid"); 5]);
    let number: i64 = ad.rsplit('/').next().unwrap()[1..].parse().unwrap();
    let until: i64 = app
        .db
        .read(move |conn| {
            Box::pin(async move {
                conn.query_one(
                    "SELECT sticker_until FROM advertisements WHERE item_number = $1",
                    &[souk::store::Value::Int(number)],
                )
                .await?
                .get::<i64>("sticker_until")
            })
        })
        .await
        .unwrap();
    // Five times seven days from the first payment (the clock runs: a second may pass).
    let first_paid = until - 5 * 7 * DAY;
    assert!(
        (before..=after).contains(&first_paid),
        "{before} {first_paid} {after}"
    );
}

async fn a_feature_is_bought_into_a_paid_order_and_runs_for_its_days(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    let offered = features(&app, &ad).await;
    let names: Vec<&str> = offered
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "omhoogplaatsen",
            "dagtopper",
            "dagtopper3",
            "dagtopper7",
            "homepaginaAdvertentie",
            "url",
            "opvalsticker"
        ]
    );
    let sticker = named(&offered, "opvalsticker");
    assert_eq!(
        (
            &sticker["price"],
            &sticker["days"],
            &sticker["available"],
            &sticker["active"]
        ),
        (&json!(245), &json!(7), &json!(true), &json!(false))
    );
    assert_eq!(
        sticker["_links"]["svc:buy-feature"]["href"],
        format!("{ad}/features/opvalsticker/buy-feature")
    );
    // The default list sells no homepage spot: listed, without a price or a link.
    let homepage = named(&offered, "homepaginaAdvertentie");
    assert_eq!(homepage["available"], false);
    assert!(homepage.get("price").is_none());
    assert!(homepage["_links"].get("svc:buy-feature").is_none());
    assert_eq!(active_features(&app, &ad).await, json!([]));

    let answer = buy(
        &app,
        &seller.token,
        &ad,
        "opvalsticker",
        json!({"pay": true}),
    )
    .await;
    let address = location(&answer);
    let order = expect_json(answer, 201).await;
    assert_eq!(order["_links"]["self"]["href"], address);
    assert_eq!(order["status"], "paid");
    assert_eq!((&order["price"], &order["vat"]), (&json!(245), &json!(43)));
    let product = &order["_embedded"]["svc:order-products"][0];
    assert_eq!(
        (&product["type"], &product["feature"], &product["price"]),
        (&json!("feature"), &json!("opvalsticker"), &json!(245))
    );
    assert_eq!(
        expect_json(app.get_with(&address, &seller.token).await, 200).await,
        order
    );

    assert_eq!(active_features(&app, &ad).await, json!(["opvalsticker"]));
    let one = expect_json(app.get(&format!("{ad}/features/opvalsticker")).await, 200).await;
    assert_eq!(one["active"], true);
    let bought = expect_json(
        app.get_with(&format!("{ad}/purchased-features"), &seller.token)
            .await,
        200,
    )
    .await;
    let bought = bought["_embedded"]["svc:advertisement-purchased-feature"].clone();
    assert_eq!(bought.as_array().unwrap().len(), 1);
    assert_eq!(bought[0]["name"], "opvalsticker");
    assert_eq!(bought[0]["purchaseDate"], order["paidDate"]);

    // A second sticker adds its 7 days to what is left: 13 days on, it still runs...
    buy_paid(&app, &seller.token, &ad, "opvalsticker").await;
    advance(&mut app, 13 * DAY, &mut [&mut seller]).await;
    assert_eq!(active_features(&app, &ad).await, json!(["opvalsticker"]));
    let etag = |response: &reqwest::Response| response.headers()["etag"].clone();
    let before = etag(&app.get(&ad).await);
    // ... and after 14 days it is over, while the purchases stay on record. Nothing was
    // written, yet the body changed: so did its ETag.
    advance(&mut app, DAY + 1, &mut [&mut seller]).await;
    assert_eq!(active_features(&app, &ad).await, json!([]));
    assert_ne!(etag(&app.get(&ad).await), before);
    let offered = features(&app, &ad).await;
    assert_eq!(named(&offered, "opvalsticker")["active"], false);
    let bought = expect_json(
        app.get_with(&format!("{ad}/purchased-features"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(
        bought["_embedded"]["svc:advertisement-purchased-feature"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // A car (L1 category 1) has its own top-of-the-day prices and sells the homepage.
    let car = json!({"title": "Audi A4 Avant", "description": "Nette auto.", "categoryId": 101, "fuel": "diesel",
                     "location": {"postcode": "9000"},
                     "priceModel": {"modelType": "fixed", "askingPrice": 1250000}});
    let created = app
        .post("/v1/advertisements")
        .token(&seller.token)
        .json(&car)
        .send()
        .await;
    let car = expect_json(created, 201).await["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    let offered = features(&app, &car).await;
    assert_eq!(named(&offered, "dagtopper")["price"], 495);
    assert_eq!(named(&offered, "homepaginaAdvertentie")["available"], true);
    assert_eq!(named(&offered, "opvalsticker")["price"], 245);
}

fn item(path: &str) -> String {
    path.rsplit('/').next().unwrap().to_owned()
}

async fn top_of_the_day_comes_first_in_search_and_a_bump_sorts_by_its_date(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let mut ads = Vec::new();
    for n in 1..=3 {
        ads.push(room(&app, &seller, &format!("Kamer bij de vuurtoren {n}")).await);
    }
    let [a, b, c] = [item(&ads[0]), item(&ads[1]), item(&ads[2])];
    let (a, b, c) = (a.as_str(), b.as_str(), c.as_str());
    let by_word = "query=vuurtoren";
    let by_category = "categoryId=1903";
    assert_eq!(found(&app, by_word).await, [c, b, a]);

    buy_paid(&app, &seller.token, &ads[0], "dagtopper").await;
    assert_eq!(found(&app, by_word).await, [a, c, b]);
    assert_eq!(found(&app, by_category).await, [a, c, b]);
    // Words in the description only, and in title and description: the featured ad is
    // held against its own words in either tier.
    let in_description = "query=studentenkamer&searchDescription=true";
    assert_eq!(found(&app, in_description).await, [a, c, b]);
    let both = "query=vuurtoren+studentenkamer&searchDescription=true";
    assert_eq!(found(&app, both).await, [a, c, b]);
    assert!(
        found(&app, "query=vuurtoren+fiets&searchDescription=true")
            .await
            .is_empty()
    );
    let page = expect_json(app.get(&format!("/v1/search?{by_word}")).await, 200).await;
    assert_eq!(
        page["_embedded"]["svc:search-result"][0]["activeFeatures"],
        json!(["dagtopper"])
    );

    // The bump puts the oldest but one after the top ad, above the newest...
    buy_paid(&app, &seller.token, &ads[1], "omhoogplaatsen").await;
    assert_eq!(found(&app, by_word).await, [a, b, c]);
    // ... and an ad placed after the bump goes above it.
    let d = item(&room(&app, &seller, "Kamer bij de vuurtoren 4").await);
    let d = d.as_str();
    assert_eq!(found(&app, by_word).await, [a, d, b, c]);
    assert_eq!(found(&app, by_category).await, [a, d, b, c]);
    // Pages cut the merged order.
    assert_eq!(
        found(&app, &format!("{by_word}&offset=1&limit=2")).await,
        [d, b]
    );
    assert_eq!(
        found(&app, &format!("{by_word}&offset=3&limit=2")).await,
        [c]
    );
    // Sorted by price, features change nothing (equal prices: newest first).
    assert_eq!(
        found(&app, &format!("{by_word}&sortBy=price&sortOrder=ascending")).await,
        [d, c, b, a]
    );

    // The top of the day is over after a day, the bump after its 7 days.
    advance(&mut app, DAY + 1, &mut [&mut seller]).await;
    assert_eq!(found(&app, by_word).await, [d, b, c, a]);
    advance(&mut app, 7 * DAY, &mut [&mut seller]).await;
    assert_eq!(found(&app, by_word).await, [d, c, b, a]);
    assert_eq!(found(&app, by_category).await, [d, c, b, a]);
}

/// Words that match far fewer ads than are featured: only the featured ads that hold the
/// words come first (on SQLite found in the index of the featured ads' words, migration
/// 0030), in the description tier too.
async fn featured_ads_among_fewer_matches_come_first_too(app: TestApp) {
    let seller = app.user("verhuurder@souk.test").await;
    let titles = [
        "Zolderkamer bij het station",
        "Kamer aan de haven",
        "Kamer bij het station",
        "Kamer in de binnenstad",
        "Kamer bij het park",
    ];
    let mut ads = Vec::new();
    for title in titles {
        ads.push(room(&app, &seller, title).await);
    }
    // Nine featured ads in all: more than four times the two matches of `station`.
    let mut others = Vec::new();
    for title in [
        "Kamer met tuin",
        "Kamer met balkon",
        "Kamer aan het plein",
        "Kamer bij de kerk",
        "Kamer boven de bakker",
        "Kamer naast de markt",
    ] {
        others.push(room(&app, &seller, title).await);
    }
    for featured in [&ads[0], &ads[1], &ads[3]].into_iter().chain(&others) {
        buy_paid(&app, &seller.token, featured, "dagtopper").await;
    }
    let items: Vec<String> = ads.iter().map(|ad| item(ad)).collect();
    let [zolder, haven, station, _, park] = [0, 1, 2, 3, 4].map(|n| items[n].as_str());
    // Two matches, nine featured ads: the older featured one first, only the matches.
    assert_eq!(found(&app, "query=station").await, [zolder, station]);
    assert_eq!(
        found(&app, "query=station&offset=1&limit=1").await,
        [station]
    );
    assert_eq!(found(&app, "query=haven").await, [haven]);
    assert_eq!(found(&app, "query=park").await, [park]);
    assert!(found(&app, "query=vuurtoren").await.is_empty());
    // In the description tier too: every ad's description holds the word.
    assert_eq!(
        found(&app, "query=station+studentenkamer&searchDescription=true").await,
        [zolder, station]
    );
}

/// Room A ("vuurtoren 1") bumped, then room B placed: B comes above A in a search for
/// "vuurtoren" (placed after the bump). A's path, and the two item ids.
async fn bumped_then_another(app: &TestApp, seller: &User) -> (String, String, String) {
    let first = room(app, seller, "Kamer bij de vuurtoren 1").await;
    buy_paid(app, &seller.token, &first, "omhoogplaatsen").await;
    let second = room(app, seller, "Kamer bij de vuurtoren 2").await;
    let (a, b) = (item(&first), item(&second));
    assert_eq!(
        found(app, "query=vuurtoren").await,
        [b.as_str(), a.as_str()]
    );
    (first, a, b)
}

/// A second bump ranks the ad again, after every ad placed since the first, and runs its
/// days from its own payment: a bump starts again, it does not add onto what was left of
/// the first (as every other feature does).
async fn a_second_bump_ranks_the_ad_again_from_its_own_payment(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let (_, days) = shipped(&[], "omhoogplaatsen");
    let (first, a, b) = bumped_then_another(&app, &seller).await;
    let (a, b) = (a.as_str(), b.as_str());
    let by_word = "query=vuurtoren";

    // Three days on (more than one, fewer than the bump's days) A is bumped again: it now
    // sorts as if placed after B.
    advance(&mut app, 3 * DAY, &mut [&mut seller]).await;
    buy_paid(&app, &seller.token, &first, "omhoogplaatsen").await;
    assert_eq!(found(&app, by_word).await, [a, b]);
    assert_eq!(found(&app, "categoryId=1903").await, [a, b]);
    assert_eq!(
        active_features(&app, &first).await,
        json!(["omhoogplaatsen"])
    );
    // A day before the second bump's days are over it still runs, though the first's
    // ended two days ago...
    advance(&mut app, (days - 1) * DAY, &mut [&mut seller]).await;
    assert_eq!(found(&app, by_word).await, [a, b]);
    // ... and just after them it is over: its days were not added to the first's, which
    // would have run it 4 days more.
    advance(&mut app, DAY + 1, &mut [&mut seller]).await;
    assert_eq!(found(&app, by_word).await, [b, a]);
    assert_eq!(active_features(&app, &first).await, json!([]));
}

/// A second bump that the price list now sells for fewer days than the first has left
/// ranks the ad again, and does not cut the first short: it lasts until the later of
/// the two ends.
async fn a_shorter_second_bump_keeps_what_the_first_had_left(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let (_, days) = shipped(&[], "omhoogplaatsen");
    let (first, a, b) = bumped_then_another(&app, &seller).await;
    let (a, b) = (a.as_str(), b.as_str());
    let by_word = "query=vuurtoren";

    advance(&mut app, DAY, &mut [&mut seller]).await;
    import_prices(
        &app,
        json!({"default": {"omhoogplaatsen": {"price": 100, "days": 2}}}),
    );
    buy_paid(&app, &seller.token, &first, "omhoogplaatsen").await;
    assert_eq!(found(&app, by_word).await, [a, b], "ranked again");
    // Past the second bump's 2 days, within the first's: still bumped.
    advance(&mut app, (days - 2) * DAY, &mut [&mut seller]).await;
    assert_eq!(found(&app, by_word).await, [a, b]);
    assert_eq!(
        active_features(&app, &first).await,
        json!(["omhoogplaatsen"])
    );
    // Past the first's days: over.
    advance(&mut app, DAY + 1, &mut [&mut seller]).await;
    assert_eq!(found(&app, by_word).await, [b, a]);
    assert_eq!(active_features(&app, &first).await, json!([]));
}

/// The longer top-of-the-day features and the homepage spot, bought for cars (whose L1
/// has its own prices and sells the spot): each top ad comes first in search and shows
/// `dagtopper` for its own days (`dagtopper3` ends before `dagtopper7`); the homepage spot
/// shows in `activeFeatures` for its days and moves no ad in search.
async fn the_longer_top_features_and_the_homepage_run_for_their_days(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let cars = ["101", "1"];
    let (week_price, week) = shipped(&cars, "dagtopper7");
    let (three_price, three) = shipped(&cars, "dagtopper3");
    let (_, homepage) = shipped(&cars, "homepaginaAdvertentie");
    let mut ads = Vec::new();
    for title in ["Audi A4 Avant", "Audi A6 Avant", "Audi Q5"] {
        ads.push(car(&app, &seller, title).await);
    }
    let [a, b, c] = [item(&ads[0]), item(&ads[1]), item(&ads[2])];
    let (a, b, c) = (a.as_str(), b.as_str(), c.as_str());
    let audis = "categoryId=101";
    assert_eq!(found(&app, audis).await, [c, b, a]);

    // The oldest for 7 days, the one after it for 3, each at its category's price.
    for (ad, feature, price) in [
        (&ads[0], "dagtopper7", week_price),
        (&ads[1], "dagtopper3", three_price),
    ] {
        let order = expect_json(
            buy(&app, &seller.token, ad, feature, json!({"pay": true})).await,
            201,
        )
        .await;
        let product = &order["_embedded"]["svc:order-products"][0];
        assert_eq!(
            (&product["feature"], &product["price"]),
            (&json!(feature), &json!(price))
        );
    }
    // The newest gets the homepage spot, which is no top of the day: it stays behind both.
    buy_paid(&app, &seller.token, &ads[2], "homepaginaAdvertentie").await;
    assert_eq!(found(&app, audis).await, [b, a, c]);
    assert_eq!(active_features(&app, &ads[0]).await, json!(["dagtopper"]));
    assert_eq!(active_features(&app, &ads[1]).await, json!(["dagtopper"]));
    assert_eq!(
        active_features(&app, &ads[2]).await,
        json!(["homepaginaAdvertentie"])
    );
    let offered = features(&app, &ads[0]).await;
    assert_eq!(named(&offered, "dagtopper7")["active"], true);
    // What C shows `elapsed` seconds after its spot was bought.
    let spot_shown = |elapsed: i64| {
        if homepage * DAY > elapsed {
            json!(["homepaginaAdvertentie"])
        } else {
            json!([])
        }
    };

    // Past the 3 days B is an ad like the others again; A still comes first.
    let mut elapsed = three * DAY + 1;
    advance(&mut app, elapsed, &mut [&mut seller]).await;
    assert_eq!(found(&app, audis).await, [a, c, b]);
    assert_eq!(active_features(&app, &ads[1]).await, json!([]));
    assert_eq!(active_features(&app, &ads[2]).await, spot_shown(elapsed));
    // An hour before its 7 days A still comes first...
    advance(&mut app, week * DAY - HOUR - elapsed, &mut [&mut seller]).await;
    elapsed = week * DAY - HOUR;
    assert_eq!(found(&app, audis).await, [a, c, b]);
    assert_eq!(active_features(&app, &ads[0]).await, json!(["dagtopper"]));
    assert_eq!(active_features(&app, &ads[2]).await, spot_shown(elapsed));
    // ... and just after them nothing runs any more: the order of their placing.
    advance(&mut app, HOUR + 1, &mut [&mut seller]).await;
    elapsed = week * DAY + 1;
    assert_eq!(found(&app, audis).await, [c, b, a]);
    assert_eq!(active_features(&app, &ads[0]).await, json!([]));
    assert_eq!(active_features(&app, &ads[2]).await, spot_shown(elapsed));
}

/// The purchased features come newest first, each with the moment its order was paid:
/// three purchases a day apart (`url`, the sticker, `url` again) are listed from the last,
/// which neither the oldest first nor an order by name would give.
async fn purchased_features_come_newest_first_with_their_payment(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    let mut paid = Vec::new();
    for (n, feature) in ["url", "opvalsticker", "url"].into_iter().enumerate() {
        if n > 0 {
            advance(&mut app, DAY, &mut [&mut seller]).await;
        }
        let order = expect_json(
            buy(&app, &seller.token, &ad, feature, json!({"pay": true})).await,
            201,
        )
        .await;
        paid.push((json!(feature), order["paidDate"].clone()));
    }
    let bought = expect_json(
        app.get_with(&format!("{ad}/purchased-features"), &seller.token)
            .await,
        200,
    )
    .await;
    let listed: Vec<(Value, Value)> = bought["_embedded"]["svc:advertisement-purchased-feature"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].clone(), f["purchaseDate"].clone()))
        .collect();
    paid.reverse();
    assert_eq!(listed, paid);
}

async fn buying_is_refused_as_documented_and_changes_nothing(app: TestApp) {
    let seller = app.user("verhuurder@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    let refused = |response, status, code: &'static str| async move {
        let error = expect_json(response, status).await;
        assert_eq!(error["code"], code);
        error
    };
    refused(
        app.get(&format!("{ad}/features/gratis")).await,
        404,
        "feature-not-found",
    )
    .await;
    refused(
        buy(&app, &seller.token, &ad, "gratis", json!({"pay": true})).await,
        400,
        "invalid-feature-type",
    )
    .await;
    refused(
        buy(
            &app,
            &seller.token,
            &ad,
            "homepaginaAdvertentie",
            json!({"pay": true}),
        )
        .await,
        400,
        "feature-not-allowed",
    )
    .await;
    let error = refused(
        buy(&app, &seller.token, &ad, "url", json!({"pay": false})).await,
        400,
        "validation-failure",
    )
    .await;
    assert_eq!(field_codes(&error), pairs(&[("pay", "must-pay")]));
    refused(
        buy(&app, &other.token, &ad, "url", json!({"pay": true})).await,
        403,
        "unauthorized",
    )
    .await;
    refused(
        buy(&app, &app.token, &ad, "url", json!({"pay": true})).await,
        403,
        "unauthorized",
    )
    .await;
    // Another user's open order is no order of the seller's.
    let others_ad = room(&app, &other, "Kamer in Brugge").await;
    let bought = buy(&app, &other.token, &others_ad, "url", json!({"pay": true})).await;
    let others_order = expect_json(bought, 201).await["orderId"].clone();
    refused(
        buy(
            &app,
            &seller.token,
            &ad,
            "url",
            json!({"pay": true, "orderId": others_order}),
        )
        .await,
        400,
        "unknown-order",
    )
    .await;
    // A paid order takes no more products.
    refused(
        buy(
            &app,
            &other.token,
            &others_ad,
            "url",
            json!({"pay": true, "orderId": others_order}),
        )
        .await,
        400,
        "invalid-order-state",
    )
    .await;
    // A draft is not online: nothing to promote.
    let draft = json!({"title": "Kamer in opbouw", "description": "Nog niet klaar.",
                       "categoryId": 1903, "surface": 10, "location": {"postcode": "9000"},
                       "priceModel": {"modelType": "fixed", "askingPrice": 40000},
                       "status": "draft"});
    let created = app
        .post("/v1/advertisements")
        .token(&seller.token)
        .json(&draft)
        .send()
        .await;
    let draft = expect_json(created, 201).await["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    refused(
        buy(
            &app,
            &seller.token,
            &draft,
            "dagtopper",
            json!({"pay": true}),
        )
        .await,
        400,
        "feature-not-allowed",
    )
    .await;
    let offered = expect_json(
        app.get_with(&format!("{draft}/features"), &seller.token)
            .await,
        200,
    )
    .await;
    assert!(
        offered["_embedded"]["svc:advertisement-feature"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["available"] == false)
    );
    // Another user sees neither the draft's features nor what the seller bought.
    refused(
        app.get_with(&format!("{draft}/features"), &other.token)
            .await,
        404,
        "advertisement-not-found",
    )
    .await;
    refused(
        app.get_with(&format!("{ad}/purchased-features"), &other.token)
            .await,
        403,
        "unauthorized",
    )
    .await;
    // Nothing was bought for the seller's ads.
    for path in [&ad, &draft] {
        let bought = expect_json(
            app.get_with(&format!("{path}/purchased-features"), &seller.token)
                .await,
            200,
        )
        .await;
        assert_eq!(
            bought["_embedded"]["svc:advertisement-purchased-feature"],
            json!([])
        );
    }
    assert_eq!(active_features(&app, &ad).await, json!([]));
}

async fn the_url_feature_shows_the_sellers_website(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    let set = |value: Value| json!([{"op": "add", "path": "/websiteUrl", "value": value}]);
    // Only an http(s) address with a host, of one word, is taken.
    for wrong in [
        json!("ftp://kamers.example"),
        json!("https://"),
        json!("https://kamers .example"),
        json!(12),
    ] {
        let refused = app
            .patch(&ad)
            .token(&seller.token)
            .json_patch(&set(wrong.clone()))
            .send()
            .await;
        let refused = expect_json(refused, 400).await;
        assert_eq!(
            field_codes(&refused),
            pairs(&[("websiteUrl", "invalid-url")]),
            "{wrong}"
        );
    }
    let site = "https://kamers.example/gent?taal=nl";
    let changed = app
        .patch(&ad)
        .token(&seller.token)
        .json_patch(&set(json!(site)))
        .send()
        .await;
    assert_eq!(expect_json(changed, 200).await["websiteUrl"], site);
    // Others see it only while the url feature runs.
    assert!(
        expect_json(app.get(&ad).await, 200)
            .await
            .get("websiteUrl")
            .is_none()
    );
    expect_json(
        buy(&app, &seller.token, &ad, "url", json!({"pay": true})).await,
        201,
    )
    .await;
    let shown = expect_json(app.get(&ad).await, 200).await;
    assert_eq!(shown["websiteUrl"], site);
    assert_eq!(shown["activeFeatures"], json!(["url"]));
    let found = expect_json(app.get("/v1/search?query=gent").await, 200).await;
    assert_eq!(
        found["_embedded"]["svc:search-result"][0]["websiteUrl"],
        site
    );
    advance(&mut app, 28 * DAY + 1, &mut [&mut seller]).await;
    let read = expect_json(app.get_with(&ad, &seller.token).await, 200).await;
    assert_eq!(read["websiteUrl"], site, "the seller still sees it");
    assert_eq!(read["activeFeatures"], json!([]));
    let path = format!("{ad}/features/url");
    let url = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(
        (&url["active"], &url["available"]),
        (&json!(false), &json!(false))
    );
    // 28 days on, a room's 28 days are over too: the ad has expired; renewed, it is online
    // again without the link.
    let renewed = app
        .post(&format!("{ad}/renew"))
        .token(&seller.token)
        .json(&json!({"pay": true}))
        .send()
        .await;
    expect_json(renewed, 201).await;
    assert!(
        expect_json(app.get(&ad).await, 200)
            .await
            .get("websiteUrl")
            .is_none()
    );
    // Removed, it is gone for the seller too.
    let remove = json!([{"op": "remove", "path": "/websiteUrl"}]);
    let changed = app
        .patch(&ad)
        .token(&seller.token)
        .json_patch(&remove)
        .send()
        .await;
    assert!(expect_json(changed, 200).await.get("websiteUrl").is_none());
}

/// A feature runs for the days the price list gave it when it was bought, not when its
/// order is paid (docs/API.md: "The price and days of a purchase are those of the moment
/// it was bought"): a sticker bought for 7 days, cut to 2 days by `souk features import`
/// before the operator confirms the payment, runs its 7 days, at the price it was bought at.
async fn a_feature_runs_for_the_days_it_was_bought_for(mut app: TestApp) {
    let mut seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    crate::orders::pay_insertion(&app, &seller, &ad).await;
    let (price, days) = shipped(&[], "opvalsticker");
    let order = expect_json(
        buy(
            &app,
            &seller.token,
            &ad,
            "opvalsticker",
            json!({"pay": true}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(order["status"], "payment required");
    let id = order["orderId"].to_string();

    import_prices(
        &app,
        json!({"default": {"opvalsticker": {"price": 100, "days": 2}}}),
    );
    // The new list is in force: a sticker bought now costs 100 cents for 2 days...
    let offered = features(&app, &ad).await;
    let sticker = named(&offered, "opvalsticker");
    assert_eq!(
        (&sticker["price"], &sticker["days"]),
        (&json!(100), &json!(2))
    );
    // ... but the order still asks what the sticker cost when it was bought.
    let waiting = expect_json(
        app.get_with(&format!("/v1/orders/{id}"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(waiting["price"], price);
    let paid = crate::orders::confirm_payment(&app, &seller, &id).await;
    assert!(
        paid.status.success(),
        "{}",
        String::from_utf8_lossy(&paid.stderr)
    );
    assert_eq!(active_features(&app, &ad).await, json!(["opvalsticker"]));
    // A day before its 7 days are over it runs (2 days would have ended it)...
    advance(&mut app, (days - 1) * DAY, &mut [&mut seller]).await;
    assert_eq!(active_features(&app, &ad).await, json!(["opvalsticker"]));
    // ... and just after them it is over.
    advance(&mut app, DAY + 1, &mut [&mut seller]).await;
    assert_eq!(active_features(&app, &ad).await, json!([]));
}

/// An order of several products: each is numbered within the order and keeps its type,
/// feature, price and VAT; the order costs their sum, and its VAT is the sum of theirs,
/// each rounded to a cent (not the VAT of the sum). Paid, every product takes effect, and
/// each is listed as purchased, the later product first.
async fn an_order_of_several_products_costs_their_sum(app: TestApp) {
    let seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    crate::orders::pay_insertion(&app, &seller, &ad).await;
    // With the shipped prices (495 and 245 cents) each product's VAT rounds up (86 + 43
    // cents), so the VAT of the sum (740 cents: 128) would be a cent less.
    let (url, _) = shipped(&[], "url");
    let (sticker, _) = shipped(&[], "opvalsticker");
    let first = expect_json(
        buy(&app, &seller.token, &ad, "url", json!({"pay": true})).await,
        201,
    )
    .await;
    let answer = buy(
        &app,
        &seller.token,
        &ad,
        "opvalsticker",
        json!({"pay": true, "orderId": first["orderId"]}),
    )
    .await;
    let address = location(&answer);
    let order = expect_json(answer, 201).await;
    assert_eq!(order["orderId"], first["orderId"]);
    assert_eq!(order["status"], "payment required");
    let embedded = &order["_embedded"]["svc:order-products"];
    let products: Vec<(Value, Value, Value, Value, Value)> = embedded
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["productId"].clone(),
                p["type"].clone(),
                p["feature"].clone(),
                p["price"].clone(),
                p["vat"].clone(),
            )
        })
        .collect();
    assert_eq!(
        products,
        [
            (
                json!(1),
                json!("feature"),
                json!("url"),
                json!(url),
                json!(vat_of(url))
            ),
            (
                json!(2),
                json!("feature"),
                json!("opvalsticker"),
                json!(sticker),
                json!(vat_of(sticker))
            ),
        ]
    );
    assert_eq!(
        (&order["price"], &order["vat"]),
        (&json!(url + sticker), &json!(vat_of(url) + vat_of(sticker)))
    );
    // Its address and its products' list read the same.
    assert_eq!(
        expect_json(app.get_with(&address, &seller.token).await, 200).await,
        order
    );
    let listed = expect_json(
        app.get_with(&format!("{address}/products"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(
        listed["_embedded"]["svc:order-products"],
        order["_embedded"]["svc:order-products"]
    );
    assert_eq!(active_features(&app, &ad).await, json!([]));

    let id = order["orderId"].to_string();
    let paid = crate::orders::confirm_payment(&app, &seller, &id).await;
    assert!(
        paid.status.success(),
        "{}",
        String::from_utf8_lossy(&paid.stderr)
    );
    assert_eq!(
        active_features(&app, &ad).await,
        json!(["opvalsticker", "url"])
    );
    let paid = expect_json(app.get_with(&address, &seller.token).await, 200).await;
    assert_eq!(
        (&paid["status"], &paid["price"]),
        (&json!("paid"), &json!(url + sticker))
    );
    let bought = expect_json(
        app.get_with(&format!("{ad}/purchased-features"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(
        bought["_embedded"]["svc:advertisement-purchased-feature"],
        json!([
            {"name": "opvalsticker", "purchaseDate": paid["paidDate"]},
            {"name": "url", "purchaseDate": paid["paidDate"]},
        ])
    );
}

/// In production a feature waits for its payment; `souk orders pay` starts it. And the
/// operator's price list: `souk features import` replaces it, a bad file changes nothing.
async fn production_and_the_price_list(backend: Backend, test: &str) {
    let app = TestApp::start_with(backend, test, &[("SOUK_ENVIRONMENT", "production")]).await;
    let seller = app.user("verhuurder@souk.test").await;
    let ad = room(&app, &seller, "Kamer in Gent").await;
    crate::orders::pay_insertion(&app, &seller, &ad).await;
    let order = expect_json(
        buy(&app, &seller.token, &ad, "dagtopper", json!({"pay": true})).await,
        201,
    )
    .await;
    assert_eq!(order["status"], "payment required");
    assert_eq!(active_features(&app, &ad).await, json!([]));
    let id = order["orderId"].to_string();
    // The buyer pays the order's price; before the operator confirms it, another product
    // joins the order. A confirmation of the sum received is refused: it does not cover
    // the order now, and nothing is applied.
    let received = order["price"].as_i64().unwrap();
    let grown = expect_json(
        buy(
            &app,
            &seller.token,
            &ad,
            "url",
            json!({"pay": true, "orderId": order["orderId"]}),
        )
        .await,
        201,
    )
    .await;
    let due = grown["price"].as_i64().unwrap();
    assert!(due > received, "{grown}");
    let short = app.souk(&["orders", "pay", &id, "--amount", &received.to_string()]);
    assert!(!short.status.success());
    let refusal = String::from_utf8_lossy(&short.stderr);
    assert!(
        refusal.contains(&format!("costs {due} cents, not {received}")),
        "{refusal}"
    );
    assert_eq!(active_features(&app, &ad).await, json!([]));
    let paid = crate::orders::confirm_payment(&app, &seller, &id).await;
    assert!(
        paid.status.success(),
        "{}",
        String::from_utf8_lossy(&paid.stderr)
    );
    assert_eq!(
        active_features(&app, &ad).await,
        json!(["dagtopper", "url"])
    );

    import_prices(
        &app,
        json!({"default": {"dagtopper": {"price": 100, "days": 2}},
               "categories": {"1903": {"dagtopper": {"price": 150, "days": 2},
                                       "url": {"price": 10, "days": 5}}}}),
    );
    let offered = features(&app, &ad).await;
    assert_eq!(
        (
            &named(&offered, "dagtopper")["price"],
            &named(&offered, "url")["price"]
        ),
        (&json!(150), &json!(10))
    );
    assert_eq!(named(&offered, "opvalsticker")["available"], false);
    let refused = run_import(
        &app,
        json!({"default": {"gratis": {"price": 0, "days": 1}}}),
    );
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unknown feature"));
    assert_eq!(features(&app, &ad).await, offered);
    // A list that names no feature would empty the table, which the next start fills
    // with the shipped list again: refused. Selling nothing is saying `null` of each.
    let empty = run_import(&app, json!({"default": {}, "categories": {"1903": {}}}));
    assert!(!empty.status.success());
    assert!(
        String::from_utf8_lossy(&empty.stderr).contains("names no feature"),
        "{}",
        String::from_utf8_lossy(&empty.stderr)
    );
    assert_eq!(features(&app, &ad).await, offered);
}

mod production_and_the_price_list {
    use crate::helpers::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::production_and_the_price_list(Backend::Sqlite, module_path!()).await;
    }

    #[tokio::test]
    #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
    async fn postgres() {
        super::production_and_the_price_list(Backend::Postgres, module_path!()).await;
    }
}
