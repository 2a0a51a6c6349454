//! Request extractors that answer in the documented error format.

use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Path, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::domain::advertisement::ItemId;
use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
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

/// The `{itemId}` of the path, parsed: `m` and digits, else a field error on `itemId`.
pub struct ItemPath(pub ItemId);

/// The `{itemId}` and `{transactionId}` of the path, parsed.
pub struct TransactionPath(pub ItemId, pub i64);

/// The `{itemId}` and `{bidId}` of the path, parsed.
pub struct BidPath(pub ItemId, pub i64);

/// The `{userId}` of the path, parsed.
pub struct UserPath(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for ItemPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        parse_item(&path_text::<String, S>(parts, state).await?).map(ItemPath)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for TransactionPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let (item, id) = path_text::<(String, String), S>(parts, state).await?;
        Ok(TransactionPath(
            parse_item(&item)?,
            parse_id("transactionId", &id)?,
        ))
    }
}

/// The `{savedSearchId}` of the path, parsed.
pub struct SavedSearchPath(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for SavedSearchPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let id = path_text::<String, S>(parts, state).await?;
        parse_id("savedSearchId", &id).map(SavedSearchPath)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for BidPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let (item, id) = path_text::<(String, String), S>(parts, state).await?;
        Ok(BidPath(parse_item(&item)?, parse_id("bidId", &id)?))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for UserPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        parse_id("userId", &path_text::<String, S>(parts, state).await?).map(UserPath)
    }
}

/// The `{userId}` and `{reviewId}` of the path, parsed.
pub struct ReviewPath(pub i64, pub i64);

impl<S: Send + Sync> FromRequestParts<S> for ReviewPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let (user, id) = path_text::<(String, String), S>(parts, state).await?;
        Ok(ReviewPath(
            parse_id("userId", &user)?,
            parse_id("reviewId", &id)?,
        ))
    }
}

/// The `{orderId}` of the path, parsed.
pub struct OrderPath(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for OrderPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        parse_id("orderId", &path_text::<String, S>(parts, state).await?).map(OrderPath)
    }
}

/// The `{orderId}` and `{productId}` of the path, parsed.
pub struct ProductPath(pub i64, pub i64);

impl<S: Send + Sync> FromRequestParts<S> for ProductPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let (order, id) = path_text::<(String, String), S>(parts, state).await?;
        Ok(ProductPath(
            parse_id("orderId", &order)?,
            parse_id("productId", &id)?,
        ))
    }
}

/// The `{itemId}` and `{featureName}` of the path (the name is the use case's to judge).
pub struct FeaturePath(pub ItemId, pub String);

impl<S: Send + Sync> FromRequestParts<S> for FeaturePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let (item, name) = path_text::<(String, String), S>(parts, state).await?;
        Ok(FeaturePath(parse_item(&item)?, name))
    }
}

/// The path's parameters as text (the route names them, so they are there).
async fn path_text<T, S>(parts: &mut Parts, state: &S) -> Result<T, ApiError>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    let Path(text) = Path::<T>::from_request_parts(parts, state)
        .await
        .map_err(ApiError::internal)?;
    Ok(text)
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
    raw.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::validation(vec![not_a_number(field, raw)]))
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
/// (else 400 `invalid-json` naming where it failed). A handler whose permission depends on
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
        parse_json(&bytes).map(PatchBody)
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

/// Parses a JSON body; a syntax error or a value of the wrong shape is `invalid-json`
/// whose message says where.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let deserializer = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let inner = e.inner();
        let place = format!("line {}, column {}", inner.line(), inner.column());
        ApiError::new(ErrorCode::InvalidJson).with_message(Text::new(
            format!("De body is geen geldige JSON ({place}, `{}`)", e.path()),
            format!(
                "Le corps n'est pas du JSON valide ({place}, `{}`)",
                e.path()
            ),
        ))
    })
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
        let err = parse_json::<Body>(b"{\"title\": 12}").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidJson);
        assert!(err.message.unwrap().dutch.contains("title"));
        let err = parse_json::<Body>(b"{\"title\": ").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidJson);
    }
}
