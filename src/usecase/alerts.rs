//! Saved-search alerts (docs/API.md "Saved searches"): mail to a saved search's owner
//! about ads that newly match it, at once or as a daily digest.
//!
//! Off the request path and durable: an ad that enters search is queued by a trigger in
//! its own write's transaction ([`crate::store::alerts`]), so an ad write costs one row
//! more and nothing is lost in a crash. A background round ([`round`]) holds the queued
//! ads against every alerting saved search, with the search's own query restricted to
//! them, and records each ad found once per search, in the transaction that takes them
//! off the queue; then it mails the searches whose mail is due, each under a lease so that
//! of several replicas one sends it. A mail that fails is sent again in a later round; a
//! match it would carry is given up after a week ([`KEEP_TRYING_SECS`]).
//!
//! An ad matches once: changed and still matching, it is not news again. Its owner's own
//! ads never match their searches. A re-index (a category moved, a new tokenizer) changes
//! no ad, so what it puts back into search is not queued (`store::alerts::pause_queueing`).

use crate::clock::Clock;
use crate::domain::advertisement::ItemId;
use crate::domain::locale::Language;
use crate::domain::search::request::SearchRequest;
use crate::domain::search::saved::Alert;
use crate::mail::{Mail, Mailer};
use crate::store::ads::{self, AdRecord};
use crate::store::alerts::{self, Alerting};
use crate::store::search::{self, Query};
use crate::store::{Conn, Db, DbError, users};

/// Queued ads held against the saved searches per transaction.
const BATCH: i64 = 200;

/// Saved searches mailed per round.
const MAILS_PER_ROUND: i64 = 100;

/// How long a replica may take to send one search's mail before another may.
const MAIL_LEASE_SECONDS: i64 = 300;

/// How long a match whose mail cannot be sent is kept trying: a week, as the mail queue
/// does (`usecase::mail_queue`). Then it is given up (the address never takes mail, or
/// the mail server was down all that time: news a week old is no news); newer matches
/// are still tried.
const KEEP_TRYING_SECS: i64 = 7 * 86_400;

/// The most ads one mail lists; a larger batch says how many more there are.
const LISTED: usize = 20;

/// How many new matches and mails one round made.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub matched: usize,
    pub mailed: usize,
}

/// One round: matches every queued ad, then sends the mails due. `base_url` makes the
/// links in the mail.
pub async fn round(
    db: &Db,
    mailer: &Mailer,
    base_url: &str,
    clock: &Clock,
) -> Result<Round, DbError> {
    let mut done = Round::default();
    loop {
        let now = clock.now();
        let (taken, matched) = db
            .write(move |conn| Box::pin(async move { match_queued(conn, now).await }))
            .await?;
        done.matched += matched;
        if taken < BATCH as usize {
            break;
        }
    }
    done.mailed = mail_due(db, mailer, base_url, clock).await?;
    Ok(done)
}

/// Takes a batch of queued ads and records which alerting saved searches each matches;
/// returns how many ads were taken and how many matches made.
async fn match_queued(conn: &mut dyn Conn, now: i64) -> Result<(usize, usize), DbError> {
    let numbers = alerts::take_queued(conn, BATCH).await?;
    if numbers.is_empty() {
        return Ok((0, 0));
    }
    let alerting = alerts::alerting(conn).await?;
    if alerting.is_empty() {
        return Ok((numbers.len(), 0));
    }
    // Read once for the batch: each search leaves out its owner's own ads.
    let sellers: std::collections::HashMap<i64, i64> = ads::by_numbers(conn, &numbers)
        .await?
        .into_iter()
        .map(|ad| (ad.number, ad.seller_id))
        .collect();
    let mut matched = 0;
    for saved in alerting {
        let Some(mut query) = query_of(conn, &saved).await? else {
            continue;
        };
        query.among = Some(numbers.clone());
        let found: Vec<i64> = search::matching(conn, &query, now)
            .await?
            .into_iter()
            .filter(|number| sellers.get(number) != Some(&saved.user_id))
            .collect();
        matched += alerts::add_matches(conn, saved.id, &found, now).await? as usize;
    }
    Ok((numbers.len(), matched))
}

/// The store's query of a saved search; None (and a warning) for one that no longer
/// checks, such as one whose category went from the taxonomy: it matches nothing.
async fn query_of(conn: &mut dyn Conn, saved: &Alerting) -> Result<Option<Query>, DbError> {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(saved.request.as_bytes())
        .into_owned()
        .collect();
    let Ok(request) = SearchRequest::parse(&pairs) else {
        tracing::warn!(saved_search = saved.id, "a saved search does not parse");
        return Ok(None);
    };
    match super::search::query_of::<std::convert::Infallible>(conn, &request).await {
        Ok(query) => Ok(Some(query)),
        Err(super::Error::Db(e)) => Err(e),
        Err(_) => {
            tracing::warn!(saved_search = saved.id, "a saved search no longer checks");
            Ok(None)
        }
    }
}

/// Sends the mails due, at most [`MAILS_PER_ROUND`]; returns how many went. Each search is
/// claimed just before its mail, its lease counted from the clock then (not from the
/// round's start: matching a backlog may take minutes), and no send may outlast
/// [`crate::mail::SEND_TIMEOUT_SECS`]: so a lease never runs out while its mail is on its
/// way, and another replica never sends the same mail again.
async fn mail_due(
    db: &Db,
    mailer: &Mailer,
    base_url: &str,
    clock: &Clock,
) -> Result<usize, DbError> {
    let mut sent = 0;
    for _ in 0..MAILS_PER_ROUND {
        let now = clock.now();
        let lease = now + MAIL_LEASE_SECONDS;
        let claimed = db
            .write(move |conn| {
                Box::pin(async move { alerts::claim_due(conn, now, lease, 1).await })
            })
            .await?;
        let Some(saved) = claimed.into_iter().next() else {
            break;
        };
        if mail_one(db, mailer, base_url, saved, lease, now).await? {
            sent += 1;
        }
    }
    Ok(sent)
}

/// Mails the news of the search `saved`, claimed under the lease ending at `lease`, and
/// marks its matches mailed; whether a mail went. A mail that cannot go keeps its matches
/// for a later round (the lease runs out), each for a week ([`KEEP_TRYING_SECS`]), then it
/// is given up.
async fn mail_one(
    db: &Db,
    mailer: &Mailer,
    base_url: &str,
    saved: Alerting,
    lease: i64,
    now: i64,
) -> Result<bool, DbError> {
    let id = saved.id;
    let user = saved.user_id;
    let (owner, numbers) = db
        .read(move |conn| {
            Box::pin(async move {
                let owner = users::get(conn, user).await?;
                let numbers = alerts::unmailed(conn, id).await?;
                Ok::<_, DbError>((owner, numbers))
            })
        })
        .await?;
    let (listed, count) = still_news(db, &saved, &numbers, now).await?;
    let mut went = false;
    if let (Some(owner), false) = (owner, count == 0) {
        let mail = alert_mail(&saved, &owner, &listed, count, base_url);
        if let Err(e) = mailer.send_in_time(&mail).await {
            let error = e.to_string();
            tracing::warn!(saved_search = id, error, "cannot send an alert mail");
            let given_up = db
                .write(move |conn| {
                    Box::pin(async move {
                        alerts::give_up_before(conn, id, now - KEEP_TRYING_SECS, now).await
                    })
                })
                .await?;
            if given_up > 0 {
                tracing::error!(
                    saved_search = id,
                    matches = given_up,
                    "alert matches given up after a week"
                );
            }
            // The lease runs out and a later round tries the rest.
            return Ok(false);
        }
        went = true;
    }
    db.write(move |conn| {
        Box::pin(async move { alerts::mailed(conn, id, lease, &numbers, now).await })
    })
    .await?;
    Ok(went)
}

/// Of the matched ads `numbers` (in the order they matched), the first [`LISTED`] that the
/// search `saved` still finds, and how many it does: an ad that went offline, or changed
/// out of the search (a price raised past its filter), since it matched is no news any
/// more. Checked a statement's worth at a time, so a search that gathered tens of thousands
/// of matches costs as many checks, never one too large to make, and keeps 20 ads at most.
/// In a write, as the round's matching is (on SQLite a search first writes the index's
/// pending changes).
async fn still_news(
    db: &Db,
    saved: &Alerting,
    numbers: &[i64],
    now: i64,
) -> Result<(Vec<AdRecord>, usize), DbError> {
    let (mut listed, mut count) = (Vec::new(), 0);
    for some in numbers.chunks(alerts::NUMBERS_PER_STATEMENT) {
        let (some, saved) = (some.to_vec(), saved.clone());
        let ads = db
            .write(move |conn| {
                Box::pin(async move {
                    let Some(mut query) = query_of(conn, &saved).await? else {
                        return Ok(Vec::new());
                    };
                    query.among = Some(some.clone());
                    let found: std::collections::HashSet<i64> = search::matching(conn, &query, now)
                        .await?
                        .into_iter()
                        .collect();
                    let still: Vec<i64> = some.into_iter().filter(|n| found.contains(n)).collect();
                    ads::by_numbers(conn, &still).await
                })
            })
            .await?;
        count += ads.len();
        listed.extend(ads.into_iter().take(LISTED - listed.len()));
    }
    Ok((listed, count))
}

/// The mail about `count` new ads, in the owner's language: the title and page of each of
/// `listed` (the first of them), and how many more.
fn alert_mail(
    saved: &Alerting,
    owner: &crate::store::users::User,
    listed: &[AdRecord],
    count: usize,
    base_url: &str,
) -> Mail {
    let words = form_urlencoded::parse(saved.request.as_bytes())
        .find(|(name, _)| name == "query")
        .map(|(_, value)| value.into_owned());
    let dutch = owner.locale.language() == Language::Dutch;
    let subject = match (dutch, &words) {
        (true, Some(words)) => format!("Nieuwe advertenties voor \"{words}\""),
        (true, None) => "Nieuwe advertenties voor je bewaarde zoekopdracht".to_owned(),
        (false, Some(words)) => format!("Nouvelles annonces pour « {words} »"),
        (false, None) => "Nouvelles annonces pour votre recherche enregistrée".to_owned(),
    };
    let (news, since) = match (dutch, count) {
        (true, 1) => ("1 nieuwe advertentie past".to_owned(), "Sinds gisteren"),
        (true, _) => (
            format!("{count} nieuwe advertenties passen"),
            "Sinds gisteren",
        ),
        (false, 1) => ("1 nouvelle annonce répond".to_owned(), "Depuis hier,"),
        (false, _) => (
            format!("{count} nouvelles annonces répondent"),
            "Depuis hier,",
        ),
    };
    let to_search = if dutch {
        "bij je zoekopdracht:"
    } else {
        "à votre recherche :"
    };
    let mut body = match saved.alert {
        Alert::Daily => format!("{since} {news} {to_search}\n\n"),
        _ => format!("{news} {to_search}\n\n"),
    };
    for ad in listed {
        let item = ItemId::from_number(ad.number);
        body.push_str(&format!("- {}: {base_url}/a/{item}\n", ad.title));
    }
    if count > LISTED {
        let more = count - LISTED;
        body.push_str(&if dutch {
            format!("en {more} meer.\n")
        } else {
            format!("et {more} de plus.\n")
        });
    }
    body.push_str(&if dutch {
        format!(
            "\nJe bewaarde zoekopdracht: {base_url}/v1/savedsearches/{}\n",
            saved.id
        )
    } else {
        format!(
            "\nVotre recherche enregistrée : {base_url}/v1/savedsearches/{}\n",
            saved.id
        )
    });
    Mail {
        to: owner.email.as_str().to_owned(),
        subject,
        body,
    }
}
