//! One registration per route: it adds the route to the router (under `/v1` and `/v2` for
//! resources) and describes it for the OpenAPI document, so the two cannot drift apart.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, on};
use serde_json::{Map, Value, json};

use super::HttpState;
use super::oauth::server_refusal_code;
use crate::error::ErrorCode;

/// What `ItemId::parse` takes: `m` and a positive number of at most 18 digits without
/// leading zeros.
pub const ITEM_ID_PATTERN: &str = "^m[1-9][0-9]{0,17}$";

/// The description of one operation.
#[derive(Clone, Debug)]
pub struct Operation {
    method: &'static str,
    path: &'static str,
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
    description: &'static str,
    authenticated: bool,
    client_authenticated: bool,
    params: Vec<Value>,
    /// The media types of the request body and the component schema of each.
    body: Vec<(&'static str, &'static str)>,
    responses: Vec<(u16, &'static str, Body)>,
    errors: Vec<ErrorCode>,
}

/// What an answer carries.
#[derive(Clone, Copy, Debug)]
enum Body {
    /// Nothing (204, 302, 304).
    Empty,
    /// JSON of a component schema.
    Json(&'static str),
    /// A body of another media type (HTML pages, CSS, Prometheus text).
    Media(&'static str),
}

/// Starts the description of `GET path`, where `path` is under the version prefix
/// (`/categories/{categoryId}`) for resources and absolute for the rest.
pub fn get(path: &'static str, id: &'static str) -> Operation {
    operation("get", path, id)
}

pub fn post(path: &'static str, id: &'static str) -> Operation {
    operation("post", path, id)
}

pub fn put(path: &'static str, id: &'static str) -> Operation {
    operation("put", path, id)
}

pub fn patch(path: &'static str, id: &'static str) -> Operation {
    operation("patch", path, id)
}

pub fn delete(path: &'static str, id: &'static str) -> Operation {
    operation("delete", path, id)
}

fn operation(method: &'static str, path: &'static str, id: &'static str) -> Operation {
    Operation {
        method,
        path,
        id,
        tag: "",
        summary: "",
        description: "",
        authenticated: false,
        client_authenticated: false,
        params: Vec::new(),
        body: Vec::new(),
        responses: Vec::new(),
        errors: Vec::new(),
    }
}

impl Operation {
    pub fn tag(mut self, tag: &'static str) -> Self {
        self.tag = tag;
        self
    }

    pub fn summary(mut self, summary: &'static str) -> Self {
        self.summary = summary;
        self
    }

    pub fn description(mut self, description: &'static str) -> Self {
        self.description = description;
        self
    }

    /// The operation needs a bearer token (every `/v1` and `/v2` resource but the roots).
    pub fn authenticated(mut self) -> Self {
        self.authenticated = true;
        self
    }

    /// A path parameter that is an id: a positive integer (the server refuses 0, negatives
    /// and anything past 64 bits).
    /// The authorization server's client authentication: HTTP Basic, or `client_id` and
    /// `client_secret` in the body (or `client_id` alone for a public client).
    pub fn client_authenticated(mut self) -> Self {
        self.client_authenticated = true;
        self
    }

    /// The request body: its media type and the component schema it follows. What the
    /// schema cannot say (a category's attributes, an unknown user) the server checks too.
    /// A JSON body brings the answers to what such a body can be wrong with (`all_errors`).
    pub fn body(mut self, media_type: &'static str, schema: &'static str) -> Self {
        self.body.push((media_type, schema));
        self
    }

    /// A path parameter that is an id.
    pub fn path_param(self, name: &'static str, description: &'static str) -> Self {
        let id = json!({"type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX});
        self.path(name, description, id)
    }

    /// A path parameter of text (a `mediaId`, a documentation page's name).
    pub fn path_text_param(self, name: &'static str, description: &'static str) -> Self {
        self.path(name, description, json!({"type": "string"}))
    }

    /// A path parameter that takes one of `values`.
    pub fn path_enum_param(
        self,
        name: &'static str,
        values: &[&str],
        description: &'static str,
    ) -> Self {
        self.path(name, description, json!({"type": "string", "enum": values}))
    }

    /// The `itemId` path parameter: `m` and the ad's number (as `ItemId::parse` takes it).
    pub fn item_param(self) -> Self {
        self.path(
            "itemId",
            "`m` followed by the advertisement's number.",
            json!({"type": "string", "pattern": ITEM_ID_PATTERN}),
        )
    }

    fn path(mut self, name: &'static str, description: &'static str, schema: Value) -> Self {
        self.params.push(json!({
            "name": name, "in": "path", "required": true, "description": description,
            "schema": schema,
        }));
        self
    }

    pub fn query_param(self, name: &'static str, schema: Value, description: &'static str) -> Self {
        self.query(name, false, schema, description)
    }

    /// A query parameter the operation cannot do without.
    pub fn required_query_param(
        self,
        name: &'static str,
        schema: Value,
        description: &'static str,
    ) -> Self {
        self.query(name, true, schema, description)
    }

    fn query(
        mut self,
        name: &'static str,
        required: bool,
        schema: Value,
        description: &'static str,
    ) -> Self {
        self.params.push(json!({
            "name": name, "in": "query", "required": required, "description": description,
            "schema": schema,
        }));
        self
    }

    /// A successful answer with the schema (a component name) of its JSON body.
    pub fn ok(mut self, status: u16, description: &'static str, schema: &'static str) -> Self {
        self.responses
            .push((status, description, Body::Json(schema)));
        self
    }

    /// A successful answer without a body.
    pub fn ok_empty(mut self, status: u16, description: &'static str) -> Self {
        self.responses.push((status, description, Body::Empty));
        self
    }

    /// An answer whose body is not JSON (`text/html`, `text/css`, `text/plain`).
    pub fn media(
        mut self,
        status: u16,
        description: &'static str,
        media_type: &'static str,
    ) -> Self {
        self.responses
            .push((status, description, Body::Media(media_type)));
        self
    }

    /// An HTML page as the answer.
    pub fn html(self, status: u16, description: &'static str) -> Self {
        self.media(status, description, "text/html")
    }

    /// A failure with a JSON body of its own rather than the `Error` of the resource API
    /// (the authorization server's RFC 6749 errors).
    pub fn fails(mut self, status: u16, description: &'static str, schema: &'static str) -> Self {
        self.responses
            .push((status, description, Body::Json(schema)));
        self
    }

    /// Error codes this operation answers with (each documented at `/docs/errors/{code}`).
    pub fn errors(mut self, codes: &[ErrorCode]) -> Self {
        self.errors.extend_from_slice(codes);
        self
    }

    fn filter(&self) -> MethodFilter {
        match self.method {
            "get" => MethodFilter::GET,
            "post" => MethodFilter::POST,
            "put" => MethodFilter::PUT,
            "patch" => MethodFilter::PATCH,
            _ => MethodFilter::DELETE,
        }
    }

    /// The error codes the operation answers with: its own, and those every operation of
    /// its kind can meet on the way (middleware and layers).
    fn all_errors(&self) -> Vec<ErrorCode> {
        let mut errors = self.errors.clone();
        let is_json = |(media_type, _): &&(&str, &str)| {
            *media_type == "application/json" || media_type.ends_with("+json")
        };
        let json_bodies = self.body.iter().filter(is_json).count();
        if json_bodies > 0 {
            errors.extend([ErrorCode::ValidationFailure, ErrorCode::InvalidJson]);
        }
        if json_bodies > 0 && json_bodies == self.body.len() {
            // A JSON-only operation refuses any other body as incorrect-content-type; one
            // that also takes other types (images) answers 415 itself.
            errors.push(ErrorCode::IncorrectContentType);
        }
        // The timeout layer covers every route.
        errors.push(ErrorCode::RequestTimeout);
        if matches!(self.method, "post" | "put" | "patch") {
            errors.push(ErrorCode::PayloadTooLarge);
        }
        if self.method != "get" {
            // A write whose connection to PostgreSQL was lost as it committed.
            errors.push(ErrorCode::OutcomeUnknown);
        }
        if self.authenticated {
            // The bearer middleware: no or a bad token, a token given twice, and the token
            // lookup, which needs the database.
            errors.extend([
                ErrorCode::Unauthenticated,
                ErrorCode::InvalidRequest,
                ErrorCode::ServiceUnavailable,
            ]);
            if self.method == "post" {
                // Idempotency-Key: malformed, still running, or reused for another request.
                errors.extend([ErrorCode::ConflictingState, ErrorCode::IdempotencyKeyReused]);
            }
        }
        errors.sort_by_key(|c| (c.status().as_u16(), c.as_str()));
        errors.dedup();
        errors
    }

    fn to_openapi(&self, path_prefix: &str) -> (String, Value) {
        let mut responses = Map::new();
        for (status, description, body) in &self.responses {
            let mut response = json!({"description": description});
            match body {
                Body::Empty => {}
                Body::Json(schema) => {
                    response["content"] = json!({"application/json": {
                        "schema": {"$ref": format!("#/components/schemas/{schema}")}
                    }});
                }
                Body::Media(media_type) => {
                    response["content"] = json!({*media_type: {"schema": {"type": "string"}}});
                }
            }
            // Several media types of one status (an image as JPEG or WebP) share its entry.
            match responses.get_mut(&status.to_string()) {
                Some(Value::Object(existing)) => {
                    if let (Some(Value::Object(into)), Some(Value::Object(more))) =
                        (existing.get_mut("content"), response.get("content"))
                    {
                        into.extend(more.clone());
                    }
                }
                _ => {
                    responses.insert(status.to_string(), response);
                }
            }
        }
        // The authorization server's client endpoints answer every error as RFC 6749 does
        // (`render`), naming the API's error code in `error_description`.
        let error_schema = if self.client_authenticated {
            "#/components/schemas/OAuthError"
        } else {
            "#/components/schemas/Error"
        };
        for code in self.all_errors() {
            let status = code.status().as_u16().to_string();
            let entry = responses.entry(status.clone()).or_insert_with(|| {
                json!({
                    "description": "",
                    "content": {"application/json": {"schema": {"$ref": error_schema}}},
                })
            });
            assert_eq!(
                entry["content"]["application/json"]["schema"]["$ref"],
                error_schema,
                "{} {}: {status} is declared with another body and as {}",
                self.method,
                self.path,
                code.as_str()
            );
            let text = entry["description"].as_str().unwrap_or_default();
            let line = if self.client_authenticated {
                format!("`{}` (`{}`)", server_refusal_code(code), code.as_str())
            } else {
                format!("`{}`", code.as_str())
            };
            entry["description"] = json!(if text.is_empty() {
                line
            } else {
                format!("{text}, {line}")
            });
        }
        let mut operation = json!({
            "operationId": self.id,
            "tags": [self.tag],
            "summary": self.summary,
            "responses": responses,
        });
        if !self.description.is_empty() {
            operation["description"] = json!(self.description);
        }
        if !self.params.is_empty() {
            operation["parameters"] = json!(self.params);
        }
        if !self.body.is_empty() {
            let content: Map<String, Value> = self
                .body
                .iter()
                .map(|(media_type, schema)| {
                    let schema = json!({"$ref": format!("#/components/schemas/{schema}")});
                    ((*media_type).to_owned(), json!({"schema": schema}))
                })
                .collect();
            operation["requestBody"] = json!({"required": true, "content": content});
        }
        operation["security"] = if self.authenticated {
            json!([{"bearer": []}])
        } else if self.client_authenticated {
            json!([{"clientBasic": []}, {}])
        } else {
            json!([])
        };
        (format!("{path_prefix}{}", self.path), operation)
    }
}

/// The router and the operations registered on it.
pub struct Api {
    router: Router<HttpState>,
    operations: Vec<(String, &'static str, Value)>,
}

impl Api {
    pub fn new() -> Self {
        Api {
            router: Router::new(),
            operations: Vec::new(),
        }
    }

    /// A resource: served at `/v1{path}` and `/v2{path}` with the same handler, documented
    /// once under `/v1`.
    pub fn resource<H, T>(mut self, operation: Operation, handler: H) -> Self
    where
        H: Handler<T, HttpState>,
        T: 'static,
    {
        for version in ["/v1", "/v2"] {
            let path = format!("{version}{}", operation.path);
            self.router = self
                .router
                .route(&path, on(operation.filter(), handler.clone()));
        }
        let (path, document) = operation.to_openapi("/v1");
        self.operations.push((path, operation.method, document));
        self
    }

    /// A route outside the versioned API (roots, docs, health, the authorization server).
    pub fn route<H, T>(mut self, operation: Operation, handler: H) -> Self
    where
        H: Handler<T, HttpState>,
        T: 'static,
    {
        self.router = self
            .router
            .route(operation.path, on(operation.filter(), handler));
        let (path, document) = operation.to_openapi("");
        self.operations.push((path, operation.method, document));
        self
    }

    pub fn into_parts(self) -> (Router<HttpState>, Vec<(String, &'static str, Value)>) {
        (self.router, self.operations)
    }
}
