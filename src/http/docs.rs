//! The documentation pages: a reference rendered from the OpenAPI document, and a page for
//! every link relation, resource type and error code Souk emits. Plain HTML with one
//! stylesheet served here: no script, no request leaves the server.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::Markup;
use serde_json::Value;

use crate::error::{ApiError, ErrorCode};
use crate::hal::{Rel, Resource};
use crate::state::AppState;

use super::OpenApi;
use super::api::{Api, get};
use super::pages::layout::{self, Site, inline_code};

/// A page of something named in the path: 404 when there is no such thing.
type Page = Result<Response, ApiError>;

const STYLESHEET: &str = include_str!("../../assets/docs.css");

pub fn routes(api: Api) -> Api {
    let page = |path, id, summary| {
        get(path, id)
            .tag("Documentation")
            .summary(summary)
            .html(200, "An HTML page")
    };
    // A page of one thing, named in the path.
    let one = |path, id, summary, (name, description)| {
        page(path, id, summary)
            .path_text_param(name, description)
            .errors(&[ErrorCode::NotFound])
    };
    let rel_param = ("rel", "The relation name without prefix.");
    let resource_param = ("name", "The resource type.");
    api.route(page("/docs", "docsIndex", "The documentation"), index)
        .route(
            page("/docs/api", "docsReference", "The API reference"),
            reference,
        )
        .route(page("/docs/rels", "docsRels", "All link relations"), rels)
        .route(
            one(
                "/docs/rels/{rel}",
                "docsRel",
                "One link relation",
                rel_param,
            ),
            rel,
        )
        .route(
            page("/docs/errors", "docsErrors", "All error codes"),
            errors,
        )
        .route(
            one(
                "/docs/errors/{code}",
                "docsError",
                "One error code",
                ("code", "The error code."),
            ),
            error,
        )
        .route(
            page("/docs/resources", "docsResources", "All resource types"),
            resources,
        )
        .route(
            one(
                "/docs/resources/{name}",
                "docsResource",
                "One resource type",
                resource_param,
            ),
            resource,
        )
        .route(
            get("/docs/assets/docs.css", "docsStylesheet")
                .tag("Documentation")
                .summary("The stylesheet of these pages")
                .media(200, "The stylesheet", "text/css"),
            stylesheet,
        )
}

fn html(title: &str, body: Markup) -> Response {
    let site = Site {
        lang: "en",
        stylesheet: "/docs/assets/docs.css",
        title_suffix: " · Souk API",
        header: maud::html! {
            header {
                a href="/docs" { "Souk API" }
                a href="/docs/api" { "Reference" }
                a href="/docs/resources" { "Resources" }
                a href="/docs/rels" { "Relations" }
                a href="/docs/errors" { "Errors" }
                a href="/openapi.json" { "OpenAPI" }
            }
        },
    };
    let main = maud::html! { main { h1 { (title) } (body) } };
    layout::respond(
        StatusCode::OK,
        layout::document(&site, title, main),
        "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'",
    )
}

async fn index(State(state): State<AppState>) -> Response {
    let prefix = &state.config.curie_prefix;
    html(
        "Souk API documentation",
        maud::html! {
            p {
                "Souk serves the HTTP/JSON API of a classifieds marketplace. Every resource lives "
                "under " code { "/v1" } " and, identically, under " code { "/v2" } "; start at "
                a href="/v1" { code { "GET /v1" } } " and follow the links."
            }
            h2 { "Conventions" }
            ul {
                li {
                    "JSON in UTF-8 as " code { "application/json" } ", in HAL style: "
                    code { "_links" } " and " code { "_embedded" } ". Related resources use the "
                    "curie prefix " code { (prefix) } ": a relation " code { (prefix) ":category" }
                    " is documented at " code { "/docs/rels/category" } ". Add "
                    code { "_links=false" } " to any request to leave the links out."
                }
                li {
                    "Money in integer euro cents; timestamps as "
                    code { "YYYY-MM-DDThh:mm:ss+00:00" } "."
                }
                li {
                    "Every error has one body: " code { "logref" } " (the " code { "X-Request-Id" }
                    " of the response), " code { "statuscode" } ", " code { "code" } ", "
                    code { "message" } " and, where fields are at fault, " code { "details" }
                    ". See " a href="/docs/errors" { "the error codes" } "."
                }
                li {
                    "Collections take " code { "offset" } " and " code { "limit" } " and answer "
                    code { "first" } ", " code { "prev" } ", " code { "next" } " and "
                    code { "last" } " links."
                }
                li {
                    "Resources with an " code { "ETag" } " honour " code { "If-None-Match" }
                    " (304) and, where they can change, " code { "If-Match" } " (412)."
                }
            }
            h2 { "Where to go" }
            ul {
                li {
                    a href="/docs/api" { "The API reference" } ", rendered from "
                    a href="/openapi.json" { "the OpenAPI 3.1 document" } "."
                }
                li {
                    a href="/docs/resources" { "Resource types" } ", "
                    a href="/docs/rels" { "link relations" } " and "
                    a href="/docs/errors" { "error codes" } "."
                }
            }
        },
    )
}

async fn reference(State(OpenApi(document)): State<OpenApi>) -> Response {
    let mut operations: Vec<(&str, &str, &str, &Value)> = Vec::new();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let tag = operation["tags"][0].as_str().unwrap_or("Other");
            operations.push((tag, path, method, operation));
        }
    }
    operations.sort_by(|a, b| a.0.cmp(b.0));
    let mut tag_before = None;
    html(
        "API reference",
        maud::html! {
            @if let Some(description) = document["info"]["description"].as_str() {
                p { (inline_code(description)) }
            }
            @for (tag, path, method, operation) in operations {
                @if tag_before.replace(tag) != Some(tag) {
                    h2 { (tag) }
                }
                (render_operation(path, method, operation))
            }
        },
    )
}

fn render_operation(path: &str, method: &str, operation: &Value) -> Markup {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let responses = operation["responses"].as_object().into_iter().flatten();
    let needs_token = operation["security"]
        .as_array()
        .is_some_and(|s| !s.is_empty());
    maud::html! {
        div class="operation" id=(text(&operation["operationId"])) {
            h3 { span class="method" { (method) } " " code { (path) } }
            p { (text(&operation["summary"])) }
            @if let Some(description) = operation["description"].as_str() {
                p class="muted" { (inline_code(description)) }
            }
            p { @if needs_token { "Needs a bearer token." } @else { "Needs no token." } }
            @if let Some(params) = operation["parameters"].as_array() {
                (table(&["Parameter", "In", "Description"], params.iter().map(|p| maud::html! {
                    td { code { (text(&p["name"])) } }
                    td { (text(&p["in"])) }
                    td { (inline_code(&text(&p["description"]))) }
                })))
            }
            (table(&["Status", "Meaning"], responses.map(|(status, response)| maud::html! {
                td { (status) }
                td { (link_error_codes(&text(&response["description"]))) }
            })))
        }
    }
}

/// A table: a row of headings, then a row of cells for each of `rows`.
fn table(headings: &[&str], rows: impl Iterator<Item = Markup>) -> Markup {
    maud::html! {
        table {
            tr { @for heading in headings { th { (heading) } } }
            @for row in rows { tr { (row) } }
        }
    }
}

/// Turns the `` `code` `` list of an error response into links to the code pages.
fn link_error_codes(description: &str) -> Markup {
    maud::html! {
        @for (i, part) in description.split('`').enumerate() {
            @if i % 2 == 0 {
                (part)
            } @else if let Some(code) = ErrorCode::parse(part) {
                a href={ "/docs/errors/" (code.as_str()) } { code { (code.as_str()) } }
            } @else {
                code { (part) }
            }
        }
    }
}

async fn rels(State(state): State<AppState>) -> Response {
    let prefix = &state.config.curie_prefix;
    html(
        "Link relations",
        table(
            &["Relation", "Meaning"],
            Rel::ALL.iter().map(|rel| {
                maud::html! {
                    td { a href={ "/docs/rels/" (rel.name()) } { code { (prefix) ":" (rel.name()) } } }
                    td { (inline_code(rel.documentation())) }
                }
            }),
        ),
    )
}

async fn rel(State(state): State<AppState>, Path(name): Path<String>) -> Page {
    let rel = Rel::parse(&name).ok_or(ErrorCode::NotFound)?;
    Ok(html(
        &format!("{}:{}", state.config.curie_prefix, rel.name()),
        maud::html! { p { (inline_code(rel.documentation())) } },
    ))
}

/// The body of every error answer, as the errors page shows it.
const ERROR_EXAMPLE: &str = r#"{
  "_links": {"help": {"href": "/docs/errors/validation-failure"}},
  "logref": "01JDZ8...",
  "statuscode": 400,
  "code": "validation-failure",
  "message": "Validatie mislukt",
  "details": [{"field": "title", "code": "too-short", "message": "...", "value": "ab"}]
}"#;

async fn errors() -> Response {
    html(
        "Error codes",
        maud::html! {
            p {
                "Every error answer has this body; " code { "logref" } " is the request id (the "
                code { "X-Request-Id" } " header) under which the server logged the request."
            }
            pre { (ERROR_EXAMPLE) }
            (table(&["Status", "Code", "Meaning"], ErrorCode::ALL.iter().map(|code| maud::html! {
                td { (code.status().as_u16()) }
                td { a href={ "/docs/errors/" (code.as_str()) } { code { (code.as_str()) } } }
                td { (inline_code(code.documentation())) }
            })))
        },
    )
}

async fn error(State(state): State<AppState>, Path(name): Path<String>) -> Page {
    let code = ErrorCode::parse(&name).ok_or(ErrorCode::NotFound)?;
    let language = state.config.region.language();
    Ok(html(
        code.as_str(),
        maud::html! {
            p { "HTTP status " strong { (code.status()) } "." }
            p { (inline_code(code.documentation())) }
            p class="muted" {
                "Message in this deployment's language: " q { (code.message(language)) }
            }
        },
    ))
}

async fn resources() -> Response {
    html(
        "Resource types",
        table(
            &["Resource", "What it is"],
            Resource::ALL.iter().map(|resource| {
                maud::html! {
                    td { a href={ "/docs/resources/" (resource.name()) } { (resource.name()) } }
                    td { (inline_code(resource.documentation())) }
                }
            }),
        ),
    )
}

async fn resource(Path(name): Path<String>) -> Page {
    let resource = Resource::parse(&name).ok_or(ErrorCode::NotFound)?;
    Ok(html(
        resource.name(),
        maud::html! { p { (inline_code(resource.documentation())) } },
    ))
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
