//! Who may change an ad and see what only its seller sees, and the ETags that guard changes.

use reqwest::Method;
use serde_json::{Value, json};

use super::{create, created, delete, json_patch, minimal, put};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json};

both_backends!(
    only_the_seller_changes_an_ad,
    etags_guard_changes,
    the_sellers_view_needs_read,
    an_ads_tag_follows_its_images,
);

async fn only_the_seller_changes_an_ad(app: TestApp) {
    let owner = app.user("eigenaar@souk.test").await;
    let other = app.user("ander@souk.test").await;
    let ad = created(&app, &owner.token, &minimal("Van de eigenaar")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    expect_json(app.get_with(&path, &other.token).await, 200).await;
    expect_json(app.get(&path).await, 200).await;
    for token in [other.token.as_str(), app.token.as_str()] {
        let put = put(&app, token, &path, &minimal("Gekaapt")).await;
        assert_eq!(expect_json(put, 403).await["code"], "unauthorized");
        let patch = json_patch(
            &app,
            token,
            &path,
            json!([{"op": "replace", "path": "/title", "value": "Gekaapt"}]),
            None,
        )
        .await;
        assert_eq!(expect_json(patch, 403).await["code"], "unauthorized");
        let delete = delete(&app, token, &path).await;
        assert_eq!(expect_json(delete, 403).await["code"], "unauthorized");
    }
    assert_eq!(
        expect_json(
            create(&app, &app.token, &minimal("Door een client")).await,
            403
        )
        .await["code"],
        "unauthorized"
    );
    assert_eq!(
        expect_json(app.get("/v1/advertisements").await, 403).await["code"],
        "unauthorized"
    );
    assert_eq!(app.get_json(&path, 200).await["title"], "Van de eigenaar");
    // A draft is the seller's alone.
    let mut draft = minimal("Nog niet klaar");
    draft["status"] = json!("draft");
    let draft = created(&app, &owner.token, &draft).await;
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap();
    assert_eq!(draft["status"], "draft");
    assert!(draft["startDate"].is_null());
    expect_json(app.get_with(draft_path, &owner.token).await, 200).await;
    expect_json(app.get_with(draft_path, &other.token).await, 404).await;
    let put = put(&app, &other.token, draft_path, &minimal("x y")).await;
    expect_json(put, 404).await;
}

async fn etags_guard_changes(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let first = create(&app, &seller.token, &minimal("Met ETag")).await;
    let tag = first.headers()["etag"].to_str().unwrap().to_owned();
    let path = expect_json(first, 201).await["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = app.get_with(&path, &seller.token).await;
    assert_eq!(read.headers()["etag"].to_str().unwrap(), tag);
    // Anyone else reads a shorter body, under a tag of its own: a client that switches
    // between the two never has one answered 304 with the other.
    let public = app.get(&path).await;
    let public_tag = public.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(public_tag, tag);
    let as_seller = app
        .request(Method::GET, &path)
        .token(&seller.token)
        .header("if-none-match", &public_tag)
        .send()
        .await;
    assert_eq!(as_seller.status(), 200);
    let public_patch = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Publiek"}]),
        Some(&public_tag),
    )
    .await;
    assert_eq!(
        expect_json(public_patch, 412).await["code"],
        "precondition-failed"
    );
    let cached = app
        .request(Method::GET, &path)
        .token(&seller.token)
        .header("if-none-match", &tag)
        .send()
        .await;
    assert_eq!(cached.status(), 304);
    // If-None-Match compares weakly: the weak form of the tag matches too.
    let weakly = app
        .request(Method::GET, &path)
        .token(&seller.token)
        .header("if-none-match", format!("W/{tag}"))
        .send()
        .await;
    assert_eq!(weakly.status(), 304);
    // If-Match compares strongly: a weak tag never matches, and nothing changes.
    let weak = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Zwak"}]),
        Some(&format!("W/{tag}")),
    )
    .await;
    assert_eq!(expect_json(weak, 412).await["code"], "precondition-failed");
    let unchanged = app.get_with(&path, &seller.token).await;
    assert_eq!(unchanged.headers()["etag"].to_str().unwrap(), tag);
    assert_eq!(expect_json(unchanged, 200).await["title"], "Met ETag");
    let changed = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Eerste wijziging"}]),
        Some(&tag),
    )
    .await;
    let new_tag = changed.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(new_tag, tag);
    expect_json(changed, 200).await;
    let stale = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Tweede wijziging"}]),
        Some(&tag),
    )
    .await;
    assert_eq!(expect_json(stale, 412).await["code"], "precondition-failed");
    let put = app
        .put(&path)
        .token(&seller.token)
        .header("if-match", &tag)
        .json(&minimal("Derde"))
        .send()
        .await;
    expect_json(put, 412).await;
    let delete = app
        .delete(&path)
        .token(&seller.token)
        .header("if-match", &tag)
        .send()
        .await;
    expect_json(delete, 412).await;
    assert_eq!(app.get_json(&path, 200).await["title"], "Eerste wijziging");
    // A PUT answers with the new ETag, the one a read then gives, and a matching If-Match
    // lets it through.
    let mut body = minimal("Vierde");
    body["frameSize"] = json!(50);
    let put = app
        .put(&path)
        .token(&seller.token)
        .header("if-match", &new_tag)
        .json(&body)
        .send()
        .await;
    let put_tag = put.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(put_tag, new_tag);
    assert_eq!(expect_json(put, 200).await["title"], "Vierde");
    // Two `If-Match` lines are one list (RFC 9110): the current tag on the second matches.
    let two_lines = app
        .patch(&path)
        .token(&seller.token)
        .header("if-match", &tag)
        .header("if-match", &put_tag)
        .json_patch(&json!([{"op": "replace", "path": "/title", "value": "Vierde"}]))
        .send()
        .await;
    let put_tag = two_lines.headers()["etag"].to_str().unwrap().to_owned();
    expect_json(two_lines, 200).await;
    let read = app.get_with(&path, &seller.token).await;
    assert_eq!(read.headers()["etag"].to_str().unwrap(), put_tag);
    let wrong_type = app
        .patch(&path)
        .token(&seller.token)
        .json(&json!([{"op": "replace", "path": "/title", "value": "x"}]))
        .send()
        .await;
    assert_eq!(
        expect_json(wrong_type, 400).await["code"],
        "incorrect-content-type"
    );
    let failed = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "remove", "path": "/nothing"}]),
        None,
    )
    .await;
    assert_eq!(
        expect_json(failed, 400).await["details"][0]["code"],
        "patch-failed"
    );
    // A `move` that fails half way (which json-patch's undo cannot take back), copies of
    // the whole ad into itself (each doubles it), too many operations, a document nested
    // too deep and one that is no longer an object: refused alike, and the ad is as it
    // was.
    let doubling: Vec<Value> = (0..40)
        .map(|n| json!({"op": "copy", "from": "", "path": format!("/a{n}")}))
        .collect();
    let many: Vec<Value> = (0..101)
        .map(|_| json!({"op": "replace", "path": "/title", "value": "Veel"}))
        .collect();
    // Copies of a member into its own innermost member double its depth each time: 17 of
    // them build 65,536 levels in a few hundred KB, which overflowed the stack and aborted
    // the server. An added value can be deep too.
    let mut deepening = vec![json!({"op": "add", "path": "/x", "value": {}})];
    deepening.extend(
        (1..=17)
            .map(|k| json!({"op": "copy", "from": "/x", "path": "/x".repeat((1 << (k - 1)) + 1)})),
    );
    let nested = (0..100).fold(json!({}), |inner, _| json!({ "y": inner }));
    let piled = json!([{"op": "add", "path": "/y", "value": nested}]);
    for patch in [
        json!([{"op": "add", "path": "/location/x", "value": 1},
               {"op": "move", "from": "/location", "path": "/nope/y"}]),
        Value::Array(doubling),
        Value::Array(many),
        Value::Array(deepening),
        piled,
        json!([{"op": "replace", "path": "", "value": []}]),
    ] {
        let moves = patch[1]["op"] == "move";
        let refused = json_patch(&app, &seller.token, &path, patch, None).await;
        let body = expect_json(refused, 400).await;
        assert_eq!(body["details"][0]["code"], "patch-failed", "{body}");
        if moves {
            let said = body["details"][0].to_string();
            assert!(
                said.contains("operation '/1'"),
                "names the failed one: {said}"
            );
        }
    }
    // An If-Match that is not text names no ETag: it matches nothing.
    let not_text = app
        .put(&path)
        .token(&seller.token)
        .header("if-match", "\"é\"")
        .json(&minimal("Vijfde"))
        .send()
        .await;
    expect_json(not_text, 412).await;
    let read = app.get_with(&path, &seller.token).await;
    assert_eq!(read.headers()["etag"].to_str().unwrap(), put_tag);
}

/// What only the seller sees (drafts and other states, the rejection reason) needs a token
/// with `read`, like every private field; with `write` alone the seller sees what anyone
/// sees. Its own reads are no views.
async fn the_sellers_view_needs_read(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let write_only = app.token_of(&seller, Some("write")).await;
    let mut draft = minimal("Concept");
    draft["status"] = json!("draft");
    let draft = created(&app, &write_only, &draft).await;
    let draft_path = draft["_links"]["self"]["href"].as_str().unwrap();
    expect_json(app.get_with(draft_path, &seller.token).await, 200).await;
    assert_eq!(
        expect_json(app.get_with(draft_path, &write_only).await, 404).await["code"],
        "advertisement-not-found"
    );
    let online = created(&app, &write_only, &minimal("Online")).await;
    let path = online["_links"]["self"]["href"].as_str().unwrap();
    expect_json(app.get_with(path, &write_only).await, 200).await;
    let stats = expect_json(
        app.get_with(&format!("{path}/statistics"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(stats["numberOfViews"], 0, "the seller's reads are no views");
}

/// An ad's ETag changes with its images, which are rows of their own: an image added, and
/// then made available, each give a new tag, so a client that polls with `If-None-Match`
/// sees them (it was answered 304 for good), and an `If-Match` of the tag from before is
/// stale.
async fn an_ads_tag_follows_its_images(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let created = created(&app, &seller.token, &minimal("Met foto")).await;
    let path = created["_links"]["self"]["href"]
        .as_str()
        .unwrap()
        .to_owned();
    let item = created["itemId"].as_str().unwrap().to_owned();
    // The tag and the first image's status, from one answer.
    let read = |path: String| {
        let app = &app;
        let token = seller.token.clone();
        async move {
            let read = app.get_with(&path, &token).await;
            let tag = read.headers()["etag"].to_str().unwrap().to_owned();
            let body = expect_json(read, 200).await;
            let status = body["_embedded"]["svc:advertisement-images"]["_embedded"]
                ["svc:advertisement-image"][0]["status"]
                .as_str()
                .map(str::to_owned);
            (tag, status)
        }
    };
    let (bare, _) = read(path.clone()).await;
    let media_id = crate::images::new_image(&app, &seller.token, &item).await;
    let (added, status) = read(path.clone()).await;
    assert!(status.is_some(), "the image is embedded");
    assert_ne!(added, bare, "an image added");
    let polled = app
        .request(Method::GET, &path)
        .token(&seller.token)
        .header("if-none-match", &bare)
        .send()
        .await;
    let polled = expect_json(polled, 200).await;
    let images = crate::images::media_ids(&polled["_embedded"]["svc:advertisement-images"]);
    assert_eq!(images, std::slice::from_ref(&media_id));
    let stale = json_patch(
        &app,
        &seller.token,
        &path,
        json!([{"op": "replace", "path": "/title", "value": "Oud"}]),
        Some(&bare),
    )
    .await;
    assert_eq!(expect_json(stale, 412).await["code"], "precondition-failed");
    crate::images::wait_until_available(&app, &seller.token, &media_id).await;
    let (available, _) = read(path.clone()).await;
    // The worker may have made it available before the read above saw it processing.
    if status.as_deref() == Some("processing") {
        assert_ne!(available, added, "the image made available");
    }
    assert_eq!(
        read(path).await.0,
        available,
        "and stable while nothing changes"
    );
}
