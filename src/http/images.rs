//! The images of an advertisement: uploading them (the bytes, or `multipart/form-data`),
//! the list, one image, its renditions' bytes and descriptions, deleting one, and putting
//! them in order. Each handler runs one use case of `usecase::images`.

use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Multipart, Request};
use axum::handler::Handler;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::access::Caller;
use crate::config::Config;
use crate::domain::advertisement::ItemId;
use crate::domain::field_error::FieldError;
use crate::domain::image::{Format, Size, media_type};
use crate::domain::locale::Text;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::images::blobs::BlobError;
use crate::images::check::{Limits, Refusal};
use crate::images::fetch::{FetchPolicy, fetch_all};
use crate::state::UploadRoom;
use crate::store::images::ImageRecord;
use crate::usecase::images::{self, Rendition, Rules, Upload};

use super::ads::{image_value, list_of_ad};
use super::api::{Api, Operation, delete, get, post, put};
use super::auth::{UserWith, ad_reader, need};
use super::extract::{
    Context, ItemPath, JsonBody, MediaId, MediaPath, Query, RenditionPath, body_cut_off,
    is_too_large, parse_flag, parse_json,
};
use super::render::{Json, header_list};

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let images = |operation: Operation| operation.tag("Images").authenticated();
    let one_image = |operation: Operation| {
        images(operation)
            .path_text_param(
                "mediaId",
                "The image's mediaId, a UUID (400 when it is not one).",
            )
            .errors(&[ValidationFailure])
    };
    let rendition = |operation: Operation| {
        one_image(operation).path_enum_param(
            "size",
            &["small", "medium", "large", "xlarge"],
            "The rendition's size.",
        )
    };
    api.resource(
        images(post("/advertisements/{itemId}/images", "addAdvertisementImages"))
            .item_param()
            .summary("Add images to an advertisement (the seller, scope `write`)")
            .description("The image itself (`image/jpeg`, `image/png` or `image/webp`, up to `SOUK_MAX_IMAGE_BYTES`), or `multipart/form-data` with one or more files (any field name; a field `replaceAll` with `true` replaces the ad's images). `?replaceAll=true` replaces every image of the ad with the new ones, in one step. An ad holds at most 24 images (`too-many-images`). The format is read from the bytes: a content type that says otherwise is 400 `content-type-mismatch`; not an image, a cut-off file and too many pixels are 400, a format other than JPEG, PNG and WebP 415, a file that is too large 413; nothing is stored then. Or the original's JSON form `{\"urls\": [...], \"replaceAll\": false}`: Souk downloads each URL itself (http or https, within `SOUK_IMAGE_FETCH_TIMEOUT_SECS`, at most `SOUK_IMAGE_FETCH_MAX_REDIRECTS` redirects, never to loopback, private, link-local or cloud-metadata addresses unless `SOUK_IMAGE_FETCH_ALLOW` names them) and checks the bytes as an upload; a URL that gives no image is a field error `urls[i]` (`invalid-url`, `address-refused`, `not-answering`, `too-slow`, `too-many-redirects`, `error-status`, `too-large`, or a check's code). Answers 201 with the new images (Location: the first one), each `processing` until its renditions exist.")
            .query_param("replaceAll", json!({"type": "boolean"}), "Replace the ad's images.")
            .body("image/jpeg", "ImageBytes")
            .body("image/png", "ImageBytes")
            .body("image/webp", "ImageBytes")
            .body("multipart/form-data", "ImageUpload")
            .body("application/json", "ImageUrls")
            .ok(201, "The new images (Location: the first one)", "ImageList")
            .errors(&[ValidationFailure, InvalidJson, IncorrectContentType, Unauthorized, AdvertisementNotFound, UnsupportedMediaType]),
        upload.layer(DefaultBodyLimit::disable()),
    )
    .resource(
        images(get("/advertisements/{itemId}/images", "listAdvertisementImages"))
            .item_param()
            .summary("The images of an advertisement, in order")
            .ok(200, "The images", "ImageList")
            .errors(&[ValidationFailure, AdvertisementNotFound]),
        list,
    )
    .resource(
        images(put("/advertisements/{itemId}/images/order", "orderAdvertisementImages"))
            .item_param()
            .summary("Put an advertisement's images in order (the seller, scope `write`)")
            .description("`{\"mediaIds\": [...]}` names every image of the ad once, in the new order; `imageId` becomes 1, 2, ... in that order. Answers 200 with the images.")
            .body("application/json", "ImageOrder")
            .ok(200, "The images, in their new order", "ImageList")
            .errors(&[Unauthorized, AdvertisementNotFound]),
        reorder,
    )
    .resource(
        one_image(get("/images/{mediaId}", "getImage"))
            .summary("One image")
            .ok(200, "The image", "Image")
            .errors(&[ImageNotFound]),
        one,
    )
    .resource(
        one_image(delete("/images/{mediaId}", "deleteImage"))
            .summary("Delete an image (the seller, scope `write`; 204)")
            .ok_empty(204, "Deleted")
            .errors(&[Unauthorized, ImageNotFound]),
        remove,
    )
    .resource(
        rendition(get("/images/{mediaId}/{size}/blob", "getImageBlob"))
            .summary("The bytes of an image in one size")
            .description("JPEG, or WebP where `Accept` prefers `image/webp` and the WebP rendition exists. A strong `ETag` (the SHA-256 of the bytes) and `Cache-Control: private, max-age=31536000, immutable`: the bytes under an ETag never change. `If-None-Match` answers 304. While the renditions are being made: 409 `image-not-ready`.")
            .media(200, "The image", "image/jpeg")
            .media(200, "The image", "image/webp")
            .ok_empty(304, "Not modified")
            .errors(&[ImageNotFound, ImageNotReady]),
        blob,
    )
    .resource(
        rendition(get("/images/{mediaId}/{size}/meta", "getImageMeta"))
            .summary("The description of an image in one size")
            .ok(200, "width, height, contentType, bytes and sha256 of the JPEG rendition", "ImageMeta")
            .errors(&[ImageNotFound, ImageNotReady]),
        meta,
    )
}

/// The largest body of the JSON form (a list of URLs).
const URL_LIST_MAX_BYTES: usize = 256 * 1024;

/// The most an upload's body may be, by its form: a list of URLs 256 KiB; a form of files
/// every image an ad holds at the largest size, and room for the multipart framing (what
/// one image may be is checked per file); one image (or a body the operation refuses
/// unread) the largest image. The handler and the `Idempotency-Key` middleware, which
/// reads the body first, read no further.
pub fn body_limit(headers: &HeaderMap, config: &Config) -> usize {
    match body_type(headers).as_str() {
        "application/json" => URL_LIST_MAX_BYTES,
        "multipart/form-data" => config
            .max_image_bytes
            .saturating_mul(config.max_images_per_ad)
            .saturating_add(64 * 1024),
        _ => config.max_image_bytes,
    }
}

/// The answer to an upload whose body is past [`body_limit`]: 413, naming the image when
/// the body is one.
pub fn body_too_large(headers: &HeaderMap, config: &Config) -> ApiError {
    let body_type = body_type(headers);
    if is_one_image(&body_type) {
        image_too_large(config, "image")
    } else {
        ApiError::new(ErrorCode::PayloadTooLarge)
    }
}

/// 413 for the file `field`, past the largest image.
fn image_too_large(config: &Config, field: &str) -> ApiError {
    let refusal = Refusal::TooLarge {
        max: config.max_image_bytes,
    };
    ApiError::new(ErrorCode::PayloadTooLarge).with_details(vec![refusal.field_error(field)])
}

/// The bytes an upload's body will take: its `Content-Length`, else (chunked) the most it
/// may be, [`body_limit`].
pub fn expected_bytes(headers: &HeaderMap, config: &Config) -> usize {
    let limit = body_limit(headers, config);
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(limit, |length| length.min(limit))
}

#[derive(Deserialize)]
struct UploadQuery {
    #[serde(rename = "replaceAll")]
    replace_all: Option<String>,
}

fn rules(config: &Config) -> Rules {
    Rules {
        max_images: config.max_images_per_ad,
        limits: Limits {
            max_bytes: config.max_image_bytes,
            ..Limits::default()
        },
    }
}

async fn upload(
    Context { state, hal }: Context,
    UserWith(seller, _): UserWith<need::Write>,
    ItemPath(item): ItemPath,
    Query(query): Query<UploadQuery>,
    request: Request,
) -> Result<Json, ApiError> {
    let replace_all = parse_flag("replaceAll", query.replace_all.as_deref());
    let now = state.clock.now();
    // Only the ad's seller makes Souk read a body this large, or connect somewhere; and
    // only the seller is told what is wrong with the request.
    images::check_seller::<ApiError>(&state.db, seller, item, now).await?;
    let mut replace_all = replace_all?;
    // The route lifts the general body limit; this is its own, for the whole body.
    let limit = body_limit(request.headers(), &state.config);
    // Room in memory for the body (reserved already where an Idempotency-Key read it).
    let room = match request.extensions().get::<UploadRoom>() {
        Some(room) => room.clone(),
        None => {
            let expected = expected_bytes(request.headers(), &state.config);
            state.uploads.reserve(expected).await
        }
    };
    let request = request.map(|body| Body::new(http_body_util::Limited::new(body, limit)));
    let (uploads, _room) = if is_json(request.headers()) {
        let urls = read_url_list(&state.config, request, &mut replace_all).await?;
        // The list's room goes (the request, which held the middleware's copy of it, is
        // gone too) before the downloads wait for theirs: a request that held room while
        // it waited for more could wait for itself, and every upload behind it.
        drop(room);
        let downloads = urls.len().saturating_mul(state.config.max_image_bytes);
        let room = state.uploads.reserve(downloads).await;
        (Ok(fetch_urls(&state.config, &urls).await?), room)
    } else {
        let uploads = read_uploads(&state.config, request, &mut replace_all).await;
        (uploads, room)
    };
    let added = images::add(
        &state.db,
        &state.blobs,
        seller,
        item,
        uploads,
        replace_all,
        rules(&state.config),
        &state.clock,
        &state.sweeps,
    )
    .await?;
    state.renditions.notify_waiters();
    let location = hal.path(&format!("/images/{}", added.added[0].media_id));
    Ok(Json::created_several(
        location,
        image_list(&hal, added.item, &added.added),
    ))
}

fn is_json(headers: &HeaderMap) -> bool {
    body_type(headers) == "application/json"
}

/// The media type of a request's body (`image/png`), empty without one.
fn body_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(media_type)
        .unwrap_or_default()
}

/// Whether a body of this media type is one image, as the upload takes it.
fn is_one_image(media_type: &str) -> bool {
    media_type.starts_with("image/") || media_type == "application/octet-stream"
}

/// The original's JSON form: images to fetch from the web.
#[derive(Deserialize)]
struct UrlList {
    urls: Option<Vec<String>>,
    #[serde(rename = "replaceAll")]
    replace_all: Option<bool>,
}

/// The URLs of a JSON upload request, at least one and at most an ad's number of images;
/// its `replaceAll`, when given, wins over the query's.
async fn read_url_list(
    config: &Config,
    request: Request,
    replace_all: &mut bool,
) -> Result<Vec<String>, ApiError> {
    let body = to_bytes(request.into_body(), URL_LIST_MAX_BYTES)
        .await
        .map_err(|e| match is_too_large(&e) {
            true => ApiError::new(ErrorCode::PayloadTooLarge),
            false => body_cut_off(),
        })?;
    let list: UrlList = parse_json(&body)?;
    if let Some(flag) = list.replace_all {
        *replace_all = flag;
    }
    let urls = list.urls.unwrap_or_default();
    if urls.is_empty() {
        return Err(ApiError::validation(vec![FieldError::missing("urls")]));
    }
    let max = config.max_images_per_ad;
    if urls.len() > max {
        return Err(ApiError::validation(vec![
            FieldError::new(
                "urls",
                "too-many-images",
                Text::new(
                    format!("een advertentie heeft hoogstens {max} afbeeldingen"),
                    format!("une annonce a au plus {max} images"),
                ),
            )
            .with_value(max as i64),
        ]));
    }
    Ok(urls)
}

/// Downloads every URL (`images::fetch`): the bytes go on to the checks of an upload under
/// the field `urls[i]`; a URL that gives no bytes is a field error of its own.
async fn fetch_urls(config: &Config, urls: &[String]) -> Result<Vec<Upload>, ApiError> {
    let policy = FetchPolicy {
        max_bytes: config.max_image_bytes,
        timeout: Duration::from_secs(config.image_fetch_timeout_secs),
        // Half the request's time (the checks, the write and the answer get the rest), or
        // one URL's time where that is longer: one URL always gets its own.
        total: (Duration::from_secs(config.request_timeout_secs) / 2)
            .max(Duration::from_secs(config.image_fetch_timeout_secs)),
        max_redirects: config.image_fetch_max_redirects,
        allow: config.image_fetch_allow_list(),
    };
    let fetched = fetch_all(&policy, urls)
        .await
        .map_err(ApiError::validation)?;
    Ok(fetched
        .into_iter()
        .enumerate()
        .map(|(i, image)| Upload {
            bytes: image.bytes,
            content_type: image.content_type.filter(|t| t.starts_with("image/")),
            field: format!("urls[{i}]"),
        })
        .collect())
}

/// The files of an upload request: its body as one image, or the files of a multipart
/// form. Problems are the request's (reported once the caller is known to be the seller).
async fn read_uploads(
    config: &Config,
    request: Request,
    replace_all: &mut bool,
) -> Result<Vec<Upload>, ApiError> {
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let essence = media_type(&content_type);
    if essence == "multipart/form-data" {
        let mut form = Multipart::from_request(request, &())
            .await
            .map_err(|e| bad_form(e.body_text()))?;
        let mut uploads = Vec::new();
        while let Some(mut field) = form.next_field().await.map_err(form_error)? {
            let name = field.name().unwrap_or("file").to_owned();
            if name == "replaceAll" {
                // Read no further than a boolean could go: what is longer is refused.
                let mut text = BytesMut::new();
                while let Some(chunk) = field.chunk().await.map_err(form_error)? {
                    text.extend_from_slice(&chunk);
                    if text.len() > MAX_FLAG_BYTES {
                        text.truncate(MAX_FLAG_BYTES);
                        break;
                    }
                }
                let text = String::from_utf8_lossy(&text);
                *replace_all = parse_flag("replaceAll", Some(text.trim()))?;
                continue;
            }
            if uploads.len() >= config.max_images_per_ad {
                return Err(ApiError::validation(vec![FieldError::new(
                    name,
                    "too-many-images",
                    Text::new("te veel bestanden", "trop de fichiers"),
                )]));
            }
            let field_name = format!("{name}[{}]", uploads.len());
            let declared = field.content_type().map(str::to_owned);
            let mut bytes = BytesMut::new();
            while let Some(chunk) = field.chunk().await.map_err(form_error)? {
                if bytes.len() + chunk.len() > config.max_image_bytes {
                    return Err(image_too_large(config, &field_name));
                }
                bytes.extend_from_slice(&chunk);
            }
            uploads.push(Upload {
                bytes: bytes.freeze(),
                content_type: declared.filter(|t| t.starts_with("image/")),
                field: field_name,
            });
        }
        return Ok(uploads);
    }
    if is_one_image(&essence) {
        let bytes: Bytes = to_bytes(request.into_body(), config.max_image_bytes)
            .await
            .map_err(|e| match is_too_large(&e) {
                true => image_too_large(config, "image"),
                false => body_cut_off(),
            })?;
        return Ok(vec![Upload {
            bytes,
            content_type: Some(content_type).filter(|_| essence.starts_with("image/")),
            field: "image".to_owned(),
        }]);
    }
    // A body of another kind than the operation takes (api.md §1); a format other than
    // JPEG, PNG and WebP, read from the bytes, is 415 (`images::check`).
    Err(
        ApiError::new(ErrorCode::IncorrectContentType).with_message(Text::new(
            "Stuur een afbeelding (image/jpeg, image/png, image/webp) of multipart/form-data",
            "Envoyez une image (image/jpeg, image/png, image/webp) ou multipart/form-data",
        )),
    )
}

/// How much of a form's `replaceAll` field is read (`true` or `false`, and room for
/// white space); anything longer is not a boolean.
const MAX_FLAG_BYTES: usize = 64;

/// A form that could not be read: past the upload's body limit, 413; else malformed.
fn form_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(ErrorCode::PayloadTooLarge)
    } else {
        bad_form(e.body_text())
    }
}

fn bad_form(reason: String) -> ApiError {
    ApiError::validation(vec![FieldError::new(
        "body",
        "invalid-multipart",
        Text::new(
            format!("is geen geldig multipart-formulier: {reason}"),
            format!("n'est pas un formulaire multipart valide : {reason}"),
        ),
    )])
}

/// `{_links: {self}, _embedded: {<image rel>: [...]}}`, the images of an ad.
fn image_list(hal: &Hal, item: ItemId, images: &[ImageRecord]) -> Value {
    let items = images
        .iter()
        .map(|i| image_with_links(hal, item, i))
        .collect();
    let kind = (Resource::ImageList, Rel::AdvertisementImage);
    list_of_ad(hal, item, "images", kind, items)
}

/// An image with its ad's link beside the embedded form's.
fn image_with_links(hal: &Hal, item: ItemId, image: &ImageRecord) -> Value {
    let mut value = image_value(hal, image);
    value["_links"][hal.rel(Rel::Advertisement)] =
        json!({"href": hal.path(&format!("/advertisements/{item}"))});
    value
}

async fn list(
    Context { state, hal }: Context,
    caller: Caller,
    ItemPath(item): ItemPath,
) -> Result<Json, ApiError> {
    let (reader, now) = (ad_reader(&caller), state.clock.now());
    let found = state
        .db
        .read(move |conn| Box::pin(images::of_ad(conn, item, reader, now)))
        .await?;
    Ok(Json::ok(image_list(&hal, item, &found)))
}

#[derive(Deserialize)]
struct Order {
    #[serde(rename = "mediaIds")]
    media_ids: Option<Vec<String>>,
}

async fn reorder(
    Context { state, hal }: Context,
    UserWith(seller, _): UserWith<need::Write>,
    ItemPath(item): ItemPath,
    body: Result<JsonBody<Order>, ApiError>,
) -> Result<Json, ApiError> {
    let order = body.and_then(|JsonBody(order)| {
        (order.media_ids).ok_or_else(|| ApiError::validation(vec![FieldError::missing("mediaIds")]))
    });
    let now = state.clock.now();
    let ordered = state
        .db
        .write(move |conn| Box::pin(images::reorder(conn, seller, item, order, now)))
        .await?;
    Ok(Json::ok(image_list(&hal, item, &ordered)))
}

async fn one(
    Context { state, hal }: Context,
    caller: Caller,
    MediaPath(MediaId(media_id)): MediaPath,
) -> Result<Json, ApiError> {
    let (reader, now) = (ad_reader(&caller), state.clock.now());
    let (item, image) = state
        .db
        .read(move |conn| Box::pin(async move { images::one(conn, &media_id, reader, now).await }))
        .await?;
    let mut answer = image_with_links(&hal, item, &image);
    // A resource of its own here, not embedded: its prefixed links need the curies.
    answer["_links"]["curies"] = hal.curies_value();
    Ok(Json::ok(answer))
}

async fn remove(
    Context { state, .. }: Context,
    UserWith(seller, _): UserWith<need::Write>,
    MediaPath(MediaId(media_id)): MediaPath,
) -> Result<Response, ApiError> {
    images::delete(&state.db, seller, media_id, &state.clock, &state.sweeps).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The renditions of `{mediaId}/{size}` the caller may see; 409 while they are made.
async fn found_rendition(
    state: &crate::state::AppState,
    caller: &Caller,
    media_id: String,
    size: &str,
) -> Result<images::Renditions, ApiError> {
    let size = Size::parse(size).ok_or_else(|| ApiError::new(ErrorCode::ImageNotFound))?;
    let (reader, now) = (ad_reader(caller), state.clock.now());
    let found = images::rendition(
        &state.db,
        &state.rendition_lookups,
        media_id,
        size,
        reader,
        now,
    )
    .await?;
    match found {
        Rendition::Ready(renditions) => Ok(renditions),
        Rendition::NotReady => Err(ApiError::new(ErrorCode::ImageNotReady)),
    }
}

/// Whether `Accept` prefers WebP to JPEG (a higher q, or WebP named and JPEG not).
fn prefers_webp(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let quality = |wanted: &str| {
        accept
            .split(',')
            .filter_map(|part| {
                let mut pieces = part.split(';').map(str::trim);
                let media = pieces.next()?.to_ascii_lowercase();
                let q = pieces
                    .find_map(|p| p.strip_prefix("q="))
                    .and_then(|q| q.parse::<f32>().ok())
                    .unwrap_or(1.0);
                (media == wanted).then_some(q)
            })
            .next()
    };
    match (quality("image/webp"), quality("image/jpeg")) {
        (Some(webp), Some(jpeg)) => webp > jpeg,
        (Some(webp), None) => webp > 0.0,
        _ => false,
    }
}

/// What a blob answer reads of the request's headers, taken without copying them all (the
/// route is Souk's busiest: a `HeaderMap` extractor clones every header).
struct BlobWanted {
    format: Format,
    if_none_match: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for BlobWanted {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(BlobWanted {
            format: if prefers_webp(&parts.headers) {
                Format::Webp
            } else {
                Format::Jpeg
            },
            if_none_match: header_list(&parts.headers, header::IF_NONE_MATCH),
        })
    }
}

async fn blob(
    Context { state, .. }: Context,
    caller: Caller,
    RenditionPath(MediaId(media_id), size): RenditionPath,
    BlobWanted {
        format: wanted,
        if_none_match,
    }: BlobWanted,
) -> Result<Response, ApiError> {
    let renditions = found_rendition(&state, &caller, media_id, &size).await?;
    let chosen = renditions
        .iter()
        .find(|r| r.format == wanted)
        .or_else(|| renditions.iter().find(|r| r.format == Format::Jpeg))
        .ok_or_else(|| ApiError::new(ErrorCode::ImageNotFound))?;
    let etag = format!("\"{}\"", chosen.sha256);
    let mut response = if if_none_match
        .as_deref()
        .is_some_and(|h| super::render::etag_matches(h, &etag))
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let bytes = state
            .blobs
            .get_blob(&chosen.sha256)
            .await
            .map_err(|e| match e {
                BlobError::NotFound => {
                    tracing::error!(sha256 = chosen.sha256, "a rendition's blob is missing");
                    ApiError::new(ErrorCode::ImageNotFound)
                }
                // The store did not answer: the image may well be there, so not a 404 that a
                // client or a cache would take as its end.
                BlobError::Store(cause) => {
                    tracing::error!(cause, sha256 = chosen.sha256, "the blob store failed");
                    ApiError::new(ErrorCode::ServiceUnavailable)
                }
            })?;
        let mut response = Body::from(bytes).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(chosen.format.content_type()),
        );
        response
    };
    let headers = response.headers_mut();
    headers.insert(
        header::ETAG,
        HeaderValue::from_str(&etag).expect("hex is a header value"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=31536000, immutable"),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    Ok(response)
}

async fn meta(
    Context { state, hal }: Context,
    caller: Caller,
    RenditionPath(MediaId(media_id), size): RenditionPath,
) -> Result<Json, ApiError> {
    let rendition = format!("/images/{media_id}/{size}");
    let renditions = found_rendition(&state, &caller, media_id, &size).await?;
    let jpeg = renditions
        .iter()
        .find(|r| r.format == Format::Jpeg)
        .ok_or_else(|| ApiError::new(ErrorCode::ImageNotFound))?;
    Ok(Json::ok(json!({
        "_links": hal
            .links(hal.path(&format!("{rendition}/meta")), Resource::ImageMeta)
            .rel(Rel::ImageBlob, hal.path(&format!("{rendition}/blob")))
            .build(),
        "width": jpeg.width,
        "height": jpeg.height,
        "contentType": jpeg.content_type,
        "bytes": jpeg.bytes,
        "sha256": jpeg.sha256,
    }))
    .with_etag())
}
