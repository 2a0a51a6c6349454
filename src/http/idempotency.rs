//! `Idempotency-Key` on every POST of the resource API: the same key with the same request
//! replays the first successful answer for 24 hours; with a different request it is 422
//! `idempotency-key-reused`. Keys live in the database, so every replica honours them.

use axum::body::Bytes;
use axum::body::{Body, HttpBody, to_bytes};
use axum::extract::FromRequestParts;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use tokio_util::task::TaskTracker;

use crate::domain::locale::Text;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;
use crate::store::Db;
use crate::store::idempotency::{self as store, Stored};

use super::auth::{UserWith, need};
use super::extract::ItemPath;
use super::extract::{body_cut_off, is_too_large};
use super::render::Json;
use crate::access::Caller;
use crate::usecase::{Error, images};

pub const HEADER: &str = "idempotency-key";
/// How long a key is remembered.
pub const KEEP_SECONDS: i64 = 86_400;

/// What a request is, for its key: its path and query, and its body. The query without an
/// `access_token` (a client that refreshed its token sends the same request with another);
/// a form by its parts in order (each one's name, file name, content type and bytes), not
/// its bytes, whose boundary a client draws afresh for each request, so that no retry of
/// an upload was the same request.
async fn fingerprint(target: &str, boundary: Option<String>, body: Bytes) -> String {
    let mut hasher = Sha256::new();
    hasher.update(target.as_bytes());
    hasher.update(b"\n");
    let form = match boundary {
        Some(boundary) => parts_digest(body.clone(), boundary).await,
        None => None,
    };
    match form {
        Some(parts) => hasher.update(parts),
        // Not a form, or not a well-formed one (which the handler refuses, keeping nothing).
        None => hasher.update(&body),
    }
    hex::encode(hasher.finalize())
}

/// How much of a form the parser is handed at a time: it copies what it is handed into a
/// buffer of its own, which the whole body at once would double.
const FORM_SLICE: usize = 64 * 1024;

/// The digest of a form's parts, or none if the body is not a well-formed form. Each part
/// is hashed as it is read, so that no more than a slice of the body is copied, whatever
/// its parts' sizes (the room reserved for the body counts two copies of it).
async fn parts_digest(body: Bytes, boundary: String) -> Option<[u8; 32]> {
    let slices = (0..body.len())
        .step_by(FORM_SLICE)
        .map(move |start| {
            Ok::<_, std::io::Error>(body.slice(start..(start + FORM_SLICE).min(body.len())))
        })
        .collect::<Vec<_>>();
    let mut form = multer::Multipart::new(futures_util::stream::iter(slices), boundary);
    let mut hasher = Sha256::new();
    while let Some(mut part) = form.next_field().await.ok()? {
        let described = [
            part.name().map(str::to_owned),
            part.file_name().map(str::to_owned),
            part.content_type().map(|mime| mime.to_string()),
        ];
        for text in &described {
            let text = text.as_deref().unwrap_or_default();
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        // The part's bytes, then where they end: framing that no other form shares.
        let mut length = 0u64;
        while let Some(chunk) = part.chunk().await.ok()? {
            length += chunk.len() as u64;
            hasher.update(&chunk);
        }
        hasher.update(length.to_le_bytes());
    }
    Some(hasher.finalize().into())
}

/// The request's path and query, without an `access_token` parameter (as it came when it
/// has none, so that fingerprints kept before this rule still match).
fn without_access_token(uri: &Uri) -> String {
    let Some(query) = uri.query() else {
        return uri.to_string();
    };
    let pairs = form_urlencoded::parse(query.as_bytes());
    if !pairs.clone().any(|(name, _)| name == "access_token") {
        return uri.to_string();
    }
    let kept: Vec<(String, String)> = pairs
        .into_owned()
        .filter(|(name, _)| name != "access_token")
        .collect();
    let query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(kept)
        .finish();
    format!("{}?{query}", uri.path())
}

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
        Ok(key) if valid_key(key) => key.to_owned(),
        _ => {
            return ApiError::new(ErrorCode::InvalidRequest)
                .with_message(Text::new(
                    "Idempotency-Key moet 1 tot 255 zichtbare ASCII-tekens zijn",
                    "Idempotency-Key doit comporter de 1 à 255 caractères ASCII visibles",
                ))
                .into_response();
        }
    };
    let (mut parts, body) = request.into_parts();
    // Image uploads take more than other bodies (`http::images`). Such a body is read here
    // only for the ad's seller: anyone else goes on to the handler, which refuses them
    // without reading it, as it would without a key (a refusal is never kept, so there is
    // nothing to replay).
    let upload = parts.uri.path().ends_with("/images");
    if upload {
        match may_upload(&state, &mut parts).await {
            Ok(true) => {}
            Ok(false) => return next.run(Request::from_parts(parts, body)).await,
            Err(unavailable) => return unavailable,
        }
    }
    let limit = if upload {
        // Two copies of the body: the one read here, kept for the replay's fingerprint,
        // and the files the handler reads out of it.
        let expected = super::images::expected_bytes(&parts.headers, &state.config);
        let room = state.uploads.reserve(expected.saturating_mul(2)).await;
        parts.extensions.insert(room);
        // Read no further than the handler would: the room reserved is for that much.
        super::images::body_limit(&parts.headers, &state.config)
    } else {
        state.config.max_body_bytes
    };
    let bytes = match to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(e) if is_too_large(&e) && upload => {
            return super::images::body_too_large(&parts.headers, &state.config).into_response();
        }
        Err(e) if is_too_large(&e) => {
            return ApiError::new(ErrorCode::PayloadTooLarge).into_response();
        }
        Err(_) => return body_cut_off().into_response(),
    };
    // On a blocking thread: an image upload's body may be hundreds of megabytes, whose
    // hashing would hold a runtime worker that other requests wait for.
    let target = without_access_token(&parts.uri);
    let boundary = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| multer::parse_boundary(v).ok());
    let (body_bytes, runtime) = (bytes.clone(), tokio::runtime::Handle::current());
    let hashed = crate::usecase::on_blocking_thread(move || {
        runtime.block_on(fingerprint(&target, boundary, body_bytes))
    })
    .await;
    let Some(fingerprint) = hashed else {
        // The server is stopping.
        return ApiError::new(ErrorCode::ServiceUnavailable).into_response();
    };
    let user = caller.user_id.map_or("-".to_owned(), |u| u.to_string());
    let scope_key = format!("{}/{user}/{key}", caller.client_id);
    let now = state.clock.now();
    let (claim_key, claim_fingerprint) = (scope_key.clone(), fingerprint.clone());
    // No request's work runs longer than twice the timeout (below: the timeout answers the
    // client, the work goes on to keep its answer, and is given up at twice the timeout,
    // which frees its key); a claim pending for longer, and a minute more for the clocks,
    // belongs to a replica that stopped midway. Running the retry then risks a second
    // effect only if that replica stopped in the moment between its commit and keeping
    // the answer; refusing every retry for a day would be worse.
    let forget = store::Forget {
        expired_before: now - KEEP_SECONDS,
        abandoned_before: now - taken_over_after(state.config.request_timeout_secs),
    };
    let claimed = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                store::claim(conn, &claim_key, &claim_fingerprint, now, forget).await
            })
        })
        .await;
    match claimed {
        Err(e) => ApiError::from(e).into_response(),
        Ok(Some(Stored::Done {
            fingerprint: first,
            status,
            response,
        })) if first == fingerprint => replay(status, &response),
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
            let claim = store::Claim {
                scope_key,
                claimed_at: now,
            };
            let pending = PendingKey {
                db: Some(state.db.clone()),
                tasks: state.detached.clone(),
                claim: claim.clone(),
            };
            let request = Request::from_parts(parts, Body::from(bytes));
            let db = state.db.clone();
            let longest = std::time::Duration::from_secs(
                abandoned_after(state.config.request_timeout_secs).unsigned_abs(),
            );
            // A task of its own, so that the request runs to its end when this one is
            // dropped (the timeout answered 408, or the client hung up): a write it began
            // may commit all the same, and its answer is then kept for the retry, where
            // freeing the key at once let the retry make a second one. Bounded by the
            // time after which its claim counts as abandoned (the guard frees it then).
            // Shutdown waits for it (`AppState::detached`).
            let run = state.detached.spawn(async move {
                let response = tokio::time::timeout(longest, next.run(request))
                    .await
                    .ok()?;
                keep(&db, claim, to_keep(&response)).await;
                pending.settled();
                Some(response)
            });
            match run.await {
                Ok(Some(response)) => response,
                Ok(None) => ApiError::new(ErrorCode::RequestTimeout).into_response(),
                // The panic goes on to the layer that answers panics.
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => {
                    ApiError::internal(format!("a request's task ended: {e}")).into_response()
                }
            }
        }
    }
}

/// Whether the caller may upload to the ad whose images the path names, by the handler's
/// own checks (a user's token with `write`, the ad's seller); a database that does not
/// answer is answered (503), not taken for a refusal, which would run the upload without
/// its key.
async fn may_upload(state: &AppState, parts: &mut Parts) -> Result<bool, Response> {
    let Ok(UserWith(seller, _)) = UserWith::<need::Write>::from_request_parts(parts, state).await
    else {
        return Ok(false);
    };
    let Ok(ItemPath(item)) = ItemPath::from_request_parts(parts, state).await else {
        return Ok(false);
    };
    match images::check_seller::<ApiError>(&state.db, seller, item, state.clock.now()).await {
        Ok(()) => Ok(true),
        Err(Error::Db(e)) => Err(ApiError::from(e).into_response()),
        Err(_) => Ok(false),
    }
}

/// Keeps a claimed key's answer (`kept`, see [`to_keep`]), or frees the key of a request
/// that did not succeed. A database that does not answer is tried again for about three
/// seconds ([`KEEP_TRIES`]): an answer not kept leaves the key pending, and once its
/// claim counts as abandoned a retry runs the request again (an `outcome-unknown` comes
/// when the database did not answer for a moment, so the moment after matters).
async fn keep(db: &Db, claim: store::Claim, kept: Option<(u16, String)>) {
    let mut pause = std::time::Duration::from_millis(200);
    for attempt in 1..=KEEP_TRIES {
        let (claim, kept) = (claim.clone(), kept.clone());
        let result = db
            .write(move |conn| {
                Box::pin(async move {
                    match kept {
                        Some((status, text)) => store::complete(conn, &claim, status, &text).await,
                        None => store::release(conn, &claim).await,
                    }
                })
            })
            .await;
        match result {
            Ok(()) => return,
            Err(_) if attempt < KEEP_TRIES => {
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            // A retry may run the request again.
            Err(e) => tracing::error!(error = %e, "cannot keep an idempotent response"),
        }
    }
}

/// Tries to keep an answer: 0.2, 0.4, 0.8 and 1.6 s apart.
const KEEP_TRIES: u32 = 5;

/// Seconds after which a claim whose request never finished is freed: twice the request
/// timeout.
pub fn abandoned_after(request_timeout_secs: u64) -> i64 {
    i64::try_from(request_timeout_secs)
        .unwrap_or(i64::MAX)
        .saturating_mul(2)
}

/// How far apart the replicas' clocks may be (docs/OPERATIONS.md: within a minute).
const CLOCKS_APART_SECS: i64 = 60;

/// Seconds after which a pending claim is taken over by a retry: its request was given
/// up at [`abandoned_after`] by the clock of the replica that ran it, and the retry's
/// replica judges by its own clock, which may be [`CLOCKS_APART_SECS`] behind or ahead.
/// Without that margin a retry could run while the first request still runs.
pub fn taken_over_after(request_timeout_secs: u64) -> i64 {
    abandoned_after(request_timeout_secs).saturating_add(CLOCKS_APART_SECS)
}

/// 1 to 255 visible ASCII characters (no spaces or tabs).
fn valid_key(key: &str) -> bool {
    (1..=255).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic())
}

/// What a request whose write may or may not have committed ([`ErrorCode::OutcomeUnknown`])
/// keeps instead of an answer: its retries get that answer again, instead of running a
/// second time a change that may have been made.
const OUTCOME_UNKNOWN: &str = "outcome-unknown";

/// What a successful answer leaves for replay: its status and its JSON answer, or an empty
/// text for an answer without a body (an upcall confirmation's 201); for an answer of
/// unknown outcome, [`OUTCOME_UNKNOWN`]. Other failures keep nothing (their retry runs).
fn to_keep(response: &Response) -> Option<(u16, String)> {
    if let Some(error) = response.extensions().get::<ApiError>()
        && error.code == ErrorCode::OutcomeUnknown
    {
        return Some((error.code.status().as_u16(), OUTCOME_UNKNOWN.to_owned()));
    }
    // A `Json` answer's body is written later, by the render middleware; one with nothing
    // to keep (its body could not be written, which render answers as a 500) keeps nothing.
    if let Some(json) = response.extensions().get::<Json>() {
        let stored = json.to_stored();
        return (json.status().is_success() && !stored.is_empty())
            .then(|| (json.status().as_u16(), stored));
    }
    let bodiless = response.body().size_hint().exact() == Some(0);
    (response.status().is_success() && bodiless)
        .then(|| (response.status().as_u16(), String::new()))
}

fn replay(status: u16, stored: &str) -> Response {
    let answer = if stored == OUTCOME_UNKNOWN {
        Some(ApiError::new(ErrorCode::OutcomeUnknown).into_response())
    } else if stored.is_empty() {
        StatusCode::from_u16(status)
            .ok()
            .map(IntoResponse::into_response)
    } else {
        Json::from_stored(stored).map(IntoResponse::into_response)
    };
    match answer {
        Some(mut response) => {
            response
                .headers_mut()
                .insert("idempotency-replayed", HeaderValue::from_static("true"));
            response
        }
        None => ApiError::internal("an unreadable idempotent response").into_response(),
    }
}

/// A claimed key whose answer is not kept yet. If the request ends before that (a timeout,
/// a client that hung up, a panic: the layers outside drop this middleware's future), the
/// guard frees the key on drop, so that a retry runs again instead of meeting 409 for a day.
struct PendingKey {
    /// `None` once the answer was kept or the key released.
    db: Option<Db>,
    /// Where the release runs, so that shutdown waits for it.
    tasks: TaskTracker,
    claim: store::Claim,
}

impl PendingKey {
    fn settled(mut self) {
        self.db = None;
    }
}

impl Drop for PendingKey {
    fn drop(&mut self) {
        let Some(db) = self.db.take() else {
            return;
        };
        let claim = self.claim.clone();
        // Drop cannot wait: the release runs as a task of its own. `release` only deletes
        // a key still pending, so it cannot undo an answer kept meanwhile.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            self.tasks.spawn_on(
                async move {
                    if let Err(e) = db
                        .write(move |conn| {
                            Box::pin(async move { store::release(conn, &claim).await })
                        })
                        .await
                    {
                        tracing::warn!(error = %e, "cannot free an idempotency key");
                    }
                },
                &runtime,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::DbError;
    use crate::store::migrations;

    /// A request whose work panics or is given up (at twice the timeout) holding a claimed
    /// key frees it: the layers that catch those sit outside this middleware.
    #[tokio::test]
    async fn a_claimed_key_is_freed_when_its_request_ends_early() {
        let (db, _dir) = migrations::migrated_sqlite().await;
        let claim = |db: Db, key: &'static str| async move {
            db.write(move |conn| {
                let forget = store::Forget {
                    expired_before: 0,
                    abandoned_before: 0,
                };
                Box::pin(async move { store::claim(conn, key, "fingerprint", 10, forget).await })
            })
            .await
            .unwrap()
        };
        let pending = |db: &Db, key: &str| PendingKey {
            db: Some(db.clone()),
            tasks: TaskTracker::new(),
            claim: store::Claim {
                scope_key: key.to_owned(),
                claimed_at: 10,
            },
        };
        for key in ["panicked", "dropped", "settled"] {
            assert_eq!(claim(db.clone(), key).await, None, "{key} was free");
        }
        let guard = pending(&db, "panicked");
        let panicked = tokio::spawn(async move {
            let _guard = guard;
            panic!("a handler panics");
        });
        assert!(panicked.await.unwrap_err().is_panic());
        let guard = pending(&db, "dropped");
        let dropped = tokio::time::timeout(std::time::Duration::from_millis(10), async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        assert!(dropped.await.is_err(), "timed out");
        pending(&db, "settled").settled();
        // The release runs on a task of its own: give it a moment.
        for key in ["panicked", "dropped"] {
            let mut freed = false;
            for _ in 0..200 {
                let free = claim(db.clone(), key).await.is_none();
                if free {
                    freed = true;
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            assert!(freed, "{key} stays pending");
        }
        assert!(
            matches!(
                claim(db.clone(), "settled").await,
                Some(Stored::Pending { .. })
            ),
            "a settled key is left to the middleware"
        );
    }

    /// A key freed as abandoned and claimed again belongs to the second claim: the first
    /// claimant's late answer, or its release, changes nothing of it.
    #[tokio::test]
    async fn a_late_claimant_changes_nothing_of_a_later_claim() {
        let (db, _dir) = migrations::migrated_sqlite().await;
        let claim_at = |now: i64, abandoned_before: i64| {
            let db = db.clone();
            async move {
                db.write(move |conn| {
                    let forget = store::Forget {
                        expired_before: 0,
                        abandoned_before,
                    };
                    Box::pin(async move { store::claim(conn, "k", "print", now, forget).await })
                })
                .await
                .unwrap()
            }
        };
        let (first, second) = (
            store::Claim {
                scope_key: "k".into(),
                claimed_at: 10,
            },
            store::Claim {
                scope_key: "k".into(),
                claimed_at: 100,
            },
        );
        assert_eq!(claim_at(10, 0).await, None);
        // Pending since 10, abandoned by 50: the claim at 100 takes the key over.
        assert_eq!(claim_at(100, 50).await, None);
        keep(&db, first.clone(), Some((201, "first".into()))).await;
        keep(&db, first, None).await;
        assert!(matches!(
            claim_at(101, 0).await,
            Some(Stored::Pending { .. })
        ));
        keep(&db, second, Some((201, "second".into()))).await;
        assert_eq!(
            claim_at(102, 0).await,
            Some(Stored::Done {
                fingerprint: "print".into(),
                status: 201,
                response: "second".into()
            })
        );
    }

    /// A write that may have committed keeps its answer: a retry under the key gets it
    /// again, and does not make the change a second time. Other failures keep nothing.
    #[test]
    fn an_answer_of_unknown_outcome_is_kept_and_replayed() {
        let unknown = ApiError::from(DbError::OutcomeUnknown("lost at COMMIT".into()));
        let kept = to_keep(&unknown.into_response());
        assert_eq!(kept, Some((503, OUTCOME_UNKNOWN.to_owned())));
        let (status, stored) = kept.unwrap();
        let replayed = replay(status, &stored);
        assert_eq!(replayed.status(), 503);
        assert_eq!(replayed.headers()["idempotency-replayed"], "true");
        let error = replayed.extensions().get::<ApiError>().unwrap();
        assert_eq!(error.code, ErrorCode::OutcomeUnknown);
        let unavailable = ApiError::from(DbError::Unavailable("lost".into()));
        assert_eq!(to_keep(&unavailable.into_response()), None);
    }

    #[test]
    fn keys_are_visible_ascii() {
        assert!(valid_key("a-b_c.1:2"));
        assert!(valid_key(&"k".repeat(255)));
        for bad in ["", "a b", "a\tb", "sleutel-é", &"k".repeat(256)] {
            assert!(!valid_key(bad), "{bad:?}");
        }
    }
}
