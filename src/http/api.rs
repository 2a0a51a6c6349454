//! One registration per route: it adds the route to the router (under `/v1` and `/v2` for
//! resources) and describes it for the OpenAPI document, so the two cannot drift apart.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, on};
use serde_json::{Map, Value, json};

use super::HttpState;
use crate::error::ErrorCode;

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
    params: Vec<Value>,
    responses: Vec<(u16, &'static str, Option<&'static str>)>,
    errors: Vec<ErrorCode>,
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
        params: Vec::new(),
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

    pub fn path_param(mut self, name: &'static str, description: &'static str) -> Self {
        self.params.push(json!({
            "name": name, "in": "path", "required": true, "description": description,
            "schema": {"type": "integer", "format": "int64"},
        }));
        self
    }

    /// A path parameter that is a name, not an id.
    pub fn name_param(mut self, name: &'static str, description: &'static str) -> Self {
        self.params.push(json!({
            "name": name, "in": "path", "required": true, "description": description,
            "schema": {"type": "string"},
        }));
        self
    }

    pub fn query_param(
        mut self,
        name: &'static str,
        schema: Value,
        description: &'static str,
    ) -> Self {
        self.params.push(json!({
            "name": name, "in": "query", "required": false, "description": description,
            "schema": schema,
        }));
        self
    }

    /// A successful answer with the schema (a component name) of its body.
    pub fn ok(mut self, status: u16, description: &'static str, schema: &'static str) -> Self {
        self.responses.push((status, description, Some(schema)));
        self
    }

    /// A successful answer without a JSON body.
    pub fn ok_empty(mut self, status: u16, description: &'static str) -> Self {
        self.responses.push((status, description, None));
        self
    }

    /// Error codes this operation answers with (each documented at `/docs/errors/{code}`).
    pub fn errors(mut self, codes: &[ErrorCode]) -> Self {
        self.errors.extend_from_slice(codes);
        self
    }

    /// The operation takes a JSON body, so it answers what a body can be wrong with.
    pub fn json_body(self) -> Self {
        self.errors(&[
            ErrorCode::ValidationFailure,
            ErrorCode::InvalidJson,
            ErrorCode::IncorrectContentType,
        ])
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

    fn to_openapi(&self, path_prefix: &str) -> (String, Value) {
        let mut responses = Map::new();
        for (status, description, schema) in &self.responses {
            let mut response = json!({"description": description});
            if let Some(schema) = schema {
                response["content"] = json!({"application/json": {
                    "schema": {"$ref": format!("#/components/schemas/{schema}")}
                }});
            }
            responses.insert(status.to_string(), response);
        }
        let mut errors = self.errors.clone();
        if self.authenticated {
            errors.push(ErrorCode::Unauthenticated);
        }
        errors.sort_by_key(|c| (c.status().as_u16(), c.as_str()));
        errors.dedup();
        for code in &errors {
            let status = code.status().as_u16().to_string();
            let entry = responses.entry(status).or_insert_with(|| {
                json!({
                    "description": "",
                    "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Error"}
                    }},
                })
            });
            let text = entry["description"].as_str().unwrap_or_default();
            let line = format!("`{}`", code.as_str());
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
        if self.authenticated {
            operation["security"] = json!([{"bearer": []}]);
        } else {
            operation["security"] = json!([]);
        }
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
