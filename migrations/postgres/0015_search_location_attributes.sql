-- Distance and numeric attribute filters for search (docs/design/search.md sections 6 and
-- 8): the index rows carry the ad's postcode, which search joins to `locations` by its area
-- (so an import of postcodes moves the ads at once, as cityName does), and the ad's
-- attributes, whose NUMBER values a range filter reads. The trigger copies both, and a
-- change of either rewrites the index row.
ALTER TABLE search_docs ADD COLUMN postcode TEXT NOT NULL DEFAULT '';
ALTER TABLE search_docs ADD COLUMN attributes TEXT NOT NULL DEFAULT '{}';
UPDATE search_docs d SET postcode = a.postcode, attributes = a.attributes
  FROM advertisements a WHERE a.item_number = d.item_number;

CREATE OR REPLACE FUNCTION ads_to_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM search_docs WHERE item_number = OLD.item_number;
    END IF;
    IF NEW.status = 'online' AND NEW.search_version > 0 THEN
        INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                                 title_words, body_words, tags, postcode, attributes)
        VALUES (NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
                NEW.search_title, NEW.search_body, NEW.search_tags, NEW.postcode,
                NEW.attributes);
    END IF;
    RETURN NULL;
END;
$$;

-- Not on version, updated_at or transaction_count: a sale or a view flush leaves the index.
DROP TRIGGER ads_to_search ON advertisements;
CREATE TRIGGER ads_to_search AFTER INSERT OR UPDATE OF status, category_id, price_cents,
    close_date, search_title, search_body, search_tags, search_version, postcode, attributes
    ON advertisements FOR EACH ROW EXECUTE FUNCTION ads_to_search();
