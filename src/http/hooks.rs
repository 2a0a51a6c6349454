//! `/v1/hooks` and `/v1/events`: a client's webhooks and the events written for it. Each
//! handler runs one use case of `usecase::hooks`; [`event_json`] also writes the body of
//! every webhook delivery (`app` hands it to `usecase::deliveries`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::domain::hook::{EventType, HookRequest, MAX_HOOKS_PER_CLIENT};
use crate::domain::time::format_timestamp;
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::store::DbError;
use crate::store::events::EventRecord;
use crate::store::hooks::{Backlog, HookRecord};
use crate::usecase::{self, hooks};

use super::api::{Api, Operation, delete, get, post, put};
use super::auth::{ClientWith, need, unauthenticated};
use super::extract::{Context, EventPath, HookPath, JsonBody, PageQuery, Query};
use super::render::Json;

/// What a hook's body holds, for both its creation and its replacement.
const BODY: &str = "Body `{url, events, secret, active}`: `url` an absolute `http` or `https` URL (at most 2,000 characters) that Souk POSTs each event to; `events` a non-empty list of event types (`advertisement.created`, `advertisement.updated`, `advertisement.deleted`, `bid.placed`, `bid.withdrawn`, `transaction.created`, `transaction.updated`, `upcall.confirmed`, `review.created`; field error `unknown-event` for another); `secret` 16 to 200 characters, the key of each delivery's signature (never shown again; a `PUT` without it keeps the hook's secret); `active` (default true): an inactive hook gets nothing. At most 10 hooks per client (`too-many` on `url`).";

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let hooks = |operation: Operation| {
        operation
            .tag("Webhooks")
            .authenticated()
            .errors(&[Unauthorized])
    };
    let one = |operation: Operation| {
        hooks(operation)
            .path_param("hookId", "The webhook.")
            .errors(&[ValidationFailure, HookNotFound])
    };
    api.resource(
        hooks(post("/hooks", "createHook"))
            .summary("Create a webhook (a client token with scope `webhooks`)")
            .description(BODY)
            .body("application/json", "HookInput")
            .ok(201, "The webhook (Location: its address)", "Hook")
            .errors(&[ValidationFailure]),
        create,
    )
    .resource(
        hooks(get("/hooks", "listHooks"))
            .summary("The calling client's webhooks, oldest first (scope `webhooks`)")
            .ok(200, "The webhooks", "HookList"),
        list,
    )
    .resource(
        one(get("/hooks/{hookId}", "getHook"))
            .summary("One webhook of the calling client (scope `webhooks`)")
            .description("Another client's webhook is `hook-not-found`, as an unknown one is.")
            .ok(200, "The webhook", "Hook"),
        one_hook,
    )
    .resource(
        one(put("/hooks/{hookId}", "replaceHook"))
            .summary("Replace a webhook (scope `webhooks`)")
            .description(BODY)
            .body("application/json", "HookReplacement")
            .ok(200, "The webhook", "Hook"),
        replace,
    )
    .resource(
        one(delete("/hooks/{hookId}", "deleteHook"))
            .summary("Delete a webhook and the deliveries it still waits for (scope `webhooks`)")
            .ok_empty(204, "Deleted"),
        remove,
    )
    .resource(
        hooks(get("/events", "listEvents"))
            .summary("The events for the calling client, newest first (scope `webhooks`)")
            .description("The events of the users who had granted the client access when the event happened, and of what the client did for itself (its upcall confirmations), for 30 days. `offset` (default 0) and `limit` (default 30, at most 100), else 400 `pagination-invalid`.")
            .query_param("offset", json!({"type": "integer", "minimum": 0, "maximum": i64::MAX}), "Default 0.")
            .query_param("limit", json!({"type": "integer", "minimum": 1, "maximum": 100}), "Default 30.")
            .ok(200, "A page of events", "EventList")
            .errors(&[ValidationFailure, PaginationInvalid]),
        list_events,
    )
    .resource(
        hooks(get("/events/{eventId}", "getEvent"))
            .path_param("eventId", "The event.")
            .summary("One event for the calling client (scope `webhooks`)")
            .description("What a delivery of the event POSTs. An event for another client is `event-not-found`, as an unknown one is.")
            .ok(200, "The event", "Event")
            .errors(&[ValidationFailure, EventNotFound]),
        one_event,
    )
}

/// The event types, for the documents that list them.
pub fn event_types() -> Vec<&'static str> {
    EventType::ALL.map(EventType::as_str).to_vec()
}

fn hook_json(hal: &Hal, hook: &HookRecord) -> Value {
    json!({
        "_links": hal.links(hal.path(&format!("/hooks/{}", hook.id)), Resource::Hook).build(),
        "hookId": hook.id,
        "url": hook.url,
        "events": hook.events,
        "active": hook.active,
        "createdDate": format_timestamp(hook.created_at),
        "updatedDate": format_timestamp(hook.updated_at),
        "deliveries": backlog_json(&hook.backlog),
    })
}

/// What the hook still waits for, so that its owner sees why its receiver gets nothing.
fn backlog_json(backlog: &Backlog) -> Value {
    let mut deliveries = json!({"waiting": backlog.waiting});
    if let Some(oldest) = backlog.oldest {
        deliveries["oldestWaitingDate"] = json!(format_timestamp(oldest));
    }
    if let Some(failure) = &backlog.last_failure {
        deliveries["lastFailure"] =
            json!({"date": format_timestamp(failure.at), "reason": failure.error});
    }
    deliveries
}

/// An event as `/v1/events/{eventId}` answers it and as a delivery POSTs it: the resource
/// embedded as it was when the event happened, with a `self` link to it as it is now.
pub fn event_json(hal: &Hal, event: &EventRecord) -> Value {
    let data: Value = serde_json::from_str(&event.event_data).unwrap_or(Value::Null);
    let mut resource: Value = serde_json::from_str(&event.resource).unwrap_or_else(|_| json!({}));
    if let Some(members) = resource.as_object_mut() {
        members.insert(
            "_links".to_owned(),
            json!({"self": {"href": hal.path(&event.resource_path)}}),
        );
    }
    let rel = Rel::parse(&event.resource_rel)
        .map(|rel| hal.rel(rel).to_owned())
        .unwrap_or_else(|| event.resource_rel.clone());
    json!({
        "_links": hal.links(hal.path(&format!("/events/{}", event.id)), Resource::Event).build(),
        "eventId": event.id,
        "eventType": event.event_type,
        "created": format_timestamp(event.created_at),
        "eventData": data,
        "_embedded": {rel: resource},
    })
}

async fn create(
    Context { state, hal }: Context,
    ClientWith(client, _): ClientWith<need::Webhooks>,
    body: Result<JsonBody<HookRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let now = state.clock.now();
    let hook = state
        .db
        .write(move |conn| {
            Box::pin(async move { hooks::create(conn, &client, request, now).await })
        })
        .await
        .map_err(|e| match e {
            // The client was deleted after its token was looked up (a lookup is kept for
            // seconds, `access::CACHE_SECONDS`): its token is no longer valid.
            usecase::Error::Db(DbError::ForeignKeyViolation(_)) => unauthenticated("invalid_token"),
            other => other.into(),
        })?;
    let location = hal.path(&format!("/hooks/{}", hook.id));
    Ok(Json::created(location, hook_json(&hal, &hook)))
}

async fn list(
    Context { state, hal }: Context,
    ClientWith(client, _): ClientWith<need::Webhooks>,
) -> Result<Json, ApiError> {
    let listed = state
        .db
        .read(move |conn| Box::pin(async move { hooks::of_client(conn, &client).await }))
        .await?;
    let items: Vec<Value> = listed.iter().map(|hook| hook_json(&hal, hook)).collect();
    let path = hal.path("/hooks");
    Ok(Json::ok(json!({
        "_links": hal.links(&path, Resource::HookList).build(),
        "_embedded": {hal.rel(Rel::Hook): items},
        "totalCount": listed.len(),
        "maximum": MAX_HOOKS_PER_CLIENT,
    })))
}

async fn one_hook(
    Context { state, hal }: Context,
    ClientWith(client, _): ClientWith<need::Webhooks>,
    HookPath(id): HookPath,
) -> Result<Json, ApiError> {
    let hook = state
        .db
        .read(move |conn| Box::pin(async move { hooks::get(conn, &client, id).await }))
        .await?;
    Ok(Json::ok(hook_json(&hal, &hook)))
}

async fn replace(
    Context { state, hal }: Context,
    ClientWith(client, _): ClientWith<need::Webhooks>,
    HookPath(id): HookPath,
    body: Result<JsonBody<HookRequest>, ApiError>,
) -> Result<Json, ApiError> {
    let request = body.map(|JsonBody(request)| request);
    let now = state.clock.now();
    let hook = state
        .db
        .write(move |conn| {
            Box::pin(async move { hooks::replace(conn, &client, id, request, now).await })
        })
        .await?;
    Ok(Json::ok(hook_json(&hal, &hook)))
}

async fn remove(
    Context { state, .. }: Context,
    ClientWith(client, _): ClientWith<need::Webhooks>,
    HookPath(id): HookPath,
) -> Result<Response, ApiError> {
    state
        .db
        .write(move |conn| Box::pin(async move { hooks::delete(conn, &client, id).await }))
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn list_events(
    Context { state, hal }: Context,
    ClientWith(client, _): ClientWith<need::Webhooks>,
    Query(query): Query<PageQuery>,
) -> Result<Json, ApiError> {
    let page = query.page(30, 100)?;
    let (events, total) = state
        .db
        .read(move |conn| {
            Box::pin(async move { hooks::events_of(conn, &client, page.bounds()).await })
        })
        .await?;
    let items: Vec<Value> = events.iter().map(|event| event_json(&hal, event)).collect();
    let path = hal.path("/events");
    Ok(Json::ok(json!({
        "_links": hal
            .links(&path, Resource::EventList)
            .pagination(&path, page, total as u64)
            .build(),
        "_embedded": {hal.rel(Rel::Event): items},
        "totalCount": total,
        "offset": page.offset,
        "limit": page.limit,
    })))
}

async fn one_event(
    Context { state, hal }: Context,
    ClientWith(client, _): ClientWith<need::Webhooks>,
    EventPath(id): EventPath,
) -> Result<Json, ApiError> {
    let event = state
        .db
        .read(move |conn| Box::pin(async move { hooks::event(conn, &client, id).await }))
        .await?;
    Ok(Json::ok(event_json(&hal, &event)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documents_name_every_event_type() {
        for event in EventType::ALL {
            let name = format!("`{}`", event.as_str());
            assert!(BODY.contains(&name), "a hook's body leaves out {name}");
            assert!(
                Resource::Event.documentation().contains(&name),
                "the event's page leaves out {name}"
            );
        }
    }
}
