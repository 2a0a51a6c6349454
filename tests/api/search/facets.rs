//! `facets=true` on `GET /v1/search`, both backends: counts per category (leaves and their
//! L1 category) and per value of the category's LIST attributes, for the query as asked,
//! radius included.

use serde_json::{Value, json};

use crate::ads::{car, created, minimal};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json, field_codes, pairs};

both_backends!(facets_count_categories_and_list_values_of_the_query);

fn car_with(title: &str, fuel: &str, postcode: &str) -> Value {
    let mut body = car(title);
    body["fuel"] = json!(fuel);
    body["location"] = json!({"postcode": postcode});
    body
}

async fn facets(app: &TestApp, query: &str) -> Value {
    let answer = app
        .get_json(&format!("/v1/search?{query}&facets=true"), 200)
        .await;
    answer["facets"].clone()
}

async fn facets_count_categories_and_list_values_of_the_query(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    for (title, fuel, postcode) in [
        ("Audi A4", "petrol", "1000"),
        ("Audi A6", "diesel", "1000"),
        ("Audi A3", "petrol", "1097DN"),
        ("BMW 320", "diesel", "1000"),
    ] {
        created(&app, &seller.token, &car_with(title, fuel, postcode)).await;
    }
    let mut bike = minimal("Audi racefiets");
    bike["condition"] = json!("used");
    created(&app, &seller.token, &bike).await;

    let all = facets(&app, "query=audi").await;
    assert_eq!(
        all["categories"],
        json!([
            {"categoryId": 1, "count": 3},
            {"categoryId": 101, "parentId": 1, "count": 3},
            {"categoryId": 4, "count": 1},
            {"categoryId": 402, "parentId": 4, "count": 1},
        ]),
        "leaves and their L1 sums, by descending count"
    );
    assert_eq!(all["attributes"], json!({}), "values need a category");

    let cars = facets(&app, "query=audi&categoryId=101").await;
    assert_eq!(
        cars["categories"],
        json!([
            {"categoryId": 1, "count": 3},
            {"categoryId": 101, "parentId": 1, "count": 3},
        ])
    );
    assert_eq!(
        cars["attributes"]["fuel"],
        json!([{"value": "petrol", "count": 2}, {"value": "diesel", "count": 1}])
    );
    assert_eq!(
        cars["attributes"]["color"],
        json!([]),
        "a LIST attribute no ad has"
    );
    assert!(
        cars["attributes"].get("mileage").is_none() && cars["attributes"].get("model").is_none(),
        "only LIST attributes: {cars}"
    );

    let petrol = facets(&app, "query=audi&categoryId=101&fuel=petrol").await;
    assert_eq!(
        petrol["attributes"]["fuel"],
        json!([{"value": "petrol", "count": 2}]),
        "the query's own filters count"
    );
    let near = facets(&app, "query=audi&postCode=1097DN&distance=20000").await;
    assert_eq!(
        near["categories"],
        json!([
            {"categoryId": 1, "count": 1},
            {"categoryId": 4, "count": 1},
            {"categoryId": 101, "parentId": 1, "count": 1},
            {"categoryId": 402, "parentId": 4, "count": 1},
        ]),
        "the radius counts: the car and the bike in Amsterdam, not the cars in Brussels"
    );

    let plain = app.get_json("/v1/search?query=audi", 200).await;
    assert!(plain.get("facets").is_none(), "only when asked");
    let off = app
        .get_json("/v1/search?query=audi&facets=false", 200)
        .await;
    assert!(off.get("facets").is_none());
    let bad = expect_json(app.get("/v1/search?facets=yes").await, 400).await;
    assert_eq!(field_codes(&bad), pairs(&[("facets", "invalid-value")]));
}
