//! Locations (issue 12 point 1): `GET /v1/locations?postcode=` over the shipped
//! data/locations.txt, which a new database loads at its first start, and
//! `souk locations import FILE`, on both backends.

use serde_json::json;

use crate::ads::{created, minimal};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json};

both_backends!(
    a_postcode_is_found_with_its_province,
    postcodes_are_normalised,
    an_unknown_postcode_is_not_found,
    a_bad_postcode_is_a_field_error,
    import_adds_and_replaces_postcodes,
    import_refuses_a_malformed_line_and_changes_nothing,
    an_ads_city_follows_the_table,
);

async fn a_postcode_is_found_with_its_province(app: TestApp) {
    let body = app.get_json("/v1/locations?postcode=8301AA", 200).await;
    assert_eq!(body["postcode"], "8301AA");
    assert_eq!(body["street"], "");
    assert_eq!(body["city"], "Emmeloord");
    assert_eq!(body["province"], "Flevoland");
    assert_eq!(body["provinceShortCode"], "FL");
    assert_eq!(
        body["_links"]["find"],
        json!({"href": "/v1/locations{?postcode}", "templated": true})
    );
    assert_eq!(
        body["_links"]["self"]["href"],
        "/v1/locations?postcode=8301AA"
    );
    let belgian = app.get_json("/v1/locations?postcode=9000", 200).await;
    assert_eq!(
        (
            &belgian["city"],
            &belgian["province"],
            &belgian["provinceShortCode"]
        ),
        (&json!("Gent"), &json!("Oost-Vlaanderen"), &json!("VOV"))
    );
    // Four digits are Belgian: 8301 is Ramskapelle, not the Dutch area of Emmeloord.
    let belgian = app.get_json("/v1/locations?postcode=8301", 200).await;
    assert_eq!(belgian["city"], "Ramskapelle");
    assert_eq!(belgian["provinceShortCode"], "VWV");
    let v2 = app.get_json("/v2/locations?postcode=9711AB", 200).await;
    assert_eq!(v2["city"], "Groningen");
    assert_eq!(v2["_links"]["find"]["href"], "/v2/locations{?postcode}");
}

async fn postcodes_are_normalised(app: TestApp) {
    for query in ["8301%20aa", "8301aa", "%208301%20AA%20", "8301+aA"] {
        let body = app
            .get_json(&format!("/v1/locations?postcode={query}"), 200)
            .await;
        assert_eq!(body["postcode"], "8301AA", "{query}");
        assert_eq!(body["city"], "Emmeloord", "{query}");
    }
}

async fn an_unknown_postcode_is_not_found(app: TestApp) {
    // Well-formed, but no Dutch area 1000 and no Belgian 1001 exist.
    for postcode in ["1000AA", "1001"] {
        let body = app
            .get_json(&format!("/v1/locations?postcode={postcode}"), 404)
            .await;
        assert_eq!(body["code"], "location-not-found", "{postcode}");
    }
}

async fn a_bad_postcode_is_a_field_error(app: TestApp) {
    let body = app.get_json("/v1/locations", 400).await;
    assert_eq!(body["code"], "validation-failure");
    assert_eq!(body["details"][0]["field"], "postcode");
    assert_eq!(body["details"][0]["code"], "missing");
    for bad in [
        "",
        "abc",
        "0123AB",
        "12345",
        "8301A",
        "8301%C3%A9%C3%A9",
        "123%C3%A94",
        "%E2%82%AC%E2%82%AC",
        "%00",
    ] {
        let body = app
            .get_json(&format!("/v1/locations?postcode={bad}"), 400)
            .await;
        assert_eq!(body["code"], "validation-failure", "{bad}");
        assert_eq!(body["details"][0]["field"], "postcode", "{bad}");
        assert_eq!(body["details"][0]["code"], "invalid-postcode", "{bad}");
    }
}

/// Lines in GeoNames' format: `NL_full`'s whole postcodes (with their space), a Belgian
/// postcode the shipped file lacks, a changed one, and a French line to skip.
const GOOD_FILE: &str = "\
NL\t8301 AB\tEmmeloord-Noord\tFlevoland\t16\tNoordoostpolder\t0171\t\t\t52.7200\t5.7500\t6
BE\t1001\tProefdorp\tVlaanderen\tVLG\tVlaams-Brabant\tVBR\t\t\t50.9000\t4.5000\t4
BE\t9000\tGent-Centrum\tVlaanderen\tVLG\tOost-Vlaanderen\tVOV\t\t\t51.0500\t3.7200\t4
FR\t75001\tParis\tÎle-de-France\t11\tParis\t75\t\t\t48.8592\t2.3417\t5
";

async fn import_adds_and_replaces_postcodes(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("NL_full.txt");
    std::fs::write(&file, GOOD_FILE).unwrap();
    let output = import(&app, &file);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("3 postcodes loaded (1 NL, 2 BE)"),
        "{stdout}"
    );
    assert!(stdout.contains("1 lines of other countries"), "{stdout}");
    let whole = app.get_json("/v1/locations?postcode=8301ab", 200).await;
    assert_eq!(whole["city"], "Emmeloord-Noord", "the whole postcode's row");
    let area = app.get_json("/v1/locations?postcode=8301AA", 200).await;
    assert_eq!(area["city"], "Emmeloord", "other postcodes keep their area");
    let added = app.get_json("/v1/locations?postcode=1001", 200).await;
    assert_eq!(
        (&added["city"], &added["provinceShortCode"]),
        (&json!("Proefdorp"), &json!("VBR"))
    );
    let replaced = app.get_json("/v1/locations?postcode=9000", 200).await;
    assert_eq!(replaced["city"], "Gent-Centrum");
    let point = app
        .db
        .read(|conn| {
            Box::pin(async move {
                let postcode = souk::domain::places::Postcode::parse("1001").unwrap();
                souk::store::locations::point(conn, &postcode).await
            })
        })
        .await
        .unwrap()
        .expect("coordinates of an imported postcode");
    assert_eq!((point.latitude, point.longitude), (50.9, 4.5));
    // Importing the same file again changes nothing more and succeeds.
    assert!(import(&app, &file).status.success());
    let again = app.get_json("/v1/locations?postcode=9000", 200).await;
    assert_eq!(again["city"], "Gent-Centrum");
}

async fn import_refuses_a_malformed_line_and_changes_nothing(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.txt");
    let cases = [
        // Line 3 has too few fields.
        "BE\t1001\tProefdorp\tVlaanderen\tVLG\tVlaams-Brabant\tVBR\t\t\t50.9\t4.5\t4\n\
         BE\t9000\tGent-Centrum\tVlaanderen\tVLG\tOost-Vlaanderen\tVOV\t\t\t51.05\t3.72\t4\n\
         NL\t8301 AB\tEmmeloord-Noord\n",
        // Line 3's latitude is not a number.
        "BE\t1001\tProefdorp\tVlaanderen\tVLG\tVlaams-Brabant\tVBR\t\t\t50.9\t4.5\t4\n\
         BE\t9000\tGent-Centrum\tVlaanderen\tVLG\tOost-Vlaanderen\tVOV\t\t\t51.05\t3.72\t4\n\
         NL\t8301 AB\tEmmeloord-Noord\tFlevoland\t16\t\t\t\t\tnoord\t5.75\t6\n",
        // Line 3's Dutch postcode is Belgian-looking nonsense.
        "BE\t1001\tProefdorp\tVlaanderen\tVLG\tVlaams-Brabant\tVBR\t\t\t50.9\t4.5\t4\n\
         BE\t9000\tGent-Centrum\tVlaanderen\tVLG\tOost-Vlaanderen\tVOV\t\t\t51.05\t3.72\t4\n\
         NL\t83O1 AB\tEmmeloord-Noord\tFlevoland\t16\t\t\t\t\t52.72\t5.75\t6\n",
    ];
    for text in cases {
        std::fs::write(&file, text).unwrap();
        let output = import(&app, &file);
        assert!(!output.status.success());
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(message.contains("line 3"), "{message}");
        assert!(message.contains("nothing changed"), "{message}");
        app.get_json("/v1/locations?postcode=1001", 404).await;
        let kept = app.get_json("/v1/locations?postcode=9000", 200).await;
        assert_eq!(kept["city"], "Gent", "line 2 was not applied");
    }
}

async fn an_ads_city_follows_the_table(app: TestApp) {
    let seller = app.user("verkoper@souk.test").await;
    let mut body = minimal("Fiets in Emmeloord");
    body["location"] = json!({"postcode": "8301 ab"});
    let ad = created(&app, &seller.token, &body).await;
    assert_eq!(
        ad["location"],
        json!({"postcode": "8301AB", "cityName": "Emmeloord"})
    );
    let path = format!("/v1/advertisements/{}", ad["itemId"].as_str().unwrap());
    // As kept with the ad when it was written.
    let read = app.get_json(&path, 200).await;
    assert_eq!(read["location"]["cityName"], "Emmeloord");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("NL_full.txt");
    std::fs::write(&file, GOOD_FILE).unwrap();
    assert!(import(&app, &file).status.success());
    let read = app.get_json(&path, 200).await;
    assert_eq!(read["location"]["cityName"], "Emmeloord-Noord");
    // A new postcode brings its own place; the other ad of the imported postcode keeps it.
    let other = created(&app, &seller.token, &body).await;
    let moved = app
        .patch(&path)
        .token(&seller.token)
        .json_patch(&json!([
            {"op": "replace", "path": "/location", "value": {"postcode": "1097DN"}}
        ]))
        .send()
        .await;
    assert_eq!(
        expect_json(moved, 200).await["location"],
        json!({"postcode": "1097DN", "cityName": "Amsterdam"})
    );
    let read = app.get_json(&path, 200).await;
    assert_eq!(read["location"]["cityName"], "Amsterdam");
    let other_path = format!("/v1/advertisements/{}", other["itemId"].as_str().unwrap());
    let other = app.get_json(&other_path, 200).await;
    assert_eq!(other["location"]["cityName"], "Emmeloord-Noord");
    // A postcode the table lacks has no city (it was accepted before locations existed).
    let mut body = minimal("Fiets nergens");
    body["location"] = json!({"postcode": "1000AA"});
    let ad = created(&app, &seller.token, &body).await;
    assert_eq!(
        ad["location"],
        json!({"postcode": "1000AA", "cityName": null})
    );
}

fn import(app: &TestApp, file: &std::path::Path) -> std::process::Output {
    app.souk(&["locations", "import", file.to_str().expect("a UTF-8 path")])
}
