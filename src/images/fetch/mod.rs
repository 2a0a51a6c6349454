//! Image import by URL (the original's `{"urls": [...]}`): Souk downloads each image itself,
//! so whoever sends a URL makes the server open a connection. That must not reach what only
//! the server can reach (its loopback, the private network, a cloud metadata service), and
//! must not tie the server up.
//!
//! - Only `http` and `https`; no proxy (the proxy's address would be the one connected to).
//! - Every hop is checked on the address actually connected to: a host name is resolved by
//!   [`HopGuard`], which hands the connector only the addresses [`address`] permits, so a
//!   name that resolves to a public address when checked and to 127.0.0.1 when connecting
//!   (DNS rebinding) cannot get round it; an address written in the URL is checked before
//!   the request; and the peer of the answer is checked once more.
//! - Redirects are followed by hand, each target checked again, at most `max_redirects`.
//! - One time limit for the whole of a URL (redirects and body included), and the body is
//!   read in chunks and given up as soon as it passes `max_bytes`.
//! - The operator's allow-list (`image_fetch_allow`) names networks or `host:port` pairs that
//!   may be reached all the same (an image server on the private network; the tests' own
//!   server on loopback).
//!
//! What comes back is bytes and the content type the server claimed; whether they are an
//! image is decided by the same checks as uploaded bytes.

pub mod address;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use parking_lot::Mutex;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use reqwest::{Method, Request, Url};

use crate::domain::field_error::FieldError;
use crate::domain::image::media_type;
use crate::domain::locale::Text;
use address::{AllowList, Refused, refusal};

/// URLs of one request fetched at the same time.
const PARALLEL_FETCHES: usize = 4;

/// The limits of an import.
#[derive(Clone, Debug)]
pub struct FetchPolicy {
    /// The largest image accepted, in bytes (`max_image_bytes`, as for uploads).
    pub max_bytes: usize,
    /// The time one URL may take, from the first connection to the last byte.
    pub timeout: Duration,
    /// The time all the URLs of an import may take: within the request's time, which
    /// 24 URLs fetched four at a time at their own limit each would overrun.
    pub total: Duration,
    /// Redirects followed for one URL.
    pub max_redirects: usize,
    /// What may be connected to although [`address`] refuses it.
    pub allow: AllowList,
}

/// A downloaded answer.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The URL the bytes came from, after redirects.
    pub url: Url,
    /// The `Content-Type` the server sent, if any.
    pub content_type: Option<String>,
    pub bytes: Bytes,
}

/// Why a URL gave no image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchError {
    /// Not an absolute `http` or `https` URL.
    InvalidUrl,
    /// The host is (or resolves to) an address that may not be connected to.
    Refused {
        address: IpAddr,
        why: Refused,
    },
    /// No connection (no such host, nothing listening, connection broken off).
    NotAnswering,
    /// The time limit passed.
    TooSlow,
    TooManyRedirects {
        limit: usize,
    },
    /// The server answered, with an error status.
    Status(u16),
    /// The server said the answer is something other than an image.
    NotAnImage {
        content_type: String,
    },
    TooLarge {
        limit: usize,
    },
}

impl FetchError {
    /// The field error code (`details[].code`), documented in docs/API.md.
    pub fn code(&self) -> &'static str {
        match self {
            FetchError::InvalidUrl => "invalid-url",
            FetchError::Refused { .. } => "address-refused",
            FetchError::NotAnswering => "not-answering",
            FetchError::TooSlow => "too-slow",
            FetchError::TooManyRedirects { .. } => "too-many-redirects",
            FetchError::Status(_) => "error-status",
            FetchError::NotAnImage { .. } => "not-an-image",
            FetchError::TooLarge { .. } => "too-large",
        }
    }

    /// What the client reads. A refusal does not say which address the host resolved to
    /// or of what kind: that would map the server's network for whoever asks (the log has it).
    pub fn message(&self) -> Text {
        match self {
            FetchError::InvalidUrl => Text::new(
                "is geen http- of https-URL",
                "n'est pas une URL http ou https",
            ),
            FetchError::Refused { .. } => Text::new(
                "verwijst naar een adres dat Souk niet mag benaderen (geen openbaar internetadres)",
                "désigne une adresse que Souk ne peut pas contacter (pas une adresse publique d'internet)",
            ),
            FetchError::NotAnswering => Text::new(
                "antwoordt niet (geen verbinding mogelijk)",
                "ne répond pas (connexion impossible)",
            ),
            FetchError::TooSlow => Text::new("antwoordde niet op tijd", "n'a pas répondu à temps"),
            FetchError::TooManyRedirects { limit } => Text::new(
                format!("stuurt door naar meer dan {limit} andere adressen"),
                format!("redirige vers plus de {limit} autres adresses"),
            ),
            FetchError::Status(status) => Text::new(
                format!("antwoordde met HTTP-status {status}"),
                format!("a répondu avec le statut HTTP {status}"),
            ),
            FetchError::NotAnImage { content_type } => Text::new(
                format!("geeft geen afbeelding maar {content_type}"),
                format!("ne donne pas une image mais {content_type}"),
            ),
            FetchError::TooLarge { limit } => Text::new(
                format!("geeft een bestand groter dan {limit} bytes"),
                format!("donne un fichier de plus de {limit} octets"),
            ),
        }
    }

    pub fn field_error(&self, field: impl Into<String>, url: &str) -> FieldError {
        FieldError::new(field, self.code(), self.message()).with_value(url)
    }
}

/// Fetches every URL (a few at a time, all within the policy's total time), answering the
/// images in the order of `urls`, or a field error `urls[i]` for every URL that failed.
pub async fn fetch_all(
    policy: &FetchPolicy,
    urls: &[String],
) -> Result<Vec<Fetched>, Vec<FieldError>> {
    let deadline = tokio::time::Instant::now() + policy.total;
    // Owned URLs: a closure over borrowed items would make this future one the compiler
    // cannot prove `Send` (a known limit of its higher-ranked lifetimes), and handlers
    // need it to be.
    let results: Vec<Result<Fetched, FetchError>> = futures_util::stream::iter(urls.to_vec())
        .map(|url| async move {
            // A URL whose turn comes after the deadline is not started at all.
            if tokio::time::Instant::now() >= deadline {
                return Err(FetchError::TooSlow);
            }
            tokio::time::timeout_at(deadline, fetch(policy, &url))
                .await
                .unwrap_or(Err(FetchError::TooSlow))
        })
        .buffered(PARALLEL_FETCHES)
        .collect()
        .await;
    let mut fetched = Vec::with_capacity(urls.len());
    let mut errors = Vec::new();
    for (i, (result, url)) in results.into_iter().zip(urls).enumerate() {
        match result {
            Ok(image) => fetched.push(image),
            Err(error) => errors.push(error.field_error(format!("urls[{i}]"), url)),
        }
    }
    if errors.is_empty() {
        Ok(fetched)
    } else {
        Err(errors)
    }
}

/// Fetches one URL within the policy's time limit.
pub async fn fetch(policy: &FetchPolicy, url: &str) -> Result<Fetched, FetchError> {
    let result = tokio::time::timeout(policy.timeout, fetch_following(policy, url))
        .await
        .unwrap_or(Err(FetchError::TooSlow));
    if let Err(error) = &result {
        let url = loggable(url);
        tracing::info!(url, ?error, "image import: URL refused");
    }
    result
}

/// The URL as the log may show it: scheme, host, port and path. Its user information and
/// its query may hold credentials (a presigned S3 URL's signature).
fn loggable(url: &str) -> String {
    match Url::parse(url.trim()) {
        Ok(url) => format!(
            "{}://{}{}{}",
            url.scheme(),
            url.host_str().unwrap_or(""),
            url.port()
                .map(|port| format!(":{port}"))
                .unwrap_or_default(),
            url.path()
        ),
        Err(_) => "(not a URL)".to_owned(),
    }
}

async fn fetch_following(policy: &FetchPolicy, url: &str) -> Result<Fetched, FetchError> {
    let mut url = web_url(Url::parse(url.trim()).map_err(|_| FetchError::InvalidUrl)?)?;
    let mut redirects = 0;
    loop {
        let mut response = request(policy, &url).await?;
        let status = response.status();
        if status.is_redirection() {
            let target = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or(FetchError::Status(status.as_u16()))?;
            if redirects == policy.max_redirects {
                return Err(FetchError::TooManyRedirects {
                    limit: policy.max_redirects,
                });
            }
            redirects += 1;
            url = web_url(url.join(target).map_err(|_| FetchError::InvalidUrl)?)?;
            continue;
        }
        if !status.is_success() {
            return Err(FetchError::Status(status.as_u16()));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        if let Some(claimed) = &content_type
            && !may_be_an_image(claimed)
        {
            return Err(FetchError::NotAnImage {
                content_type: claimed.clone(),
            });
        }
        let too_large = FetchError::TooLarge {
            limit: policy.max_bytes,
        };
        let announced = response.content_length().unwrap_or(0);
        if announced > policy.max_bytes as u64 {
            return Err(too_large);
        }
        let mut body = BytesMut::with_capacity(announced as usize);
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| FetchError::NotAnswering)?
        {
            if body.len() + chunk.len() > policy.max_bytes {
                return Err(too_large);
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(Fetched {
            url,
            content_type,
            bytes: body.freeze(),
        });
    }
}

fn web_url(url: Url) -> Result<Url, FetchError> {
    let web = matches!(url.scheme(), "http" | "https") && url.host().is_some();
    if web {
        Ok(url)
    } else {
        Err(FetchError::InvalidUrl)
    }
}

/// Image types, and the generic types that servers (S3 among them) give any file.
fn may_be_an_image(content_type: &str) -> bool {
    let essence = media_type(content_type);
    essence.starts_with("image/")
        || essence == "application/octet-stream"
        || essence == "binary/octet-stream"
}

/// One request, without following a redirect, to an address the policy permits.
async fn request(policy: &FetchPolicy, url: &Url) -> Result<reqwest::Response, FetchError> {
    let mut request = Request::new(Method::GET, url.clone());
    request.headers_mut().insert(
        ACCEPT,
        reqwest::header::HeaderValue::from_static(
            "image/jpeg, image/png, image/webp, image/*;q=0.8",
        ),
    );
    let user_agent = concat!("Souk/", env!("CARGO_PKG_VERSION"), " image import");
    send_guarded(&policy.allow, policy.timeout / 2, user_agent, request).await
}

/// Sends `request` without following a redirect, only to an address that [`address`]
/// permits or `allow` names (each hop of an image import; each webhook delivery, see
/// `usecase::deliveries`). The caller bounds the whole exchange's time; `connect_timeout`
/// bounds the connection's.
pub(crate) async fn send_guarded(
    allow: &AllowList,
    connect_timeout: Duration,
    user_agent: &'static str,
    request: Request,
) -> Result<reqwest::Response, FetchError> {
    let url = request.url();
    let host = url.host_str().ok_or(FetchError::InvalidUrl)?;
    let port = url.port_or_known_default().ok_or(FetchError::InvalidUrl)?;
    let guard = HopGuard {
        allow: Arc::new(allow.clone()),
        whole_host_allowed: allow.names_host(host, port),
        refused: Arc::new(Mutex::new(None)),
    };
    // An address in the URL is connected to without DNS, so it is checked here.
    if let Some(ip) = literal_address(url) {
        guard.check(ip)?;
    }
    // A client per hop: its resolver knows the hop's host and port.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(connect_timeout)
        .user_agent(user_agent)
        .dns_resolver(guard.clone())
        .build()
        .map_err(|error| {
            tracing::error!(%error, "cannot build the HTTP client");
            FetchError::NotAnswering
        })?;
    let response = match client.execute(request).await {
        Ok(response) => response,
        Err(error) => {
            if let Some((address, why)) = guard.refused.lock().take() {
                return Err(FetchError::Refused { address, why });
            }
            // Without the URL: a hook's may hold a partner's credentials.
            let error = error.without_url();
            tracing::debug!(%error, "outgoing request: no answer");
            return Err(if error.is_timeout() {
                FetchError::TooSlow
            } else {
                FetchError::NotAnswering
            });
        }
    };
    // The peer of the answer: the address really connected to.
    if let Some(peer) = response.remote_addr() {
        guard.check(peer.ip())?;
    }
    Ok(response)
}

fn literal_address(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

/// The resolver of one hop: resolves the host name and keeps only the addresses the policy
/// permits, remembering a refusal so that the error can say why there was no connection.
#[derive(Clone)]
struct HopGuard {
    allow: Arc<AllowList>,
    /// The allow-list names the hop's `host:port`: any address goes.
    whole_host_allowed: bool,
    refused: Arc<Mutex<Option<(IpAddr, Refused)>>>,
}

impl HopGuard {
    fn check(&self, ip: IpAddr) -> Result<(), FetchError> {
        if self.whole_host_allowed || self.allow.names_address(ip) {
            return Ok(());
        }
        match refusal(ip) {
            None => Ok(()),
            Some(why) => {
                tracing::info!(%ip, why = why.as_str(), "outgoing request: address refused");
                Err(FetchError::Refused { address: ip, why })
            }
        }
    }
}

impl Resolve for HopGuard {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: the connector puts in the URL's port.
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut permitted = Vec::new();
            for address in resolved {
                match guard.check(address.ip()) {
                    Ok(()) => permitted.push(address),
                    Err(FetchError::Refused { address, why }) => {
                        guard.refused.lock().get_or_insert((address, why));
                    }
                    Err(_) => {}
                }
            }
            if permitted.is_empty() {
                return Err(format!("no permitted address for {host}").into());
            }
            // Some permitted: connect to those, and forget a refusal of the others.
            guard.refused.lock().take();
            let addresses: Addrs = Box::new(permitted.into_iter());
            Ok(addresses)
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_log_shows_no_credentials() {
        let presigned = "https://u:p@img.test:8443/a/b.jpg?X-Amz-Signature=abc";
        assert_eq!(super::loggable(presigned), "https://img.test:8443/a/b.jpg");
        assert_eq!(super::loggable("nonsense"), "(not a URL)");
    }
}
