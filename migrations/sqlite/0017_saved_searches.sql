-- Saved searches (docs/API.md "Saved searches"): the search parameters as GET /v1/search
-- takes them, stored as a query string, and whether the owner wants mail about new matches.
CREATE TABLE saved_searches (
    saved_search_id INTEGER PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    request         TEXT NOT NULL,
    alert           TEXT NOT NULL CHECK (alert IN ('none', 'immediate', 'daily')),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX saved_searches_user ON saved_searches (user_id, saved_search_id);
