//! The image import by URL: a server of the test's own on loopback serves images and every
//! kind of bad answer; the fetcher is allowed to reach it only through the allow-list.

mod api;
mod fetcher;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;

/// What the image server hands out on `/photo.jpg`, and how often it did.
pub struct ImageServer {
    pub port: u16,
    photo_hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Served {
    photo: Arc<Vec<u8>>,
    photo_hits: Arc<AtomicUsize>,
}

#[derive(Deserialize)]
struct Target {
    to: String,
}

/// Bytes a test counts as "larger than the limit": the tests use a limit of 64 KiB.
pub const BIG: usize = 64 * 1024 + 1;

impl ImageServer {
    /// Serves on 127.0.0.1, on a port of its own:
    /// - `/photo.jpg`: `photo` as `image/jpeg` (counted: [`ImageServer::photo_hits`]);
    /// - `/page.html`: HTML; `/missing`: 404;
    /// - `/fake.jpg`: HTML said to be `image/jpeg`; `/mislabelled.png`: `photo` said to be
    ///   `image/png`;
    /// - `/slow`: answers after 30 s; `/slow-body`: headers at once, then a byte a second;
    /// - `/loop`: redirects to itself; `/hops/{n}`: n redirects, the last to `/photo.jpg`;
    /// - `/redirect?to=URL`: a redirect to URL;
    /// - `/big`, `/big-chunked`: [`BIG`] bytes of `image/jpeg`, with and without a length.
    pub async fn start(photo: Vec<u8>) -> ImageServer {
        let photo_hits = Arc::new(AtomicUsize::new(0));
        let served = Served {
            photo: Arc::new(photo),
            photo_hits: photo_hits.clone(),
        };
        let router = Router::new()
            .route("/photo.jpg", get(photo_jpg))
            .route("/page.html", get(page_html))
            .route(
                "/fake.jpg",
                get(|| async { jpeg(b"<html>not an image</html>".to_vec()) }),
            )
            .route("/mislabelled.png", get(mislabelled_png))
            .route("/missing", get(|| async { StatusCode::NOT_FOUND }))
            .route("/slow", get(slow))
            .route("/slow-body", get(slow_body))
            .route("/loop", get(|| async { Redirect::temporary("/loop") }))
            .route("/hops/{n}", get(hops))
            .route("/redirect", get(redirect))
            .route("/big", get(|| async { jpeg(vec![0xAB; BIG]) }))
            .route("/big-chunked", get(big_chunked))
            .with_state(served);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.expect("image server");
        });
        ImageServer {
            port,
            photo_hits,
            task,
        }
    }

    /// `http://localhost:PORT/path`: the address by its name, as the allow-list entry
    /// `localhost:PORT` names it.
    pub fn url(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.port)
    }

    /// The allow-list entry that lets the fetcher reach this server by [`ImageServer::url`].
    pub fn allow_entry(&self) -> String {
        format!("localhost:{}", self.port)
    }

    pub fn photo_hits(&self) -> usize {
        self.photo_hits.load(Ordering::SeqCst)
    }
}

impl Drop for ImageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn jpeg(bytes: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "image/jpeg")], bytes).into_response()
}

async fn photo_jpg(State(served): State<Served>) -> Response {
    served.photo_hits.fetch_add(1, Ordering::SeqCst);
    jpeg(served.photo.to_vec())
}

async fn mislabelled_png(State(served): State<Served>) -> Response {
    ([(header::CONTENT_TYPE, "image/png")], served.photo.to_vec()).into_response()
}

async fn page_html() -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        "text/html; charset=utf-8".parse().unwrap(),
    );
    (headers, "<!doctype html><title>Not a photo</title>").into_response()
}

async fn slow() -> Response {
    tokio::time::sleep(Duration::from_secs(30)).await;
    jpeg(vec![0xFF, 0xD8])
}

async fn slow_body() -> Response {
    let trickle = futures_util::stream::unfold(0u8, |n| async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        Some((Ok::<_, std::io::Error>(vec![n]), n.wrapping_add(1)))
    });
    (
        [(header::CONTENT_TYPE, "image/jpeg")],
        Body::from_stream(trickle),
    )
        .into_response()
}

async fn hops(Path(n): Path<u32>) -> Redirect {
    if n <= 1 {
        Redirect::temporary("/photo.jpg")
    } else {
        Redirect::temporary(&format!("/hops/{}", n - 1))
    }
}

async fn redirect(Query(target): Query<Target>) -> Redirect {
    Redirect::temporary(&target.to)
}

async fn big_chunked() -> Response {
    let chunks = futures_util::stream::iter(
        vec![0xABu8; BIG]
            .chunks(4096)
            .map(|chunk| Ok::<_, std::io::Error>(chunk.to_vec()))
            .collect::<Vec<_>>(),
    );
    (
        [(header::CONTENT_TYPE, "image/jpeg")],
        Body::from_stream(chunks),
    )
        .into_response()
}
