//! Request extractors that answer in the documented error format.

use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Path, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::domain::advertisement::ItemId;
use crate::domain::field_error::FieldError;
use crate::domain::image::is_media_id;
use crate::domain::locale::Text;
use crate::domain::text::positive_id;
use crate::error::{ApiError, ErrorCode};
use crate::hal::Hal;
use crate::state::AppState;

/// What a resource handler starts from: the application's state, and the HAL names of the
/// version prefix the request came in under (`/v1` or `/v2`), which its links keep.
pub struct Context {
    pub state: AppState,
    pub hal: Hal,
}

impl<S: Send + Sync> FromRequestParts<S> for Context
where
    AppState: FromRef<S>,
{
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Infallible> {
        let state = AppState::from_ref(state);
        let version = if parts.uri.path().starts_with("/v2") {
            "v2"
        } else {
            "v1"
        };
        let hal = state.hal(version);
        Ok(Context { state, hal })
    }
}

/// One parameter of a request's path, parsed from its text by its type's rule: a value
/// that does not parse is a field error naming the parameter.
trait PathParam: Sized {
    fn parse(name: &str, raw: String) -> Result<Self, ApiError>;
}

/// An advertisement's number: `m` and digits.
impl PathParam for ItemId {
    fn parse(_: &str, raw: String) -> Result<Self, ApiError> {
        parse_item(&raw)
    }
}

/// A positive integer id.
impl PathParam for i64 {
    fn parse(name: &str, raw: String) -> Result<Self, ApiError> {
        parse_id(name, &raw)
    }
}

/// Text that the use case judges (a feature's name).
impl PathParam for String {
    fn parse(_: &str, raw: String) -> Result<Self, ApiError> {
        Ok(raw)
    }
}

/// An image's id: a UUID, in either case (RFC 9562 reads them so; Souk gives them in lower
/// case); anything else is malformed, 400 with a field error (api.md §2).
pub struct MediaId(pub String);

impl PathParam for MediaId {
    fn parse(name: &str, raw: String) -> Result<Self, ApiError> {
        let id = raw.to_ascii_lowercase();
        if is_media_id(&id) {
            return Ok(MediaId(id));
        }
        let error = FieldError::new(
            name,
            "invalid-value",
            Text::new("moet een UUID zijn", "doit être un UUID"),
        );
        Err(ApiError::validation(vec![error.with_value(raw)]))
    }
}

/// Declares extractors of named path parameters, each parsed by its type's [`PathParam`]
/// rule in the order given (so the first bad one is the one reported).
macro_rules! path_extractors {
    ($($(#[$doc:meta])* $name:ident($($param:literal: $ty:ty),+);)+) => {$(
        $(#[$doc])*
        pub struct $name($(pub $ty),+);

        impl<S: Send + Sync> FromRequestParts<S> for $name {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
                let mut params = path_params(parts, state).await?;
                Ok($name($(PathParam::parse($param, take_param(&mut params, $param)?)?),+))
            }
        }
    )+};
}

path_extractors! {
    /// The `{itemId}` of the path.
    ItemPath("itemId": ItemId);
    /// The `{itemId}` and `{transactionId}` of the path.
    TransactionPath("itemId": ItemId, "transactionId": i64);
    /// The `{itemId}` and `{bidId}` of the path.
    BidPath("itemId": ItemId, "bidId": i64);
    /// The `{itemId}` and `{featureName}` of the path.
    FeaturePath("itemId": ItemId, "featureName": String);
    /// The `{userId}` of the path.
    UserPath("userId": i64);
    /// The `{userId}` and `{reviewId}` of the path.
    ReviewPath("userId": i64, "reviewId": i64);
    /// The `{savedSearchId}` of the path.
    SavedSearchPath("savedSearchId": i64);
    /// The `{hookId}` of the path.
    HookPath("hookId": i64);
    /// The `{eventId}` of the path.
    EventPath("eventId": i64);
    /// The `{orderId}` of the path.
    OrderPath("orderId": i64);
    /// The `{orderId}` and `{productId}` of the path.
    ProductPath("orderId": i64, "productId": i64);
    /// The `{categoryId}` of the path (a main category's id).
    CategoryPath("categoryId": i64);
    /// The `{l1CategoryId}` and `{l2CategoryId}` of the path, as text: which of the two
    /// does not name a category is the use case's to say.
    LeafCategoryPath("l1CategoryId": String, "l2CategoryId": String);
    /// The `{mediaId}` of the path.
    MediaPath("mediaId": MediaId);
    /// The `{mediaId}` and `{size}` of the path.
    RenditionPath("mediaId": MediaId, "size": String);
}

/// The path's parameters by name, as text.
async fn path_params<S: Send + Sync>(
    parts: &mut Parts,
    state: &S,
) -> Result<Vec<(String, String)>, ApiError> {
    let Path(params) = Path::<Vec<(String, String)>>::from_request_parts(parts, state)
        .await
        .map_err(path_rejection)?;
    Ok(params)
}

/// Why the path's parameters could not be read: a parameter that is not UTF-8 once
/// percent-decoded (`/advertisements/%FF`) is the client's, a field error naming it;
/// anything else is a route that does not fit its extractor, a fault of the server's.
fn path_rejection(rejection: PathRejection) -> ApiError {
    if let PathRejection::FailedToDeserializePathParams(failed) = &rejection
        && let ErrorKind::InvalidUtf8InPathParam { key } = failed.kind()
    {
        return ApiError::validation(vec![FieldError::new(
            key.as_str(),
            "invalid-encoding",
            Text::new(
                "is geen geldige UTF-8 na percent-decodering",
                "n'est pas de l'UTF-8 valide après décodage des pourcentages",
            ),
        )]);
    }
    ApiError::internal(rejection)
}

/// Takes parameter `name` out of `params`; its absence is a route that does not name it,
/// a fault of the server's.
fn take_param(params: &mut Vec<(String, String)>, name: &str) -> Result<String, ApiError> {
    let at = params
        .iter()
        .position(|(key, _)| key == name)
        .ok_or_else(|| ApiError::internal(format!("the route has no path parameter {name}")))?;
    Ok(params.swap_remove(at).1)
}

fn parse_item(raw: &str) -> Result<ItemId, ApiError> {
    ItemId::parse(raw).ok_or_else(|| {
        ApiError::validation(vec![
            FieldError::new(
                "itemId",
                "invalid-item-id",
                Text::new(
                    "moet `m` gevolgd door cijfers zijn",
                    "doit être `m` suivi de chiffres",
                ),
            )
            .with_value(raw),
        ])
    })
}

/// Parses an integer id from the path; anything else is a field error naming `field`.
pub fn parse_id(field: &str, raw: &str) -> Result<i64, ApiError> {
    positive_id(raw).ok_or_else(|| ApiError::validation(vec![not_a_number(field, raw)]))
}

fn not_a_number(field: &str, raw: &str) -> FieldError {
    FieldError::new(
        field,
        "not-a-number",
        Text::new(
            "moet een positief geheel getal zijn",
            "doit être un nombre entier positif",
        ),
    )
    .with_value(raw)
}

/// Parses an optional integer query parameter the same way.
pub fn parse_optional_id(field: &str, raw: Option<&str>) -> Result<Option<i64>, ApiError> {
    raw.map(|raw| parse_id(field, raw)).transpose()
}

/// Parses an optional boolean query parameter: `true` or `false`, absent is `false`;
/// anything else is a field error naming `field`.
pub fn parse_flag(field: &str, raw: Option<&str>) -> Result<bool, ApiError> {
    match raw {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(ApiError::validation(vec![
            FieldError::new(
                field,
                "not-a-boolean",
                Text::new("moet true of false zijn", "doit être true ou false"),
            )
            .with_value(other),
        ])),
    }
}

/// The query string read into `T`, as axum's `Query` reads it, but answered in the
/// documented format: a parameter given twice is a field error (`duplicate`) naming it,
/// anything else that `T` cannot take a bare `invalid-request`.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(rejection) => Err(match repeated_parameter(parts.uri.query().unwrap_or("")) {
                Some(name) => ApiError::validation(vec![FieldError::repeated_parameter(name)]),
                None => ApiError::new(ErrorCode::for_status(rejection.status())),
            }),
        }
    }
}

/// The first parameter name that the query string holds more than once.
fn repeated_parameter(query: &str) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    form_urlencoded::parse(query.as_bytes())
        .map(|(name, _)| name)
        .find(|name| !seen.insert(name.clone()))
        .map(|name| name.into_owned())
}

/// The `offset` and `limit` query parameters of a collection, as text until
/// [`PageQuery::page`] checks them.
#[derive(serde::Deserialize)]
pub struct PageQuery {
    offset: Option<String>,
    limit: Option<String>,
}

impl PageQuery {
    /// The page asked for, by [`parse_page`]'s rules.
    pub fn page(&self, default: u64, max: u64) -> Result<crate::hal::Page, ApiError> {
        parse_page(self.offset.as_deref(), self.limit.as_deref(), default, max)
    }
}

/// `offset` and `limit` of a collection request: `offset` 0 to `i64::MAX` (the largest
/// both databases take, so it passes to SQL unchanged and `offset + limit` cannot
/// overflow), `limit` 1 to `max` (default `default`); anything else, a number too large
/// included, is 400 `pagination-invalid` naming the parameter.
pub fn parse_page(
    offset: Option<&str>,
    limit: Option<&str>,
    default: u64,
    max: u64,
) -> Result<crate::hal::Page, ApiError> {
    let bad = |field: &str, raw: &str, dutch: String, french: String| {
        let mut error = ApiError::new(ErrorCode::PaginationInvalid);
        error.details =
            vec![FieldError::new(field, "out-of-range", Text::new(dutch, french)).with_value(raw)];
        error
    };
    let offset = match offset {
        None => 0,
        Some(raw) => raw
            .parse::<i64>()
            .ok()
            .and_then(|offset| u64::try_from(offset).ok())
            .ok_or_else(|| {
                bad(
                    "offset",
                    raw,
                    format!("moet een geheel getal van 0 tot {} zijn", i64::MAX),
                    format!("doit être un nombre entier de 0 à {}", i64::MAX),
                )
            })?,
    };
    let limit = match limit {
        None => default,
        Some(raw) => raw
            .parse::<u64>()
            .ok()
            .filter(|l| (1..=max).contains(l))
            .ok_or_else(|| {
                bad(
                    "limit",
                    raw,
                    format!("moet tussen 1 en {max} liggen"),
                    format!("doit être compris entre 1 et {max}"),
                )
            })?,
    };
    Ok(crate::hal::Page { offset, limit })
}

/// A JSON request body: `Content-Type: application/json` (else 400
/// `incorrect-content-type`), within the size limit (else 413), and parseable into `T`
/// (else 400 `invalid-json` naming where it failed, or `validation-failure` naming a member
/// of the wrong type: see [`parse_json`]). A handler whose permission depends on
/// more than the token takes it as `Result<JsonBody<T>, ApiError>` and uses it only after
/// that check (see `auth::UserWith`).
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = body_of_type(request, state, "application/json").await?;
        parse_json(&bytes).map(JsonBody)
    }
}

/// An RFC 6902 JSON Patch body: `Content-Type: application/json-patch+json`, else as
/// [`JsonBody`].
pub struct PatchBody(pub json_patch::Patch);

impl<S: Send + Sync> FromRequest<S> for PatchBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = body_of_type(request, state, "application/json-patch+json").await?;
        parse_whole_json(&bytes).map(PatchBody)
    }
}

async fn body_of_type<S: Send + Sync>(
    request: Request,
    state: &S,
    media_type: &str,
) -> Result<Bytes, ApiError> {
    let matches = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case(media_type));
    if !matches {
        return Err(ErrorCode::IncorrectContentType.into());
    }
    Bytes::from_request(request, state)
        .await
        .map_err(|rejection| ApiError::new(ErrorCode::for_status(rejection.status())))
}

/// Whether reading a body failed because it passed its limit (413), rather than because it
/// was cut off on the way (a dropped connection, a body shorter than its length: 400
/// [`body_cut_off`]). The limit's error may sit under the body's own errors.
pub fn is_too_large(error: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if error.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// A body that did not come in full.
pub fn body_cut_off() -> ApiError {
    ApiError::new(ErrorCode::InvalidRequest).with_message(Text::new(
        "De body kwam niet volledig aan",
        "Le corps de la requête n'est pas arrivé en entier",
    ))
}

/// Parses a JSON body. A member of the wrong type (`{"brands": "Ford"}`) is a field at
/// fault: 400 `validation-failure` naming it, as api.md §2 has it. Malformed JSON, or JSON
/// whose whole shape is wrong (an array where an object belongs), is `invalid-json` whose
/// message says where.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    check_syntax(bytes)?;
    parse_document(bytes).map_err(|error| {
        let path = error.path();
        // Within an object: a body that is an array or a scalar is wrong as a whole.
        let is_member = matches!(
            path.iter().next(),
            Some(serde_path_to_error::Segment::Map { .. })
        );
        if error.inner().classify() == serde_json::error::Category::Data && is_member {
            ApiError::validation(vec![FieldError::new(
                path.to_string(),
                "invalid-value",
                Text::new(
                    "heeft een waarde van het verkeerde type",
                    "a une valeur du mauvais type",
                ),
            )])
        } else {
            invalid_json(error.inner(), &path.to_string())
        }
    })
}

/// Parses a JSON document that is read as a whole (a JSON Patch): any fault is
/// `invalid-json` whose message says where.
fn parse_whole_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    check_syntax(bytes)?;
    parse_document(bytes).map_err(|error| invalid_json(error.inner(), &error.path().to_string()))
}

/// The whole body is one JSON value and nothing after it: checked before it is read into
/// a type, which stops at the first member of the wrong type, before a fault further on.
fn check_syntax(bytes: &[u8]) -> Result<(), ApiError> {
    let deserializer = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize::<_, serde::de::IgnoredAny>(&mut *deserializer)
        .map_err(|error| invalid_json(error.inner(), &error.path().to_string()))?;
    deserializer
        .end()
        .map_err(|error| invalid_json(&error, "."))
}

fn parse_document<T: DeserializeOwned>(
    bytes: &[u8],
) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    let deserializer = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(deserializer)
}

fn invalid_json(error: &serde_json::Error, path: &str) -> ApiError {
    let place = format!("line {}, column {}", error.line(), error.column());
    ApiError::new(ErrorCode::InvalidJson).with_message(Text::new(
        format!("De body is geen geldige JSON ({place}, `{path}`)"),
        format!("Le corps n'est pas du JSON valide ({place}, `{path}`)"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_positive_integers() {
        assert_eq!(parse_id("categoryId", "91").unwrap(), 91);
        for bad in ["abc", "-1", "0", "1.5", ""] {
            let err = parse_id("categoryId", bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::ValidationFailure);
            assert_eq!(err.details[0].fields, vec!["categoryId".to_owned()]);
        }
    }

    #[test]
    fn offsets_stay_within_what_the_databases_take() {
        let page = parse_page(Some("9223372036854775807"), None, 30, 100).unwrap();
        assert_eq!(page.offset, i64::MAX as u64);
        for bad in [
            "-1",
            "9223372036854775808",
            "18446744073709551615",
            "1e3",
            "x",
        ] {
            let err = parse_page(Some(bad), None, 30, 100).unwrap_err();
            assert_eq!(err.code, ErrorCode::PaginationInvalid, "{bad}");
            assert_eq!(err.details[0].fields, vec!["offset".to_owned()]);
        }
        for bad in ["0", "101", "-1", "18446744073709551616"] {
            let err = parse_page(None, Some(bad), 30, 100).unwrap_err();
            assert_eq!(err.details[0].fields, vec!["limit".to_owned()], "{bad}");
        }
    }

    #[test]
    fn json_errors_say_where() {
        #[derive(Debug, serde::Deserialize)]
        struct Body {
            #[allow(dead_code)]
            title: String,
        }
        let err = parse_json::<Body>(b"{\"title\": ").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidJson);
        assert!(err.message.unwrap().dutch.contains("line 1, column 10"));
        for whole in ["5", "[1, 2]"] {
            let err = parse_json::<Body>(whole.as_bytes()).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidJson, "{whole}");
        }
    }

    #[test]
    fn a_member_of_the_wrong_type_is_a_field_error() {
        #[derive(Debug, serde::Deserialize)]
        struct Body {
            #[allow(dead_code)]
            title: Option<String>,
            #[allow(dead_code)]
            urls: Option<Vec<String>>,
        }
        for (body, field) in [
            (r#"{"title": 12}"#, "title"),
            (r#"{"urls": "http://x.test"}"#, "urls"),
            (r#"{"urls": ["http://x.test", 5]}"#, "urls[1]"),
        ] {
            let err = parse_json::<Body>(body.as_bytes()).unwrap_err();
            assert_eq!(err.code, ErrorCode::ValidationFailure, "{body}");
            assert_eq!(err.details[0].fields, vec![field.to_owned()], "{body}");
            assert_eq!(err.details[0].code, "invalid-value", "{body}");
        }
        // Malformed after the member: the body is not JSON, whatever its members are.
        for broken in [r#"{"title": 12, "#, r#"{"title": 12} and more"#] {
            let err = parse_json::<Body>(broken.as_bytes()).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidJson, "{broken}");
        }
        let whole = parse_whole_json::<Body>(br#"{"title": 12}"#).unwrap_err();
        assert_eq!(whole.code, ErrorCode::InvalidJson);
    }

    #[test]
    fn a_repeated_query_parameter_is_named() {
        assert_eq!(repeated_parameter("a=1&b=2&a=3"), Some("a".to_owned()));
        assert_eq!(
            repeated_parameter("post%63ode=1&postcode=2"),
            Some("postcode".to_owned())
        );
        assert_eq!(repeated_parameter("a=1&b=2"), None);
        assert_eq!(repeated_parameter(""), None);
    }
}
