-- A saved search's id is never given again. Without AUTOINCREMENT SQLite gives a new row
-- the highest id plus one, so deleting the newest saved search and saving another gave
-- the old id to the new one: a client's stale `DELETE` of the old id (a retry, a second
-- device) then deleted the owner's new search. PostgreSQL's identity never reuses one.
-- SQLite cannot add AUTOINCREMENT to a table: it is remade, and its matches with it (they
-- refer to it; dropping it with its rows would delete them by cascade).
-- The legacy rename leaves the triggers on `advertisements` alone: they name
-- `saved_searches`, which is gone between the drop and the rename, and a rename in the
-- current mode checks every trigger and fails on it. It still renames the references of
-- `saved_search_matches_new`, as foreign keys are on.
PRAGMA legacy_alter_table = ON;

CREATE TABLE saved_searches_new (
    saved_search_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id           INTEGER NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    request           TEXT NOT NULL,
    alert             TEXT NOT NULL CHECK (alert IN ('none', 'immediate', 'daily')),
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    alerted_at        INTEGER,
    alert_lease_until INTEGER NOT NULL DEFAULT 0
);
INSERT INTO saved_searches_new
    (saved_search_id, user_id, request, alert, created_at, updated_at, alerted_at,
     alert_lease_until)
    SELECT saved_search_id, user_id, request, alert, created_at, updated_at, alerted_at,
           alert_lease_until
    FROM saved_searches;

CREATE TABLE saved_search_matches_new (
    saved_search_id INTEGER NOT NULL
        REFERENCES saved_searches_new (saved_search_id) ON DELETE CASCADE,
    item_number     INTEGER NOT NULL,
    matched_at      INTEGER NOT NULL,
    mailed_at       INTEGER,
    PRIMARY KEY (saved_search_id, item_number)
);
INSERT INTO saved_search_matches_new (saved_search_id, item_number, matched_at, mailed_at)
    SELECT saved_search_id, item_number, matched_at, mailed_at FROM saved_search_matches;

DROP TABLE saved_search_matches;
DROP TABLE saved_searches;
ALTER TABLE saved_searches_new RENAME TO saved_searches;
ALTER TABLE saved_search_matches_new RENAME TO saved_search_matches;

PRAGMA legacy_alter_table = OFF;

CREATE INDEX saved_searches_user ON saved_searches (user_id, saved_search_id);
CREATE INDEX saved_searches_alerting ON saved_searches (alert) WHERE alert <> 'none';
CREATE INDEX saved_search_matches_unmailed ON saved_search_matches (saved_search_id)
    WHERE mailed_at IS NULL;
