//! Prometheus metrics: requests by route and status, their latency, pool usage, and the
//! depth of the background queues.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use parking_lot::Mutex;

use crate::store::PoolStats;
use crate::store::leased::Waiting;

/// Upper bounds of the latency histogram buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// What the process holds at a scrape, read from its state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Held {
    pub pool: PoolStats,
    /// Bytes reserved by image uploads (`state::UploadBudget`).
    pub uploads_reserved: usize,
    /// Client connections open, and the most served at once (`state::Connections`).
    pub connections_open: usize,
    pub connections_max: usize,
}

/// What waits in the background queues, read at each scrape.
#[derive(Clone, Copy, Debug)]
pub struct QueueDepths {
    pub webhook_deliveries: QueueDepth,
    pub mails: QueueDepth,
}

/// One queue at a scrape.
#[derive(Clone, Copy, Debug)]
pub struct QueueDepth {
    /// How many items wait.
    pub waiting: i64,
    /// How long the item most overdue has been due without a sender taking it, in
    /// seconds; 0 when none is. The senders' delay, whatever the receivers do: an item
    /// that failed waits for its next attempt without being due.
    pub lag_seconds: i64,
}

impl QueueDepth {
    /// A queue's depth at `now`, from what it holds.
    pub fn of(waiting: Waiting, now: i64) -> QueueDepth {
        QueueDepth {
            waiting: waiting.count,
            lag_seconds: waiting.first_due.map_or(0, |due| (now - due).max(0)),
        }
    }
}

#[derive(Default)]
pub struct Metrics {
    /// Each route's series, one per method and status. Looked up by `&str`, so that
    /// recording a request of a series already seen allocates nothing.
    requests: Mutex<BTreeMap<String, Vec<Series>>>,
}

struct Series {
    method: String,
    status: u16,
    count: u64,
    seconds_sum: f64,
    buckets: [u64; BUCKETS.len()],
}

impl Metrics {
    /// Records one answered request; `route` is the route template (`/v1/categories/{id}`),
    /// never the raw path, and a method HTTP does not define is `OTHER`, so the label set
    /// stays small whatever clients send.
    pub fn record(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let method = method_label(method);
        let seconds = elapsed.as_secs_f64();
        let mut requests = self.requests.lock();
        if !requests.contains_key(route) {
            requests.insert(route.to_owned(), Vec::new());
        }
        let of_route = requests.get_mut(route).expect("inserted above");
        // A route answers few method and status pairs: a scan finds one.
        let position = of_route
            .iter()
            .position(|s| s.method == method && s.status == status)
            .unwrap_or_else(|| {
                of_route.push(Series {
                    method: method.to_owned(),
                    status,
                    count: 0,
                    seconds_sum: 0.0,
                    buckets: [0; BUCKETS.len()],
                });
                of_route.len() - 1
            });
        let series = &mut of_route[position];
        series.count += 1;
        series.seconds_sum += seconds;
        for (bucket, bound) in series.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
    }

    /// Every recorded series with its route, ordered by method, route and status (the
    /// exposition's order).
    fn ordered(requests: &BTreeMap<String, Vec<Series>>) -> Vec<(&str, &Series)> {
        let mut all: Vec<_> = requests
            .iter()
            .flat_map(|(route, of_route)| of_route.iter().map(move |s| (route.as_str(), s)))
            .collect();
        all.sort_by(|(route_a, a), (route_b, b)| {
            (&a.method, route_a, a.status).cmp(&(&b.method, route_b, b.status))
        });
        all
    }

    /// The Prometheus text exposition of everything recorded, plus what the process holds
    /// and the queues' depths (left out when they could not be read).
    pub fn render(&self, held: Held, queues: Option<QueueDepths>) -> String {
        let Held {
            pool,
            uploads_reserved,
            connections_open,
            connections_max,
        } = held;
        let mut out = String::new();
        let requests = self.requests.lock();
        let all = Metrics::ordered(&requests);
        out.push_str("# HELP souk_http_requests_total HTTP requests answered.\n");
        out.push_str("# TYPE souk_http_requests_total counter\n");
        for (route, series) in &all {
            let _ = writeln!(
                out,
                "souk_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{}\"}} {}",
                series.method,
                escape(route),
                series.status,
                series.count
            );
        }
        out.push_str("# HELP souk_http_request_duration_seconds Time to answer a request.\n");
        out.push_str("# TYPE souk_http_request_duration_seconds histogram\n");
        for (route, series) in &all {
            let labels = format!(
                "method=\"{}\",route=\"{}\",status=\"{}\"",
                series.method,
                escape(route),
                series.status
            );
            for (count, bound) in series.buckets.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "souk_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "souk_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                series.count
            );
            let _ = writeln!(
                out,
                "souk_http_request_duration_seconds_sum{{{labels}}} {}",
                series.seconds_sum
            );
            let _ = writeln!(
                out,
                "souk_http_request_duration_seconds_count{{{labels}}} {}",
                series.count
            );
        }
        out.push_str("# HELP souk_db_connections Database connections by state.\n");
        out.push_str("# TYPE souk_db_connections gauge\n");
        let _ = writeln!(
            out,
            "souk_db_connections{{state=\"in_use\"}} {}",
            pool.in_use
        );
        let _ = writeln!(out, "souk_db_connections{{state=\"idle\"}} {}", pool.idle);
        out.push_str("# HELP souk_db_connections_max Most database connections held at once.\n");
        out.push_str("# TYPE souk_db_connections_max gauge\n");
        let _ = writeln!(out, "souk_db_connections_max {}", pool.max);
        out.push_str(
            "# HELP souk_db_connections_opened_total Database connections opened since the start.\n",
        );
        out.push_str("# TYPE souk_db_connections_opened_total counter\n");
        let _ = writeln!(out, "souk_db_connections_opened_total {}", pool.opened);
        out.push_str(
            "# HELP souk_upload_memory_reserved_bytes Memory that image uploads hold, or that is promised to one waiting for room (of SOUK_UPLOAD_MEMORY_BYTES).\n",
        );
        out.push_str("# TYPE souk_upload_memory_reserved_bytes gauge\n");
        let _ = writeln!(out, "souk_upload_memory_reserved_bytes {uploads_reserved}");
        out.push_str("# HELP souk_http_connections Client connections open.\n");
        out.push_str("# TYPE souk_http_connections gauge\n");
        let _ = writeln!(out, "souk_http_connections {connections_open}");
        out.push_str(
            "# HELP souk_http_connections_max Most client connections served at once; more wait to be accepted.\n",
        );
        out.push_str("# TYPE souk_http_connections_max gauge\n");
        let _ = writeln!(out, "souk_http_connections_max {connections_max}");
        if let Some(queues) = queues {
            for (name, what, depth) in [
                (
                    "webhook_deliveries",
                    "webhook deliveries",
                    queues.webhook_deliveries,
                ),
                ("mails", "mails", queues.mails),
            ] {
                let _ = writeln!(
                    out,
                    "# HELP souk_{name}_waiting The {what} not made yet (due, being made, or to be tried again)."
                );
                let _ = writeln!(out, "# TYPE souk_{name}_waiting gauge");
                let _ = writeln!(out, "souk_{name}_waiting {}", depth.waiting);
                let _ = writeln!(
                    out,
                    "# HELP souk_{name}_lag_seconds How long the most overdue of the {what} has been due without a sender taking it (0: none is)."
                );
                let _ = writeln!(out, "# TYPE souk_{name}_lag_seconds gauge");
                let _ = writeln!(out, "souk_{name}_lag_seconds {}", depth.lag_seconds);
            }
        }
        out
    }
}

fn escape(label: &str) -> String {
    label.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The methods HTTP defines (RFC 9110, and PATCH) by name, any other as `OTHER`: a method
/// is any token a client makes up, and each would be a series kept for ever.
fn method_label(method: &str) -> &str {
    const DEFINED: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ];
    DEFINED
        .into_iter()
        .find(|defined| *defined == method)
        .unwrap_or("OTHER")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_buckets() {
        let metrics = Metrics::default();
        metrics.record("GET", "/v1/categories", 200, Duration::from_millis(3));
        metrics.record("GET", "/v1/categories", 200, Duration::from_millis(30));
        let queues = QueueDepths {
            webhook_deliveries: QueueDepth {
                waiting: 3,
                lag_seconds: 90,
            },
            mails: QueueDepth {
                waiting: 4,
                lag_seconds: 0,
            },
        };
        let held = Held {
            pool: PoolStats {
                in_use: 1,
                idle: 2,
                max: 16,
                opened: 7,
            },
            uploads_reserved: 4096,
            connections_open: 5,
            connections_max: 10_000,
        };
        let text = metrics.render(held, Some(queues));
        assert!(text.contains("souk_http_connections 5\n"), "{text}");
        assert!(text.contains("souk_http_connections_max 10000\n"), "{text}");
        assert!(
            text.contains("souk_db_connections_opened_total 7\n"),
            "{text}"
        );
        assert!(text.contains(
            "souk_http_requests_total{method=\"GET\",route=\"/v1/categories\",status=\"200\"} 2"
        ));
        assert!(text.contains("le=\"0.005\"} 1"));
        assert!(text.contains("le=\"+Inf\"} 2"));
        assert!(text.contains("souk_db_connections{state=\"idle\"} 2"));
        assert!(
            text.contains("souk_webhook_deliveries_waiting 3\n"),
            "{text}"
        );
        assert!(text.contains("souk_mails_waiting 4\n"), "{text}");
        assert!(
            text.contains("souk_webhook_deliveries_lag_seconds 90\n"),
            "{text}"
        );
        assert!(text.contains("souk_mails_lag_seconds 0\n"), "{text}");
        assert!(
            text.contains("souk_upload_memory_reserved_bytes 4096\n"),
            "{text}"
        );
    }

    #[test]
    fn a_queue_lags_by_how_long_its_first_item_has_been_due() {
        let waiting = |count, first_due| Waiting { count, first_due };
        let lag = |w, now| QueueDepth::of(w, now).lag_seconds;
        assert_eq!(lag(waiting(2, Some(100)), 130), 30, "due 30 s ago");
        assert_eq!(lag(waiting(2, Some(160)), 130), 0, "not due yet");
        assert_eq!(lag(waiting(0, None), 130), 0, "empty");
        assert_eq!(QueueDepth::of(waiting(2, Some(100)), 130).waiting, 2);
    }

    #[test]
    fn methods_no_one_defined_share_one_series() {
        let metrics = Metrics::default();
        for made_up in ["FOO1", "FOO2", "get"] {
            metrics.record(made_up, "/v1/nothing", 404, Duration::from_millis(1));
        }
        metrics.record("PATCH", "/v1/nothing", 404, Duration::from_millis(1));
        let text = metrics.render(Held::default(), None);
        assert!(
            text.contains(
                "souk_http_requests_total{method=\"OTHER\",route=\"/v1/nothing\",status=\"404\"} 3"
            ),
            "{text}"
        );
        assert!(text.contains("method=\"PATCH\""), "{text}");
        assert!(!text.contains("FOO"), "{text}");
        assert!(
            !text.contains("_waiting"),
            "queues not read, not shown: {text}"
        );
    }
}
