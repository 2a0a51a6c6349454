-- Responses to POSTs that carried an Idempotency-Key, replayed for 24 hours. A row with
-- no status is a request still running.
CREATE TABLE idempotency_keys (
    scope_key   TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status      INTEGER,
    response    TEXT,
    created_at  INTEGER NOT NULL
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
