//! `Idempotency-Key` on every POST of the resource API: the same key with the same request
//! replays the first successful answer for 24 hours; with a different request it is 422
//! `idempotency-key-reused`. Keys live in the database, so every replica honours them.

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::app::AppState;
use crate::domain::locale::Text;
use crate::error::{ApiError, ErrorCode};
use crate::store::idempotency::{self as store, Stored};

use super::auth::Caller;
use super::render::Json;

pub const HEADER: &str = "idempotency-key";
/// How long a key is remembered.
pub const KEEP_SECONDS: i64 = 86_400;

pub async fn idempotency(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let Some(key) = request.headers().get(HEADER).cloned() else {
        return next.run(request).await;
    };
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return next.run(request).await;
    };
    let key = match key.to_str() {
        Ok(key) if (1..=255).contains(&key.len()) => key.to_owned(),
        _ => {
            return ApiError::new(ErrorCode::InvalidRequest)
                .with_message(Text::new(
                    "Idempotency-Key moet 1 tot 255 zichtbare ASCII-tekens zijn",
                    "Idempotency-Key doit comporter de 1 à 255 caractères ASCII visibles",
                ))
                .into_response();
        }
    };
    let (parts, body) = request.into_parts();
    let bytes = match to_bytes(body, state.config.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => return ApiError::new(ErrorCode::PayloadTooLarge).into_response(),
    };
    let mut hasher = Sha256::new();
    hasher.update(parts.uri.to_string().as_bytes());
    hasher.update(b"\n");
    hasher.update(&bytes);
    let fingerprint = hex::encode(hasher.finalize());
    let user = caller.user_id.map_or("-".to_owned(), |u| u.to_string());
    let scope_key = format!("{}/{user}/{key}", caller.client_id);
    let now = state.clock.now();
    let (claim_key, claim_fingerprint) = (scope_key.clone(), fingerprint.clone());
    let claimed = state
        .db
        .write(move |conn| {
            store::claim(
                conn,
                &claim_key,
                &claim_fingerprint,
                now,
                now - KEEP_SECONDS,
            )
        })
        .await;
    match claimed {
        Err(e) => ApiError::from(e).into_response(),
        Ok(Some(Stored::Done {
            fingerprint: first,
            response,
        })) if first == fingerprint => match Json::from_stored(&response) {
            Some(json) => {
                let mut response = json.into_response();
                response
                    .headers_mut()
                    .insert("idempotency-replayed", HeaderValue::from_static("true"));
                response
            }
            None => ApiError::internal("an unreadable idempotent response").into_response(),
        },
        Ok(Some(Stored::Pending { fingerprint: first })) if first == fingerprint => {
            ApiError::new(ErrorCode::ConflictingState)
                .with_message(Text::new(
                    "Een verzoek met deze Idempotency-Key loopt nog",
                    "Une requête avec cette Idempotency-Key est encore en cours",
                ))
                .into_response()
        }
        Ok(Some(_)) => ApiError::new(ErrorCode::IdempotencyKeyReused).into_response(),
        Ok(None) => {
            let response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            let stored = response
                .extensions()
                .get::<Json>()
                .filter(|json| json.status().is_success())
                .map(|json| (json.status().as_u16(), json.to_stored()));
            let result = state
                .db
                .write(move |conn| match stored {
                    Some((status, text)) => store::complete(conn, &scope_key, status, &text),
                    None => store::release(conn, &scope_key),
                })
                .await;
            if let Err(e) = result {
                // The request itself succeeded; a retry would run it again.
                tracing::error!(error = %e, "cannot keep an idempotent response");
            }
            response
        }
    }
}
