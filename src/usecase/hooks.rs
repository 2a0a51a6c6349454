//! A client's webhooks: created, listed, read, replaced and deleted by the client itself
//! (a client-credentials token with scope `webhooks`); to any other client a hook does not
//! exist. The events a client may read ([`events_of`], [`event`]) are the ones written for
//! it (`usecase::events`).

use crate::domain::field_error::FieldError;
use crate::domain::hook::{EventType, Hook, HookRequest, MAX_HOOKS_PER_CLIENT};
use crate::domain::locale::Text;
use crate::store::Conn;
use crate::store::events::{self, EventRecord};
use crate::store::hooks::{self, HookRecord, HookWrite};

use super::{Error, Thing};

/// Creates a hook of `client` from what it sent (`request`: see [`Error::Request`]).
pub async fn create<R>(
    conn: &mut dyn Conn,
    client: &str,
    request: Result<HookRequest, R>,
    now: i64,
) -> Result<HookRecord, Error<R>> {
    let hook = request.map_err(Error::Request)?.check(false)?;
    // Concurrent creations of one client wait here, so each counts the others' hooks.
    hooks::lock_client(conn, client).await?;
    if hooks::count(conn, client).await? >= MAX_HOOKS_PER_CLIENT {
        return Err(Error::Invalid(vec![FieldError::new(
            "url",
            "too-many",
            Text::new(
                format!("hoogstens {MAX_HOOKS_PER_CLIENT} webhooks per client"),
                format!("au plus {MAX_HOOKS_PER_CLIENT} webhooks par client"),
            ),
        )]));
    }
    let events = names(&hook);
    Ok(hooks::insert(conn, client, hook_write(&hook, &events), now).await?)
}

/// The event types `hook` wants, by their stored names.
fn names(hook: &Hook) -> Vec<&'static str> {
    hook.events.iter().map(|e| e.as_str()).collect()
}

/// What `hook` is set to, with the event types it wants named by [`names`].
fn hook_write<'a>(hook: &'a Hook, events: &'a [&'a str]) -> HookWrite<'a> {
    HookWrite {
        url: &hook.url,
        secret: hook.secret.as_deref(),
        active: hook.active,
        events,
    }
}

/// `hook` with its event types in the order of [`EventType::ALL`], as it was written.
fn in_order(mut hook: HookRecord) -> HookRecord {
    let position = |name: &String| EventType::ALL.iter().position(|e| e.as_str() == name);
    hook.events.sort_by_key(position);
    hook
}

/// Hook `id` of `client`, with the deliveries it still waits for.
pub async fn get(conn: &mut dyn Conn, client: &str, id: i64) -> Result<HookRecord, Error> {
    let mut hook = find(conn, client, id).await?;
    hook.backlog = hooks::backlog(conn, id).await?;
    Ok(hook)
}

/// [`get`], for a use case with its caller's own refusal `R`.
async fn find<R>(conn: &mut dyn Conn, client: &str, id: i64) -> Result<HookRecord, Error<R>> {
    hooks::get(conn, id)
        .await?
        .filter(|hook| hook.client_id == client)
        .map(in_order)
        .ok_or(Error::NotFound(Thing::Hook))
}

/// The hooks of `client`, oldest first (at most [`MAX_HOOKS_PER_CLIENT`]), each with the
/// deliveries it still waits for.
pub async fn of_client(conn: &mut dyn Conn, client: &str) -> Result<Vec<HookRecord>, Error> {
    let mut found = hooks::of_client(conn, client).await?;
    for hook in &mut found {
        hook.backlog = hooks::backlog(conn, hook.id).await?;
    }
    Ok(found.into_iter().map(in_order).collect())
}

/// Replaces hook `id` of `client` with what it sent (without a secret, the hook keeps its
/// own).
pub async fn replace<R>(
    conn: &mut dyn Conn,
    client: &str,
    id: i64,
    request: Result<HookRequest, R>,
    now: i64,
) -> Result<HookRecord, Error<R>> {
    find(conn, client, id).await?;
    // Without a secret the UPDATE keeps the stored one: never a secret read here and
    // written back over a concurrent replacement's.
    let hook = request.map_err(Error::Request)?.check(true)?;
    let events = names(&hook);
    let mut replaced = hooks::replace(conn, id, hook_write(&hook, &events), now)
        .await?
        .ok_or(Error::NotFound(Thing::Hook))?;
    replaced.backlog = hooks::backlog(conn, id).await?;
    Ok(replaced)
}

/// Deletes hook `id` of `client`, and the deliveries it still waited for.
pub async fn delete(conn: &mut dyn Conn, client: &str, id: i64) -> Result<(), Error> {
    find(conn, client, id).await?;
    hooks::delete(conn, id).await?;
    Ok(())
}

/// A page of the events for `client`, newest first, and how many there are.
pub async fn events_of(
    conn: &mut dyn Conn,
    client: &str,
    (offset, limit): (i64, i64),
) -> Result<(Vec<EventRecord>, i64), Error> {
    Ok(events::page(conn, client, offset, limit).await?)
}

/// Event `id`, if it is for `client`.
pub async fn event(conn: &mut dyn Conn, client: &str, id: i64) -> Result<EventRecord, Error> {
    events::get(conn, client, id)
        .await?
        .ok_or(Error::NotFound(Thing::Event))
}
