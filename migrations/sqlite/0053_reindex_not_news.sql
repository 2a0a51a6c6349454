-- A re-index (a category moved to another parent, a new tokenizer) puts ads back into
-- search without changing them: that is not news to a saved search, so the alert queue
-- must not take them. The re-index's transaction holds a row here while it writes and
-- deletes it before it commits, so no other transaction ever sees one; the trigger below
-- queues nothing while one is there.
CREATE TABLE search_reindexing (
    held INTEGER NOT NULL
);

DROP TRIGGER search_docs_to_alerts;

CREATE TRIGGER search_docs_to_alerts AFTER INSERT ON search_docs
WHEN EXISTS (SELECT 1 FROM saved_searches WHERE alert <> 'none')
    AND NOT EXISTS (SELECT 1 FROM search_reindexing) BEGIN
    INSERT INTO alert_queue (item_number) VALUES (NEW.item_number);
END;
