//! The authorization server as a client and a browser use it: the token endpoint, and the
//! sign-in and consent pages (form posts with the session cookie and the CSRF token).

use reqwest::Method;

use super::{TestApp, TestClient, encode, expect_json, location, query_value};

/// The login page of an authorization request, as a browser holds it: its session cookie
/// and the CSRF token of its form.
pub struct LoginPage {
    pub cookie: String,
    pub csrf: String,
}

impl TestApp {
    /// POSTs a token request with HTTP Basic client authentication.
    pub async fn token_request(
        &self,
        client: &TestClient,
        params: &[(&str, &str)],
    ) -> reqwest::Response {
        self.post("/accounts/oauth/token")
            .basic_auth(&client.id, client.secret.as_deref())
            .form(params)
            .send()
            .await
    }

    pub async fn client_token(&self, client: &TestClient, scope: Option<&str>) -> String {
        let mut params = vec![("grant_type", "client_credentials")];
        if let Some(scope) = scope {
            params.push(("scope", scope));
        }
        let body = expect_json(self.token_request(client, &params).await, 200).await;
        body["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    /// `GET /accounts/oauth/authorize?{query}`, as a browser opens it.
    pub async fn authorize_page(&self, query: &str) -> reqwest::Response {
        self.request(Method::GET, &format!("/accounts/oauth/authorize?{query}"))
            .send()
            .await
    }

    /// Opens the login page of an authorization request.
    pub async fn login_page(&self, query: &str) -> LoginPage {
        let login = self.authorize_page(query).await;
        assert_eq!(login.status(), 200, "the login page");
        let cookie = session_cookie(&login);
        let csrf = hidden_field(&login.text().await.unwrap(), "csrf_token");
        LoginPage { cookie, csrf }
    }

    /// Posts a form of the sign-in or consent page (with its cookie, if any).
    pub async fn submit(
        &self,
        query: &str,
        cookie: Option<&str>,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut call = self.post(&format!("/accounts/oauth/authorize?{query}"));
        if let Some(cookie) = cookie {
            call = call.header("cookie", cookie);
        }
        call.form(form).send().await
    }

    /// Opens the login page of an authorization request and signs in: the answer after
    /// the login form (the consent page, a redirect, or the login page again).
    pub async fn sign_in(&self, query: &str, email: &str, password: &str) -> reqwest::Response {
        let login = self.login_page(query).await;
        let form = [
            ("username", email),
            ("password", password),
            ("csrf_token", &login.csrf),
        ];
        self.submit(query, Some(&login.cookie), &form).await
    }

    /// Drives the sign-in and consent pages as a browser would and returns where the last
    /// step redirected to (the client's redirect_uri with `code` or `error`).
    pub async fn authorize(&self, query: &str, email: &str, password: &str) -> String {
        let consent = self.sign_in(query, email, password).await;
        if consent.status() == 302 {
            return location(&consent);
        }
        assert_eq!(consent.status(), 200, "the consent page");
        let cookie = session_cookie(&consent);
        let html = consent.text().await.unwrap();
        assert!(
            html.contains("name=\"decision\""),
            "consent page expected: {html}"
        );
        let csrf = hidden_field(&html, "csrf_token");
        let form = [("decision", "allow"), ("csrf_token", &csrf)];
        let done = self.submit(query, Some(&cookie), &form).await;
        assert_eq!(done.status(), 302);
        location(&done)
    }

    /// A user token of `client` for a confirmed user, through the pages and the token
    /// endpoint: returns (access token, refresh token).
    pub async fn user_token(
        &self,
        client: &TestClient,
        email: &str,
        password: &str,
        scope: Option<&str>,
    ) -> (String, String) {
        let mut query = format!(
            "response_type=code&client_id={}&redirect_uri={}",
            client.id,
            encode(&client.redirect_uri)
        );
        if let Some(scope) = scope {
            query.push_str(&format!("&scope={}", encode(scope)));
        }
        let landed = self.authorize(&query, email, password).await;
        let code = query_value(&landed, "code").expect("code");
        let body = expect_json(
            self.token_request(
                client,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", &client.redirect_uri),
                ],
            )
            .await,
            200,
        )
        .await;
        (
            body["access_token"].as_str().unwrap().to_owned(),
            body["refresh_token"].as_str().unwrap().to_owned(),
        )
    }
}

/// `souk_session=...` from a response's Set-Cookie.
pub fn session_cookie(response: &reqwest::Response) -> String {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("souk_session="))
        .map(|v| v.split(';').next().unwrap().to_owned())
        .expect("a session cookie")
}

/// The value of a hidden form field in a page.
pub fn hidden_field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in {html}"))
        + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}
