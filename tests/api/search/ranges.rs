//! `GET /v1/search` with ranges on numeric attributes (`<key>.from`, `<key>.to`), on both
//! backends: bounds inclusive, an ad without the number outside every range, an L1
//! category, combination with words and price, and bad input.

use serde_json::json;

use super::titles;
use crate::ads::{car, created};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json, field_codes, pairs};

both_backends!(
    numeric_ranges_keep_what_is_within_them,
    bad_ranges_are_field_errors,
);

/// Cars with a mileage and a construction year (one without either), placed in this order.
async fn cars(app: &TestApp) {
    let seller = app.user("kilometer@souk.test").await;
    for (title, mileage, year) in [
        ("Audi weinig", Some(10_000), Some(2020)),
        ("Audi midden", Some(80_000), Some(2015)),
        ("Audi veel", Some(250_000), Some(2005)),
        ("Audi onbekend", None, None),
    ] {
        let mut body = car(title);
        if let Some(mileage) = mileage {
            body["mileage"] = json!(mileage);
        }
        if let Some(year) = year {
            body["constructionYear"] = json!(year);
        }
        created(app, &seller.token, &body).await;
    }
    let mut other = car("BMW midden");
    other["categoryId"] = json!(102);
    other["mileage"] = json!(80_000);
    created(app, &seller.token, &other).await;
}

async fn numeric_ranges_keep_what_is_within_them(app: TestApp) {
    cars(&app).await;
    assert_eq!(
        titles(&app, "categoryId=101&mileage.from=10000&mileage.to=80000").await,
        ["Audi midden", "Audi weinig"],
        "both bounds inclusive; no mileage is outside"
    );
    assert_eq!(
        titles(&app, "categoryId=101&mileage.from=10001").await,
        ["Audi veel", "Audi midden"]
    );
    assert_eq!(
        titles(&app, "categoryId=101&mileage.to=79999.5").await,
        ["Audi weinig"],
        "a bound need not be whole"
    );
    assert_eq!(
        titles(&app, "categoryId=1&mileage.from=80000&mileage.to=80000").await,
        ["BMW midden", "Audi midden"],
        "an L1 category: the attribute of its leaves"
    );
    assert_eq!(
        titles(
            &app,
            "categoryId=101&mileage.to=100000&constructionYear.from=2016&query=audi"
        )
        .await,
        ["Audi weinig"],
        "ranges on two attributes and words together"
    );
    assert_eq!(
        titles(
            &app,
            "categoryId=101&constructionYear.to=2030&sortBy=price&price.to=500000"
        )
        .await,
        ["Audi veel", "Audi midden", "Audi weinig"]
    );
    assert!(
        titles(&app, "categoryId=101&mileage.from=250001")
            .await
            .is_empty(),
        "above every ad"
    );
}

async fn bad_ranges_are_field_errors(app: TestApp) {
    cars(&app).await;
    let bad = |query: &'static str| {
        let app = &app;
        async move {
            let answer = expect_json(app.get(&format!("/v1/search?{query}")).await, 400).await;
            field_codes(&answer)
        }
    };
    assert_eq!(
        bad("mileage.from=1").await,
        pairs(&[("mileage.from", "unknown-parameter")]),
        "without a category no attribute is known"
    );
    assert_eq!(
        bad("categoryId=101&rimSize.to=20").await,
        pairs(&[("rimSize.to", "unknown-parameter")]),
        "an attribute of another category"
    );
    assert_eq!(
        bad("categoryId=101&fuel.from=1").await,
        pairs(&[("fuel.from", "unknown-parameter")]),
        "a LIST attribute has no range"
    );
    assert_eq!(
        bad("categoryId=101&mileage.from=veel&constructionYear.to=1e999").await,
        pairs(&[
            ("mileage.from", "invalid-value"),
            ("constructionYear.to", "invalid-value"),
        ])
    );
    let answer = expect_json(
        app.get("/v1/search?categoryId=101&mileage.from=9&mileage.to=1")
            .await,
        400,
    )
    .await;
    assert_eq!(answer["details"][0]["code"], "invalid-range");
    assert_eq!(
        answer["details"][0]["fields"],
        json!(["mileage.from", "mileage.to"])
    );
    assert_eq!(
        bad("categoryId=101&mileage.from=1&mileage.from=2").await,
        pairs(&[("mileage.from", "duplicate")])
    );
}
