//! The OpenAPI document a server publishes, held against what the server answers: every
//! answer a test receives must be documented for its route, method and status, and every
//! JSON body must match the schema documented for it, so the document cannot lie.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jsonschema::Validator;
use reqwest::Method;
use serde_json::{Value, json};

pub struct Document {
    document: Value,
    /// The document's paths, split into segments (`None` for a `{parameter}`).
    templates: Vec<(String, Vec<Option<String>>)>,
    /// Compiled schemas by JSON pointer into the document, made when first needed.
    validators: Mutex<HashMap<String, Arc<Validator>>>,
}

/// A documented operation: the path template and the method, as the document spells them.
#[derive(Clone, Debug)]
pub struct Route {
    pub template: String,
    pub method: String,
}

impl Document {
    pub fn new(document: Value) -> Document {
        let templates = document["paths"]
            .as_object()
            .expect("the document has paths")
            .keys()
            .map(|template| {
                let segments = template
                    .split('/')
                    .map(|s| (!s.starts_with('{')).then(|| s.to_owned()))
                    .collect();
                (template.clone(), segments)
            })
            .collect();
        Document {
            document,
            templates,
            validators: Mutex::default(),
        }
    }

    /// The operation a request reaches. Every `/v2` resource is documented once, under
    /// `/v1`; a path matching several templates takes the one with the most fixed segments.
    pub fn route(&self, method: &Method, path: &str) -> Result<Route, String> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let template = self
            .template(path)
            .or_else(|| {
                let rest = path.strip_prefix("/v2/")?;
                self.template(&format!("/v1/{rest}"))
            })
            .ok_or_else(|| format!("{method} {path}: no path of the OpenAPI document matches"))?;
        // A HEAD is a GET without the body (RFC 9110 §9.3.2): the document lists the GET.
        let method = match *method {
            Method::HEAD => "get".to_owned(),
            _ => method.as_str().to_lowercase(),
        };
        if self.document["paths"][&template][&method].is_object() {
            Ok(Route { template, method })
        } else {
            Err(format!(
                "{} {path}: the OpenAPI document has no {method} for {template}",
                method.to_uppercase()
            ))
        }
    }

    fn template(&self, path: &str) -> Option<String> {
        let segments: Vec<&str> = path.split('/').collect();
        self.templates
            .iter()
            .filter(|(_, template)| {
                template.len() == segments.len()
                    && template.iter().zip(&segments).all(|(t, s)| match t {
                        Some(fixed) => fixed == s,
                        None => !s.is_empty(),
                    })
            })
            .max_by_key(|(_, template)| template.iter().filter(|t| t.is_some()).count())
            .map(|(template, _)| template.clone())
    }

    /// Whether the document lists `status` among the answers of the operation.
    pub fn check_status(&self, route: &Route, status: u16) -> Result<(), String> {
        if self.response(route, status).is_object() {
            Ok(())
        } else {
            Err(format!(
                "{} {} answered {status}, which the OpenAPI document does not list",
                route.method.to_uppercase(),
                route.template
            ))
        }
    }

    fn response(&self, route: &Route, status: u16) -> &Value {
        &self.document["paths"][&route.template][&route.method]["responses"][status.to_string()]
    }

    /// Checks a JSON body against the schema documented for the operation and status, or
    /// (for a request outside the document: an unknown route or method) the `Error` schema.
    pub fn check_json(
        &self,
        route: Option<&Route>,
        status: u16,
        body: &Value,
    ) -> Result<(), String> {
        let (pointer, what) = match route {
            Some(route) => {
                if self.response(route, status)["content"]["application/json"]["schema"].is_null() {
                    return Err(format!(
                        "{} {} answered {status} with a JSON body, but the OpenAPI document gives that answer none",
                        route.method.to_uppercase(),
                        route.template
                    ));
                }
                let pointer = format!(
                    "/paths/{}/{}/responses/{status}/content/application~1json/schema",
                    route.template.replace('~', "~0").replace('/', "~1"),
                    route.method
                );
                let what = format!(
                    "{} {} {status}",
                    route.method.to_uppercase(),
                    route.template
                );
                (pointer, what)
            }
            None => (
                "/components/schemas/Error".to_owned(),
                format!("an answer {status} outside the document"),
            ),
        };
        let validator = self.validator(&pointer);
        let problems: Vec<String> = validator
            .iter_errors(body)
            .map(|error| format!("at '{}': {error}", error.instance_path()))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the body of {what} does not match its schema in the OpenAPI document:\n  {}\nbody: {body}",
                problems.join("\n  ")
            ))
        }
    }

    fn validator(&self, pointer: &str) -> Arc<Validator> {
        let mut validators = self.validators.lock().unwrap();
        if let Some(validator) = validators.get(pointer) {
            return validator.clone();
        }
        let schema = self
            .document
            .pointer(pointer)
            .unwrap_or_else(|| panic!("no schema at {pointer}"));
        // The schema refers to `#/components/schemas/...`: give it the components as root.
        let root = json!({"components": self.document["components"], "allOf": [schema]});
        let validator = Arc::new(
            jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&root)
                .unwrap_or_else(|e| panic!("the schema at {pointer} does not compile: {e}")),
        );
        validators.insert(pointer.to_owned(), validator.clone());
        validator
    }
}
