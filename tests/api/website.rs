//! The advertisement's page on the website (`/a/{itemId}`), where the ad's
//! `svc:advertisement-website-link` and the mailed links lead.

use reqwest::Method;
use serde_json::json;

use crate::ads::{created, minimal, status};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json};

both_backends!(
    the_website_link_leads_to_the_ads_page,
    only_an_online_ad_has_a_page,
);

/// Reads a page without a token: its status, content type and text.
async fn page(app: &TestApp, url: &str) -> (u16, String, String) {
    let path = url.strip_prefix(&app.url("")).unwrap_or(url);
    let response = app.request(Method::GET, path).send().await;
    let status = response.status().as_u16();
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    (status, content_type, response.text().await.unwrap())
}

async fn the_website_link_leads_to_the_ads_page(app: TestApp) {
    let seller = app.user("website@souk.test").await;
    let mut body = minimal("Fiets <b>snel</b> & licht");
    body["description"] = json!("Eerste alinea.\n\nTweede <script>alinea</script>.");
    body["priceModel"] = json!({"modelType": "fixed", "askingPrice": 123_450});
    let ad = created(&app, &seller.token, &body).await;
    let link = ad["_links"]["svc:advertisement-website-link"]["href"]
        .as_str()
        .unwrap();
    let path = link.strip_prefix(&app.url("")).unwrap_or(link);
    let probed = app.request(Method::HEAD, path).send().await;
    assert_eq!(probed.status(), 200, "a HEAD finds the page");
    let (code, content_type, html) = page(&app, link).await;
    assert_eq!(code, 200, "{html}");
    assert_eq!(content_type, "text/html; charset=utf-8");
    assert!(html.contains(r#"<html lang="nl">"#), "{html}");
    assert!(
        html.contains("<h1>Fiets &lt;b&gt;snel&lt;/b&gt; &amp; licht</h1>"),
        "the title, escaped: {html}"
    );
    assert!(html.contains("€ 1.234,50"), "{html}");
    let day = &ad["startDate"].as_str().unwrap()[..10];
    assert!(
        html.contains(&format!("Amsterdam · geplaatst op {day}")),
        "the place, no empty seller name, the day: {html}"
    );
    assert!(html.contains("Eerste alinea."), "{html}");
    assert!(
        html.contains("Tweede &lt;script&gt;alinea&lt;/script&gt;."),
        "{html}"
    );
    assert!(!html.contains("<script>"), "{html}");
    let path = ad["_links"]["self"]["href"].as_str().unwrap();
    let stats = expect_json(
        app.get_with(&format!("{path}/statistics"), &seller.token)
            .await,
        200,
    )
    .await;
    assert_eq!(
        stats["numberOfViews"], 1,
        "the page counts as a view, a HEAD does not"
    );

    // A French ad's page is in French.
    let mut body = minimal("Vélo de ville");
    body["locale"] = json!("fr-BE");
    body["location"] = json!({"postcode": "1000"});
    body["priceModel"] = json!({"modelType": "bidding", "minimalBid": 2_000});
    let ad = created(&app, &seller.token, &body).await;
    let link = ad["_links"]["svc:advertisement-website-link"]["href"]
        .as_str()
        .unwrap();
    let (code, _, html) = page(&app, link).await;
    assert_eq!(code, 200, "{html}");
    assert!(html.contains(r#"<html lang="fr">"#), "{html}");
    assert!(html.contains("Enchères à partir de 20,00 €"), "{html}");
}

async fn only_an_online_ad_has_a_page(app: TestApp) {
    let seller = app.user("offline@souk.test").await;
    let ad = created(&app, &seller.token, &minimal("Gepauzeerde fiets")).await;
    let path = ad["_links"]["self"]["href"].as_str().unwrap().to_owned();
    let item = ad["itemId"].as_str().unwrap().to_owned();
    assert_eq!(page(&app, &format!("/a/{item}")).await.0, 200);
    assert_eq!(
        status(&app, &seller.token, &path, "paused").await.status(),
        200
    );
    for missing in [
        format!("/a/{item}"),
        "/a/m99999999".to_owned(),
        "/a/not-an-item".to_owned(),
        "/a/m0".to_owned(),
        "/a/%FF".to_owned(),
    ] {
        let (code, content_type, html) = page(&app, &missing).await;
        assert_eq!(code, 404, "{missing}: {html}");
        assert_eq!(content_type, "text/html; charset=utf-8", "{missing}");
        assert!(
            html.contains("Advertentie niet gevonden"),
            "{missing}: {html}"
        );
    }
}
