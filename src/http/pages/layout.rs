//! The one layout of every HTML page Souk serves (the sign-in pages and the
//! documentation): the document head with its language and stylesheet, a header, the main
//! part. Pages are maud templates, checked at compile time; text is escaped unless a page
//! says otherwise.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

/// What sets one family of pages apart: its language, stylesheet, title suffix and header.
pub struct Site<'a> {
    /// `nl`, `fr` or `en`.
    pub lang: &'a str,
    pub stylesheet: &'static str,
    /// Appended to every title: ` · Souk`.
    pub title_suffix: &'static str,
    pub header: Markup,
}

/// A whole page: the layout around `main`.
pub fn document(site: &Site, title: &str, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(site.lang) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) (site.title_suffix) }
                link rel="stylesheet" href=(site.stylesheet);
            }
            body {
                (site.header)
                (main)
            }
        }
    }
}

/// A page as an answer: HTML that may use only its own stylesheet (no script, no frames).
pub fn respond(status: StatusCode, page: Markup, csp: &'static str) -> Response {
    let mut response = (status, page.into_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(csp),
    );
    response
}

/// Text with `` `code` `` spans, as the documentation strings write it.
pub fn inline_code(text: &str) -> Markup {
    html! {
        @for (i, part) in text.split('`').enumerate() {
            @if i % 2 == 1 { code { (part) } } @else { (part) }
        }
    }
}
