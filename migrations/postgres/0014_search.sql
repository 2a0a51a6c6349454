-- Full-text search (docs/design/search.md section 4). The words and tags an ad is found by
-- are made in Rust (domain::search) and stored on the ad; `search_docs` holds the online
-- ads only, kept by a trigger in the transaction of every write (place, change, status,
-- sweep, seed), so that search sees a change at once and no code path can forget it.
-- search_version 0: not tokenized yet (ads from before this migration), not indexed until
-- the start-up backfill has done them.
ALTER TABLE advertisements ADD COLUMN price_cents BIGINT;
ALTER TABLE advertisements ADD COLUMN search_title TEXT NOT NULL DEFAULT '';
ALTER TABLE advertisements ADD COLUMN search_body TEXT NOT NULL DEFAULT '';
ALTER TABLE advertisements ADD COLUMN search_tags TEXT NOT NULL DEFAULT '';
ALTER TABLE advertisements ADD COLUMN search_version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX advertisements_search_version ON advertisements (search_version);

-- The term vectors are built from the stored words without the text-search parser (which
-- would split the tag `c_101` into `c` and `101`) and without stemming: the words are
-- stems already. Each stored word ends with a space, hence the empty element removed.
CREATE TABLE search_docs (
    item_number  BIGINT PRIMARY KEY REFERENCES advertisements (item_number) ON DELETE CASCADE,
    category_id  BIGINT NOT NULL,
    price_cents  BIGINT,
    close_date   BIGINT,
    title_words  TEXT NOT NULL,
    body_words   TEXT NOT NULL,
    tags         TEXT NOT NULL,
    title_terms  tsvector GENERATED ALWAYS AS
        (array_to_tsvector(array_remove(string_to_array(title_words || tags, ' '), ''))) STORED,
    all_terms    tsvector GENERATED ALWAYS AS
        (array_to_tsvector(array_remove(string_to_array(title_words || body_words || tags, ' '), '')))
        STORED
);
CREATE INDEX search_docs_category_price ON search_docs (category_id, price_cents);
CREATE INDEX search_docs_close ON search_docs (close_date);
-- fastupdate off: a search never reads a pending list (a steady p95).
CREATE INDEX search_docs_title_terms ON search_docs USING gin (title_terms) WITH (fastupdate = off);
CREATE INDEX search_docs_all_terms ON search_docs USING gin (all_terms) WITH (fastupdate = off);

CREATE FUNCTION ads_to_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM search_docs WHERE item_number = OLD.item_number;
    END IF;
    IF NEW.status = 'online' AND NEW.search_version > 0 THEN
        INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                                 title_words, body_words, tags)
        VALUES (NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
                NEW.search_title, NEW.search_body, NEW.search_tags);
    END IF;
    RETURN NULL;
END;
$$;

-- Not on version, updated_at or transaction_count: a sale or a view flush leaves the index.
CREATE TRIGGER ads_to_search AFTER INSERT OR UPDATE OF status, category_id, price_cents,
    close_date, search_title, search_body, search_tags, search_version ON advertisements
    FOR EACH ROW EXECUTE FUNCTION ads_to_search();
