-- Webhooks (`usecase::events`, `usecase::hooks`, `usecase::deliveries`).
--
-- A hook belongs to a client application: its URL, its secret (kept as given: every
-- delivery is signed with it), whether it is active, and the event types it wants (one row
-- each in hook_events, so that a new event finds its hooks in one join).
CREATE TABLE hooks (
    hook_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    url        TEXT NOT NULL,
    secret     TEXT NOT NULL,
    active     INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX hooks_client ON hooks (client_id, hook_id);

CREATE TABLE hook_events (
    hook_id    INTEGER NOT NULL REFERENCES hooks (hook_id) ON DELETE CASCADE,
    event_type TEXT NOT NULL,
    PRIMARY KEY (event_type, hook_id)
);
CREATE INDEX hook_events_hook ON hook_events (hook_id);

-- An event, written in the transaction of the change it tells of: its type, what changed
-- (event_data, JSON), and the resource as it was then (its rel, its path under the version
-- prefix and its members, JSON). AUTOINCREMENT: an id is never given again.
CREATE TABLE events (
    event_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    event_type    TEXT NOT NULL,
    event_data    TEXT NOT NULL,
    resource_rel  TEXT NOT NULL,
    resource_path TEXT NOT NULL,
    resource      TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE INDEX events_created ON events (created_at);

-- The clients an event is for, decided when it is written: the clients that the users it
-- concerns had granted access then, and the client that made the change where it acts for
-- itself. No foreign key to clients: every change would share-lock its client's one row,
-- and PostgreSQL makes concurrent share locks of one row a write each (multixacts); a
-- deleted client's rows are deleted with it (`store::oauth::delete_client`).
CREATE TABLE event_recipients (
    client_id TEXT NOT NULL,
    event_id  INTEGER NOT NULL REFERENCES events (event_id) ON DELETE CASCADE,
    PRIMARY KEY (client_id, event_id)
);
CREATE INDEX event_recipients_event ON event_recipients (event_id);

-- Deliveries to make, as the mail queue keeps mail (0051): deleted once the hook's URL took
-- the event; a worker that takes one moves due_at past its lease, attempts names the taking.
-- No foreign key to hooks, for the reason above: deleting a hook deletes its deliveries
-- (`store::hooks::delete`), and a delivery whose hook is gone is dropped when taken.
CREATE TABLE hook_deliveries (
    delivery_id INTEGER PRIMARY KEY AUTOINCREMENT,
    hook_id     INTEGER NOT NULL,
    event_id    INTEGER NOT NULL REFERENCES events (event_id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL,
    due_at      INTEGER NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX hook_deliveries_due ON hook_deliveries (due_at, delivery_id);
CREATE INDEX hook_deliveries_hook ON hook_deliveries (hook_id);
CREATE INDEX hook_deliveries_event ON hook_deliveries (event_id);

-- Which clients a user has granted access (a live refresh token): read at every event.
-- Only the live tokens, a few per user and client, where rotated ones pile up for 30 days.
CREATE INDEX refresh_tokens_live ON refresh_tokens (user_id, client_id) WHERE state = 'live';
