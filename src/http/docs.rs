//! The documentation pages: a reference rendered from the OpenAPI document, and a page for
//! every link relation, resource type and error code Souk emits. Plain HTML with one
//! stylesheet served here: no script, no request leaves the server.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::{ApiError, ErrorCode};
use crate::hal::{Rel, Resource};
use crate::state::AppState;

use super::OpenApi;
use super::api::{Api, get};

const STYLESHEET: &str = include_str!("../../assets/docs.css");

pub fn routes(api: Api) -> Api {
    let page = |path, id, summary| {
        get(path, id)
            .tag("Documentation")
            .summary(summary)
            .media(200, "An HTML page", "text/html")
    };
    api.route(page("/docs", "docsIndex", "The documentation"), index)
        .route(
            page("/docs/api", "docsReference", "The API reference"),
            reference,
        )
        .route(page("/docs/rels", "docsRels", "All link relations"), rels)
        .route(
            page("/docs/rels/{rel}", "docsRel", "One link relation")
                .name_param("rel", "The relation name without prefix.")
                .errors(&[ErrorCode::NotFound]),
            rel,
        )
        .route(
            page("/docs/errors", "docsErrors", "All error codes"),
            errors,
        )
        .route(
            page("/docs/errors/{code}", "docsError", "One error code")
                .name_param("code", "The error code.")
                .errors(&[ErrorCode::NotFound]),
            error,
        )
        .route(
            page("/docs/resources", "docsResources", "All resource types"),
            resources,
        )
        .route(
            page(
                "/docs/resources/{name}",
                "docsResource",
                "One resource type",
            )
            .name_param("name", "The resource type.")
            .errors(&[ErrorCode::NotFound]),
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

fn html(title: &str, body: &str) -> Response {
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Souk API</title>\
         <link rel=\"stylesheet\" href=\"/docs/assets/docs.css\"></head><body>\
         <header><a href=\"/docs\">Souk API</a><a href=\"/docs/api\">Reference</a>\
         <a href=\"/docs/resources\">Resources</a><a href=\"/docs/rels\">Relations</a>\
         <a href=\"/docs/errors\">Errors</a><a href=\"/openapi.json\">OpenAPI</a></header>\
         <main><h1>{title}</h1>{body}</main></body></html>",
        title = escape(title),
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'",
            ),
        ],
        page,
    )
        .into_response()
}

async fn index(State(state): State<AppState>) -> Response {
    let prefix = escape(&state.config.curie_prefix);
    html(
        "Souk API documentation",
        &format!(
            "<p>Souk serves the HTTP/JSON API of a classifieds marketplace. Every resource lives \
             under <code>/v1</code> and, identically, under <code>/v2</code>; start at \
             <a href=\"/v1\"><code>GET /v1</code></a> and follow the links.</p>\
             <h2>Conventions</h2><ul>\
             <li>JSON in UTF-8 as <code>application/json</code>, in HAL style: <code>_links</code> \
             and <code>_embedded</code>. Related resources use the curie prefix \
             <code>{prefix}</code>: a relation <code>{prefix}:category</code> is documented at \
             <code>/docs/rels/category</code>. Add <code>_links=false</code> to any request to \
             leave the links out.</li>\
             <li>Money in integer euro cents; timestamps as <code>YYYY-MM-DDThh:mm:ss+00:00</code>.</li>\
             <li>Every error has one body: <code>logref</code> (the <code>X-Request-Id</code> of \
             the response), <code>statuscode</code>, <code>code</code>, <code>message</code> and, \
             where fields are at fault, <code>details</code>. See <a href=\"/docs/errors\">the \
             error codes</a>.</li>\
             <li>Collections take <code>offset</code> and <code>limit</code> and answer \
             <code>first</code>, <code>prev</code>, <code>next</code> and <code>last</code> links.</li>\
             <li>Resources with an <code>ETag</code> honour <code>If-None-Match</code> (304) and, \
             where they can change, <code>If-Match</code> (412).</li></ul>\
             <h2>Where to go</h2><ul>\
             <li><a href=\"/docs/api\">The API reference</a>, rendered from \
             <a href=\"/openapi.json\">the OpenAPI 3.1 document</a>.</li>\
             <li><a href=\"/docs/resources\">Resource types</a>, \
             <a href=\"/docs/rels\">link relations</a> and <a href=\"/docs/errors\">error codes</a>.</li>\
             </ul>"
        ),
    )
}

async fn reference(State(OpenApi(document)): State<OpenApi>) -> Response {
    let mut body = String::new();
    if let Some(description) = document["info"]["description"].as_str() {
        body.push_str(&format!("<p>{}</p>", inline_code(description)));
    }
    let mut by_tag: Vec<(String, String)> = Vec::new();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let tag = operation["tags"][0].as_str().unwrap_or("Other").to_owned();
            by_tag.push((tag, render_operation(path, method, operation)));
        }
    }
    by_tag.sort_by(|a, b| a.0.cmp(&b.0));
    let mut current = String::new();
    for (tag, operation) in by_tag {
        if tag != current {
            body.push_str(&format!("<h2>{}</h2>", escape(&tag)));
            current = tag;
        }
        body.push_str(&operation);
    }
    html("API reference", &body)
}

fn render_operation(path: &str, method: &str, operation: &Value) -> String {
    let mut out = format!(
        "<div class=\"operation\" id=\"{id}\"><h3><span class=\"method\">{method}</span> \
         <code>{path}</code></h3><p>{summary}</p>",
        id = escape(operation["operationId"].as_str().unwrap_or_default()),
        method = escape(method),
        path = escape(path),
        summary = escape(operation["summary"].as_str().unwrap_or_default()),
    );
    if let Some(description) = operation["description"].as_str() {
        out.push_str(&format!(
            "<p class=\"muted\">{}</p>",
            inline_code(description)
        ));
    }
    let needs_token = operation["security"]
        .as_array()
        .is_some_and(|s| !s.is_empty());
    out.push_str(if needs_token {
        "<p>Needs a bearer token.</p>"
    } else {
        "<p>Needs no token.</p>"
    });
    if let Some(params) = operation["parameters"].as_array() {
        out.push_str("<table><tr><th>Parameter</th><th>In</th><th>Description</th></tr>");
        for p in params {
            out.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                escape(p["name"].as_str().unwrap_or_default()),
                escape(p["in"].as_str().unwrap_or_default()),
                inline_code(p["description"].as_str().unwrap_or_default()),
            ));
        }
        out.push_str("</table>");
    }
    out.push_str("<table><tr><th>Status</th><th>Meaning</th></tr>");
    for (status, response) in operation["responses"].as_object().into_iter().flatten() {
        let description = response["description"].as_str().unwrap_or_default();
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(status),
            link_error_codes(description)
        ));
    }
    out.push_str("</table></div>");
    out
}

/// Turns the `` `code` `` list of an error response into links to the code pages.
fn link_error_codes(description: &str) -> String {
    let mut out = String::new();
    for (i, part) in description.split('`').enumerate() {
        if i % 2 == 1 {
            match ErrorCode::parse(part) {
                Some(code) => out.push_str(&format!(
                    "<a href=\"/docs/errors/{0}\"><code>{0}</code></a>",
                    code.as_str()
                )),
                None => out.push_str(&format!("<code>{}</code>", escape(part))),
            }
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

async fn rels(State(state): State<AppState>) -> Response {
    let prefix = &state.config.curie_prefix;
    let rows: String = Rel::ALL
        .iter()
        .map(|rel| {
            format!(
                "<tr><td><a href=\"/docs/rels/{name}\"><code>{prefix}:{name}</code></a></td><td>{doc}</td></tr>",
                name = rel.name(),
                prefix = escape(prefix),
                doc = inline_code(rel.documentation()),
            )
        })
        .collect();
    html(
        "Link relations",
        &format!("<table><tr><th>Relation</th><th>Meaning</th></tr>{rows}</table>"),
    )
}

async fn rel(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let rel = Rel::parse(&name).ok_or(ErrorCode::NotFound)?;
    Ok(html(
        &format!("{}:{}", state.config.curie_prefix, rel.name()),
        &format!("<p>{}</p>", inline_code(rel.documentation())),
    ))
}

async fn errors() -> Response {
    let rows: String = ErrorCode::ALL
        .iter()
        .map(|code| {
            format!(
                "<tr><td>{status}</td><td><a href=\"/docs/errors/{name}\"><code>{name}</code></a></td><td>{doc}</td></tr>",
                status = code.status().as_u16(),
                name = code.as_str(),
                doc = inline_code(code.documentation()),
            )
        })
        .collect();
    html(
        "Error codes",
        &format!(
            "<p>Every error answer has this body; <code>logref</code> is the request id \
             (the <code>X-Request-Id</code> header) under which the server logged the request.</p>\
             <pre>{{\n  \"_links\": {{\"help\": {{\"href\": \"/docs/errors/validation-failure\"}}}},\n  \
             \"logref\": \"01JDZ8...\",\n  \"statuscode\": 400,\n  \"code\": \"validation-failure\",\n  \
             \"message\": \"Validatie mislukt\",\n  \"details\": [{{\"field\": \"title\", \"code\": \
             \"too-short\", \"message\": \"...\", \"value\": \"ab\"}}]\n}}</pre>\
             <table><tr><th>Status</th><th>Code</th><th>Meaning</th></tr>{rows}</table>"
        ),
    )
}

async fn error(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let code = ErrorCode::parse(&name).ok_or(ErrorCode::NotFound)?;
    let language = state.config.region.language();
    Ok(html(
        code.as_str(),
        &format!(
            "<p>HTTP status <strong>{status}</strong>.</p><p>{doc}</p>\
             <p class=\"muted\">Message in this deployment's language: <q>{message}</q></p>",
            status = code.status(),
            doc = inline_code(code.documentation()),
            message = escape(code.message(language)),
        ),
    ))
}

async fn resources() -> Response {
    let rows: String = Resource::ALL
        .iter()
        .map(|r| {
            format!(
                "<tr><td><a href=\"/docs/resources/{name}\">{name}</a></td><td>{doc}</td></tr>",
                name = r.name(),
                doc = inline_code(r.documentation()),
            )
        })
        .collect();
    html(
        "Resource types",
        &format!("<table><tr><th>Resource</th><th>What it is</th></tr>{rows}</table>"),
    )
}

async fn resource(Path(name): Path<String>) -> Result<Response, ApiError> {
    let resource = Resource::parse(&name).ok_or(ErrorCode::NotFound)?;
    Ok(html(
        resource.name(),
        &format!("<p>{}</p>", inline_code(resource.documentation())),
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

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Escapes text and renders its `` `code` `` spans.
fn inline_code(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", escape(part))
            } else {
                escape(part)
            }
        })
        .collect()
}
