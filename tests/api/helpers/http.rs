//! Requests and the reading of their answers. Every request goes through a [`Call`], which
//! remembers what it asked for; every JSON answer is read with [`expect_json`] (or
//! [`expect_oauth_error`]), which holds it to the server's OpenAPI document.

use std::sync::Arc;

use reqwest::Method;
use serde::Serialize;
use serde_json::Value;

use super::openapi::{Document, Route};

/// A client of one running server, with the OpenAPI document that server publishes.
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    base_url: String,
    document: Arc<Document>,
}

impl Http {
    /// Fetches the server's `/openapi.json`, against which its answers are then checked.
    pub async fn connect(base_url: &str) -> Http {
        souk::images::blobs::use_ring_for_tls();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        #[allow(clippy::disallowed_methods)] // the document itself, before there is a Call
        let document: Value = client
            .get(format!("{base_url}/openapi.json"))
            .send()
            .await
            .expect("the OpenAPI document")
            .json()
            .await
            .expect("the OpenAPI document is JSON");
        Http {
            client,
            base_url: base_url.to_owned(),
            document: Arc::new(Document::new(document)),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// The server's OpenAPI document, as the checks read it.
    pub fn document(&self) -> &Document {
        &self.document
    }

    /// A request for `path` (below the server's address).
    pub fn request(&self, method: Method, path: &str) -> Call {
        #[allow(clippy::disallowed_methods)] // the one place that builds requests
        let builder = self.client.request(method.clone(), self.url(path));
        Call {
            method,
            path: path.to_owned(),
            builder,
            document: self.document.clone(),
            unrouted: false,
        }
    }
}

/// A request on its way. [`Call::send`] checks that the document lists the operation and
/// the status of the answer, and marks the answer for [`expect_json`].
pub struct Call {
    method: Method,
    path: String,
    builder: reqwest::RequestBuilder,
    document: Arc<Document>,
    unrouted: bool,
}

impl Call {
    /// `Authorization: Bearer <token>`.
    pub fn token(mut self, token: &str) -> Call {
        self.builder = self.builder.bearer_auth(token);
        self
    }

    pub fn basic_auth(mut self, user: &str, password: Option<&str>) -> Call {
        self.builder = self.builder.basic_auth(user, password);
        self
    }

    pub fn header(mut self, name: &str, value: impl AsRef<str>) -> Call {
        self.builder = self.builder.header(name, value.as_ref());
        self
    }

    /// A JSON body (`application/json`).
    pub fn json(mut self, body: &Value) -> Call {
        self.builder = self.builder.json(body);
        self
    }

    /// A JSON Patch body (`application/json-patch+json`).
    pub fn json_patch(self, patch: &Value) -> Call {
        self.body("application/json-patch+json", patch.to_string())
    }

    /// A form body (`application/x-www-form-urlencoded`).
    pub fn form<T: Serialize + ?Sized>(mut self, form: &T) -> Call {
        self.builder = self.builder.form(form);
        self
    }

    /// A body of any content type, as given.
    pub fn body(mut self, content_type: &str, body: impl Into<String>) -> Call {
        self.builder = self
            .builder
            .header("content-type", content_type)
            .body(body.into());
        self
    }

    /// A binary body (an image, a multipart form) of the given content type.
    pub fn bytes(mut self, content_type: &str, body: Vec<u8>) -> Call {
        self.builder = self.builder.header("content-type", content_type).body(body);
        self
    }

    /// A request the document does not describe (an unknown route, or a method a route
    /// does not take), to test the 404 and 405 answers: `send` checks that it really is
    /// outside the document, and `expect_json` holds the answer to the `Error` schema.
    pub fn unrouted(mut self) -> Call {
        self.unrouted = true;
        self
    }

    pub async fn send(self) -> reqwest::Response {
        self.try_send().await.expect("request")
    }

    /// Like [`Call::send`], but a request that gets no answer (the server is down) is an
    /// error instead of a failed test.
    pub async fn try_send(self) -> Result<reqwest::Response, reqwest::Error> {
        let request = format!("{} {}", self.method, self.path);
        let route = self.document.route(&self.method, &self.path);
        let route = match (self.unrouted, route) {
            (false, Ok(route)) => Some(route),
            (false, Err(missing)) => panic!("{missing}"),
            (true, Ok(route)) => panic!("{request} is in the OpenAPI document: {route:?}"),
            (true, Err(_)) => None,
        };
        let mut response = self.builder.send().await?;
        let status = response.status().as_u16();
        match &route {
            Some(route) => {
                if let Err(undocumented) = self.document.check_status(route, status) {
                    panic!("{request}: {undocumented}");
                }
            }
            None => assert!(
                status == 404 || status == 405,
                "{request} is outside the document, yet answered {status}"
            ),
        }
        response.extensions_mut().insert(Sent {
            request,
            route,
            document: self.document,
        });
        Ok(response)
    }
}

/// What a [`Call`] leaves on its answer for the readers below.
#[derive(Clone)]
struct Sent {
    request: String,
    route: Option<Route>,
    document: Arc<Document>,
}

/// A JSON answer, checked: the status, the content type and the documented schema.
struct Checked {
    request: String,
    body: Value,
    request_id: String,
}

async fn read_checked(response: reqwest::Response, status: u16) -> Checked {
    try_read_checked(response, status).await.expect("body")
}

/// [`read_checked`], or None when the body did not arrive whole (the server stopped).
async fn try_read_checked(response: reqwest::Response, status: u16) -> Option<Checked> {
    let sent =
        response.extensions().get::<Sent>().cloned().expect(
            "send requests with the helpers' Call, so that answers meet the OpenAPI document",
        );
    let actual = response.status().as_u16();
    let request_id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .expect("every response has X-Request-Id");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.ok()?;
    assert_eq!(
        actual, status,
        "{}: unexpected status; body: {text}",
        sent.request
    );
    assert!(
        content_type.starts_with("application/json"),
        "{}: content type {content_type}",
        sent.request
    );
    let body: Value = serde_json::from_str(&text).expect("JSON body");
    if let Err(lie) = sent.document.check_json(sent.route.as_ref(), status, &body) {
        panic!("{}: {lie}", sent.request);
    }
    Some(Checked {
        request: sent.request,
        body,
        request_id,
    })
}

/// Checks the status and returns the JSON body, which must match the schema the OpenAPI
/// document gives for the operation and status; an error body must have the documented
/// shape, with `logref` equal to `X-Request-Id`.
pub async fn expect_json(response: reqwest::Response, status: u16) -> Value {
    let checked = read_checked(response, status).await;
    if status >= 400 {
        assert_error_shape(&checked, status);
    }
    checked.body
}

/// [`expect_json`] for a server that may stop while it answers (the crash tests): None when
/// the body did not arrive whole.
pub async fn try_expect_json(response: reqwest::Response, status: u16) -> Option<Value> {
    let checked = try_read_checked(response, status).await?;
    if status >= 400 {
        assert_error_shape(&checked, status);
    }
    Some(checked.body)
}

fn assert_error_shape(checked: &Checked, status: u16) {
    let body = &checked.body;
    assert_eq!(body["statuscode"], status, "{body}");
    assert_eq!(
        body["logref"], checked.request_id,
        "logref must equal X-Request-Id"
    );
    let code = body["code"].as_str().expect("code");
    if !checked.request.contains("_links=false") {
        assert_eq!(
            body["_links"]["help"]["href"],
            format!("/docs/errors/{code}"),
            "{body}"
        );
    }
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    if let Some(details) = body.get("details") {
        for detail in details.as_array().expect("details is an array") {
            assert!(detail.get("field").is_some() || detail.get("fields").is_some());
            assert!(detail["code"].is_string() && detail["message"].is_string());
        }
    }
}

/// An error of the authorization server (RFC 6749 §5.2): the status, `error`, never cached.
pub async fn expect_oauth_error(response: reqwest::Response, status: u16, error: &str) -> Value {
    assert_eq!(response.status(), status);
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["pragma"], "no-cache");
    let body = read_checked(response, status).await.body;
    assert_eq!(body["error"], error, "{body}");
    let codes = [
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "invalid_scope",
    ];
    assert!(
        codes.contains(&body["error"].as_str().unwrap()),
        "only RFC 6749 §5.2 codes"
    );
    body
}
