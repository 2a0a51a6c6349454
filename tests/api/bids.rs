//! Bids: placing under the documented rule, the list and who sees a bidder, withdrawing
//! and removing, the seller's question by mail, and many bidders at once; on both backends.

use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{TestApp, User, expect_json, field_codes, pairs};

both_backends!(
    bids_as_documented,
    who_sees_the_bidder,
    bidding_rules_are_enforced,
    bad_bids_change_nothing,
    withdrawing_and_removing_bids,
    the_seller_asks_a_bidder_by_mail,
    many_bidders_at_once_lose_nothing_and_break_no_rule,
    a_minimal_bid_raised_past_the_bids_is_the_bar,
    bidders_keep_sight_of_their_bids_on_an_ad_gone_offline,
);

/// An ad that is no longer online shows its bids to its seller and its bidders only: a
/// bidder still reads the list and their bid (with their identity, and no minimum next
/// bid, as the ad takes none) and may withdraw it; anyone else finds no ad.
async fn bidders_keep_sight_of_their_bids_on_an_ad_gone_offline(app: TestApp) {
    let OneBid {
        seller,
        bidder,
        other,
        item,
        one,
        list,
    } = one_bid(&app).await;
    let response = app
        .patch(&format!("/v1/advertisements/{item}"))
        .token(&seller.token)
        .json_patch(&json!([{"op": "replace", "path": "/status", "value": "paused"}]))
        .send()
        .await;
    assert_eq!(response.status(), 200);
    for reader in [&bidder, &seller] {
        let listed = expect_json(app.get_with(&list, &reader.token).await, 200).await;
        assert_eq!(amounts(&listed), [2000], "{}", reader.email);
        assert!(listed.get("minimumNextBid").is_none(), "{}", reader.email);
        let shown = expect_json(app.get_with(&one, &reader.token).await, 200).await;
        assert_eq!(shown["bidder"]["id"], bidder.id, "{}", reader.email);
    }
    for token in [other.token.as_str(), app.token.as_str()] {
        for path in [&list, &one] {
            let hidden = expect_json(app.get_with(path, token).await, 404).await;
            assert_eq!(hidden["code"], "advertisement-not-found", "{path}");
        }
    }
    let refused = expect_json(app.delete(&one).token(&other.token).send().await, 404).await;
    assert_eq!(refused["code"], "advertisement-not-found");
    let withdrawn = expect_json(app.delete(&one).token(&bidder.token).send().await, 200).await;
    assert_eq!(withdrawn["amount"], 2000);
    // Without a bid left, the former bidder has no part in the ad any more.
    let hidden = expect_json(app.get_with(&list, &bidder.token).await, 404).await;
    assert_eq!(hidden["code"], "advertisement-not-found");
}

/// An online ad of `seller` with this price model; its item id.
async fn ad_with(app: &TestApp, seller: &User, price_model: Value) -> String {
    let body = json!({"title": "Oude racefiets", "description": "Klassieker uit 1982.",
                      "categoryId": 403, "location": {"postcode": "9000"},
                      "priceModel": price_model, "condition": "used"});
    let response = app
        .post("/v1/advertisements")
        .token(&seller.token)
        .json(&body)
        .send()
        .await;
    expect_json(response, 201).await["itemId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A bidding ad with a minimal bid of 10 euro.
async fn bidding_ad(app: &TestApp, seller: &User) -> String {
    ad_with(
        app,
        seller,
        json!({"modelType": "bidding", "minimalBid": 1000}),
    )
    .await
}

/// What `one_bid` sets up.
struct OneBid {
    /// verkoper@souk.test, who placed the ad.
    seller: User,
    /// bieder@souk.test, who placed the bid.
    bidder: User,
    /// ander@souk.test, who has no part in the ad.
    other: User,
    /// The ad's item id.
    item: String,
    /// The bid's path.
    one: String,
    /// The path of the ad's bids.
    list: String,
}

/// Three users (a seller, a bidder and another), a bidding ad of the seller's (see
/// `bidding_ad`) and the bidder's bid of 20 euro on it, placed with 201.
async fn one_bid(app: &TestApp) -> OneBid {
    let seller = app.user("verkoper@souk.test").await;
    let bidder = app.user("bieder@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let item = bidding_ad(app, &seller).await;
    let placed = expect_json(bid(app, &bidder.token, &item, json!(2000)).await, 201).await;
    let one = format!("/v1/advertisements/{item}/bids/{}", placed["bidId"]);
    let list = format!("/v1/advertisements/{item}/bids");
    OneBid {
        seller,
        bidder,
        other,
        item,
        one,
        list,
    }
}

async fn bid(app: &TestApp, token: &str, item: &str, amount: Value) -> reqwest::Response {
    app.post(&format!("/v1/advertisements/{item}/bids"))
        .token(token)
        .json(&json!({"amount": amount}))
        .send()
        .await
}

fn amounts(list: &Value) -> Vec<i64> {
    list["_embedded"]["svc:bid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["amount"].as_i64().unwrap())
        .collect()
}

async fn statistics(app: &TestApp, seller: &User, item: &str) -> Value {
    expect_json(
        app.get_with(
            &format!("/v1/advertisements/{item}/statistics"),
            &seller.token,
        )
        .await,
        200,
    )
    .await
}

/// The bids stored for an ad, straight from the database: (bid id, bidder, amount), in
/// the order they were placed.
async fn stored_bids(app: &TestApp, item: &str) -> Vec<(i64, i64, i64)> {
    let number: i64 = item[1..].parse().unwrap();
    app.db
        .read(move |conn| {
            Box::pin(async move {
                let rows = conn
                    .query(
                        "SELECT bid_id, bidder_id, amount FROM bids WHERE item_number = $1 \
                         ORDER BY bid_id",
                        souk::params![number],
                    )
                    .await?;
                rows.iter()
                    .map(|r| Ok((r.get("bid_id")?, r.get("bidder_id")?, r.get("amount")?)))
                    .collect::<Result<Vec<(i64, i64, i64)>, souk::store::DbError>>()
            })
        })
        .await
        .unwrap()
}

async fn bids_as_documented(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let first = app.user("eerste@souk.test").await;
    let second = app.user("tweede@souk.test").await;
    let item = bidding_ad(&app, &seller).await;
    let path = format!("/v1/advertisements/{item}/bids");
    // The first bid may be the minimal bid itself.
    let response = bid(&app, &first.token, &item, json!(1000)).await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let placed = expect_json(response, 201).await;
    let id = placed["bidId"].as_i64().unwrap();
    assert_eq!(placed["id"], id, "`id` repeats `bidId`");
    assert_eq!(location, format!("{path}/{id}"));
    assert_eq!(placed["_links"]["self"]["href"], location);
    assert_eq!(placed["amount"], 1000);
    assert_eq!(placed["bidder"]["id"], first.id);
    assert!(placed["bidder"]["nickName"].is_string());
    assert_eq!(
        placed["_links"]["svc:bidder"]["href"],
        format!("/v1/users/{}", first.id)
    );
    assert!(placed["placeDate"].as_str().unwrap().ends_with("+00:00"));
    // Every later bid beats the highest by 1% and at least one euro.
    let refused = expect_json(bid(&app, &second.token, &item, json!(1099)).await, 400).await;
    assert_eq!(
        field_codes(&refused),
        pairs(&[("amount", "not-above-highest-bid")])
    );
    expect_json(bid(&app, &second.token, &item, json!(1100)).await, 201).await;
    // A bidder may raise their own bid.
    expect_json(bid(&app, &first.token, &item, json!(1500)).await, 201).await;
    let listed = expect_json(app.get_with(&path, &seller.token).await, 200).await;
    assert_eq!(amounts(&listed), [1500, 1100, 1000], "highest first");
    assert_eq!(listed["totalCount"], 3);
    assert_eq!(listed["minimumNextBid"], 1600);
    assert_eq!(listed["_links"]["self"]["href"], path);
    assert_eq!(
        listed["_links"]["svc:advertisement"]["href"],
        format!("/v1/advertisements/{item}")
    );
    // Paginated like the other lists, under /v2 too.
    let page = expect_json(
        app.get_with(
            &format!("/v2/advertisements/{item}/bids?offset=1&limit=1"),
            &seller.token,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(amounts(&page), [1100]);
    assert_eq!(
        (page["offset"].as_i64(), page["limit"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        page["_links"]["next"]["href"],
        format!("/v2/advertisements/{item}/bids?offset=2&limit=1")
    );
    // A page past the last bid still tells how many there are and the least next bid.
    let past = expect_json(
        app.get_with(&format!("{path}?offset=10&limit=5"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(amounts(&past), [0; 0]);
    assert_eq!(past["totalCount"], 3);
    assert_eq!(past["minimumNextBid"], 1600);
    for bad in ["limit=0", "limit=101", "offset=-1", "limit=x"] {
        let error = expect_json(app.get(&format!("{path}?{bad}")).await, 400).await;
        assert_eq!(error["code"], "pagination-invalid", "{bad}");
    }
    let one = expect_json(app.get_with(&location, &first.token).await, 200).await;
    assert_eq!(one["amount"], 1000);
    // The ad links to its bids; the statistics count the accepted bids.
    let ad = expect_json(app.get(&format!("/v1/advertisements/{item}")).await, 200).await;
    assert_eq!(ad["_links"]["svc:bids"]["href"], path);
    assert_eq!(statistics(&app, &seller, &item).await["numberOfBids"], 3);
}

/// The seller and the bidder see who placed a bid; other users and client tokens see an
/// anonymous bidder, without id or link.
async fn who_sees_the_bidder(app: TestApp) {
    let OneBid {
        seller,
        bidder,
        other,
        item,
        one,
        list,
    } = one_bid(&app).await;
    for (who, token, identified) in [
        ("seller", seller.token.as_str(), true),
        ("bidder", bidder.token.as_str(), true),
        ("other user", other.token.as_str(), false),
        ("client", app.token.as_str(), false),
    ] {
        let single = expect_json(app.get_with(&one, token).await, 200).await;
        let listed = expect_json(app.get_with(&list, token).await, 200).await;
        for shown in [&single, &listed["_embedded"]["svc:bid"][0]] {
            assert_eq!(shown["amount"], 2000, "{who}");
            if identified {
                assert_eq!(shown["bidder"]["id"], bidder.id, "{who}");
                assert!(shown["_links"]["svc:bidder"].is_object(), "{who}");
            } else {
                assert_eq!(
                    shown["bidder"],
                    json!({"nickName": "Anonieme bieder"}),
                    "{who}"
                );
                assert!(shown["_links"].get("svc:bidder").is_none(), "{who}");
            }
        }
    }
    // The seller's token without `read` does not read private things: anonymous too.
    let write_only = app.token_of(&seller, Some("write")).await;
    let listed = expect_json(app.get_with(&list, &write_only).await, 200).await;
    assert!(listed["_embedded"]["svc:bid"][0]["bidder"]["id"].is_null());
    // Nor does the answer to a bid placed with such a token.
    let write_only = app.token_of(&bidder, Some("write")).await;
    let placed = expect_json(bid(&app, &write_only, &item, json!(2500)).await, 201).await;
    assert_eq!(placed["bidder"], json!({"nickName": "Anonieme bieder"}));
    assert!(placed["_links"].get("svc:bidder").is_none());
}

async fn bidding_rules_are_enforced(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let bidder = app.user("bieder@souk.test").await;
    let item = bidding_ad(&app, &seller).await;
    // Not on one's own ad.
    let own = expect_json(bid(&app, &seller.token, &item, json!(5000)).await, 403).await;
    assert_eq!(own["code"], "unauthorized");
    // At least the minimal bid.
    let low = expect_json(bid(&app, &bidder.token, &item, json!(999)).await, 400).await;
    assert_eq!(field_codes(&low), pairs(&[("amount", "below-minimal-bid")]));
    // Not on an ad of another price model.
    let fixed = ad_with(
        &app,
        &seller,
        json!({"modelType": "fixed", "askingPrice": 5000}),
    )
    .await;
    let refused = expect_json(bid(&app, &bidder.token, &fixed, json!(5000)).await, 409).await;
    assert_eq!(refused["code"], "conflicting-state");
    // Not on an ad that is not online: to a bidder it does not exist.
    let paused = bidding_ad(&app, &seller).await;
    let response = app
        .patch(&format!("/v1/advertisements/{paused}"))
        .token(&seller.token)
        .json_patch(&json!([{"op": "replace", "path": "/status", "value": "paused"}]))
        .send()
        .await;
    assert_eq!(response.status(), 200);
    let gone = expect_json(bid(&app, &bidder.token, &paused, json!(5000)).await, 404).await;
    assert_eq!(gone["code"], "advertisement-not-found");
    for path in [
        format!("/v1/advertisements/{paused}/bids"),
        format!("/v1/advertisements/{paused}/bids/1"),
    ] {
        let hidden = expect_json(app.get_with(&path, &bidder.token).await, 404).await;
        assert_eq!(hidden["code"], "advertisement-not-found", "{path}");
    }
    let unknown = expect_json(
        bid(&app, &bidder.token, "m99999999", json!(5000)).await,
        404,
    )
    .await;
    assert_eq!(unknown["code"], "advertisement-not-found");
    // A confirmed user only.
    let unconfirmed = app.unconfirmed_user_token("nieuw@souk.test").await;
    let early = expect_json(bid(&app, &unconfirmed, &item, json!(5000)).await, 403).await;
    assert_eq!(early["code"], "user-not-confirmed");
    // A user token with `write`: not `read` alone, not a client token.
    let read_only = app.token_of(&bidder, Some("read")).await;
    for token in [read_only.as_str(), app.token.as_str()] {
        let error = expect_json(bid(&app, token, &item, json!(5000)).await, 403).await;
        assert_eq!(error["code"], "unauthorized");
    }
    let anonymous = app
        .post(&format!("/v1/advertisements/{item}/bids"))
        .json(&json!({"amount": 5000}))
        .send()
        .await;
    expect_json(anonymous, 401).await;
    // Whoever may not bid learns nothing about the body.
    let broken = app
        .post(&format!("/v1/advertisements/{item}/bids"))
        .token(&seller.token)
        .body("application/json", "{\"amount\": ")
        .send()
        .await;
    assert_eq!(expect_json(broken, 403).await["code"], "unauthorized");
    // None of it was stored or counted.
    assert!(stored_bids(&app, &item).await.is_empty());
    assert!(stored_bids(&app, &fixed).await.is_empty());
    assert_eq!(statistics(&app, &seller, &item).await["numberOfBids"], 0);
}

/// Malformed amounts and bodies are 400 with the documented codes, never a 500, and store
/// nothing.
async fn bad_bids_change_nothing(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let bidder = app.user("bieder@souk.test").await;
    let item = bidding_ad(&app, &seller).await;
    for amount in [
        json!("5000"),
        json!(50.5),
        json!(0),
        json!(-5000),
        json!(1_000_000_001_i64),
        json!(i64::MAX),
        json!([5000]),
    ] {
        let error = expect_json(bid(&app, &bidder.token, &item, amount.clone()).await, 400).await;
        assert_eq!(
            field_codes(&error),
            pairs(&[("amount", "invalid-value")]),
            "{amount}"
        );
    }
    let missing = app
        .post(&format!("/v1/advertisements/{item}/bids"))
        .token(&bidder.token)
        .json(&json!({}))
        .send()
        .await;
    assert_eq!(
        field_codes(&expect_json(missing, 400).await),
        pairs(&[("amount", "missing")])
    );
    for (content_type, body, code) in [
        ("application/json", "{\"amount\": ", "invalid-json"),
        ("application/json", "[1, 2]", "invalid-json"),
        ("text/plain", "{\"amount\": 5000}", "incorrect-content-type"),
    ] {
        let response = app
            .post(&format!("/v1/advertisements/{item}/bids"))
            .token(&bidder.token)
            .body(content_type, body)
            .send()
            .await;
        assert_eq!(expect_json(response, 400).await["code"], code, "{body}");
    }
    let bad_id = expect_json(
        app.get(&format!("/v1/advertisements/{item}/bids/abc"))
            .await,
        400,
    )
    .await;
    assert_eq!(field_codes(&bad_id), pairs(&[("bidId", "not-a-number")]));
    let bad_item = expect_json(app.get("/v1/advertisements/x1/bids").await, 400).await;
    assert_eq!(
        field_codes(&bad_item),
        pairs(&[("itemId", "invalid-item-id")])
    );
    assert!(stored_bids(&app, &item).await.is_empty());
    assert_eq!(statistics(&app, &seller, &item).await["numberOfBids"], 0);
}

async fn withdrawing_and_removing_bids(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let bidder = app.user("bieder@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let item = bidding_ad(&app, &seller).await;
    let low = expect_json(bid(&app, &other.token, &item, json!(1000)).await, 201).await;
    let high = expect_json(bid(&app, &bidder.token, &item, json!(3000)).await, 201).await;
    let low = format!("/v1/advertisements/{item}/bids/{}", low["bidId"]);
    let high = format!("/v1/advertisements/{item}/bids/{}", high["bidId"]);
    // Someone else's bid is not another user's to withdraw.
    let refused = expect_json(app.delete(&high).token(&other.token).send().await, 403).await;
    assert_eq!(refused["code"], "unauthorized");
    let read_only = app.token_of(&bidder, Some("read")).await;
    expect_json(app.delete(&high).token(&read_only).send().await, 403).await;
    expect_json(app.delete(&high).token(&app.token).send().await, 403).await;
    // The bidder withdraws: 200 with the bid as it was; then it is gone.
    let withdrawn = expect_json(app.delete(&high).token(&bidder.token).send().await, 200).await;
    assert_eq!(withdrawn["amount"], 3000);
    assert_eq!(withdrawn["bidder"]["id"], bidder.id, "the bidder's own bid");
    for token in [&bidder.token, &seller.token] {
        let again = expect_json(app.delete(&high).token(token).send().await, 404).await;
        assert_eq!(again["code"], "bid-not-found");
    }
    let gone = expect_json(app.get(&high).await, 404).await;
    assert_eq!(gone["code"], "bid-not-found");
    let unknown = expect_json(
        app.get(&format!("/v1/advertisements/{item}/bids/999999"))
            .await,
        404,
    )
    .await;
    assert_eq!(unknown["code"], "bid-not-found");
    // The highest left is the bar again.
    let listed = expect_json(
        app.get(&format!("/v1/advertisements/{item}/bids")).await,
        200,
    )
    .await;
    assert_eq!(amounts(&listed), [1000]);
    assert_eq!(listed["minimumNextBid"], 1100);
    // A bid is not found under another ad.
    let elsewhere = bidding_ad(&app, &seller).await;
    let path = low.replace(&item, &elsewhere);
    let wrong_ad = expect_json(app.delete(&path).token(&other.token).send().await, 404).await;
    assert_eq!(wrong_ad["code"], "bid-not-found");
    // The seller removes a bid; with a token without `read` the answer does not say whose
    // it was, as no read with that token would.
    let write_only = app.token_of(&seller, Some("write")).await;
    let removed = expect_json(app.delete(&low).token(&write_only).send().await, 200).await;
    assert_eq!(removed["amount"], 1000);
    assert_eq!(removed["bidder"], json!({"nickName": "Anonieme bieder"}));
    assert!(removed["_links"].get("svc:bidder").is_none());
    assert!(stored_bids(&app, &item).await.is_empty());
    // Bids placed still count in the statistics.
    assert_eq!(statistics(&app, &seller, &item).await["numberOfBids"], 2);
}

async fn the_seller_asks_a_bidder_by_mail(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let bidder = app.user("bieder@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let item = bidding_ad(&app, &seller).await;
    let placed = expect_json(bid(&app, &bidder.token, &item, json!(2500)).await, 201).await;
    let ask = format!(
        "/v1/advertisements/{item}/bids/{}/actions/ask-bidder-question",
        placed["bidId"]
    );
    let before = app.outbox().await.len();
    let question = json!({"message": "Kun je zaterdag ophalen?", "phoneNumber": "0612345678"});
    // Only the seller asks; neither the bidder nor anyone else, nor without `write`.
    let read_only = app.token_of(&seller, Some("read")).await;
    for token in [&bidder.token, &other.token, &read_only, &app.token] {
        let refused = expect_json(
            app.post(&ask).token(token).json(&question).send().await,
            403,
        )
        .await;
        assert_eq!(refused["code"], "unauthorized");
    }
    let bad = expect_json(
        app.post(&ask)
            .token(&seller.token)
            .json(&json!({"message": "", "phoneNumber": "bel me"}))
            .send()
            .await,
        400,
    )
    .await;
    assert_eq!(
        field_codes(&bad),
        pairs(&[
            ("message", "invalid-length"),
            ("phoneNumber", "invalid-phone-number")
        ])
    );
    let unknown = ask.replace(&format!("/bids/{}/", placed["bidId"]), "/bids/999999/");
    let missing = expect_json(
        app.post(&unknown)
            .token(&seller.token)
            .json(&question)
            .send()
            .await,
        404,
    )
    .await;
    assert_eq!(missing["code"], "bid-not-found");
    assert_eq!(
        app.outbox().await.len(),
        before,
        "no refusal mails anything"
    );
    assert_eq!(statistics(&app, &seller, &item).await["numberOfAsqs"], 0);
    let answer = expect_json(
        app.post(&ask)
            .token(&seller.token)
            .json(&question)
            .send()
            .await,
        200,
    )
    .await;
    assert!(answer["message"].is_string());
    let mails = app.outbox().await;
    assert_eq!(mails.len(), before + 1);
    let mail = mails.last().unwrap();
    assert!(mail.starts_with("To: bieder@souk.test\n"), "{mail}");
    assert!(mail.contains("Kun je zaterdag ophalen?"), "{mail}");
    assert!(mail.contains("0612345678"), "{mail}");
    assert!(mail.contains("25,00"), "{mail}");
    assert!(
        !mail.contains("verkoper@souk.test"),
        "the seller's address stays private"
    );
    assert_eq!(statistics(&app, &seller, &item).await["numberOfAsqs"], 1);
}

/// Many bidders at once on one ad (R4 in small): every request is answered 201 or 400
/// with a documented code; what is stored is exactly what was accepted, nothing twice;
/// in the order they were stored each accepted bid beats the one before by the rule, so
/// no two bids ever beat the same highest. Then all bid the same amount at once: one wins.
async fn many_bidders_at_once_lose_nothing_and_break_no_rule(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let mut bidders = Vec::new();
    for n in 0..12 {
        bidders.push(app.user(&format!("bieder{n}@souk.test")).await);
    }
    let item = bidding_ad(&app, &seller).await;
    // Amounts a euro apart, sent in a scrambled order, two per bidder.
    let mut amounts_sent: Vec<i64> = (0..24).map(|k| 1000 + (k * 7 % 24) * 100).collect();
    amounts_sent.rotate_left(5);
    let mut running = tokio::task::JoinSet::new();
    for (n, amount) in amounts_sent.iter().enumerate() {
        let bidder = &bidders[n % bidders.len()];
        let request = app
            .post(&format!("/v1/advertisements/{item}/bids"))
            .token(&bidder.token)
            .json(&json!({"amount": amount}))
            .send();
        let (bidder_id, amount) = (bidder.id, *amount);
        running.spawn(async move { (bidder_id, amount, request.await) });
    }
    let mut accepted = Vec::new();
    while let Some(done) = running.join_next().await {
        let (bidder_id, amount, response) = done.unwrap();
        match response.status().as_u16() {
            201 => {
                let body = expect_json(response, 201).await;
                assert_eq!(body["amount"], amount);
                accepted.push((body["bidId"].as_i64().unwrap(), bidder_id, amount));
            }
            _ => {
                let error = expect_json(response, 400).await;
                let codes = field_codes(&error);
                assert_eq!(codes.len(), 1, "{error}");
                assert!(
                    ["not-above-highest-bid", "below-minimal-bid"].contains(&codes[0].1.as_str()),
                    "{error}"
                );
            }
        }
    }
    accepted.sort();
    let stored = stored_bids(&app, &item).await;
    assert_eq!(stored, accepted, "stored exactly what was accepted");
    assert!(!stored.is_empty());
    let mut highest: Option<i64> = None;
    for &(_, _, amount) in &stored {
        let minimum = souk::domain::bid::minimum_bid(1000, highest);
        assert!(amount >= minimum, "{amount} after {highest:?}: {stored:?}");
        highest = Some(amount);
    }
    assert_eq!(
        statistics(&app, &seller, &item).await["numberOfBids"],
        stored.len(),
        "refused bids are not counted"
    );
    // The same amount from everyone at once: exactly one beats the highest.
    let next = souk::domain::bid::minimum_bid(1000, highest);
    let mut running = tokio::task::JoinSet::new();
    for bidder in &bidders {
        running.spawn(bid_owned(&app, &bidder.token, &item, next));
    }
    let mut statuses = Vec::new();
    while let Some(done) = running.join_next().await {
        statuses.push(done.unwrap());
    }
    statuses.sort();
    let mut expected = vec![400; bidders.len() - 1];
    expected.insert(0, 201);
    assert_eq!(statuses, expected);
    assert_eq!(stored_bids(&app, &item).await.len(), stored.len() + 1);
}

/// A bid sent from a task of its own; its status.
fn bid_owned(
    app: &TestApp,
    token: &str,
    item: &str,
    amount: i64,
) -> impl std::future::Future<Output = u16> + Send + 'static {
    let request = app
        .post(&format!("/v1/advertisements/{item}/bids"))
        .token(token)
        .json(&json!({"amount": amount}))
        .send();
    async move { request.await.status().as_u16() }
}

/// A seller who raises the minimal bid past the bids standing raises the bar: a bid below
/// it is refused as `below-minimal-bid`, naming it (it was `not-above-highest-bid`, as if
/// the highest bid's step were that far), and one at it is taken.
async fn a_minimal_bid_raised_past_the_bids_is_the_bar(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let bidder = app.user("bieder@souk.test").await;
    let item = bidding_ad(&app, &seller).await;
    expect_json(bid(&app, &bidder.token, &item, json!(1000)).await, 201).await;
    let raised = json!([{"op": "replace", "path": "/priceModel/minimalBid", "value": 5000}]);
    let patched = app
        .patch(&format!("/v1/advertisements/{item}"))
        .token(&seller.token)
        .json_patch(&raised)
        .send()
        .await;
    expect_json(patched, 200).await;
    let below = expect_json(bid(&app, &bidder.token, &item, json!(1100)).await, 400).await;
    assert_eq!(
        field_codes(&below),
        pairs(&[("amount", "below-minimal-bid")])
    );
    assert!(
        below["details"][0]["message"]
            .as_str()
            .unwrap()
            .contains("5000"),
        "{below}"
    );
    expect_json(bid(&app, &bidder.token, &item, json!(5000)).await, 201).await;
}
