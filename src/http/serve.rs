//! The HTTP server: the router on hyper's HTTP/1 connections, one task each, with the
//! limits `axum::serve` does not set. The server and the tests serve through it alike.
//!
//! - A connection has `header_timeout` to send a request's head, and as long to send the
//!   next one once a keep-alive connection is idle: a client that trickles its headers a
//!   byte at a time (slowloris), or opens connections and sends nothing, holds a task and a
//!   descriptor that long, not for good. (axum's own loop starts hyper without a timer,
//!   which turns hyper's 30 s header timeout off.)
//! - At most `Connections::max` connections are served at once: past it, the next is
//!   accepted but not served, and those after it wait in the listener's backlog, until one
//!   closes (`state::Connections`).
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

use crate::state::Connections;

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

/// Serves `router` on `listener`, at most `connections` at once, until `stop` resolves,
/// then drains (see the module).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    connections: Connections,
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
        // At the bound, the connection just accepted waits here unserved (one, so one
        // descriptor), and the next wait in the backlog; a slot is taken after the accept,
        // so that `Connections::open` counts the connections being served alone.
        let slot = tokio::select! {
            slot = connections.slot() => slot,
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
            drop(slot);
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::{Connections, ServeLimits, serve};

    /// A request on a new connection, and the start of its answer (`None`: no answer
    /// within `wait`).
    async fn ask(stream: &mut TcpStream, wait: Duration) -> Option<String> {
        let mut answer = vec![0; 1024];
        let read = tokio::time::timeout(wait, stream.read(&mut answer))
            .await
            .ok()?
            .unwrap();
        Some(String::from_utf8_lossy(&answer[..read]).into_owned())
    }

    /// With the bound's connections open, the next one is not accepted (its request waits
    /// unanswered) until one of them closes; then it is served.
    #[tokio::test]
    async fn connections_past_the_bound_wait_for_one_to_close() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
        let connections = Connections::new(2);
        let limits = ServeLimits {
            header_timeout: Duration::from_secs(60),
            drain: Duration::from_secs(1),
        };
        let served = connections.clone();
        tokio::spawn(serve(
            listener,
            router,
            served,
            std::future::pending(),
            limits,
        ));
        let request = b"GET / HTTP/1.1\r\nHost: souk\r\n\r\n";
        let mut open = Vec::new();
        for _ in 0..2 {
            let mut stream = TcpStream::connect(address).await.unwrap();
            stream.write_all(request).await.unwrap();
            let answer = ask(&mut stream, Duration::from_secs(10)).await;
            assert!(answer.unwrap().starts_with("HTTP/1.1 200"));
            open.push(stream);
        }
        assert_eq!(connections.open(), 2);

        let mut third = TcpStream::connect(address).await.unwrap();
        third.write_all(request).await.unwrap();
        let early = ask(&mut third, Duration::from_millis(500)).await;
        assert_eq!(early, None, "the third connection was served at once");
        drop(open.pop());
        let answer = ask(&mut third, Duration::from_secs(10)).await;
        assert!(
            answer
                .expect("served once one closed")
                .starts_with("HTTP/1.1 200")
        );
    }
}
