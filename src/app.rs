//! Starting up: database preparation, the sandbox demo, the server with graceful shutdown
//! and its background upkeep.

use crate::clock::Clock;
use crate::config::Config;
use crate::domain::feature::parse_price_list;
use crate::domain::taxonomy::parse_taxonomy;
use crate::images::blobs::Blobs;
use crate::state::AppState;
use crate::store::oauth::FORGET_BATCH;
use crate::store::{Db, DbOptions, TableLock, categories, features, migrations};
use crate::supervisor::supervised;

/// The default taxonomy, shipped in the binary so that `souk` runs from any directory.
pub const DEFAULT_TAXONOMY: &str = include_str!("../data/categories.json");

/// The default feature price list, shipped in the binary for the same reason.
pub const DEFAULT_FEATURE_PRICES: &str = include_str!("../data/features.json");

pub fn db_options(config: &Config) -> DbOptions {
    DbOptions {
        sqlite_sync: config.sqlite_synchronous,
        max_connections: config.database_max_connections,
        read_connections: config.database_read_connections,
        heavy_reads: config.database_heavy_reads,
        // A second past the request's own timeout, so that the request is answered 408
        // first (not with the statement's error), and its search stops soon after.
        heavy_read_timeout: std::time::Duration::from_secs(config.request_timeout_secs + 1),
    }
}

/// Opens the database, applies migrations and fills a new database with the default
/// taxonomy and locations. Demo data for sandboxes arrives with users and ads (see README).
pub async fn prepare_database(config: &Config, clock: &Clock) -> anyhow::Result<Db> {
    let db = Db::open(&config.database_url, &db_options(config)).await?;
    let applied = migrations::run(&db).await?;
    if applied > 0 {
        tracing::info!(applied, "database migrations applied");
    }
    // Each default is loaded into an empty table only. The count is read first, so that a
    // start on a database in use takes no lock; a load then holds the table against an
    // operator's first import under way (on another process), waits for it, and counts
    // again: the import is kept, not overwritten.
    let taxonomy = parse_taxonomy(DEFAULT_TAXONOMY)?;
    let now = clock.now();
    let no_categories = db.read(|conn| Box::pin(categories::count(conn))).await? == 0;
    let loaded = if no_categories {
        db.write(move |conn| {
            Box::pin(async move {
                conn.lock_table("categories", TableLock::Writes).await?;
                if categories::count(conn).await? > 0 {
                    return Ok(None);
                }
                categories::import(conn, &taxonomy, false, now)
                    .await
                    .map(Some)
            })
        })
        .await?
    } else {
        None
    };
    if let Some(summary) = loaded {
        tracing::info!(categories = summary.inserted, "default taxonomy loaded");
    }
    let prices = parse_price_list(DEFAULT_FEATURE_PRICES).map_err(anyhow::Error::msg)?;
    let no_prices = db.read(|conn| Box::pin(features::count(conn))).await? == 0;
    let priced = no_prices
        && db
            .write(move |conn| {
                Box::pin(async move {
                    conn.lock_table("feature_prices", TableLock::Writes).await?;
                    if features::count(conn).await? > 0 {
                        return Ok(false);
                    }
                    features::replace(conn, &prices).await.map(|()| true)
                })
            })
            .await?;
    if priced {
        tracing::info!("default feature prices loaded (data/features.json)");
    }
    let postcodes = crate::locations::load_default(&db).await?;
    if postcodes > 0 {
        tracing::info!(postcodes, "default locations loaded (data/locations.txt)");
    }
    Ok(db)
}

/// Opens the image store of the configuration, and makes sure it is the one the database's
/// images are in (`usecase::image_store`): a server with another does not start.
pub async fn open_blobs(config: &Config, db: &Db) -> anyhow::Result<Blobs> {
    let blobs = Blobs::open(&crate::state::blob_config(config))?;
    crate::usecase::image_store::own_store(db, &blobs).await?;
    Ok(blobs)
}

/// Gives the ads whose search terms are outdated (made by an older tokenizer, before search
/// existed, or before their category moved to another parent) their terms again, 1,000 per
/// write so that the writer never stalls for long; returns how many. Those ads are missing
/// from results meanwhile. The upkeep runs it at start and every minute after, and a
/// category import at once.
pub async fn reindex_search(db: &Db) -> Result<usize, crate::store::DbError> {
    let mut total = 0;
    loop {
        match db
            .write(|conn| Box::pin(crate::usecase::search::reindex_outdated(conn, 1000)))
            .await?
        {
            0 => return Ok(total),
            n => total += n,
        }
    }
}

/// [`reindex_search`] at start and every `period` after, as a task of its own: after a new
/// tokenizer it may take minutes, which the rest of the upkeep does not wait for.
pub async fn reindex_periodically(db: Db, period: std::time::Duration) {
    let mut every = tokio::time::interval(period);
    loop {
        every.tick().await;
        match reindex_search(&db).await {
            Ok(0) => {}
            Ok(ads) => tracing::info!(ads, "ads indexed for search"),
            Err(e) => tracing::error!(error = ?e, "re-indexing ads for search failed"),
        }
    }
}

/// Serves until SIGTERM or SIGINT, then stops accepting, finishes the requests in flight
/// (those that already answered 408 too) and the background work in hand, writes the last
/// view counts, and returns. Every write that was answered is committed by then; the
/// re-indexing is not waited for, and a write of it cut off at exit is rolled back.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    let clock = Clock::default();
    let db = prepare_database(&config, &clock).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    // With port 0 the system picks the port: from here on the configuration names it.
    let config = config.bound_to(listener.local_addr()?);
    for doubt in config.doubts() {
        tracing::warn!("{doubt}");
    }
    let blobs = open_blobs(&config, &db).await?;
    if config.environment == crate::config::Environment::Sandbox {
        create_sandbox_demo(&config, &db, &blobs, clock.now()).await?;
    }
    let state = AppState::new(config.clone(), db, blobs, clock)?;
    let minute = std::time::Duration::from_secs(60);
    // Not waited for at the stop: each batch of the re-indexing is a transaction of its
    // own, and the last view counts are written at exit.
    let db = state.db.clone();
    tokio::spawn(supervised(
        "re-indexing",
        state.stopping.clone(),
        move || reindex_periodically(db.clone(), minute),
    ));
    let views = state.clone();
    tokio::spawn(supervised(
        "view counts",
        state.stopping.clone(),
        move || flush_views_periodically(views.clone()),
    ));
    spawn_worker(&state, "upkeep", move |state| {
        sweep_periodically(state, minute)
    });
    spawn_worker(&state, "saved-search alerts", alert_periodically);
    start_workers(&state).await?;
    let signal = shutdown_signal()?;
    let stopping = state.stopping.clone();
    let signalled = std::sync::Arc::new(std::sync::OnceLock::new());
    // The workers stop taking work as the requests in flight are finished.
    let shutdown = {
        let signalled = signalled.clone();
        async move {
            signal.await;
            let _ = signalled.set(std::time::Instant::now());
            stopping.cancel();
        }
    };
    tracing::info!(
        listen = %config.listen,
        base_url = %config.base_url,
        database = %crate::store::redact_url(&config.database_url),
        region = %config.region,
        "souk is serving"
    );
    // A line a script (or a test that asked for port 0) reads to find the server.
    println!("listening on http://{}", config.listen);
    println!(
        "Souk serves {base}/v1 (docs: {base}/docs). Try: curl {base}/v1",
        base = config.base_url
    );
    if let Some(descriptors) = state.connections.lowered_by_descriptors {
        tracing::warn!(
            "SOUK_MAX_CONNECTIONS is {}, but the process may open {descriptors} files and \
             sockets: it serves {} connections at once; raise its limit (LimitNOFILE, ulimit -n)",
            config.max_connections,
            state.connections.max()
        );
    }
    let limits = crate::http::ServeLimits::of(&config);
    crate::http::serve(
        listener,
        crate::http::router(state.clone()),
        state.connections.clone(),
        shutdown,
        limits,
    )
    .await;
    // Requests answered 408 may still be writing; each gives up at twice the request
    // timeout at the latest, freeing its Idempotency-Key. Keeping an answer or freeing a
    // key is a write of its own, which a lock held elsewhere could hold for good: bounded
    // (a key left pending is taken over later, `http::idempotency`).
    state.detached.close();
    if !state.detached.is_empty() {
        tracing::info!(
            requests = state.detached.len(),
            "waiting for requests that outlived their answers"
        );
    }
    // Counted from the signal, as each request's own bound is from its start.
    let since_signal = signalled
        .get()
        .map_or(Default::default(), |at| at.elapsed());
    let detached = std::time::Duration::from_secs(2 * state.config.request_timeout_secs + 10)
        .saturating_sub(since_signal);
    if tokio::time::timeout(detached, state.detached.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            requests = state.detached.len(),
            "requests still writing {} s after the signal: their keys are taken over later",
            2 * state.config.request_timeout_secs + 10
        );
    }
    // Each worker finishes the item in hand (a delivery, a mail, a rendition, a round of
    // upkeep) and takes no more; what is not finished by then is left to its lease, taken
    // again by another replica or the next start.
    state.workers.close();
    let grace = std::time::Duration::from_secs(state.config.webhook_timeout_secs + 5);
    if tokio::time::timeout(grace, state.workers.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            "background work still in flight after {} s: left to its leases",
            grace.as_secs()
        );
    }
    let last_flush = std::time::Duration::from_secs(10);
    match tokio::time::timeout(last_flush, state.views.flush(&state.db)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "cannot write the last view counts"),
        Err(_) => tracing::warn!("the last view counts not written within 10 s: lost"),
    }
    // A render cut off by the exit would count against its image (`RenderTurns`): one
    // under way is waited for, up to a minute (its writes around the render too, which a
    // lock held elsewhere could hold).
    let renders = std::time::Duration::from_secs(60);
    let last_turn = tokio::time::timeout(renders, state.render_turns.last()).await;
    if last_turn.is_err() {
        tracing::warn!("a rendition still under way after 60 s: cut off");
    }
    tracing::info!("souk stopped");
    Ok(())
}

/// Resolves on SIGTERM or SIGINT. The handlers are installed when this is called, not
/// when it is first polled, so a signal right after start-up is not lost.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};

    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => {},
            _ = interrupt.recv() => {},
        }
        tracing::info!("shutdown signal received: finishing requests in flight");
    })
}

/// Online ads a new sandbox gets, shared by the two demo users.
const DEMO_ADS: u64 = 40;

/// In a new sandbox database (no clients, no users): a demo client and two demo users, and
/// how to use them, printed and written to `<data dir>/sandbox.txt`. Production never
/// comes here.
pub async fn create_sandbox_demo(
    config: &Config,
    db: &Db,
    blobs: &Blobs,
    now: i64,
) -> anyhow::Result<()> {
    use crate::accounts::{ClientSpec, UserSpec, create_client, create_user};
    use crate::store::{oauth, users};

    let empty = db
        .read(|conn| {
            Box::pin(async move {
                Ok::<_, crate::store::DbError>(
                    oauth::clients(conn).await?.is_empty() && users::count(conn).await? == 0,
                )
            })
        })
        .await?;
    if !empty {
        return Ok(());
    }
    let callback = format!("{}/accounts/demo-callback", config.auth_url);
    let (client_id, secret) = create_client(
        db,
        ClientSpec {
            name: "Souk demo app".into(),
            redirect_uris: vec![callback.clone()],
            scopes: Some("read write purchase create_account confirm_upcall webhooks".into()),
            default_scopes: Some("read write purchase".into()),
            grants: Vec::new(),
            public: false,
        },
        now,
    )
    .await?;
    let secret = secret.unwrap_or_default();
    let mut sellers = Vec::new();
    for (email, password, name) in [
        ("jan@demo.souk.test", "souk-demo-jan", "Jan de Vries"),
        ("marie@demo.souk.test", "souk-demo-marie", "Marie Dubois"),
    ] {
        let id = create_user(
            db,
            UserSpec {
                email: email.into(),
                password: Some(password.into()),
                name: Some(name.into()),
                locale: config.region.as_str().into(),
                ..UserSpec::default()
            },
            now,
        )
        .await?;
        sellers.push(id);
    }
    // Something to look at: online ads of both demo users, valid for their categories,
    // each with three pictures.
    let leaves = crate::seed::open_leaves(db).await?;
    crate::seed::seed_ads(
        db,
        blobs,
        &leaves,
        &sellers,
        DEMO_ADS,
        crate::state::till(config),
        now,
    )
    .await?;
    let auth = &config.auth_url;
    let base = &config.base_url;
    let encoded_callback: String = form_urlencoded::byte_serialize(callback.as_bytes()).collect();
    let text = format!(
        "Sandbox demo data (a new sandbox database gets it once; production never does)\n\
         \n  client_id:     {client_id}\n  client_secret: {secret}\n\
         \n  users:         jan@demo.souk.test / souk-demo-jan\n                 marie@demo.souk.test / souk-demo-marie\n\
         \n  ads:           {DEMO_ADS} online ads of Jan and Marie (GET /v1/users/{{userId}}/advertisements)\n\
         \nA client token (client credentials):\n\
         \n  curl -s -u '{client_id}:{secret}' -d grant_type=client_credentials {auth}/accounts/oauth/token\n\
         \nA user token (authorization code): open this in a browser, sign in as Jan and allow:\n\
         \n  {auth}/accounts/oauth/authorize?response_type=code&client_id={client_id}&redirect_uri={encoded_callback}&state=demo\n\
         \nthe page you land on shows the curl line that exchanges the code. Then:\n\
         \n  curl -s -H \"Authorization: Bearer $TOKEN\" {base}/v1/categories\n"
    );
    println!("{text}");
    std::fs::create_dir_all(&config.data_dir)?;
    write_private(&config.data_dir.join("sandbox.txt"), &text)?;
    Ok(())
}

/// Writes `text` to a new file at `path` that only its owner may read from its first byte
/// (a file there before is replaced, whatever its mode): it holds a client secret, which
/// a file written first and restricted after showed to every local user meanwhile.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())
}

/// Background upkeep, every `period` (a minute when serving; tests take less): writes down
/// the expiry of ads whose `closeDate` has passed (reads already show them expired), folds the changes of the kept search counts (PostgreSQL,
/// `store::search::fold_counts`), and every 60th time (hourly) forgets idempotency keys
/// older than a day and the tokens, sessions and failed sign-ins nothing needs any more,
/// and sweeps the blob store (queued originals, unreferenced blobs). On PostgreSQL every
/// replica does it; the statements are idempotent.
pub async fn sweep_periodically(state: AppState, period: std::time::Duration) {
    let mut every = tokio::time::interval(period);
    for tick in 0_u64.. {
        if !rest(&state, every.tick(), None).await {
            return;
        }
        let now = state.clock.now();
        warn_on(
            expire_due(&state.db, now).await,
            "cannot expire advertisements",
        );
        let folded = state
            .db
            .write(|conn| Box::pin(crate::store::search::fold_counts(conn)))
            .await;
        warn_on(folded, "cannot fold the search counts");
        if tick % 60 == 0 {
            warn_on(
                forget_idempotency_keys(&state.db, now).await,
                "cannot sweep idempotency keys",
            );
            warn_on(
                forget_spent_tokens(&state.db, now).await,
                "cannot delete spent tokens",
            );
            warn_on(
                crate::usecase::events::forget_old(&state.db, now).await,
                "cannot delete old events",
            );
            // Blobs a crash left unreferenced, or held for a rendition never recorded
            // (deletions wake the sweeper, which frees theirs within moments).
            crate::usecase::images::sweep(&state.db, &state.blobs, &state.clock).await;
            // Originals of uploads that stopped before they recorded their images.
            crate::usecase::images::delete_stray_originals(&state.db, &state.blobs, &state.clock)
                .await;
        }
    }
}

/// Writes down every expiry due, a batch per write.
async fn expire_due(db: &crate::store::Db, now: i64) -> Result<(), crate::store::DbError> {
    use crate::usecase::advertisements::{EXPIRY_BATCH, expire_due};
    loop {
        let expired = db
            .write(move |conn| Box::pin(async move { expire_due(conn, now).await }))
            .await?;
        if (expired as i64) < EXPIRY_BATCH {
            return Ok(());
        }
    }
}

/// The workers that requests wake (the server's and the tests'): the rendition workers,
/// the blob sweeper and the mail sender.
///
/// The rendition workers (`usecase::renditions`): `image_workers` tasks, each doing one
/// job at a time on a blocking thread (so at most that many decoded images are in memory,
/// whatever the burst of uploads), woken by an upload and every second otherwise (for
/// jobs of other replicas and leases that ran out). On SQLite the one process owns every
/// job and every mail, so leases left by a crash are given up at once.
pub async fn start_workers(state: &AppState) -> anyhow::Result<()> {
    if state.db.backend() == crate::store::Backend::Sqlite {
        crate::usecase::renditions::release_leases(&state.db).await?;
        crate::usecase::mail_queue::release_leases(&state.db, &state.clock).await?;
        crate::usecase::deliveries::release_leases(&state.db, &state.clock).await?;
    }
    spawn_worker(state, "blob sweeper", sweep_blobs);
    spawn_worker(state, "mail sender", send_mail);
    use crate::usecase::deliveries::{InFlight, SENDERS, SENDERS_PER_HOOK};
    let in_flight = std::sync::Arc::new(InFlight::new(SENDERS_PER_HOOK));
    for _ in 0..SENDERS {
        let in_flight = in_flight.clone();
        spawn_worker(state, "webhook sender", move |state| {
            deliver_webhooks(state, in_flight.clone())
        });
    }
    for _ in 0..state.config.image_workers {
        let turns = state.render_turns.clone();
        spawn_worker(state, "rendition worker", move |state| {
            make_renditions(state, turns.clone())
        });
    }
    Ok(())
}

/// Starts `worker` as a background worker of the server's, supervised (started again if it
/// panics) and waited for at the stop (`AppState::workers`).
fn spawn_worker<W, F>(state: &AppState, name: &'static str, worker: W)
where
    W: Fn(AppState) -> F + Send + 'static,
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let own = state.clone();
    state
        .workers
        .spawn(supervised(name, state.stopping.clone(), move || {
            worker(own.clone())
        }));
}

/// The blob sweeper: a sweep each time an image deletion wakes it
/// (`usecase::images::sweep`). What a stopped replica was woken for is swept by the hourly
/// upkeep of any replica.
async fn sweep_blobs(state: AppState) {
    while rest(&state, state.sweeps.woken(), None).await {
        crate::usecase::images::sweep(&state.db, &state.blobs, &state.clock).await;
    }
}

/// A worker's wait: until `wake` resolves, or `pause` (if any) passes. `false` instead
/// once the server is stopping, also when it already was: the worker then returns.
async fn rest(
    state: &AppState,
    wake: impl std::future::Future,
    pause: Option<std::time::Duration>,
) -> bool {
    let pause = async {
        match pause {
            Some(pause) => tokio::time::sleep(pause).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        // Looked at first: a stop that comes with a wake or a tick starts no more work.
        biased;
        _ = state.stopping.cancelled() => false,
        _ = wake => true,
        _ = pause => true,
    }
}

/// The mail sender (`usecase::mail_queue`): sends every mail due, then waits until a
/// change that queued mail wakes it, or [`MAIL_POLL`] passes (for mail queued by other
/// replicas, and mail due again after a failure).
async fn send_mail(state: AppState) {
    use crate::usecase::mail_queue::{Sent, send_next};
    while !state.stopping.is_cancelled() {
        // A wake that comes while this sender looks is kept for the wait below.
        let woken = state.mail.woken();
        match send_next(&state.db, &state.mailer, &state.clock).await {
            Ok(Sent::Sent | Sent::Failed | Sent::Stale) => continue,
            Ok(Sent::Idle) => {}
            Err(e) => tracing::warn!(error = %e, "the mail queue cannot be read or written"),
        }
        if !rest(&state, woken, Some(MAIL_POLL)).await {
            return;
        }
    }
}

/// A webhook sender (`usecase::deliveries`): makes every delivery due, then looks again
/// after [`DELIVERY_POLL`] (the events that queue deliveries are written by every replica's
/// requests, so it polls rather than waits for a wake).
async fn deliver_webhooks(
    state: AppState,
    in_flight: std::sync::Arc<crate::usecase::deliveries::InFlight>,
) {
    use crate::usecase::deliveries::{Delivered, DeliveryPolicy, deliver_next};
    let policy = DeliveryPolicy {
        timeout: std::time::Duration::from_secs(state.config.webhook_timeout_secs),
        allow: state.config.webhook_allow_list(),
    };
    let hal = state.hal("v1");
    let render = move |event: &crate::store::events::EventRecord| {
        crate::http::event_json(&hal, event)
            .to_string()
            .into_bytes()
    };
    while !state.stopping.is_cancelled() {
        match deliver_next(&state.db, &state.clock, &policy, &render, &in_flight).await {
            Ok(Delivered::Done | Delivered::Failed) => continue,
            Ok(Delivered::Idle) => {}
            Err(e) => {
                tracing::warn!(error = %e, "the webhook deliveries cannot be read or written")
            }
        }
        if !rest(&state, std::future::pending::<()>(), Some(DELIVERY_POLL)).await {
            return;
        }
    }
}

/// How often an idle webhook sender looks for deliveries.
const DELIVERY_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// How often an idle mail sender looks for mail no wake announced.
const MAIL_POLL: std::time::Duration = std::time::Duration::from_secs(2);

async fn make_renditions(
    state: AppState,
    turns: std::sync::Arc<crate::usecase::renditions::RenderTurns>,
) {
    use crate::usecase::renditions::{Ran, run_next};
    let lease = i64::try_from(state.config.image_job_lease_secs).unwrap_or(60);
    let pause = std::time::Duration::from_secs(1);
    while !state.stopping.is_cancelled() {
        // Made before looking, so that an upload in between still wakes this worker.
        let woken = state.renditions.notified();
        let rested = match run_next(&state.db, &state.blobs, &state.clock, lease, &turns).await {
            Ok(Ran::Worked) => true,
            Ok(Ran::Idle) => rest(&state, woken, Some(pause)).await,
            Err(e) => {
                tracing::warn!(error = %e, "a rendition job failed; it runs again later");
                rest(&state, std::future::pending::<()>(), Some(pause)).await
            }
        };
        if !rested {
            return;
        }
    }
}

/// Saved-search alerts (`usecase::alerts`), a round every [`ALERT_ROUND_SECONDS`]: an
/// immediate alert goes out within about that long of the ad's write.
async fn alert_periodically(state: AppState) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(ALERT_ROUND_SECONDS));
    while rest(&state, every.tick(), None).await {
        let round = crate::usecase::alerts::round(
            &state.db,
            &state.mailer,
            &state.config.base_url,
            &state.clock,
        )
        .await;
        warn_on(round, "cannot match or mail saved-search alerts");
    }
}

/// Seconds between two rounds of saved-search alerts.
pub const ALERT_ROUND_SECONDS: u64 = 30;

/// Upkeep that failed is logged; the next round tries again.
fn warn_on<T>(result: Result<T, crate::store::DbError>, what: &str) {
    if let Err(e) = result {
        tracing::warn!(error = %e, "{what}");
    }
}

/// Deletes the tokens, codes, sessions and failed sign-ins nothing needs any more (see
/// `store::oauth::forget_spent`), a batch per write so that other writes get their turn;
/// returns how many went.
pub async fn forget_spent_tokens(db: &Db, now: i64) -> Result<u64, crate::store::DbError> {
    use crate::oauth::grants::{EXPIRED_KEPT_SECONDS, SPENT_REFRESH_KEPT_SECONDS};
    use crate::oauth::session::THROTTLE_WINDOW;
    let (expired_before, spent_before, failed_before) = (
        now - EXPIRED_KEPT_SECONDS,
        now - SPENT_REFRESH_KEPT_SECONDS,
        now - THROTTLE_WINDOW,
    );
    crate::usecase::in_batches(db, FORGET_BATCH, move |conn| {
        Box::pin(crate::store::oauth::forget_spent(
            conn,
            expired_before,
            spent_before,
            failed_before,
        ))
    })
    .await
}

/// Forgets the `Idempotency-Key`s older than a day (`http::IDEMPOTENCY_KEEP_SECONDS`), a
/// batch per write; returns how many went.
pub async fn forget_idempotency_keys(db: &Db, now: i64) -> Result<u64, crate::store::DbError> {
    let before = now - crate::http::IDEMPOTENCY_KEEP_SECONDS;
    crate::usecase::in_batches(db, FORGET_BATCH, move |conn| {
        Box::pin(crate::store::idempotency::sweep(conn, before, FORGET_BATCH))
    })
    .await
}

async fn flush_views_periodically(state: AppState) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(
        crate::statistics::FLUSH_SECONDS,
    ));
    loop {
        every.tick().await;
        if let Err(e) = state.views.flush(&state.db).await {
            tracing::warn!(error = %e, "cannot write view counts");
        }
    }
}
