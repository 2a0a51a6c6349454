//! The HTTP server: the router on hyper's HTTP/1 connections, one task each, with the
//! limits `axum::serve` does not set. The server and the tests serve through it alike.
//!
//! - A connection has `header_timeout` to send a request's head, and as long to send the
//!   next one once a keep-alive connection is idle: a client that trickles its headers a
//!   byte at a time (slowloris), or opens connections and sends nothing, holds a task and a
//!   descriptor that long, not for good. (axum's own loop starts hyper without a timer,
//!   which turns hyper's 30 s header timeout off.)
//! - Once `stop` resolves, no connection is accepted; each open one finishes the request in
//!   hand and closes, and those still open after `drain` (a client that does not read its
//!   answer) are left behind, so that a stop cannot hang for good.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::{Service, ServiceExt};

/// How long connections are given to close once the server stops, and each to send a head.
#[derive(Clone, Copy, Debug)]
pub struct ServeLimits {
    pub header_timeout: Duration,
    pub drain: Duration,
}

impl ServeLimits {
    /// The configured header timeout; a drain as long as a request may run, and 10 s more
    /// to write its answer.
    pub fn of(config: &crate::config::Config) -> ServeLimits {
        ServeLimits {
            header_timeout: Duration::from_secs(config.header_timeout_secs),
            drain: Duration::from_secs(config.request_timeout_secs + 10),
        }
    }
}

/// Serves `router` on `listener` until `stop` resolves, then drains (see the module).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    stop: impl Future<Output = ()>,
    limits: ServeLimits,
) {
    let mut make = router.into_make_service_with_connect_info::<SocketAddr>();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A client that gave up before it was accepted: routine under load.
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    // Out of descriptors, say: wait for connections to close rather than
                    // spin on the error (but not past a stop).
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                        () = &mut stop => break,
                    }
                }
            },
            () = &mut stop => break,
        };
        let Ok(service) = make.call(remote).await;
        let service = service.map_request(|request: Request<Incoming>| request.map(Body::new));
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            seconds = limits.drain.as_secs(),
            "connections still open after the stop's drain: left behind"
        );
    }
}

/// An error of one connection's, not of the listener's.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}
