//! Prometheus metrics: requests by route and status, their latency, and pool usage.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use parking_lot::Mutex;

use crate::store::PoolStats;

/// Upper bounds of the latency histogram buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// A route's series, by method and status.
type RouteSeries = BTreeMap<(String, u16), RouteStats>;

#[derive(Default)]
pub struct Metrics {
    /// By route, then by method and status. Looked up by `&str` first, so that recording
    /// a request of a route already seen allocates nothing.
    requests: Mutex<BTreeMap<String, RouteSeries>>,
}

#[derive(Default)]
struct RouteStats {
    count: u64,
    seconds_sum: f64,
    buckets: [u64; BUCKETS.len()],
}

impl Metrics {
    /// Records one answered request; `route` is the route template (`/v1/categories/{id}`),
    /// never the raw path, so the label set stays small.
    pub fn record(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let mut requests = self.requests.lock();
        if !requests.contains_key(route) {
            requests.insert(route.to_owned(), BTreeMap::new());
        }
        let by_method = requests.get_mut(route).expect("inserted above");
        // A route answers few method and status pairs: a scan finds one without building
        // a key.
        let stats = match by_method
            .iter_mut()
            .find(|((m, s), _)| m == method && *s == status)
        {
            Some((_, stats)) => stats,
            None => by_method.entry((method.to_owned(), status)).or_default(),
        };
        stats.count += 1;
        stats.seconds_sum += seconds;
        for (bucket, bound) in stats.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
    }

    /// Every recorded series, ordered by method, route and status (the exposition's order).
    fn series(requests: &BTreeMap<String, RouteSeries>) -> Vec<(&str, &str, u16, &RouteStats)> {
        let mut series: Vec<_> = requests
            .iter()
            .flat_map(|(route, by_method)| {
                by_method.iter().map(move |((method, status), stats)| {
                    (method.as_str(), route.as_str(), *status, stats)
                })
            })
            .collect();
        series.sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
        series
    }

    /// The Prometheus text exposition of everything recorded, plus the pool figures.
    pub fn render(&self, pool: PoolStats) -> String {
        let mut out = String::new();
        let requests = self.requests.lock();
        let series = Metrics::series(&requests);
        out.push_str("# HELP souk_http_requests_total HTTP requests answered.\n");
        out.push_str("# TYPE souk_http_requests_total counter\n");
        for (method, route, status, stats) in &series {
            let _ = writeln!(
                out,
                "souk_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{}\"}} {}",
                method,
                escape(route),
                status,
                stats.count
            );
        }
        out.push_str("# HELP souk_http_request_duration_seconds Time to answer a request.\n");
        out.push_str("# TYPE souk_http_request_duration_seconds histogram\n");
        for (method, route, status, stats) in &series {
            let labels = format!(
                "method=\"{}\",route=\"{}\",status=\"{}\"",
                method,
                escape(route),
                status
            );
            for (count, bound) in stats.buckets.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "souk_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "souk_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                stats.count
            );
            let _ = writeln!(
                out,
                "souk_http_request_duration_seconds_sum{{{labels}}} {}",
                stats.seconds_sum
            );
            let _ = writeln!(
                out,
                "souk_http_request_duration_seconds_count{{{labels}}} {}",
                stats.count
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
        out
    }
}

fn escape(label: &str) -> String {
    label.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_buckets() {
        let metrics = Metrics::default();
        metrics.record("GET", "/v1/categories", 200, Duration::from_millis(3));
        metrics.record("GET", "/v1/categories", 200, Duration::from_millis(30));
        let text = metrics.render(PoolStats {
            in_use: 1,
            idle: 2,
            max: 16,
        });
        assert!(text.contains(
            "souk_http_requests_total{method=\"GET\",route=\"/v1/categories\",status=\"200\"} 2"
        ));
        assert!(text.contains("le=\"0.005\"} 1"));
        assert!(text.contains("le=\"+Inf\"} 2"));
        assert!(text.contains("souk_db_connections{state=\"idle\"} 2"));
    }
}
