-- The FTS5 index takes an ad's changes once per write transaction, not once per ad. FTS5
-- writes what it holds in memory out as a new segment at every savepoint, and the writer
-- opens one for each write job of a group commit and SQLite one for each INSERT that
-- fires triggers: so each ad became a segment of its own (and merges of them), about a
-- fifth of an ad creation's cost under load. The triggers now queue the index's changes
-- in `search_fts_pending`, and the writer hands them to FTS5 in one statement just before
-- it commits (`store::search::WRITE_PENDING_INDEX`, also run by a write job that searches
-- before it reads): the index and the ads still change in the same transaction, so a
-- reader never sees one without the other. A statement that changes `search_docs`
-- outside the writer (none does) would leave its rows pending until the next commit.

CREATE TABLE search_fts_pending (
    seq         INTEGER PRIMARY KEY,
    item_number INTEGER NOT NULL,
    -- 'delete' to take the ad's old terms out, NULL to add its terms.
    command     TEXT,
    title_words TEXT NOT NULL,
    body_words  TEXT NOT NULL,
    tags        TEXT NOT NULL
);

DROP TRIGGER search_docs_to_fts_insert;
DROP TRIGGER search_docs_to_fts_delete;

CREATE TRIGGER search_docs_to_fts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts_pending (item_number, command, title_words, body_words, tags)
    SELECT NEW.item_number, NULL, NEW.title_words, NEW.body_words,
           NEW.tags || ' z_' || area || ' y_' || substr(area, 1, 4) || ' x_' || substr(area, 1, 5)
    FROM (SELECT lower(CASE WHEN length(NEW.postcode) = 6 THEN 'NL' || substr(NEW.postcode, 1, 4)
                            ELSE 'BE' || NEW.postcode END) AS area);
END;

CREATE TRIGGER search_docs_to_fts_delete AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts_pending (item_number, command, title_words, body_words, tags)
    SELECT OLD.item_number, 'delete', OLD.title_words, OLD.body_words,
           OLD.tags || ' z_' || area || ' y_' || substr(area, 1, 4) || ' x_' || substr(area, 1, 5)
    FROM (SELECT lower(CASE WHEN length(OLD.postcode) = 6 THEN 'NL' || substr(OLD.postcode, 1, 4)
                            ELSE 'BE' || OLD.postcode END) AS area);
END;
