//! `GET /v1/search` on both backends: words in their forms, accents, tiers, filters,
//! ordering, pagination edges, bad parameters, and changes to ads seen at once; and the two
//! backends answering the same corpus alike.

mod distance;
mod facets;
mod ranges;

use serde_json::{Value, json};

use crate::ads::{car, created, minimal, path_of, status};
use crate::both_backends;
use crate::helpers::{Backend, TestApp, User, encode, expect_json, field_codes, pairs};

both_backends!(
    word_forms_and_accents_match,
    title_matches_come_before_description_matches,
    filters_narrow_the_results,
    price_orders_and_ranges,
    a_change_to_an_ad_shows_at_once,
    the_counts_of_every_ad_and_within_a_radius_survive_folding,
    pagination_edges_and_links,
    bad_parameters_are_field_errors,
    ads_from_before_search_are_indexed_by_the_backfill,
    words_matching_many_ads_page_in_order,
    a_word_alone_counts_from_the_kept_totals_of_its_forms,
    the_upgrade_to_kept_pairs_of_words_counts_every_ad,
    a_walk_with_lookups_that_meets_too_few_matches_pages_as_without_it,
    a_word_in_a_category_counts_from_its_kept_total,
    a_word_alone_is_counted_from_its_kept_totals,
    a_heavy_read_sees_one_snapshot,
);

/// The search answer for a query string (with the app client's token).
async fn search(app: &TestApp, query: &str) -> Value {
    app.get_json(&format!("/v1/search?{query}"), 200).await
}

/// The titles of a search answer's results, in order.
async fn titles(app: &TestApp, query: &str) -> Vec<String> {
    let answer = search(app, query).await;
    results(&answer)
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

/// The item ids a search finds, in order.
pub(crate) async fn found(app: &TestApp, query: &str) -> Vec<String> {
    results(&search(app, query).await)
        .iter()
        .map(|r| r["itemId"].as_str().unwrap().to_owned())
        .collect()
}

fn results(answer: &Value) -> Vec<Value> {
    answer["_embedded"]["svc:search-result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Places an ad in Damesfietsen with this title and description (and locale, if given).
async fn place(
    app: &TestApp,
    seller: &User,
    title: &str,
    description: &str,
    locale: &str,
) -> Value {
    let mut body = minimal(title);
    body["description"] = json!(description);
    body["locale"] = json!(locale);
    created(app, &seller.token, &body).await
}

/// The titles of an answer's results, in order.
fn titles_of(answer: &Value) -> Vec<String> {
    results(answer)
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

/// Every result of a search, read page by page (200 at a time): `(itemId, title)`.
async fn every_result(app: &TestApp, query: &str) -> Vec<(String, String)> {
    let mut all = Vec::new();
    loop {
        let answer = search(app, &format!("{query}&limit=200&offset={}", all.len())).await;
        let page = results(&answer);
        all.extend(page.iter().map(|r| {
            let text = |key: &str| r[key].as_str().unwrap().to_owned();
            (text("itemId"), text("title"))
        }));
        if page.is_empty() || all.len() as i64 >= answer["totalCount"].as_i64().unwrap() {
            return all;
        }
    }
}

/// A search's `totalCount`, checked against the results read page by page.
async fn counted(app: &TestApp, query: &str) -> i64 {
    let total = search(app, query).await["totalCount"].as_i64().unwrap();
    let found = every_result(app, query).await.len() as i64;
    assert_eq!(total, found, "{query}: the count and the results");
    total
}

/// The groups of index terms a query of these words matches (a word and its other forms).
fn groups(words: &str) -> Vec<Vec<String>> {
    souk::domain::search::request::SearchRequest::parse(&[("query".into(), words.into())])
        .unwrap()
        .words
        .groups
}

async fn word_forms_and_accents_match(app: TestApp) {
    let seller = app.user("zoek@souk.test").await;
    place(&app, &seller, "Rode fiets", "Weinig gebruikt.", "nl-NL").await;
    place(&app, &seller, "Twee fietsen", "Samen te koop.", "nl-BE").await;
    place(
        &app,
        &seller,
        "Belle voiture rouge",
        "Peu utilisée.",
        "fr-BE",
    )
    .await;
    place(&app, &seller, "Tafel uit een café", "Eiken.", "nl-NL").await;
    place(&app, &seller, "Tables de cafe", "En chêne.", "fr-BE").await;
    assert_eq!(
        titles(&app, "query=fietsen").await,
        ["Twee fietsen", "Rode fiets"]
    );
    assert_eq!(
        titles(&app, "query=fiets").await,
        ["Twee fietsen", "Rode fiets"]
    );
    assert_eq!(
        titles(&app, "query=voitures").await,
        ["Belle voiture rouge"]
    );
    assert_eq!(
        titles(&app, "query=cafe").await,
        ["Tables de cafe", "Tafel uit een café"]
    );
    assert_eq!(
        titles(&app, &format!("query={}", encode("CAFÉ"))).await,
        ["Tables de cafe", "Tafel uit een café"]
    );
    assert_eq!(
        titles(&app, "query=rode+fiets").await,
        ["Rode fiets"],
        "every word"
    );
    assert_eq!(
        titles(&app, "query=de+fiets").await.len(),
        2,
        "stop words are dropped"
    );
    assert!(titles(&app, "query=auto").await.is_empty());
    // Words the index cannot hold match nothing (they matched every ad).
    for query in ["велосипед", "自転車", &"x".repeat(41)] {
        assert_eq!(
            counted(&app, &format!("query={}", encode(query))).await,
            0,
            "{query}"
        );
        let with_facets = format!("query={}&facets=true", encode(query));
        assert_eq!(search(&app, &with_facets).await["totalCount"], 0, "{query}");
    }
    let answer = search(&app, "query=fiets").await;
    assert_eq!(answer["totalCount"], 2);
    assert_eq!(results(&answer)[0]["status"], "online");
}

async fn title_matches_come_before_description_matches(app: TestApp) {
    let seller = app.user("tier@souk.test").await;
    place(
        &app,
        &seller,
        "Oude kast",
        "Met een mooie spiegel.",
        "nl-NL",
    )
    .await;
    place(&app, &seller, "Spiegel met lijst", "Groot.", "nl-NL").await;
    place(&app, &seller, "Stoel", "Past bij de spiegel.", "nl-NL").await;
    place(&app, &seller, "Spiegel", "Klein.", "nl-NL").await;
    assert_eq!(
        titles(&app, "query=spiegel").await,
        ["Spiegel", "Spiegel met lijst"],
        "the title only by default"
    );
    let answer = search(&app, "query=spiegel&searchDescription=true").await;
    assert_eq!(answer["totalCount"], 4);
    let all: Vec<Value> = results(&answer)
        .iter()
        .map(|r| r["title"].clone())
        .collect();
    assert_eq!(
        all,
        ["Spiegel", "Spiegel met lijst", "Stoel", "Oude kast"].map(Value::from)
    );
    // A page that straddles the two tiers.
    assert_eq!(
        titles(
            &app,
            "query=spiegel&searchDescription=true&offset=1&limit=2"
        )
        .await,
        ["Spiegel met lijst", "Stoel"]
    );
    assert_eq!(
        titles(
            &app,
            "query=spiegel&searchDescription=true&offset=3&limit=2"
        )
        .await,
        ["Oude kast"]
    );
    assert_eq!(
        titles(
            &app,
            "query=spiegel&searchDescription=true&sortOrder=ascending"
        )
        .await,
        ["Spiegel met lijst", "Spiegel", "Oude kast", "Stoel"],
        "oldest first within each tier"
    );
}

async fn filters_narrow_the_results(app: TestApp) {
    let seller = app.user("filter@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let mut petrol = car("Audi A4");
    petrol["model"] = json!("A4 Avant");
    created(&app, &seller.token, &petrol).await;
    let mut diesel = car("Audi A6");
    diesel["fuel"] = json!("diesel");
    created(&app, &other.token, &diesel).await;
    let mut electric = car("Tesla model 3");
    electric["fuel"] = json!("electric");
    electric["locale"] = json!("fr-BE");
    created(&app, &seller.token, &electric).await;
    place(
        &app,
        &seller,
        "Audi fiets",
        "Een fiets met een Audi-logo.",
        "nl-NL",
    )
    .await;

    assert_eq!(titles(&app, "query=audi").await.len(), 3);
    assert_eq!(
        titles(&app, "query=audi&categoryId=101").await,
        ["Audi A6", "Audi A4"]
    );
    assert_eq!(
        titles(&app, "query=audi&categoryId=1").await,
        ["Audi A6", "Audi A4"],
        "L1"
    );
    assert_eq!(
        titles(&app, "query=audi&categoryId=4").await,
        ["Audi fiets"]
    );
    // Without words a leaf is found by its category's index, not by its tag.
    assert_eq!(
        titles(&app, "categoryId=101").await,
        ["Tesla model 3", "Audi A6", "Audi A4"],
        "a leaf without words"
    );
    assert_eq!(
        titles(&app, "categoryId=402").await,
        ["Audi fiets"],
        "a leaf without words"
    );
    assert_eq!(
        titles(&app, &format!("query=audi&sellerId={}", other.id)).await,
        ["Audi A6"]
    );
    assert_eq!(titles(&app, "locale=fr-BE").await, ["Tesla model 3"]);
    assert_eq!(
        titles(&app, "categoryId=101&fuel=diesel").await,
        ["Audi A6"]
    );
    assert_eq!(
        titles(&app, "categoryId=1&fuel=diesel,electric").await,
        ["Tesla model 3", "Audi A6"],
        "any of the values"
    );
    assert_eq!(
        titles(
            &app,
            &format!("categoryId=101&model={}", encode("a4 avant"))
        )
        .await,
        ["Audi A4"]
    );
    assert!(
        titles(&app, "withImages=true").await.is_empty(),
        "no ad has images"
    );
    assert_eq!(
        search(&app, "").await["totalCount"],
        4,
        "no filter: every online ad"
    );
}

async fn price_orders_and_ranges(app: TestApp) {
    let seller = app.user("prijs@souk.test").await;
    for (title, cents) in [("Lamp een", 3000), ("Lamp twee", 1000), ("Lamp drie", 2000)] {
        let mut body = minimal(title);
        body["priceModel"] = json!({"modelType": "fixed", "askingPrice": cents});
        created(&app, &seller.token, &body).await;
    }
    let mut free = minimal("Lamp gratis");
    free["priceModel"] = json!({"modelType": "to be discussed"});
    created(&app, &seller.token, &free).await;
    // A bidding ad counts at its minimal bid, or at its asking price when it has one.
    for (title, model) in [
        (
            "Lamp bod",
            json!({"modelType": "bidding", "minimalBid": 1500}),
        ),
        (
            "Lamp veiling",
            json!({"modelType": "bidding", "minimalBid": 500, "askingPrice": 2500}),
        ),
    ] {
        let mut body = minimal(title);
        body["priceModel"] = model;
        created(&app, &seller.token, &body).await;
    }
    assert_eq!(
        titles(&app, "query=lamp&sortBy=price").await,
        [
            "Lamp twee",
            "Lamp bod",
            "Lamp drie",
            "Lamp veiling",
            "Lamp een",
            "Lamp gratis"
        ],
        "cheapest first, no price last"
    );
    assert_eq!(
        titles(&app, "query=lamp&sortBy=price&sortOrder=descending").await,
        [
            "Lamp een",
            "Lamp veiling",
            "Lamp drie",
            "Lamp bod",
            "Lamp twee",
            "Lamp gratis"
        ]
    );
    assert_eq!(
        titles(
            &app,
            "query=lamp&price.from=1500&price.to=3000&sortBy=price"
        )
        .await,
        ["Lamp bod", "Lamp drie", "Lamp veiling", "Lamp een"]
    );
    assert_eq!(
        titles(&app, "query=lamp&price.to=1000&sortBy=price").await,
        ["Lamp twee"],
        "a bidding ad with an asking price is not in range by its minimal bid"
    );
}

/// The `totalCount` of a search without any filter: every online ad (on SQLite from a
/// kept total, migration 0027).
async fn every_online(app: &TestApp) -> i64 {
    search(app, "").await["totalCount"].as_i64().unwrap()
}

/// How many online ads are within 10 km of the test ads' postcode (1097DN, Amsterdam): a
/// radius and nothing else, which SQLite counts from totals kept per area.
async fn online_nearby(app: &TestApp) -> i64 {
    search(app, "postCode=1097DN&distance=10000").await["totalCount"]
        .as_i64()
        .unwrap()
}

/// The count of every online ad is a kept total, and that of the ads within a radius kept
/// totals per area; on PostgreSQL those and the totals per term (a seller's tag) are sums
/// of appended changes that the upkeep folds into a row each
/// (`store::search::fold_counts`), from every replica at once: the counts stay exact
/// through folds, two at once included.
async fn the_counts_of_every_ad_and_within_a_radius_survive_folding(app: TestApp) {
    let seller = app.user("vouw@souk.test").await;
    let fold = || {
        app.db
            .write(|conn| Box::pin(souk::store::search::fold_counts(conn)))
    };
    // Rows beyond one for the total and one per area (and per term): changes not folded.
    let terms = match app.backend {
        Backend::Postgres => " + (SELECT COUNT(*) - COUNT(DISTINCT term) FROM search_term_counts)",
        Backend::Sqlite => "",
    };
    let unfolded = || async {
        app.db
            .read(|conn| {
                Box::pin(async move {
                    conn.query_one(
                        &format!(
                            "SELECT (SELECT COUNT(*) - 1 FROM search_docs_total) \
                             + (SELECT COUNT(*) - COUNT(DISTINCT area) \
                                FROM search_area_counts){terms} AS n"
                        ),
                        &[],
                    )
                    .await?
                    .get::<i64>("n")
                })
            })
            .await
            .unwrap()
    };
    let sellers = format!("sellerId={}", seller.id);
    let counts = || async {
        let of_seller = search(&app, &sellers).await["totalCount"].as_i64().unwrap();
        (
            every_online(&app).await,
            online_nearby(&app).await,
            of_seller,
        )
    };
    let (every, nearby, none) = counts().await;
    assert_eq!(none, 0);
    let first = place(&app, &seller, "Eerste vaas", "Glas.", "nl-NL").await;
    place(&app, &seller, "Tweede vaas", "Glas.", "nl-NL").await;
    status(&app, &seller.token, &path_of(&first), "paused").await;
    assert_eq!(counts().await, (every + 1, nearby + 1, 1));
    let (one, other) = tokio::join!(fold(), fold());
    let folded = one.unwrap() + other.unwrap();
    assert_eq!(
        counts().await,
        (every + 1, nearby + 1, 1),
        "the same after two folds at once"
    );
    assert_eq!(unfolded().await, 0, "a row each");
    match app.backend {
        Backend::Postgres => assert!(
            folded >= 6,
            "placed twice, paused once, each a row of each table: {folded} rows folded"
        ),
        Backend::Sqlite => assert_eq!(folded, 0, "a row each kept in place"),
    }
    place(&app, &seller, "Derde vaas", "Glas.", "nl-NL").await;
    assert_eq!(
        counts().await,
        (every + 2, nearby + 2, 2),
        "a change after a fold"
    );
    fold().await.unwrap();
    assert_eq!(counts().await, (every + 2, nearby + 2, 2));
    assert_eq!(unfolded().await, 0);
}

async fn a_change_to_an_ad_shows_at_once(app: TestApp) {
    let seller = app.user("wijzig@souk.test").await;
    let before = every_online(&app).await;
    let nearby = online_nearby(&app).await;
    let ad = place(&app, &seller, "Blauwe vaas", "Glas.", "nl-NL").await;
    let path = path_of(&ad);
    assert_eq!(titles(&app, "query=vaas").await, ["Blauwe vaas"], "placed");
    assert_eq!(every_online(&app).await, before + 1, "placed");
    assert_eq!(online_nearby(&app).await, nearby + 1, "placed");

    expect_json(status(&app, &seller.token, &path, "paused").await, 200).await;
    assert!(titles(&app, "query=vaas").await.is_empty(), "paused");
    assert_eq!(every_online(&app).await, before, "paused");
    assert_eq!(online_nearby(&app).await, nearby, "paused");
    expect_json(status(&app, &seller.token, &path, "online").await, 200).await;
    assert_eq!(titles(&app, "query=vaas").await.len(), 1, "online again");
    assert_eq!(every_online(&app).await, before + 1, "online again");
    assert_eq!(online_nearby(&app).await, nearby + 1, "online again");

    let patch = json!([{"op": "replace", "path": "/title", "value": "Groene kom"}]);
    let changed = app
        .patch(&path)
        .token(&seller.token)
        .json_patch(&patch)
        .send()
        .await;
    expect_json(changed, 200).await;
    assert!(
        titles(&app, "query=vaas").await.is_empty(),
        "the old title is gone"
    );
    assert_eq!(
        titles(&app, "query=kom").await,
        ["Groene kom"],
        "the new one is found"
    );

    let mut draft = minimal("Vaas in ontwerp");
    draft["status"] = json!("draft");
    created(&app, &seller.token, &draft).await;
    assert!(
        titles(&app, "query=ontwerp").await.is_empty(),
        "drafts are not found"
    );

    let deleted = app.delete(&path).token(&seller.token).send().await;
    assert_eq!(deleted.status(), 204);
    assert!(titles(&app, "query=kom").await.is_empty(), "deleted");
    assert_eq!(every_online(&app).await, before, "deleted");
    assert_eq!(online_nearby(&app).await, nearby, "deleted");

    // Past its close date an ad is expired for readers at once, before the sweep.
    let late = place(&app, &seller, "Late vaas", "Glas.", "nl-NL").await;
    assert_eq!(titles(&app, "query=vaas").await, ["Late vaas"]);
    let item = souk::domain::advertisement::ItemId::parse(late["itemId"].as_str().unwrap())
        .unwrap()
        .number();
    let past = app.clock.now() - 1;
    app.execute(
        "UPDATE advertisements SET close_date = $1 WHERE item_number = $2",
        souk::params![past, item].to_vec(),
    )
    .await;
    assert!(titles(&app, "query=vaas").await.is_empty(), "expired");
    assert_eq!(every_online(&app).await, before, "expired, not yet swept");
    assert_eq!(online_nearby(&app).await, nearby, "expired, not yet swept");

    // Elsewhere: counted among every online ad, not near here.
    let mut far = minimal("Vaas uit Gent");
    far["location"] = json!({"postcode": "9000"});
    created(&app, &seller.token, &far).await;
    assert_eq!(every_online(&app).await, before + 1, "elsewhere");
    assert_eq!(online_nearby(&app).await, nearby, "elsewhere");
}

async fn pagination_edges_and_links(app: TestApp) {
    let seller = app.user("pagina@souk.test").await;
    for n in 1..=5 {
        place(&app, &seller, &format!("Boek {n}"), "Gelezen.", "nl-NL").await;
    }
    let first = search(&app, "query=boek&limit=2").await;
    assert_eq!(first["totalCount"], 5);
    assert_eq!(
        (first["offset"].as_i64(), first["limit"].as_i64()),
        (Some(0), Some(2))
    );
    let next = first["_links"]["next"]["href"].as_str().unwrap().to_owned();
    assert_eq!(
        next, "/v1/search?query=boek&offset=2&limit=2",
        "the parameters are kept"
    );
    assert_eq!(
        first["_links"]["last"]["href"],
        "/v1/search?query=boek&offset=4&limit=2"
    );
    assert!(first["_links"].get("prev").is_none());
    let second = app.get_json(&next, 200).await;
    assert_eq!(
        results(&second)
            .iter()
            .map(|r| r["title"].clone())
            .collect::<Vec<_>>(),
        [json!("Boek 3"), json!("Boek 2")]
    );
    let last = search(&app, "query=boek&offset=4&limit=2").await;
    assert_eq!(results(&last).len(), 1);
    assert!(last["_links"].get("next").is_none());
    let past = search(&app, "query=boek&offset=10&limit=2").await;
    assert!(results(&past).is_empty(), "past the end: an empty page");
    assert_eq!(past["totalCount"], 5);
    assert!(search(&app, "offset=4800&limit=200").await["totalCount"].as_i64() == Some(5));

    for bad in [
        "limit=0",
        "limit=201",
        "offset=4801&limit=200",
        "offset=-1",
        "limit=x",
    ] {
        let answer = expect_json(app.get(&format!("/v1/search?{bad}")).await, 400).await;
        assert_eq!(answer["code"], "pagination-invalid", "{bad}");
    }
}

async fn bad_parameters_are_field_errors(app: TestApp) {
    // The token in the query, as a client may send it, is no search parameter.
    let in_query = app
        .request(
            reqwest::Method::GET,
            &format!("/v1/search?query=x&access_token={}", app.token),
        )
        .send()
        .await;
    let in_query = expect_json(in_query, 200).await;
    assert_eq!(in_query["totalCount"], 0);
    // Nor does it go into the links, where anyone the answer reaches would read it.
    let links = in_query["_links"].as_object().unwrap();
    for rel in ["self", "first", "last"] {
        let href = links[rel]["href"].as_str().unwrap();
        assert!(href.starts_with("/v1/search?query=x&"), "{rel}: {href}");
        assert!(!href.contains("access_token"), "{rel}: {href}");
    }
    let bad = |query: &'static str| {
        let app = &app;
        async move { expect_json(app.get(&format!("/v1/search?{query}")).await, 400).await }
    };
    let answer = bad("categoryId=abc&withImages=yes&sortBy=location2&locale=en&limit=0").await;
    assert_eq!(answer["code"], "validation-failure");
    assert_eq!(
        field_codes(&answer),
        pairs(&[
            ("categoryId", "invalid-value"),
            ("withImages", "invalid-value"),
            ("sortBy", "invalid-value"),
            ("locale", "invalid-value"),
            ("limit", "out-of-range"),
        ])
    );
    let answer = bad("categoryId=999999").await;
    assert_eq!(
        field_codes(&answer),
        pairs(&[("categoryId", "unknown-category")])
    );
    let answer = bad("colour=red").await;
    assert_eq!(
        field_codes(&answer),
        pairs(&[("colour", "unknown-parameter")])
    );
    // A bad page with what only the database can judge: every error at once.
    let answer = bad("limit=0&colour=red&offset=-1&categoryId=999999").await;
    assert_eq!(answer["code"], "validation-failure");
    assert_eq!(
        field_codes(&answer),
        pairs(&[
            ("categoryId", "unknown-category"),
            ("colour", "unknown-parameter"),
            ("limit", "out-of-range"),
            ("offset", "out-of-range"),
        ])
    );
    // So with any other bad parameter: a misspelt filter is not hidden behind it.
    let answer = bad("withImages=yes&colour=red&postCode=9999&limit=0").await;
    assert_eq!(answer["code"], "validation-failure");
    assert_eq!(
        field_codes(&answer),
        pairs(&[
            ("withImages", "invalid-value"),
            ("colour", "unknown-parameter"),
            ("postCode", "unknown-postcode"),
            ("limit", "out-of-range"),
        ])
    );
    // But not against a category that could not be read: `colour` may be one of its.
    let answer = bad("categoryId=auto&colour=red&limit=0").await;
    assert_eq!(
        field_codes(&answer),
        pairs(&[("categoryId", "invalid-value"), ("limit", "out-of-range")])
    );
    let answer = bad("limit=0&colour=red").await;
    assert_eq!(
        field_codes(&answer),
        pairs(&[("colour", "unknown-parameter"), ("limit", "out-of-range")])
    );
    let answer = bad("facets=1").await;
    assert_eq!(field_codes(&answer), pairs(&[("facets", "invalid-value")]));
    let answer = bad("categoryId=101&mileage=100").await;
    assert_eq!(
        field_codes(&answer),
        pairs(&[("mileage", "unknown-parameter")]),
        "a NUMBER attribute takes no value list"
    );
    let long_value = format!(
        "/v1/search?categoryId=101&fuel=petrol,---,{}",
        "x".repeat(61)
    );
    let answer = expect_json(app.get(&long_value).await, 400).await;
    assert_eq!(
        field_codes(&answer),
        pairs(&[("fuel", "invalid-value")]),
        "a known attribute, with values that no ad can hold"
    );
    let answer = bad("price.from=500&price.to=100").await;
    assert_eq!(field_codes(&answer)[0].1, "invalid-range");
    let long = "twee drie vier vijf zes zeven acht negen tien";
    let answer = expect_json(
        app.get(&format!("/v1/search?query={}", encode(long))).await,
        400,
    )
    .await;
    assert_eq!(field_codes(&answer), pairs(&[("query", "too-long")]));
    for odd in [
        "query=%22%27%28%29*%3A%5E",
        "query=AND+OR+NOT",
        "query=c_101+%7Btags%7D",
    ] {
        let answer = search(&app, odd).await;
        assert_eq!(
            answer["totalCount"], 0,
            "{odd}: no syntax reaches the index"
        );
    }
}

async fn ads_from_before_search_are_indexed_by_the_backfill(app: TestApp) {
    let seller = app.user("oud@souk.test").await;
    let ad = place(&app, &seller, "Oude klok", "Loopt nog.", "nl-NL").await;
    let before = app.get_json(&path_of(&ad), 200).await;
    // As an ad stored before the search migration: no terms, not in the index.
    app.execute(
        "UPDATE advertisements SET search_version = 0, search_title = ''",
        vec![],
    )
    .await;
    assert!(titles(&app, "query=klok").await.is_empty());
    let done = app
        .db
        .write(|conn| Box::pin(souk::usecase::search::reindex_outdated(conn, 1000)))
        .await
        .unwrap();
    assert_eq!(done, 1);
    assert_eq!(titles(&app, "query=klok").await, ["Oude klok"]);
    let again = app
        .db
        .write(|conn| Box::pin(souk::usecase::search::reindex_outdated(conn, 1000)))
        .await
        .unwrap();
    assert_eq!(again, 0, "nothing left");
    // Terms a re-index made from what it read before a change of the ad came first (the
    // change stored terms of today's version) are not written over the change's.
    let number: i64 = ad["itemId"].as_str().unwrap()[1..].parse().unwrap();
    let stale = souk::domain::search::AdTerms {
        title_words: "iets ".into(),
        body_words: String::new(),
        tags: String::new(),
        price_cents: None,
        version: souk::domain::search::text::TOKENIZER_VERSION,
    };
    app.db
        .write(move |conn| {
            Box::pin(async move {
                let parent = souk::store::ads::get(conn, number)
                    .await?
                    .and_then(|ad| ad.parent_category_id);
                souk::store::ads::set_search_terms(conn, number, &stale, parent).await
            })
        })
        .await
        .unwrap();
    assert_eq!(titles(&app, "query=klok").await, ["Oude klok"]);
    let after = app.get_json(&path_of(&ad), 200).await;
    assert_eq!(before, after, "not a change of the ad");

    // A server's upkeep does the same as it starts (its next round is an hour away here).
    app.execute("UPDATE advertisements SET search_version = 0", vec![])
        .await;
    assert!(titles(&app, "query=klok").await.is_empty());
    let upkeep = tokio::spawn(souk::app::reindex_periodically(
        app.db.clone(),
        std::time::Duration::from_secs(3600),
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while titles(&app, "query=klok").await.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the upkeep did not index the ad"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    upkeep.abort();
}

/// The same corpus on both backends: the same results in the same order for a set of
/// requests covering words, tiers, filters and orders.
#[tokio::test]
#[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
async fn both_backends_answer_alike() {
    let sqlite = TestApp::start(Backend::Sqlite, "search::agree::sqlite").await;
    let postgres = TestApp::start(Backend::Postgres, "search::agree::postgres").await;
    let nouns = [
        "fiets", "fietsen", "kast", "voiture", "voitures", "café", "cafe", "lamp",
    ];
    let adjectives = ["rode", "blauwe", "oude", "belle", "grote", "électrique"];
    for app in [&sqlite, &postgres] {
        let seller = app.user("corpus@souk.test").await;
        for n in 0..60_usize {
            let title = format!(
                "{} {}",
                adjectives[n % adjectives.len()],
                nouns[n % nouns.len()]
            );
            let description = format!(
                "{} en {} nummer {n}",
                nouns[(n * 7 + 3) % nouns.len()],
                adjectives[(n * 5 + 1) % adjectives.len()]
            );
            let locale = ["nl-NL", "nl-BE", "fr-BE"][n % 3];
            // Areas near and far, several ads each (equal distances), one unknown place.
            let postcode = [
                "1097DN", "8301AA", "9711AB", "3511AB", "5611AA", "1000", "9000", "2000", "4000",
                "9999",
            ][n * 3 % 10];
            let mut body = minimal(&title);
            body["location"] = json!({"postcode": postcode});
            body["description"] = json!(description);
            body["locale"] = json!(locale);
            body["priceModel"] = json!({"modelType": "fixed", "askingPrice": (n * 37 % 11) * 100});
            created(app, &seller.token, &body).await;
        }
    }
    let requests = [
        "query=fiets",
        "query=voitures",
        "query=cafe&searchDescription=true",
        "query=rode&searchDescription=true&limit=7&offset=3",
        "query=oude+kast&searchDescription=true",
        "query=lamp&sortBy=price",
        "query=belle&sortBy=price&sortOrder=descending&searchDescription=true",
        "locale=fr-BE&limit=50",
        "categoryId=4&price.from=300&price.to=700&sortBy=price",
        "searchDescription=true&query=electrique&sortOrder=ascending",
        "limit=200",
        "postCode=1011AB&sortBy=location&limit=200",
        "postCode=9000&sortBy=location&sortOrder=descending&offset=7&limit=11",
        "postCode=3511XX&distance=60000&query=fiets&sortBy=location",
        "postCode=2000&distance=150000&searchDescription=true&query=rode",
        "postCode=2000&distance=150000&query=fiets&price.from=100&price.to=800",
        "postCode=8301AA&distance=120000&sortBy=price",
    ];
    for request in requests {
        let a = search(&sqlite, request).await;
        let b = search(&postgres, request).await;
        let ids =
            |v: &Value| -> Vec<Value> { results(v).iter().map(|r| r["itemId"].clone()).collect() };
        assert_eq!(a["totalCount"], b["totalCount"], "{request}");
        assert!(
            a["totalCount"].as_i64().unwrap() > 0,
            "{request} finds something"
        );
        assert_eq!(ids(&a), ids(&b), "{request}");
        let distances = |v: &Value| -> Vec<Value> {
            results(v).iter().map(|r| r["distance"].clone()).collect()
        };
        assert_eq!(distances(&a), distances(&b), "{request}");
    }
}

/// Where a thousand ads or more match a word alone, a page newest or oldest first walks the
/// postings of its terms on PostgreSQL (`store::search::postings::page`) rather than
/// sorting every match: a word with other forms (each form's range walked, their union
/// made distinct), within a radius or not, pages as the same ads do found otherwise
/// (and as with a category's tag, found by GIN): featured ads (the seed buys some) in
/// their places, an ad past its close date left out.
async fn words_matching_many_ads_page_in_order(app: TestApp) {
    // Two sellers, so that the seed deals: other users buy and bid, sellers buy features.
    let seller = app.create_user("veel@souk.test", "password-of-veel").await;
    let seller2 = app.create_user("meer@souk.test", "password-of-meer").await;
    let other = app.user("ander@souk.test").await;
    // A leaf whose Dutch name is one word with other forms, so that its query is a group
    // of several terms; every seeded ad of it in Dutch has the word in its title.
    let leaves = souk::seed::open_leaves(&app.db).await.unwrap();
    let (leaf, word) = leaves
        .iter()
        .find_map(|leaf| {
            let word = leaf.labels.nl_nl.to_lowercase();
            let one_word = word.chars().all(|c| c.is_ascii_lowercase());
            (one_word && groups(&word)[0].len() > 1).then_some((leaf, word))
        })
        .expect("a leaf named by one word with other forms");
    let till = souk::state::till(&app.config);
    let now = app.clock.now();
    souk::seed::seed_ads(
        &app.db,
        &app.blobs,
        std::slice::from_ref(leaf),
        &[seller, seller2],
        1_300,
        till,
        now,
    )
    .await
    .unwrap();
    // One ad of the word past its close date, not yet swept.
    let expired = search(&app, &format!("query={word}&offset=500&limit=1")).await;
    let expired = results(&expired)[0]["itemId"].as_str().unwrap().to_owned();
    let item = souk::domain::advertisement::ItemId::parse(&expired)
        .unwrap()
        .number();
    app.execute(
        "UPDATE advertisements SET close_date = $1 WHERE item_number = $2",
        souk::params![now - 1, item].to_vec(),
    )
    .await;
    // The newest ads: the other seller's, one of them far away (Arlon, 270 km from Utrecht).
    let mut far = minimal(&format!("Verre {word}"));
    far["location"] = json!({"postcode": "6700"});
    let far = created(&app, &other.token, &far).await["itemId"]
        .as_str()
        .unwrap()
        .to_owned();
    let near = place(&app, &other, &format!("Nabije {word}"), "Mooi.", "nl-NL").await;
    let near = near["itemId"].as_str().unwrap().to_owned();

    let query = format!("query={word}");
    let walked = every_result(&app, &query).await;
    assert!(
        walked.len() >= 1_000,
        "{} ads: too few to walk",
        walked.len()
    );
    assert_eq!(search(&app, &query).await["totalCount"], walked.len());
    let numbers: Vec<&str> = walked.iter().map(|(number, _)| number.as_str()).collect();
    let mut distinct = numbers.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), numbers.len(), "an ad twice");
    assert!(!numbers.contains(&expired.as_str()), "expired");
    // The same ads as sorted by price (found without the walk), every ad of the leaf whose
    // title has the word among them, in the leaf's own order (newest first, featured first).
    let mut by_price: Vec<String> = every_result(&app, &format!("{query}&sortBy=price"))
        .await
        .into_iter()
        .map(|(number, _)| number)
        .collect();
    by_price.sort();
    assert_eq!(by_price, distinct);
    let in_leaf = every_result(&app, &format!("categoryId={}", leaf.id)).await;
    let with_word: Vec<&str> = in_leaf
        .iter()
        .filter(|(_, title)| title.to_lowercase().split(' ').any(|w| w == word))
        .map(|(number, _)| number.as_str())
        .collect();
    assert!(with_word.len() >= 1_000);
    let seeded: Vec<&str> = numbers
        .iter()
        .copied()
        .filter(|number| ![near.as_str(), far.as_str()].contains(number))
        .collect();
    let in_order: Vec<&str> = in_leaf
        .iter()
        .map(|(number, _)| number.as_str())
        .filter(|number| distinct.binary_search(number).is_ok())
        .collect();
    assert_eq!(seeded, in_order);
    // The two newest, after the ads at the top of the day.
    let at = |item: &str| numbers.iter().position(|number| *number == item).unwrap();
    assert_eq!(at(&far), at(&near) + 1);
    assert!(
        with_word
            .iter()
            .all(|number| distinct.binary_search(number).is_ok())
    );
    // Oldest first: by item number.
    let oldest = every_result(&app, &format!("{query}&sortOrder=ascending")).await;
    let item = |number: &str| number.trim_start_matches('m').parse::<i64>().unwrap();
    let mut expected: Vec<&str> = numbers.clone();
    expected.sort_by_key(|number| item(number));
    let oldest: Vec<&str> = oldest.iter().map(|(number, _)| number.as_str()).collect();
    assert_eq!(oldest, expected);
    // The leaf's ads alone (its tag), and those within 250 km of Utrecht: all but Arlon's.
    let leafs = every_result(&app, &format!("{query}&categoryId={}", leaf.id)).await;
    let leafs: Vec<&str> = leafs.iter().map(|(number, _)| number.as_str()).collect();
    assert_eq!(leafs, seeded);
    let within = every_result(&app, &format!("{query}&postCode=3511AB&distance=250000")).await;
    let within: Vec<&str> = within.iter().map(|(number, _)| number.as_str()).collect();
    let all_but_far: Vec<&str> = numbers.iter().copied().filter(|n| *n != far).collect();
    assert_eq!(within, all_but_far);
    let page = search(&app, &format!("{query}&postCode=3511AB&distance=250000")).await;
    let page = results(&page);
    let nearby = page.iter().find(|r| r["itemId"] == near.as_str()).unwrap();
    // Amsterdam's area from Utrecht's: about 35 km.
    let metres = nearby["distance"].as_i64().unwrap();
    assert!((30_000..40_000).contains(&metres), "{nearby}");
    // Every ad of the page measured, the featured ones at its top too (their part is
    // measured once it is cut: store::search::page).
    let featured = |result: &Value| {
        result["activeFeatures"].as_array().is_some_and(|active| {
            active
                .iter()
                .any(|name| name.as_str().is_some_and(|n| n.starts_with("dagtopper")))
        })
    };
    assert!(featured(&page[0]), "{}", page[0]);
    for result in page {
        let metres = result["distance"].as_i64();
        assert!(
            metres.is_some_and(|m| (0..=250_000).contains(&m)),
            "{result}"
        );
    }
}

/// A word alone is counted from kept totals (SQLite migration 0040, PostgreSQL 0038 and
/// 0040), less an ad past its close date not yet swept: when one form of its group is in
/// titles (`mooie`: its group `mooie | mooi`, and a Dutch title holds `mooie` alone), that
/// form's total; when two, one the beginning of the other (a French title stems `mooie` to
/// `mooi`, a Dutch `mooi` is itself), their totals less that of the titles holding both.
/// Two forms of which neither begins the other (`gebruikt`, whose Dutch stem is `bruik`)
/// are counted by the index. Each count is held against the results.
async fn a_word_alone_counts_from_the_kept_totals_of_its_forms(app: TestApp) {
    let seller = app.user("mooi@souk.test").await;
    assert_eq!(
        groups("mooie"),
        [["mooie", "mooi"]],
        "the word this test is about"
    );
    assert_eq!(counted(&app, "query=mooie").await, 0, "in no title");

    let mut dutch = Vec::new();
    for n in 1..=3 {
        dutch.push(path_of(
            &place(&app, &seller, &format!("Mooie vaas {n}"), "Glas.", "nl-NL").await,
        ));
    }
    place(&app, &seller, "Vaas", "Een mooie vaas.", "nl-NL").await;
    assert_eq!(counted(&app, "query=mooie").await, 3, "in three titles");

    let past = app.clock.now() - 1;
    app.execute(
        "UPDATE advertisements SET close_date = $1 WHERE title = 'Mooie vaas 1'",
        souk::params![past].to_vec(),
    )
    .await;
    assert_eq!(
        counted(&app, "query=mooie").await,
        2,
        "past its close date, not yet swept"
    );

    expect_json(status(&app, &seller.token, &dutch[1], "paused").await, 200).await;
    assert_eq!(counted(&app, "query=mooie").await, 1, "paused");
    expect_json(status(&app, &seller.token, &dutch[1], "online").await, 200).await;
    assert_eq!(counted(&app, "query=mooie").await, 2, "online again");

    let french = place(&app, &seller, "Mooie lampe", "Verre.", "fr-BE").await;
    assert_eq!(
        counted(&app, "query=mooie").await,
        3,
        "a French title holds both"
    );
    let mooi = place(&app, &seller, "Mooi boek", "Gelezen.", "nl-NL").await;
    assert_eq!(
        counted(&app, "query=mooie").await,
        4,
        "a title holds `mooi` alone"
    );
    expect_json(
        status(&app, &seller.token, &path_of(&french), "paused").await,
        200,
    )
    .await;
    assert_eq!(counted(&app, "query=mooie").await, 3, "no title holds both");
    expect_json(
        status(&app, &seller.token, &path_of(&mooi), "paused").await,
        200,
    )
    .await;
    assert_eq!(
        counted(&app, "query=mooie").await,
        2,
        "`mooi` in no title again"
    );

    assert_eq!(
        groups("gebruikt"),
        [["bruik", "gebruikt"]],
        "one within the other (migration 0042)"
    );
    let boek = place(&app, &seller, "Gebruikt boek", "Gelezen.", "nl-NL").await;
    place(&app, &seller, "Gebruikt bureau", "Hout.", "nl-NL").await;
    assert_eq!(
        counted(&app, "query=gebruikt").await,
        2,
        "each title holds both"
    );
    place(&app, &seller, "Gebruikt velo", "Roule.", "fr-BE").await;
    assert_eq!(
        counted(&app, "query=gebruikt").await,
        3,
        "a French title holds `gebruikt` alone"
    );
    expect_json(
        status(&app, &seller.token, &path_of(&boek), "paused").await,
        200,
    )
    .await;
    assert_eq!(
        counted(&app, "query=gebruikt").await,
        2,
        "the pair's total less one"
    );

    assert_eq!(
        groups("stevige"),
        [["steef", "stevig", "stevige"]],
        "the same two first letters (migration 0042)"
    );
    place(&app, &seller, "Stevige kast", "Eiken.", "nl-NL").await;
    place(&app, &seller, "Stevige tafel", "Grenen.", "nl-NL").await;
    assert_eq!(
        counted(&app, "query=stevige").await,
        2,
        "each title holds both"
    );
    place(&app, &seller, "Stevige table", "Chêne.", "fr-BE").await;
    assert_eq!(
        counted(&app, "query=stevige").await,
        3,
        "a French title holds `stevige` and not `steef`"
    );
}

/// Migration 0040 totals the words of the titles it finds (SQLite) and the pairs of them
/// one of which begins the other (both backends), and 0042 the other pairs of forms alike
/// (`bruik gebruikt`), so that a word alone counts right at once after the upgrade, and
/// the triggers they make keep the totals from then on. The upgrade runs from before 0040:
/// 0044 too, which replaces the same trigger function on PostgreSQL.
async fn the_upgrade_to_kept_pairs_of_words_counts_every_ad(app: TestApp) {
    let seller = app.user("opwaardering@souk.test").await;
    for title in ["Mooie vaas", "Mooie kom", "Mooi boek", "Gebruikt boek"] {
        place(&app, &seller, title, "Glas.", "nl-NL").await;
    }
    place(&app, &seller, "Mooie lampe", "Verre.", "fr-BE").await;
    place(&app, &seller, "Gebruikt velo", "Roule.", "fr-BE").await;
    let count = || async { search(&app, "query=mooie").await["totalCount"].clone() };
    let used = || async { search(&app, "query=gebruikt").await["totalCount"].clone() };
    assert_eq!(count().await, 4);
    assert_eq!(used().await, 2);
    // Totals that the database lacks: only the migration can make them again.
    match app.backend {
        Backend::Sqlite => {
            for sql in [
                "DROP TRIGGER search_title_term_counts_insert",
                "DROP TRIGGER search_title_term_counts_delete",
                "DROP TABLE search_title_term_counts",
            ] {
                app.execute(sql, vec![]).await;
            }
        }
        Backend::Postgres => {
            app.execute(
                "DELETE FROM search_term_counts WHERE term LIKE '% %'",
                vec![],
            )
            .await;
            assert_eq!(count().await, 5, "the pair's total missing");
            assert_eq!(used().await, 3, "the pair's total missing");
        }
    }
    app.execute(
        "DELETE FROM schema_migrations WHERE version IN (40, 42, 44)",
        vec![],
    )
    .await;
    assert_eq!(souk::store::migrations::run(&app.db).await.unwrap(), 3);
    assert_eq!(count().await, 4);
    assert_eq!(used().await, 2);
    place(&app, &seller, "Mooie beker", "Verre.", "fr-BE").await;
    assert_eq!(count().await, 5, "counted by the triggers they made");
    place(&app, &seller, "Gebruikt bureau", "Hout.", "nl-NL").await;
    assert_eq!(used().await, 3, "counted by the triggers they made");
    // 0044's totals of a word in a category (on PostgreSQL), made again by the upgrade and
    // kept by the trigger function it replaced last.
    assert_eq!(counted(&app, "query=boek&categoryId=4").await, 2);
    place(&app, &seller, "Oud boek", "Papier.", "nl-NL").await;
    assert_eq!(counted(&app, "query=boek&categoryId=4").await, 3);
}

/// Two words' page, newest first, where the rarer's matches are its oldest ads: on
/// PostgreSQL a page walks the rarer's postings, each ad looked up under the other
/// (`store::search::Query::walk`). `zwoerk` is in 250 titles, 50 of them the seller's
/// (whose tag is in 350): 10 results are expected within 50 postings, and the walk gives up
/// at its most, 200, all another seller's; the page is then read as without the walk. A
/// page further on is expected further on, and the walk reads every posting.
async fn a_walk_with_lookups_that_meets_too_few_matches_pages_as_without_it(app: TestApp) {
    assert_eq!(
        groups("zwoerk"),
        [["zwoerk"]],
        "the word this test is about"
    );
    let seller = app.user("oudste@souk.test").await;
    let other = app.user("nieuwste@souk.test").await;
    for n in 0..50 {
        place(&app, &seller, &format!("Zwoerk a{n:02}"), "Hout.", "nl-NL").await;
    }
    for n in 0..200 {
        place(&app, &other, &format!("Zwoerk b{n:03}"), "Hout.", "nl-NL").await;
    }
    app.seed_ads(seller.id, 300).await;
    let query = format!("query=zwoerk&sellerId={}", seller.id);
    let newest = |from: u32, count: u32| -> Vec<String> {
        (0..count)
            .map(|n| format!("Zwoerk a{:02}", from - n))
            .collect()
    };
    let answer = search(&app, &format!("{query}&limit=10")).await;
    assert_eq!(answer["totalCount"], 50);
    assert_eq!(titles_of(&answer), newest(49, 10));
    let answer = search(&app, &format!("{query}&offset=40&limit=10")).await;
    assert_eq!(titles_of(&answer), newest(9, 10));
}

/// A word of one form in titles in a category, its leaf's or its L1's: on PostgreSQL counted from
/// the kept total of the pair (migration 0044), which follows every change of the ads at
/// once; on both, the count matches the results.
async fn a_word_in_a_category_counts_from_its_kept_total(app: TestApp) {
    let seller = app.user("kandelaar@souk.test").await;
    // `kandel | kandelaar`, cut to the one form the titles hold (`totals::title_forms`).
    assert_eq!(groups("kandelaar"), [["kandel", "kandelaar"]]);
    // Damesfietsen (4/402) and Personenauto's (1/101).
    let counts = || async {
        [
            counted(&app, "query=kandelaar&categoryId=402").await,
            counted(&app, "query=kandelaar&categoryId=4").await,
            counted(&app, "query=kandelaar&categoryId=101").await,
            counted(&app, "query=kandelaar&categoryId=1").await,
        ]
    };
    assert_eq!(counts().await, [0, 0, 0, 0]);
    let silver = place(&app, &seller, "Zilveren kandelaar", "Glas.", "nl-NL").await;
    place(&app, &seller, "Koperen kandelaar", "Glas.", "nl-NL").await;
    place(&app, &seller, "Tinnen vaas", "Glas.", "nl-NL").await;
    let car_ad = created(&app, &seller.token, &car("Kandelaar op de achterbank")).await;
    assert_eq!(counts().await, [2, 2, 1, 1], "placed");

    expect_json(
        status(&app, &seller.token, &path_of(&silver), "paused").await,
        200,
    )
    .await;
    assert_eq!(counts().await, [1, 1, 1, 1], "paused");
    expect_json(
        status(&app, &seller.token, &path_of(&silver), "online").await,
        200,
    )
    .await;
    assert_eq!(counts().await, [2, 2, 1, 1], "online again");

    let patch = json!([{"op": "replace", "path": "/title", "value": "Zilveren schaal"}]);
    let changed = app
        .patch(&path_of(&silver))
        .token(&seller.token)
        .json_patch(&patch)
        .send()
        .await;
    expect_json(changed, 200).await;
    assert_eq!(counts().await, [1, 1, 1, 1], "retitled");

    let deleted = app
        .delete(&path_of(&car_ad))
        .token(&seller.token)
        .send()
        .await;
    assert_eq!(deleted.status(), 204);
    assert_eq!(counts().await, [1, 1, 0, 0], "deleted");

    let past = app.clock.now() - 1;
    app.execute(
        "UPDATE advertisements SET close_date = $1 WHERE title = 'Koperen kandelaar'",
        souk::params![past].to_vec(),
    )
    .await;
    assert_eq!(
        counts().await,
        [0, 0, 0, 0],
        "past its close date, not yet swept"
    );
    place(&app, &seller, "Gouden kandelaar", "Glas.", "nl-NL").await;
    assert_eq!(counts().await, [1, 1, 0, 0], "placed after");

    if app.backend == Backend::Postgres {
        // The count is the kept total: a change appended to it shows in the count.
        let change = |n: i64| {
            app.execute(
                "INSERT INTO search_term_counts (term, n) VALUES ('kandelaar c_402', $1)",
                souk::params![n].to_vec(),
            )
        };
        change(100).await;
        let total = search(&app, "query=kandelaar&categoryId=402").await["totalCount"].clone();
        assert_eq!(total, 101);
        change(-100).await;
        // The upgrade totals the ads already there.
        app.execute(
            "DELETE FROM search_term_counts WHERE strpos(term, ' ') > 0 AND strpos(term, '_') > 0",
            vec![],
        )
        .await;
        let total = search(&app, "query=kandelaar&categoryId=402").await["totalCount"].clone();
        assert_ne!(total, 1, "the totals missing");
        app.execute("DELETE FROM schema_migrations WHERE version = 44", vec![])
            .await;
        assert_eq!(souk::store::migrations::run(&app.db).await.unwrap(), 1);
        assert_eq!(counts().await, [1, 1, 0, 0], "totalled by the upgrade");
    }
}

/// A word alone is counted from the kept totals, not by the index: a total made 5 too high
/// by hand shows in the count, the results stay the index's. Were the count to fall back
/// to the index, the answer would stay right and only slower; this notices it on SQLite,
/// where the count takes the totals the search read first, to cut the word's forms
/// (checked: without them it fails there). On PostgreSQL the postings' count of a term
/// alone reads its kept total too.
async fn a_word_alone_is_counted_from_its_kept_totals(app: TestApp) {
    let seller = app.user("getelde@souk.test").await;
    place(&app, &seller, "Mooie vaas", "Glas.", "nl-NL").await;
    assert_eq!(counted(&app, "query=mooie").await, 1);
    let skewed = match app.backend {
        // A change appended, as the triggers do (migration 0038).
        Backend::Postgres => "INSERT INTO search_term_counts (term, n) VALUES ('mooie', 5)",
        Backend::Sqlite => "UPDATE search_title_term_counts SET n = n + 5 WHERE term = 'mooie'",
    };
    app.execute(skewed, vec![]).await;
    let answer = search(&app, "query=mooie").await;
    assert_eq!(answer["totalCount"], 6, "the kept total, made 5 too high");
    assert_eq!(results(&answer).len(), 1, "the results are the index's");
}

/// A search's statements (its count, its featured and plain parts, its page) read one
/// snapshot: a write that commits between two of them is seen by neither. On PostgreSQL
/// each statement of a heavy read used to see the commits made before it.
async fn a_heavy_read_sees_one_snapshot(app: TestApp) {
    use souk::store::{Conn, DbError};

    async fn failures(conn: &mut dyn Conn) -> Result<i64, DbError> {
        conn.query_one("SELECT COUNT(*) AS n FROM login_failures", &[])
            .await?
            .get("n")
    }
    let db = app.db.clone();
    let now = app.clock.now();
    let (before, after) = app
        .db
        .read_heavy(move |conn| {
            Box::pin(async move {
                let before = failures(conn).await?;
                db.write(move |writer| {
                    Box::pin(async move {
                        writer
                            .execute(
                                "INSERT INTO login_failures (throttle_key, failed_at) \
                                 VALUES ('tussendoor', $1)",
                                &[souk::store::Value::Int(now)],
                            )
                            .await
                    })
                })
                .await?;
                Ok::<_, DbError>((before, failures(conn).await?))
            })
        })
        .await
        .unwrap();
    assert_eq!(
        before, after,
        "the write committed during the read is not seen"
    );
    let seen = app.db.read(|conn| Box::pin(failures(conn))).await.unwrap();
    assert_eq!(seen, before + 1, "a read after it sees it");
}
