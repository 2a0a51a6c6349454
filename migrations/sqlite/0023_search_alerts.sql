-- Saved-search alerts (docs/API.md "Saved searches"). An ad that enters search (published,
-- changed, resumed) is queued in the same transaction, by the trigger below, so that no
-- change is lost between the write and the alert worker; the queue stays empty while no
-- saved search asks for alerts. The worker holds queued ads against the alerting saved
-- searches and records each ad found once per search; mail goes out from the matches.
CREATE TABLE alert_queue (
    queued_id   INTEGER PRIMARY KEY,
    item_number INTEGER NOT NULL
);

CREATE INDEX saved_searches_alerting ON saved_searches (alert) WHERE alert <> 'none';

CREATE TRIGGER search_docs_to_alerts AFTER INSERT ON search_docs
WHEN EXISTS (SELECT 1 FROM saved_searches WHERE alert <> 'none') BEGIN
    INSERT INTO alert_queue (item_number) VALUES (NEW.item_number);
END;

-- Each ad found for a saved search, once (a changed ad that still matches is not news);
-- mailed_at once its mail went out.
CREATE TABLE saved_search_matches (
    saved_search_id INTEGER NOT NULL REFERENCES saved_searches (saved_search_id) ON DELETE CASCADE,
    item_number     INTEGER NOT NULL,
    matched_at      INTEGER NOT NULL,
    mailed_at       INTEGER,
    PRIMARY KEY (saved_search_id, item_number)
);
CREATE INDEX saved_search_matches_unmailed ON saved_search_matches (saved_search_id)
    WHERE mailed_at IS NULL;

-- When the last alert mail of a search went out (a daily digest waits a day after it, or
-- after the search was saved), and a lease on sending the next, so that of several
-- replicas one sends it, and a crash while sending is retried once the lease runs out.
ALTER TABLE saved_searches ADD COLUMN alerted_at INTEGER;
ALTER TABLE saved_searches ADD COLUMN alert_lease_until INTEGER NOT NULL DEFAULT 0;
