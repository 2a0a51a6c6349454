//! R2db of the benchmark (bench/run --search): R2's query mix run straight against the
//! database, without HTTP, tokens or JSON: each query string parsed and run by the search
//! use case (`usecase::search::run`, the statements a search sends and the page's ads read),
//! from `connections` tasks at once for `seconds`. Prints `{"requests", "p50_ms",
//! "p95_ms"}`, so that the report shows how much of R2 is the database's.
//!
//! With `CONNECTIONS` 0 it profiles instead: each query once, one after the other (after
//! one round to warm the caches), printing its time in milliseconds and the query, one per
//! line, to find which kinds of the mix are slow.
//!
//!     cargo run --release --example search_db -- DATABASE_URL QUERIES_FILE SECONDS CONNECTIONS

use std::time::{Duration, Instant};

use souk::domain::search::request::SearchRequest;
use souk::store::{Db, DbOptions};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, file, seconds, connections] = args.as_slice() else {
        panic!("usage: search_db DATABASE_URL QUERIES_FILE SECONDS CONNECTIONS");
    };
    let seconds: u64 = seconds.parse().expect("SECONDS");
    let connections: usize = connections.parse().expect("CONNECTIONS");
    let paths: Vec<String> = std::fs::read_to_string(file)
        .expect("the queries file")
        .lines()
        .map(str::to_owned)
        .collect();
    let requests: Vec<SearchRequest> = paths
        .iter()
        .map(|path| {
            let query = path.split_once('?').map_or("", |(_, query)| query);
            let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            SearchRequest::parse(&pairs).expect("a query of the mix parses")
        })
        .collect();
    let db = Db::open(url, &DbOptions::default())
        .await
        .expect("open the database");
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    if connections == 0 {
        for round in 0..2 {
            for (request, path) in requests.iter().zip(&paths) {
                let started = Instant::now();
                search(&db, request.clone(), now).await;
                if round == 1 {
                    println!("{:.3}\t{path}", started.elapsed().as_secs_f64() * 1000.0);
                }
            }
        }
        return;
    }
    let until = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..connections)
        .map(|task| {
            let (db, requests) = (db.clone(), requests.clone());
            tokio::spawn(async move {
                let mut times = Vec::new();
                let mut next = task * 499;
                while Instant::now() < until {
                    let request = requests[next % requests.len()].clone();
                    next += 1;
                    let started = Instant::now();
                    search(&db, request, now).await;
                    times.push(started.elapsed());
                }
                times
            })
        })
        .collect();
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await.expect("a task"));
    }
    times.sort();
    let at = |share: f64| times[((times.len() as f64 * share) as usize).min(times.len() - 1)];
    println!(
        "{{\"requests\": {}, \"p50_ms\": {:.3}, \"p95_ms\": {:.3}}}",
        times.len(),
        at(0.5).as_secs_f64() * 1000.0,
        at(0.95).as_secs_f64() * 1000.0
    );
}

/// One search of the mix, as the handler runs it (on the heavy-read path).
async fn search(db: &Db, request: SearchRequest, now: i64) {
    db.read_heavy(move |conn| {
        Box::pin(async move {
            souk::usecase::search::run::<std::convert::Infallible>(conn, &request, now)
                .await
                .map(drop)
        })
    })
    .await
    .expect("a query of the mix runs");
}
