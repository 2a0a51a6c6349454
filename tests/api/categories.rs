use reqwest::Method;
use serde_json::Value;

use crate::both_backends;
use crate::helpers::{Backend, TestApp, expect_json, fields};

both_backends!(
    tree_has_l1_with_children,
    one_category_by_every_address,
    leaf_must_be_a_child_of_its_l1,
    malformed_ids_are_field_errors,
    attributes_have_the_documented_fields,
    fees_have_the_documented_shape,
    etag_and_if_none_match,
    v2_links_stay_under_v2,
    links_can_be_left_out,
);

async fn tree_has_l1_with_children(app: TestApp) {
    let body = app.get_json("/v1/categories", 200).await;
    assert_eq!(body["_links"]["self"]["href"], "/v1/categories");
    let l1s = body["_embedded"]["svc:category"]
        .as_array()
        .expect("L1 list");
    assert!(l1s.len() >= 15, "{} L1 categories", l1s.len());
    let mut leaves = 0;
    for l1 in l1s {
        let id = l1["categoryId"].as_i64().expect("id");
        assert_eq!(l1["_links"]["self"]["href"], format!("/v1/categories/{id}"));
        assert_eq!(l1["_links"]["up"]["href"], "/v1/categories");
        for locale in ["nl-NL", "nl-BE", "fr-BE"] {
            assert!(l1["labels"][locale].as_str().is_some_and(|l| !l.is_empty()));
        }
        assert_eq!(
            l1["name"], l1["labels"]["nl-NL"],
            "name is in the region's locale"
        );
        let children = l1["_embedded"]["svc:category"]
            .as_array()
            .expect("children");
        assert!(!children.is_empty());
        for l2 in children {
            let l2_id = l2["categoryId"].as_i64().unwrap();
            let path = format!("/v1/categories/{id}/{l2_id}");
            assert_eq!(l2["_links"]["self"]["href"], path);
            assert_eq!(
                l2["_links"]["svc:category-attributes"]["href"],
                format!("{path}/attributes")
            );
            assert_eq!(
                l2["_links"]["svc:category-fees"]["href"],
                format!("{path}/fees")
            );
            assert!(["open", "closed"].contains(&l2["status"].as_str().unwrap()));
            leaves += 1;
        }
    }
    assert!(leaves >= 100, "{leaves} leaves");
}

/// The first L1 category and its first child, from the tree.
async fn first_pair(app: &TestApp) -> (i64, i64) {
    let body = app.get_json("/v1/categories", 200).await;
    let l1 = &body["_embedded"]["svc:category"][0];
    (
        l1["categoryId"].as_i64().unwrap(),
        l1["_embedded"]["svc:category"][0]["categoryId"]
            .as_i64()
            .unwrap(),
    )
}

async fn one_category_by_every_address(app: TestApp) {
    let (l1, l2) = first_pair(&app).await;
    let by_path = app.get_json(&format!("/v1/categories/{l1}"), 200).await;
    assert_eq!(by_path["categoryId"], l1);
    assert!(
        by_path["_embedded"]["svc:category"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    let by_query = app
        .get_json(&format!("/v1/categories?categoryId={l1}"), 200)
        .await;
    assert_eq!(by_query, by_path);
    let leaf = app
        .get_json(&format!("/v1/categories/{l1}/{l2}"), 200)
        .await;
    assert_eq!(leaf["categoryId"], l2);
    assert_eq!(leaf["_links"]["up"]["href"], format!("/v1/categories/{l1}"));
    assert!(leaf.get("_embedded").is_none());
    let leaf_by_id = app.get_json(&format!("/v1/categories/{l2}"), 200).await;
    assert_eq!(leaf_by_id, leaf, "a leaf answers by its own id too");
    let missing = app.get_json("/v1/categories/999999", 404).await;
    assert_eq!(missing["code"], "category-not-found");
    let missing = app.get_json("/v1/categories?categoryId=999999", 404).await;
    assert_eq!(missing["code"], "category-not-found");
}

async fn leaf_must_be_a_child_of_its_l1(app: TestApp) {
    let body = app.get_json("/v1/categories", 200).await;
    let l1s = body["_embedded"]["svc:category"].as_array().unwrap();
    let other_l1 = l1s[1]["categoryId"].as_i64().unwrap();
    let l2_of_first = l1s[0]["_embedded"]["svc:category"][0]["categoryId"]
        .as_i64()
        .unwrap();
    let l1 = l1s[0]["categoryId"].as_i64().unwrap();
    for suffix in ["", "/attributes", "/fees"] {
        let wrong = app
            .get_json(
                &format!("/v1/categories/{other_l1}/{l2_of_first}{suffix}"),
                404,
            )
            .await;
        assert_eq!(wrong["code"], "category-not-found");
        // An L1 in the place of the L2 is no leaf either.
        let wrong = app
            .get_json(&format!("/v1/categories/{l1}/{other_l1}{suffix}"), 404)
            .await;
        assert_eq!(wrong["code"], "category-not-found");
    }
}

async fn malformed_ids_are_field_errors(app: TestApp) {
    let body = app.get_json("/v1/categories/cars", 400).await;
    assert_eq!(body["code"], "validation-failure");
    assert_eq!(body["details"][0]["field"], "categoryId");
    assert_eq!(body["details"][0]["value"], "cars");
    let body = app.get_json("/v1/categories?categoryId=x1", 400).await;
    assert_eq!(body["details"][0]["field"], "categoryId");
    let body = app.get_json("/v1/categories/a/b/fees", 400).await;
    assert_eq!(
        fields(&body),
        ["l1CategoryId", "l2CategoryId"],
        "both ids reported at once"
    );
    let body = app.get_json("/v1/categories/1/-5/attributes", 400).await;
    assert_eq!(body["details"][0]["field"], "l2CategoryId");
    // One id has one spelling: no sign, no leading zero (they answered as the id itself).
    for path in ["/v1/categories/01", "/v1/categories/%2B1", "/v1/users/007"] {
        let body = app.get_json(path, 400).await;
        assert_eq!(body["details"][0]["code"], "not-a-number", "{path}");
    }
    let body = app.get_json("/v1/search?categoryId=01", 400).await;
    assert_eq!(body["details"][0]["field"], "categoryId");
}

async fn attributes_have_the_documented_fields(app: TestApp) {
    let tree = app.get_json("/v1/categories", 200).await;
    let mut types_seen = std::collections::BTreeSet::new();
    for l1 in tree["_embedded"]["svc:category"].as_array().unwrap() {
        for l2 in l1["_embedded"]["svc:category"].as_array().unwrap() {
            let path = l2["_links"]["svc:category-attributes"]["href"]
                .as_str()
                .unwrap();
            let body = app.get_json(path, 200).await;
            assert_eq!(body["_links"]["self"]["href"], path);
            for field in body["fields"].as_array().expect("fields") {
                for key in ["key", "label", "type"] {
                    assert!(field[key].is_string(), "{key} in {field}");
                }
                for key in ["mandatory", "searchable", "writable", "updateable"] {
                    assert!(field[key].is_boolean(), "{key} in {field}");
                }
                assert!(field["values"].is_array() && field["options"].is_array());
                assert!(field["units"].is_array());
                let kind = field["type"].as_str().unwrap();
                types_seen.insert(kind.to_owned());
                let options = field["options"].as_array().unwrap();
                if kind == "LIST" {
                    assert!(options.len() >= 2);
                    let values: Vec<&Value> = options.iter().map(|o| &o["key"]).collect();
                    let listed: Vec<&Value> = field["values"].as_array().unwrap().iter().collect();
                    assert_eq!(values, listed);
                    assert!(options[0]["labels"]["fr-BE"].is_string());
                } else {
                    assert!(options.is_empty());
                }
                if let (Some(min), Some(max)) =
                    (field["minValue"].as_f64(), field["maxValue"].as_f64())
                {
                    assert!(min <= max);
                }
            }
        }
    }
    assert_eq!(
        types_seen.into_iter().collect::<Vec<_>>(),
        ["DOUBLE", "LIST", "NUMBER", "STRING"],
        "the taxonomy uses all four types"
    );
}

async fn fees_have_the_documented_shape(app: TestApp) {
    let (l1, l2) = first_pair(&app).await;
    let path = format!("/v1/categories/{l1}/{l2}/fees");
    let body = app.get_json(&path, 200).await;
    assert_eq!(body["_links"]["self"]["href"], path);
    assert!(
        body["_links"]["describedby"]["href"]
            .as_str()
            .unwrap()
            .ends_with("/docs/resources/category-fees")
    );
    assert_eq!(body["_links"]["curies"][0]["name"], "svc");
    assert!(body["insertionFee"].as_i64().is_some_and(|f| f >= 0));
    for subscription in body["runningSubscriptions"].as_array().expect("array") {
        assert!(subscription["durationDays"].as_i64().is_some_and(|d| d > 0));
        assert!(subscription["fee"].as_i64().is_some_and(|f| f >= 0));
    }
    // Somewhere in the taxonomy there are paid insertions and subscriptions.
    let tree = app.get_json("/v1/categories", 200).await;
    let (mut paid, mut subscriptions) = (false, false);
    for l1 in tree["_embedded"]["svc:category"].as_array().unwrap() {
        for l2 in l1["_embedded"]["svc:category"].as_array().unwrap() {
            let fees = app
                .get_json(
                    l2["_links"]["svc:category-fees"]["href"].as_str().unwrap(),
                    200,
                )
                .await;
            paid |= fees["insertionFee"].as_i64().unwrap() > 0;
            subscriptions |= !fees["runningSubscriptions"].as_array().unwrap().is_empty();
        }
    }
    assert!(paid && subscriptions);
}

async fn etag_and_if_none_match(app: TestApp) {
    let (l1, l2) = first_pair(&app).await;
    for path in [
        "/v1/categories".to_owned(),
        format!("/v1/categories/{l1}"),
        format!("/v1/categories/{l1}/{l2}/attributes"),
        format!("/v1/categories/{l1}/{l2}/fees"),
    ] {
        let first = app.get(&path).await;
        assert_eq!(first.status(), 200);
        let etag = first.headers()["etag"].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.ends_with('"'));
        let again = app
            .request(Method::GET, &path)
            .token(&app.token)
            .header("If-None-Match", &etag)
            .send()
            .await;
        assert_eq!(again.status(), 304, "{path}");
        assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
        assert!(again.bytes().await.unwrap().is_empty());
        let other = app
            .request(Method::GET, &path)
            .token(&app.token)
            .header("If-None-Match", "\"something-else\"")
            .send()
            .await;
        assert_eq!(other.status(), 200);
    }
}

async fn v2_links_stay_under_v2(app: TestApp) {
    let (l1, l2) = first_pair(&app).await;
    let body = app.get_json(&format!("/v2/categories/{l1}"), 200).await;
    assert_eq!(
        body["_links"]["self"]["href"],
        format!("/v2/categories/{l1}")
    );
    let child = &body["_embedded"]["svc:category"][0];
    assert_eq!(
        child["_links"]["svc:category-fees"]["href"],
        format!("/v2/categories/{l1}/{l2}/fees")
    );
    let root = app.get_json("/v2", 200).await;
    assert_eq!(root["_links"]["svc:categories"]["href"], "/v2/categories");
}

async fn links_can_be_left_out(app: TestApp) {
    let body = app.get_json("/v1/categories?_links=false", 200).await;
    let text = body.to_string();
    assert!(!text.contains("_links"), "no _links anywhere");
    assert!(body["_embedded"]["svc:category"][0]["_embedded"].is_object());
    let response = app.get("/v1/categories/x?_links=false").await;
    let error = expect_json(response, 400).await;
    assert_eq!(error["code"], "validation-failure");
    assert!(error.get("_links").is_none());
}

#[tokio::test]
async fn curie_prefix_is_a_setting() {
    let app = TestApp::start_with(
        Backend::Sqlite,
        "curie_prefix",
        &[("SOUK_CURIE_PREFIX", "mp")],
    )
    .await;
    let body = app.get_json("/v1/categories", 200).await;
    assert_eq!(body["_links"]["curies"][0]["name"], "mp");
    let l1 = &body["_embedded"]["mp:category"][0];
    assert!(l1["_embedded"]["mp:category"][0]["_links"]["mp:category-fees"].is_object());
    assert!(
        !body.to_string().contains("svc:"),
        "every prefixed key follows the setting"
    );
    let root = app.get_json("/v1", 200).await;
    assert!(root["_links"]["mp:search"].is_object());
    let document = app.get_json("/openapi.json", 200).await.to_string();
    assert!(document.contains("mp:category") && !document.contains("svc:"));
}

#[tokio::test]
async fn names_and_messages_follow_the_region() {
    let app = TestApp::start_with(Backend::Sqlite, "region", &[("SOUK_REGION", "fr-BE")]).await;
    let body = app.get_json("/v1/categories", 200).await;
    let l1 = &body["_embedded"]["svc:category"][0];
    assert_eq!(l1["name"], l1["labels"]["fr-BE"]);
    let response = app.get("/v1/categories/999999").await;
    assert_eq!(response.headers()["content-language"], "fr-BE");
    let error = expect_json(response, 404).await;
    assert_eq!(error["message"], "Catégorie introuvable");
}
