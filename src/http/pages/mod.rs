//! The pages a person sees at the authorization endpoint, rendered by the server in the
//! deployment's language, usable without JavaScript: sign-in and consent (`authorize`),
//! the mailed confirmation links (`confirm`) and the sandbox's demo callback (`demo`); and
//! the one page of the website, an advertisement's (`ad`, in the ad's language). All in
//! the one layout of `layout`.

mod ad;
mod authorize;
mod client;
mod confirm;
mod demo;
pub mod layout;

use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde_json::json;

use crate::domain::locale::Language;
use crate::error::ApiError;
use crate::error::ErrorCode;
use crate::state::AppState;

use super::api::{Api, Operation, get, post};
use super::oauth::AUTHORIZE_PATH;
use layout::Site;

const STYLESHEET: &str = include_str!("../../../assets/accounts.css");

pub fn routes(api: Api) -> Api {
    let tag = "Authorization server";
    // Every page but the stylesheet reads the database, so may answer 503.
    let page = |operation: Operation, summary| {
        operation
            .tag(tag)
            .summary(summary)
            .errors(&[ErrorCode::ServiceUnavailable])
    };
    let form = "application/x-www-form-urlencoded";
    let bad_client = "Error page: unknown client or redirect_uri";
    api.route(
        page(authorization_request(get(AUTHORIZE_PATH, "authorize")), "The authorization endpoint: sign-in and consent pages (HTML)")
            .description("`response_type=code`, `client_id`, `redirect_uri`, optional `scope`, `state`, `code_challenge` (S256). An unknown client or a redirect_uri that does not match is shown as an error page; every other error is redirected to the client.")
            .html(200, "The sign-in or consent page")
            .ok_empty(302, "Back to the client with `code` or `error`")
            .html(400, bad_client),
        authorize::authorize,
    )
    .route(
        page(authorization_request(post(AUTHORIZE_PATH, "authorizeSubmit")), "The sign-in and consent forms post here (with the CSRF token)")
            .body(form, "SignInForm")
            .html(200, "The consent page, or the sign-in page again")
            .ok_empty(302, "Back to the client")
            .html(400, bad_client)
            .html(403, "Missing or wrong CSRF token or session")
            .html(429, "Too many failed sign-ins"),
        authorize::submit,
    )
    .route(
        page(get("/accounts/confirm", "confirmPage"), "The page behind a mailed confirmation link (account or new e-mail address)")
            .required_query_param("token", json!({"type": "string"}), "The token of the mailed link.")
            .html(200, "A page with a confirm button (and a password form if the account has none)")
            .html(400, "The link has no token"),
        confirm::confirm_page,
    )
    .route(
        page(post("/accounts/confirm", "confirm"), "Confirms an account or a new e-mail address (the form of the confirmation page)")
            .body(form, "ConfirmationForm")
            .html(200, "Confirmed")
            .html(400, "Unknown, used or expired link, or a password too short")
            .html(409, "The new e-mail address was taken meanwhile"),
        confirm::confirm,
    )
    .route(
        get("/accounts/demo-callback", "demoCallback")
            .tag(tag)
            .summary("Sandbox only: where the demo client lands; shows how to exchange the code")
            .html(200, "A page with the code and the curl line that exchanges it")
            .html(400, "A `code` that is not of the alphabet of Souk's codes")
            .errors(&[ErrorCode::NotFound]),
        demo::demo_callback,
    )
    .route(
        page(get("/a/{itemId}", "advertisementPage"), "The advertisement's page on the website (HTML): where `advertisement-website-link` and mailed links lead")
            .tag("Website")
            .path_text_param("itemId", "The advertisement's itemId.")
            .html(200, "An online advertisement, in its own language; no token needed")
            .html(404, "No online advertisement has this itemId"),
        ad::ad_page,
    )
    .route(
        get("/accounts/assets/accounts.css", "accountsStylesheet")
            .tag(tag)
            .summary("The stylesheet of the sign-in pages")
            .media(200, "The stylesheet", "text/css"),
        stylesheet,
    )
}

/// The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636), in the query
/// of the page and of the forms it posts.
fn authorization_request(operation: Operation) -> Operation {
    let text = || json!({"type": "string"});
    operation
        .required_query_param("client_id", text(), "The client.")
        .required_query_param("redirect_uri", text(), "One of the client's redirect URIs.")
        .query_param("response_type", text(), "`code`.")
        .query_param(
            "scope",
            text(),
            "Space-separated scopes; the client's defaults without it.",
        )
        .query_param("state", text(), "Returned to the client as it was sent.")
        .query_param("code_challenge", text(), "PKCE (RFC 7636).")
        .query_param("code_challenge_method", text(), "`S256`.")
}

/// Texts of the pages in the deployment's language.
fn t(language: Language, dutch: &'static str, french: &'static str) -> &'static str {
    match language {
        Language::Dutch => dutch,
        Language::French => french,
    }
}

/// A page of the authorization server: `body` in a card, never cached or framed.
fn page(state: &AppState, status: StatusCode, title: &str, body: Markup) -> Response {
    page_in(state.config.region.language(), status, title, body)
}

/// A page in language `l`, as [`page`].
fn page_in(l: Language, status: StatusCode, title: &str, body: Markup) -> Response {
    let site = Site {
        lang: match l {
            Language::Dutch => "nl",
            Language::French => "fr",
        },
        stylesheet: "/accounts/assets/accounts.css",
        title_suffix: " · Souk",
        header: html! { div class="topbar" { span class="logo" { "Souk" } } },
    };
    let document = layout::document(&site, title, html! { main class="card" { (body) } });
    let mut response = layout::respond(
        status,
        document,
        "default-src 'none'; style-src 'self'; frame-ancestors 'none'",
    );
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// A request the server could not answer (the database does not answer, say) as a page:
/// the API error's status, message and headers (`Retry-After`), and the page's headers,
/// never cached or framed, as on every other page.
fn failure_page(state: &AppState, error: impl Into<ApiError>) -> Response {
    let error = error.into();
    let l = state.config.region.language();
    let title = t(l, "Er ging iets mis", "Une erreur s'est produite");
    let why = error
        .message
        .as_ref()
        .map_or(error.code.message(l), |message| message.get(l));
    let mut response = page(
        state,
        error.code.status(),
        title,
        html! {
            (heading(title, why))
        },
    );
    for (name, value) in &error.headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.headers_mut().insert(*name, value);
        }
    }
    response
}

fn error_page(state: &AppState, status: StatusCode, why: &str) -> Response {
    let l = state.config.region.language();
    let title = t(l, "Er ging iets mis", "Une erreur s'est produite");
    let lead = t(
        l,
        "De toepassing die je hierheen stuurde, vroeg iets wat we niet kunnen toestaan.",
        "L'application qui vous a envoyé ici a fait une demande que nous ne pouvons pas accepter.",
    );
    page(
        state,
        status,
        title,
        html! {
            (heading(title, lead))
            p class="error" { (why) }
        },
    )
}

/// A page's title and the sentence under it.
fn heading(title: &str, lead: &str) -> Markup {
    html! {
        h1 { (title) }
        p class="lead" { (lead) }
    }
}

fn redirect(url: &str) -> Response {
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(url) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLESHEET,
    )
        .into_response()
}

fn query_param(uri: &Uri, name: &str) -> Option<String> {
    uri.query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    })
}

/// The fields of a posted form.
struct Form(Vec<(String, String)>);

impl Form {
    fn parse(body: &[u8]) -> Form {
        Form(form_urlencoded::parse(body).into_owned().collect())
    }

    fn field(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}
