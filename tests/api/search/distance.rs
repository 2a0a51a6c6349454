//! `GET /v1/search` with `postCode`, `distance` and `sortBy=location` on both backends:
//! the radius's bounds, the order both ways with ties, pagination, the distance of each
//! result, and bad input.

use serde_json::{Value, json};

use super::{results, search, titles_of};
use crate::ads::{created, minimal};
use crate::both_backends;
use crate::helpers::{Backend, TestApp, expect_json, field_codes, pairs};
use souk::domain::places::{Country, Location, Point, Postcode};

both_backends!(
    the_radius_keeps_what_is_within_it,
    location_orders_both_ways_with_ties_newest_first,
    pagination_with_a_distance,
    a_distance_is_shown_only_with_a_postcode,
    bad_locations_are_field_errors,
    a_radius_holding_many_ads_pages_as_without_it,
    words_within_a_radius_count_alike_each_way,
    the_upgrade_to_region_terms_indexes_every_ad,
    a_word_of_few_ads_among_many_within_counts_from_its_matches,
    words_within_a_radius_of_many_areas_count_without_area_terms,
    a_radius_whose_matches_are_the_oldest_pages_them_in_order,
);

/// Areas with points chosen for round distances from `1000` (52.0 N, 5.0 E), measured as
/// Souk does (equirectangular at the query's latitude, 111,195 m per degree):
/// `1001` 0.09 degrees north: 10,007.55 m; `1002` 0.1 degrees east: 6,845.8 m; Belgian
/// `1003` 0.2 degrees south: 22,239 m. The shipped data has none of these areas.
async fn load_test_areas(app: &TestApp) {
    let areas = [
        (Country::Netherlands, "1000", 52.0, 5.0),
        (Country::Netherlands, "1001", 52.09, 5.0),
        (Country::Netherlands, "1002", 52.0, 5.1),
        (Country::Belgium, "1003", 51.8, 5.0),
    ];
    load_areas(
        app,
        areas
            .map(|(c, code, lat, lon)| (c, code.to_owned(), lat, lon))
            .to_vec(),
    )
    .await;
}

/// Loads areas `(country, code, latitude, longitude)` as locations named "Testplaats <code>",
/// replacing any the shipped data has under those codes.
async fn load_areas(app: &TestApp, areas: Vec<(Country, String, f64, f64)>) {
    let locations: Vec<Location> = areas
        .into_iter()
        .map(|(country, code, latitude, longitude)| Location {
            postcode: Postcode::of_country(country, &code).unwrap(),
            place: format!("Testplaats {code}"),
            province: "Test".into(),
            province_code: "TE".into(),
            point: Point {
                latitude,
                longitude,
            },
        })
        .collect();
    app.db
        .write(move |conn| {
            Box::pin(async move { souk::store::locations::upsert(conn, &locations, |_| {}).await })
        })
        .await
        .unwrap();
}

/// Places "Stoel <name>" at a postcode.
async fn place_at(app: &TestApp, token: &str, name: &str, postcode: &str) {
    let mut body = minimal(&format!("Stoel {name}"));
    body["location"] = json!({"postcode": postcode});
    created(app, token, &body).await;
}

/// The corpus of the tests below, placed in this order (so `near` is newer than `here`):
/// `here` and `near` in area 1000 (0 m), `north` (10,008 m), `east` (6,846 m), `south`
/// (22,239 m, Belgian) and `nowhere` (a Belgian postcode without a known place).
async fn corpus(app: &TestApp) {
    load_test_areas(app).await;
    let seller = app.user("afstand@souk.test").await;
    for (name, postcode) in [
        ("here", "1000AB"),
        ("north", "1001CD"),
        ("east", "1002EF"),
        ("south", "1003"),
        ("nowhere", "9999"),
        ("near", "1000ZZ"),
    ] {
        place_at(app, &seller.token, name, postcode).await;
    }
}

/// Puts the ad of this title past its close date, as if the sweep had not come yet.
async fn expire(app: &TestApp, title: &str) {
    app.execute(
        "UPDATE advertisements SET close_date = 1 WHERE title = $1",
        souk::params![title].to_vec(),
    )
    .await;
}

/// Places an ad of each title at its postcode, in this order.
async fn place_titled(app: &TestApp, token: &str, ads: &[(&str, &str)]) {
    for (title, postcode) in ads {
        let mut body = minimal(title);
        body["location"] = json!({"postcode": postcode});
        created(app, token, &body).await;
    }
}

/// `(title without "Stoel ", distance)` of each result.
async fn found(app: &TestApp, query: &str) -> Vec<(String, Option<i64>)> {
    let answer = search(app, &format!("query=stoel&{query}")).await;
    results(&answer)
        .iter()
        .map(|r| {
            (
                r["title"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("Stoel ")
                    .to_owned(),
                r["distance"].as_i64(),
            )
        })
        .collect()
}

fn expected(items: &[(&str, Option<i64>)]) -> Vec<(String, Option<i64>)> {
    items.iter().map(|(n, d)| ((*n).to_owned(), *d)).collect()
}

async fn the_radius_keeps_what_is_within_it(app: TestApp) {
    corpus(&app).await;
    assert_eq!(
        found(&app, "postCode=1000AA&distance=10008&sortBy=location").await,
        expected(&[
            ("near", Some(0)),
            ("here", Some(0)),
            ("east", Some(6846)),
            ("north", Some(10008)),
        ]),
        "north, 10,007.55 m away, is just inside 10,008 m"
    );
    assert_eq!(
        found(&app, "postCode=1000AA&distance=10007&sortBy=location").await,
        expected(&[("near", Some(0)), ("here", Some(0)), ("east", Some(6846))]),
        "and just outside 10,007 m"
    );
    let answer = search(&app, "query=stoel&postCode=1000&distance=1").await;
    assert_eq!(
        answer["totalCount"], 0,
        "1000 is a Belgian postcode: Brussels, far away"
    );
    let answer = search(&app, "query=stoel&postCode=1001AA&distance=250000").await;
    assert_eq!(
        answer["totalCount"], 5,
        "every ad with a known place, from another area of the test corpus"
    );
    // From the Belgian area 1003: area 1000 is 22,239 m north (a hair more in doubles),
    // east 23,278 m.
    assert_eq!(
        found(&app, "postCode=1003&distance=22240").await,
        expected(&[
            ("near", Some(22239)),
            ("south", Some(0)),
            ("here", Some(22239)),
        ]),
        "newest first unless sortBy=location"
    );
    // Within the radius as the results show it: areas a hair more than 22,239 m away,
    // shown at 22,239 m, are within 22,239 m.
    assert_eq!(
        found(&app, "postCode=1003&distance=22239").await,
        expected(&[
            ("near", Some(22239)),
            ("south", Some(0)),
            ("here", Some(22239)),
        ]),
    );
}

/// Words within a radius, counted on SQLite in one of three ways (`store::search::count`):
/// by FTS5 with the areas as terms (`tafel`), from the words' matches when these are far
/// fewer than the ads within (`tafel late`), or from the ads within (with a price range,
/// `both_backends_answer_alike`). Each leaves out a match outside the radius, or past its
/// close date and not yet swept.
async fn words_within_a_radius_count_alike_each_way(app: TestApp) {
    corpus(&app).await;
    let seller = app.user("tafel@souk.test").await;
    let tables = [
        ("Tafel here", "1000AB"),
        ("Tafel south", "1003"),
        ("Tafel late", "1001CD"),
    ];
    place_titled(&app, &seller.token, &tables).await;
    let query = "query=tafel&postCode=1000AA&distance=10008";
    let far = "query=tafel&postCode=1000AA&distance=250000";
    let answer = search(&app, query).await;
    assert_eq!(answer["totalCount"], 2, "three matches, two within 10 km");
    assert_eq!(titles_of(&answer), ["Tafel late", "Tafel here"]);
    let answer = search(&app, "query=tafel&postCode=1000AA&distance=10007").await;
    assert_eq!(
        answer["totalCount"], 1,
        "1001 is just outside 10,007 m: the areas 10xx are not all within"
    );
    for radius in [10008, 250000] {
        let answer = search(
            &app,
            &format!("query=tafel+late&postCode=1000AA&distance={radius}"),
        )
        .await;
        assert_eq!(answer["totalCount"], 1, "one match, within {radius} m");
    }
    let answer = search(&app, "query=tafel+south&postCode=1000AA&distance=10008").await;
    assert_eq!(answer["totalCount"], 0, "one match, not within 10 km");
    // A word with other forms (`tafels`, its group `tafels | tafel`) counts alike.
    let answer = search(&app, "query=tafels&postCode=1000AA&distance=10008").await;
    assert_eq!(
        answer["totalCount"], 2,
        "the plural: two of three within 10 km"
    );
    let answer = search(&app, far).await;
    assert_eq!(answer["totalCount"], 3, "all three within 250 km");
    assert_eq!(
        titles_of(&answer),
        ["Tafel late", "Tafel south", "Tafel here"]
    );
    let anywhere = |answer: Value| answer["totalCount"].as_i64().unwrap();
    let everywhere = anywhere(search(&app, "query=tafel").await);
    expire(&app, "Tafel late").await;
    assert_eq!(
        anywhere(search(&app, "query=tafel").await),
        everywhere - 1,
        "past its close date, not yet swept, without a radius"
    );
    let answer = search(&app, query).await;
    assert_eq!(
        answer["totalCount"], 1,
        "past its close date, not yet swept"
    );
    assert_eq!(titles_of(&answer), ["Tafel here"]);
    let answer = search(&app, far).await;
    assert_eq!(
        answer["totalCount"], 2,
        "past its close date, not yet swept"
    );
    assert_eq!(titles_of(&answer), ["Tafel south", "Tafel here"]);
    let answer = search(&app, "query=tafel+late&postCode=1000AA&distance=250000").await;
    assert_eq!(
        answer["totalCount"], 0,
        "past its close date, not yet swept"
    );
    expire(&app, "Tafel south").await;
    let answer = search(&app, query).await;
    assert_eq!(
        answer["totalCount"], 1,
        "an ad outside the radius past its close date leaves the count within it alone"
    );
    assert_eq!(anywhere(search(&app, "query=tafel").await), everywhere - 2);
    // Moved to Ghent, the last ad within leaves the region's term (SQLite: the index
    // forgets the terms of its old row).
    app.execute(
        "UPDATE advertisements SET postcode = '9000' WHERE title = 'Tafel here'",
        vec![],
    )
    .await;
    let answer = search(&app, query).await;
    assert_eq!(answer["totalCount"], 0, "moved out of the radius");
    assert_eq!(titles_of(&answer), Vec::<String>::new());
}

/// Migration 0039 (SQLite: each ad's region and district as terms of the index) makes the
/// index afresh from the ads it finds; on PostgreSQL it does nothing.
async fn the_upgrade_to_region_terms_indexes_every_ad(app: TestApp) {
    corpus(&app).await;
    // Within 250 km every region holding ads is whole: the count names regions alone.
    let query = "query=stoel&postCode=1000AA&distance=250000";
    let before = search(&app, query).await;
    assert_eq!(before["totalCount"], 5, "every ad but the one nowhere");
    if app.backend == Backend::Sqlite {
        // An index that lost its terms: only the migration can make them again.
        app.execute(
            "INSERT INTO search_fts (search_fts) VALUES ('delete-all')",
            vec![],
        )
        .await;
        assert_eq!(search(&app, query).await["totalCount"], 0);
    }
    app.execute("DELETE FROM schema_migrations WHERE version = 39", vec![])
        .await;
    assert_eq!(souk::store::migrations::run(&app.db).await.unwrap(), 1);
    assert_eq!(search(&app, query).await, before);
    // The triggers it made again keep the index: a new ad within is counted.
    let seller = app.user("later@souk.test").await;
    place_at(&app, &seller.token, "later", "1002EF").await;
    assert_eq!(search(&app, query).await["totalCount"], 6);
}

async fn location_orders_both_ways_with_ties_newest_first(app: TestApp) {
    corpus(&app).await;
    assert_eq!(
        found(&app, "postCode=1000AA&sortBy=location").await,
        expected(&[
            ("near", Some(0)),
            ("here", Some(0)),
            ("east", Some(6846)),
            ("north", Some(10008)),
            ("south", Some(22239)),
            ("nowhere", None),
        ]),
        "nearest first; equal distances newest first; no known place last"
    );
    assert_eq!(
        found(&app, "postCode=1000AA&sortBy=location&sortOrder=descending").await,
        expected(&[
            ("south", Some(22239)),
            ("north", Some(10008)),
            ("east", Some(6846)),
            ("near", Some(0)),
            ("here", Some(0)),
            ("nowhere", None),
        ]),
        "farthest first; ties still newest first; no known place still last"
    );
    assert_eq!(
        found(
            &app,
            "postCode=1000AA&sortBy=location&sortOrder=ascending&distance=7000"
        )
        .await,
        expected(&[("near", Some(0)), ("here", Some(0)), ("east", Some(6846))])
    );
}

async fn pagination_with_a_distance(app: TestApp) {
    corpus(&app).await;
    let query = "query=stoel&postCode=1000AA&distance=25000&sortBy=location&limit=2";
    let first = search(&app, query).await;
    assert_eq!(first["totalCount"], 5, "all but the one without a place");
    let next = first["_links"]["next"]["href"].as_str().unwrap().to_owned();
    assert_eq!(
        next,
        "/v1/search?query=stoel&postCode=1000AA&distance=25000&sortBy=location&offset=2&limit=2",
        "the location parameters are kept"
    );
    let second = app.get_json(&next, 200).await;
    let names: Vec<Value> = results(&second)
        .iter()
        .map(|r| json!([r["title"], r["distance"]]))
        .collect();
    assert_eq!(
        names,
        [json!(["Stoel east", 6846]), json!(["Stoel north", 10008])]
    );
    let last = search(&app, &format!("{query}&offset=4")).await;
    assert_eq!(
        found(
            &app,
            "postCode=1000AA&distance=25000&sortBy=location&offset=4&limit=2"
        )
        .await,
        expected(&[("south", Some(22239))])
    );
    assert!(last["_links"].get("next").is_none());
    let past = search(&app, &format!("{query}&offset=6")).await;
    assert!(results(&past).is_empty());
    assert_eq!(past["totalCount"], 5);
}

async fn a_distance_is_shown_only_with_a_postcode(app: TestApp) {
    corpus(&app).await;
    assert_eq!(
        found(&app, "postCode=1002AA").await,
        expected(&[
            ("near", Some(6846)),
            ("nowhere", None),
            ("south", Some(23269)),
            ("east", Some(0)),
            ("north", Some(12125)),
            ("here", Some(6846)),
        ]),
        "newest first, each with its distance (none for an unknown place)"
    );
    let answer = search(&app, "query=stoel").await;
    for result in results(&answer) {
        assert!(result.get("distance").is_none(), "{result}");
    }
    // The distance follows the table: an import that moves an area moves its ads at once.
    let moved = vec![Location {
        postcode: Postcode::of_country(Country::Netherlands, "1001").unwrap(),
        place: "Verhuisd".into(),
        province: "Test".into(),
        province_code: "TE".into(),
        point: Point {
            latitude: 52.0,
            longitude: 5.0,
        },
    }];
    app.db
        .write(move |conn| {
            Box::pin(async move { souk::store::locations::upsert(conn, &moved, |_| {}).await })
        })
        .await
        .unwrap();
    assert_eq!(
        found(&app, "postCode=1000AA&distance=1").await,
        expected(&[("near", Some(0)), ("north", Some(0)), ("here", Some(0))])
    );
}

async fn bad_locations_are_field_errors(app: TestApp) {
    corpus(&app).await;
    let bad = |query: &'static str| {
        let app = &app;
        async move { expect_json(app.get(&format!("/v1/search?{query}")).await, 400).await }
    };
    assert_eq!(
        field_codes(&bad("postCode=12").await),
        pairs(&[("postCode", "invalid-postcode")])
    );
    assert_eq!(
        field_codes(&bad("postCode=9999&distance=1000").await),
        pairs(&[("postCode", "unknown-postcode")]),
        "well-formed, but no known place to measure from"
    );
    for distance in ["0", "250001", "-5", "abc", "1.5", "10km"] {
        let answer = expect_json(
            app.get(&format!("/v1/search?postCode=1000AA&distance={distance}"))
                .await,
            400,
        )
        .await;
        assert_eq!(
            field_codes(&answer),
            pairs(&[("distance", "out-of-range")]),
            "{distance}"
        );
    }
    for (query, fields) in [
        ("distance=5000", json!(["postCode", "distance"])),
        ("sortBy=location", json!(["postCode", "sortBy"])),
        (
            "sortBy=location&distance=5000",
            json!(["postCode", "distance", "sortBy"]),
        ),
    ] {
        let answer = bad(query).await;
        assert_eq!(answer["code"], "validation-failure");
        assert_eq!(answer["details"].as_array().unwrap().len(), 1, "{query}");
        assert_eq!(answer["details"][0]["code"], "missing", "{query}");
        assert_eq!(answer["details"][0]["fields"], fields, "{query}");
    }
    let answer = bad("sortBy=location&postCode=xyz&limit=0").await;
    assert_eq!(
        field_codes(&answer),
        pairs(&[("postCode", "invalid-postcode"), ("limit", "out-of-range")]),
        "every problem at once, no second one for sortBy"
    );
    assert!(
        search(&app, "postCode=1000AA&distance=250000").await["totalCount"].as_i64() == Some(5)
    );
}

/// With a thousand ads or more within the radius, a page newest first walks the ads in
/// order instead of sorting all that are within (`store::search::Query::many_matches`): a
/// radius around every seeded ad pages exactly as no radius does, featured ads included.
async fn a_radius_holding_many_ads_pages_as_without_it(app: TestApp) {
    let seller = app.create_user("veel@souk.test", "password-of-veel").await;
    app.seed_ads(seller, 1_100).await;
    let numbers = |answer: &Value| -> Vec<String> {
        results(answer)
            .iter()
            .map(|r| r["itemId"].as_str().unwrap().to_owned())
            .collect()
    };
    for page in ["offset=0&limit=30", "offset=500&limit=200"] {
        let everywhere = search(&app, page).await;
        // Utrecht: every seeded area (Groningen to Charleroi) is within 250 km.
        let within = search(&app, &format!("{page}&postCode=3511AB&distance=250000")).await;
        assert_eq!(within["totalCount"], 1_100);
        assert_eq!(within["totalCount"], everywhere["totalCount"]);
        assert_eq!(numbers(&within), numbers(&everywhere), "{page}");
    }
}

/// A word in far fewer ads than the radius holds, an ad outside the radius and one past its
/// close date left out (SQLite: counted by FTS5 with the radius's region terms).
async fn a_word_of_few_ads_among_many_within_counts_from_its_matches(app: TestApp) {
    let seller = app.create_user("veel@souk.test", "password-of-veel").await;
    app.seed_ads(seller, 300).await;
    let user = app.user("zwoerk@souk.test").await;
    let ads = [
        ("Zwoerk eiken", "3511AB"),
        ("Zwoerk grenen", "3512CD"),
        ("Zwoerk wit", "6700"),
    ];
    place_titled(&app, &user.token, &ads).await;
    // Every seeded area (Groningen to Charleroi) is within 250 km of Utrecht.
    let query = "query=zwoerk&postCode=3511AB&distance=250000";
    let answer = search(&app, query).await;
    assert_eq!(answer["totalCount"], 2, "Arlon is 270 km from Utrecht");
    assert_eq!(titles_of(&answer), ["Zwoerk grenen", "Zwoerk eiken"]);
    expire(&app, "Zwoerk grenen").await;
    let answer = search(&app, query).await;
    assert_eq!(
        answer["totalCount"], 1,
        "past its close date, not yet swept"
    );
    assert_eq!(titles_of(&answer), ["Zwoerk eiken"]);
}

/// With more than 150 terms for the areas within a radius (17 districts cut by it, each with
/// an ad outside), SQLite counts words within without them: from their matches, each one's
/// area looked up, when they match no more ads than the radius holds, else from the ads
/// within, each held against the words; an ad past its close date left out either way.
async fn words_within_a_radius_of_many_areas_count_without_area_terms(app: TestApp) {
    load_test_areas(&app).await;
    // Areas 1100 to 1269: in each district of ten, nine 0 to 900 m north of `1000`
    // (52.0 N, 5.0 E) and the last (1109, 1119, ...) 111 km north.
    let areas = (1100..1270)
        .map(|code: i32| {
            let latitude = if code % 10 == 9 {
                53.0
            } else {
                52.0 + f64::from(code % 10) * 0.001
            };
            (Country::Netherlands, code.to_string(), latitude, 5.0)
        })
        .collect();
    load_areas(&app, areas).await;
    let seller = app.user("wijken@souk.test").await;
    let zwoerk = [1100, 1111, 1122, 1109];
    let ads: Vec<(String, String)> = (1100..1270)
        .map(|code| {
            let word = if zwoerk.contains(&code) {
                "Zwoerk kast"
            } else {
                "Kast"
            };
            (format!("{word} {code}"), format!("{code}AB"))
        })
        .collect();
    let ads: Vec<(&str, &str)> = ads.iter().map(|(t, p)| (t.as_str(), p.as_str())).collect();
    place_titled(&app, &seller.token, &ads).await;

    let few = "query=zwoerk&postCode=1000AA&distance=10000";
    let answer = search(&app, few).await;
    assert_eq!(answer["totalCount"], 3, "1109 is outside");
    assert_eq!(
        titles_of(&answer),
        ["Zwoerk kast 1122", "Zwoerk kast 1111", "Zwoerk kast 1100"]
    );
    let many = "query=kast&postCode=1000AA&distance=10000";
    assert_eq!(
        search(&app, many).await["totalCount"],
        153,
        "nine of each ten"
    );
    expire(&app, "Zwoerk kast 1111").await;
    let answer = search(&app, few).await;
    assert_eq!(
        answer["totalCount"], 2,
        "past its close date, not yet swept"
    );
    assert_eq!(titles_of(&answer), ["Zwoerk kast 1122", "Zwoerk kast 1100"]);
    assert_eq!(search(&app, many).await["totalCount"], 152);
}

/// A seller's ads within a radius are the oldest 140 of their 1,400: on PostgreSQL a page
/// walks the seller's postings newest first (`store::search::Query::paged_from_title_postings`,
/// 300 postings expected for 30 results), each with its area, past the 1,260 outside to
/// the page.
async fn a_radius_whose_matches_are_the_oldest_pages_them_in_order(app: TestApp) {
    load_test_areas(&app).await;
    let seller = app.user("oud@souk.test").await;
    let ads: Vec<String> = (0..140).map(|n| format!("Stoel {n:03}")).collect();
    let ads: Vec<(&str, &str)> = ads.iter().map(|title| (title.as_str(), "1000AA")).collect();
    place_titled(&app, &seller.token, &ads).await;
    // Seeded ads lie in the seeded areas, the nearest 15 km from `1000`.
    app.seed_ads(seller.id, 1_260).await;
    let query = format!("sellerId={}&postCode=1000AA&distance=5000", seller.id);
    let newest = |from: u32, count: u32| -> Vec<String> {
        (0..count)
            .map(|n| format!("Stoel {:03}", from - n))
            .collect()
    };
    let answer = search(&app, &query).await;
    assert_eq!(answer["totalCount"], 140);
    assert_eq!(titles_of(&answer), newest(139, 30));
    let answer = search(&app, &format!("{query}&offset=100&limit=40")).await;
    assert_eq!(titles_of(&answer), newest(39, 40));
}
