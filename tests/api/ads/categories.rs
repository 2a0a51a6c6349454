//! An ad and its category: the running days, a category that closes or whose attribute
//! definitions change, attributes that are not updateable or writable.

use serde_json::{Value, json};

use super::{car, create, created, delete, json_patch, minimal, put, status};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json, field_codes};

both_backends!(
    close_date_follows_the_categorys_running_days,
    ads_outlive_a_closed_category_and_changed_definitions,
    not_updateable_attributes_keep_their_value,
    a_kept_value_is_compared_as_typed,
);

/// Changes a category as an operator's import would.
async fn change_category(
    app: &TestApp,
    id: i64,
    change: impl FnOnce(&mut souk::domain::category::Category) + Send + 'static,
) {
    let now = app.clock.now();
    app.db
        .write(move |conn| {
            Box::pin(async move {
                let mut category = souk::store::categories::get(conn, id)
                    .await?
                    .expect("category");
                change(&mut category);
                souk::store::categories::import(conn, &[category], false, now).await
            })
        })
        .await
        .unwrap();
}

fn definition<'a>(
    category: &'a mut souk::domain::category::Category,
    key: &str,
) -> &'a mut souk::domain::category::AttributeDefinition {
    let leaf = category.leaf.as_mut().expect("a leaf");
    leaf.attributes
        .iter_mut()
        .find(|d| d.key == key)
        .expect("the attribute")
}

/// `closeDate` is `startDate` plus the category's `runningDays`: 56 for cars, 28 for
/// bicycles; a draft gets its dates when it is published.
async fn close_date_follows_the_categorys_running_days(app: TestApp) {
    use souk::domain::time::parse_timestamp;
    let seller = app.user("verkoper@souk.test").await;
    let running = |ad: &Value| {
        let start = parse_timestamp(ad["startDate"].as_str().unwrap()).unwrap();
        let close = parse_timestamp(ad["closeDate"].as_str().unwrap()).unwrap();
        (start, (close - start) / 86_400)
    };
    let fees = app.get_json("/v1/categories/1/101/fees", 200).await;
    assert_eq!(fees["runningDays"], 56);
    // The clock runs: the start is a second between the two readings around the request.
    let before = app.clock.now();
    let car_ad = created(&app, &seller.token, &car("Golf")).await;
    let (start, days) = running(&car_ad);
    assert!((before..=app.clock.now()).contains(&start), "{start}");
    assert_eq!(days, 56);
    let bike = created(&app, &seller.token, &minimal("Fiets")).await;
    assert_eq!(running(&bike).1, 28);
    let mut draft = car("Polo");
    draft["status"] = json!("draft");
    let draft = created(&app, &seller.token, &draft).await;
    assert!(draft["startDate"].is_null() && draft["closeDate"].is_null());
    app.clock.advance(3 * 86_400);
    let token = app.token_of(&seller, None).await;
    let before = app.clock.now();
    let published = status(
        &app,
        &token,
        draft["_links"]["self"]["href"].as_str().unwrap(),
        "online",
    )
    .await;
    let published = expect_json(published, 200).await;
    let (start, days) = running(&published);
    assert!((before..=app.clock.now()).contains(&start), "{start}");
    assert_eq!(days, 56);
}

/// A category that closes, or whose attribute definitions change, after an ad was placed
/// does not freeze the ad: the seller still edits, pauses, closes and deletes it. What a
/// change brings in meets today's definitions; new ads, publishing a draft and moving an ad
/// into a closed category are refused.
async fn ads_outlive_a_closed_category_and_changed_definitions(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let mut body = minimal("Gazelle");
    body["brand"] = json!("gazelle");
    body["frameSize"] = json!(53);
    let ad = created(&app, &seller.token, &body).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let mut draft = minimal("Nog een concept");
    draft["status"] = json!("draft");
    let draft = created(&app, &seller.token, &draft).await;
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap().to_owned();
    // Damesfietsen close; `gazelle` is no longer an option, frames stop at 50 cm, and a
    // new mandatory attribute appears.
    change_category(&app, 402, |category| {
        category.status = souk::domain::category::CategoryStatus::Closed;
        definition(category, "brand")
            .options
            .retain(|o| o.key != "gazelle");
        definition(category, "frameSize").max_value = Some(50.0);
        let mut wheels = definition(category, "frameSize").clone();
        wheels.key = "wheelSize".into();
        wheels.mandatory = true;
        category.leaf.as_mut().unwrap().attributes.push(wheels);
    })
    .await;
    let edited = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Gazelle, nu goedkoper"}]),
        None,
    )
    .await;
    let edited = expect_json(edited, 200).await;
    assert_eq!(edited["title"], "Gazelle, nu goedkoper");
    assert_eq!(edited["brand"], "gazelle", "kept as it was placed");
    assert_eq!(edited["frameSize"], 53);
    let mut back = edited.clone();
    back["description"] = json!("Nieuwe beschrijving.");
    expect_json(put(&app, &seller.token, &path, &back).await, 200).await;
    for to in ["paused", "online"] {
        assert_eq!(
            expect_json(status(&app, &seller.token, &path, to).await, 200).await["status"],
            to
        );
    }
    // What a change brings in meets today's definitions.
    let bigger = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/frameSize", "value": 55}]),
        None,
    )
    .await;
    assert_eq!(
        field_codes(&expect_json(bigger, 400).await),
        [("frameSize".to_owned(), "out-of-range".to_owned())]
    );
    // New ads, publishing a draft and moving an ad into the closed category are refused.
    let error = expect_json(create(&app, &seller.token, &minimal("Te laat")).await, 400).await;
    assert!(field_codes(&error).contains(&("categoryId".to_owned(), "category-closed".to_owned())));
    let published = expect_json(
        status(&app, &seller.token, &draft_path, "online").await,
        400,
    )
    .await;
    assert_eq!(
        field_codes(&published),
        [("categoryId".to_owned(), "category-closed".to_owned())]
    );
    let still = expect_json(app.get_with(&draft_path, &seller.token).await, 200).await;
    assert_eq!(still["status"], "draft");
    let renamed = json_patch(
        &app,
        &seller.token,
        &draft_path,
        json!([{"op": "replace", "path": "/title", "value": "Concept, bijgewerkt"}]),
        None,
    )
    .await;
    assert_eq!(
        expect_json(renamed, 200).await["title"],
        "Concept, bijgewerkt"
    );
    let mut elsewhere = minimal("Elders");
    elsewhere["categoryId"] = json!(403);
    let other = created(&app, &seller.token, &elsewhere).await;
    let other_path = other["_links"]["self"]["href"].as_str().unwrap();
    let moved = json_patch(
        &app,
        &seller.token,
        other_path,
        json!([{"op": "replace", "path": "/categoryId", "value": 402}]),
        None,
    )
    .await;
    assert!(
        field_codes(&expect_json(moved, 400).await)
            .contains(&("categoryId".to_owned(), "category-closed".to_owned()))
    );
    assert_eq!(
        expect_json(app.get_with(other_path, &seller.token).await, 200).await["categoryId"],
        403
    );
    // Closing and deleting work as ever.
    expect_json(status(&app, &seller.token, &path, "closed").await, 200).await;
    let deleted = delete(&app, &seller.token, &path).await;
    assert_eq!(deleted.status(), 204);
}

/// An attribute that is not `updateable` keeps the value it has: a change, or taking it out
/// (which would let a later change add another value), is `not-updateable`. One the ad
/// never had may be set once. One that is not `writable` cannot be given at all.
async fn not_updateable_attributes_keep_their_value(app: TestApp) {
    change_category(&app, 404, |category| {
        definition(category, "brand").updateable = false;
        definition(category, "weight").writable = false;
    })
    .await;
    let seller = app.user("verkoper@souk.test").await;
    let mut body = minimal("Transportfiets");
    body["categoryId"] = json!(404);
    body["brand"] = json!("gazelle");
    let ad = created(&app, &seller.token, &body).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let mut without = ad.clone();
    without.as_object_mut().unwrap().remove("brand");
    let removed = expect_json(put(&app, &seller.token, &path, &without).await, 400).await;
    assert_eq!(
        field_codes(&removed),
        [("brand".to_owned(), "not-updateable".to_owned())]
    );
    for patch in [
        json!([{"op": "remove", "path": "/brand"}]),
        json!([{"op": "replace", "path": "/brand", "value": "sparta"}]),
        json!([{"op": "replace", "path": "/brand", "value": ""}]),
    ] {
        let refused = json_patch(&app, &seller.token, &path, patch.clone(), None).await;
        assert_eq!(
            field_codes(&expect_json(refused, 400).await),
            [("brand".to_owned(), "not-updateable".to_owned())],
            "{patch}"
        );
    }
    assert_eq!(
        expect_json(app.get_with(&path, &seller.token).await, 200).await,
        ad,
        "nothing changed"
    );
    // Sending the value back as it is, in another form, is no change.
    let mut same = ad.clone();
    same.as_object_mut().unwrap().remove("brand");
    same["attributes"] = json!([{"key": "brand", "value": "gazelle"}]);
    expect_json(put(&app, &seller.token, &path, &same).await, 200).await;
    let mut plain = minimal("Zonder merk");
    plain["categoryId"] = json!(404);
    let plain = created(&app, &seller.token, &plain).await;
    let plain_path = plain["_links"]["self"]["href"].as_str().unwrap();
    let set = json_patch(
        &app,
        &seller.token,
        plain_path,
        json!([{"op": "add", "path": "/brand", "value": "sparta"}]),
        None,
    )
    .await;
    assert_eq!(expect_json(set, 200).await["brand"], "sparta");
    let again = json_patch(
        &app,
        &seller.token,
        plain_path,
        json!([{"op": "replace", "path": "/brand", "value": "giant"}]),
        None,
    )
    .await;
    expect_json(again, 400).await;
    let mut weighed = minimal("Gewogen");
    weighed["categoryId"] = json!(404);
    weighed["weight"] = json!(18.5);
    let error = expect_json(create(&app, &seller.token, &weighed).await, 400).await;
    assert_eq!(
        field_codes(&error),
        [("weight".to_owned(), "not-writable".to_owned())]
    );
}

/// A value the ad holds may be sent back in another form the type reads alike (a number as
/// text): it is no change, so an attribute that is no longer `writable`, or whose bound has
/// moved past it, lets it through.
async fn a_kept_value_is_compared_as_typed(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let mut body = minimal("Gewogen fiets");
    body["categoryId"] = json!(404);
    body["weight"] = json!(18.5);
    let ad = created(&app, &seller.token, &body).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    assert_eq!(ad["weight"], 18.5);
    // No longer writable, and its bound moved below the value held.
    change_category(&app, 404, |category| {
        let weight = definition(category, "weight");
        weight.writable = false;
        weight.max_value = Some(10.0);
    })
    .await;
    let mut as_text = ad.clone();
    as_text["weight"] = json!("18.5");
    as_text["title"] = json!("Gewogen fiets, als tekst");
    let kept = expect_json(put(&app, &seller.token, &path, &as_text).await, 200).await;
    assert_eq!(kept["weight"], 18.5);
    assert_eq!(kept["title"], "Gewogen fiets, als tekst");
    let mut other = kept.clone();
    other["weight"] = json!("19");
    let refused = expect_json(put(&app, &seller.token, &path, &other).await, 400).await;
    assert_eq!(
        field_codes(&refused),
        [("weight".to_owned(), "not-writable".to_owned())]
    );
    let mut unreadable = kept.clone();
    unreadable["weight"] = json!("zwaar");
    let refused = expect_json(put(&app, &seller.token, &path, &unreadable).await, 400).await;
    assert_eq!(
        field_codes(&refused),
        [("weight".to_owned(), "not-writable".to_owned())]
    );
    assert_eq!(
        app.get_json(&path, 200).await["title"],
        "Gewogen fiets, als tekst"
    );
}
