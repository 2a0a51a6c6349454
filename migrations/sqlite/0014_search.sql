-- Full-text search (docs/design/search.md section 4). The words and tags an ad is found by
-- are made in Rust (domain::search) and stored on the ad; `search_docs` holds the online
-- ads only, kept by triggers in the transaction of every write (place, change, status,
-- sweep, seed), so that search sees a change at once and no code path can forget it.
-- search_version 0: not tokenized yet (ads from before this migration), not indexed until
-- the start-up backfill has done them.
ALTER TABLE advertisements ADD COLUMN price_cents INTEGER;
ALTER TABLE advertisements ADD COLUMN search_title TEXT NOT NULL DEFAULT '';
ALTER TABLE advertisements ADD COLUMN search_body TEXT NOT NULL DEFAULT '';
ALTER TABLE advertisements ADD COLUMN search_tags TEXT NOT NULL DEFAULT '';
ALTER TABLE advertisements ADD COLUMN search_version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX advertisements_search_version ON advertisements (search_version);

CREATE TABLE search_docs (
    item_number  INTEGER PRIMARY KEY REFERENCES advertisements (item_number) ON DELETE CASCADE,
    category_id  INTEGER NOT NULL,
    price_cents  INTEGER,
    close_date   INTEGER,
    title_words  TEXT NOT NULL,
    body_words   TEXT NOT NULL,
    tags         TEXT NOT NULL
);
CREATE INDEX search_docs_category_price ON search_docs (category_id, price_cents);
CREATE INDEX search_docs_close ON search_docs (close_date);

-- External content: FTS5 reads the texts from search_docs ('rebuild' works), and deletes
-- hand it the old values. No positions (no phrase queries) and no sizes (no bm25).
CREATE VIRTUAL TABLE search_fts USING fts5(
    title_words, body_words, tags,
    content = 'search_docs', content_rowid = 'item_number',
    detail = 'column',
    columnsize = 0,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_'");

CREATE TRIGGER ads_to_search_insert AFTER INSERT ON advertisements
WHEN NEW.status = 'online' AND NEW.search_version > 0 BEGIN
    INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                             title_words, body_words, tags)
    VALUES (NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
            NEW.search_title, NEW.search_body, NEW.search_tags);
END;

-- Not on version, updated_at or transaction_count: a sale or a view flush leaves the index.
CREATE TRIGGER ads_to_search_update AFTER UPDATE OF status, category_id, price_cents,
    close_date, search_title, search_body, search_tags, search_version ON advertisements BEGIN
    DELETE FROM search_docs WHERE item_number = OLD.item_number;
    INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                             title_words, body_words, tags)
    SELECT NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
           NEW.search_title, NEW.search_body, NEW.search_tags
    WHERE NEW.status = 'online' AND NEW.search_version > 0;
END;

CREATE TRIGGER ads_to_search_delete AFTER DELETE ON advertisements BEGIN
    DELETE FROM search_docs WHERE item_number = OLD.item_number;
END;

CREATE TRIGGER search_docs_to_fts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts (rowid, title_words, body_words, tags)
    VALUES (NEW.item_number, NEW.title_words, NEW.body_words, NEW.tags);
END;

CREATE TRIGGER search_docs_to_fts_delete AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, title_words, body_words, tags)
    VALUES ('delete', OLD.item_number, OLD.title_words, OLD.body_words, OLD.tags);
END;
