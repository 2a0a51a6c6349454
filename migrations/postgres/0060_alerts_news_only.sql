-- An ad is news to a saved search when it enters search (placed or published, resumed,
-- back from expiry, first indexed) or when what a search looks at changes (its category,
-- price, title, description, tags, postcode or attributes). Before, every write that named
-- an indexed column queued it (an edit of its `reserved` flag, a renewal, a bought
-- feature), and an ad that matched before a search was saved was mailed as new. The queue
-- is written here, where the old row is known, rather than on the search row's insert.
-- `updated_at` is the write's moment (every write of these columns sets it): an ad whose
-- close date had passed and lies ahead again is back from expiry before the minute's sweep
-- marked it expired.
CREATE OR REPLACE FUNCTION ads_to_search() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    news BOOLEAN;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM search_docs WHERE item_number = OLD.item_number;
    END IF;
    IF NEW.status = 'online' AND NEW.search_version > 0 THEN
        INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                                 title_words, body_words, tags, postcode, attributes,
                                 top_until, bumped_until, bump_rank)
        VALUES (NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
                NEW.search_title, NEW.search_body, NEW.search_tags, NEW.postcode,
                NEW.attributes, NEW.top_until, NEW.bumped_until, NEW.bump_rank);
        IF TG_OP = 'INSERT' THEN
            news := TRUE;
        ELSE
            news := OLD.status <> 'online' OR OLD.search_version = 0
                OR (OLD.close_date <= NEW.updated_at AND NEW.close_date > NEW.updated_at)
                OR OLD.category_id IS DISTINCT FROM NEW.category_id
                OR OLD.price_cents IS DISTINCT FROM NEW.price_cents
                OR OLD.search_title IS DISTINCT FROM NEW.search_title
                OR OLD.search_body IS DISTINCT FROM NEW.search_body
                OR OLD.search_tags IS DISTINCT FROM NEW.search_tags
                OR OLD.postcode IS DISTINCT FROM NEW.postcode
                OR OLD.attributes IS DISTINCT FROM NEW.attributes;
        END IF;
        IF news AND EXISTS (SELECT 1 FROM saved_searches WHERE alert <> 'none')
            AND NOT EXISTS (SELECT 1 FROM search_reindexing) THEN
            INSERT INTO alert_queue (item_number) VALUES (NEW.item_number);
        END IF;
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER search_docs_to_alerts ON search_docs;
DROP FUNCTION search_docs_to_alerts();
