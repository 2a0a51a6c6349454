-- Each term of each online ad's title and tags (`search_docs.title_terms`) as a row, so that
-- a search of words and tags alone (the default search: the title) is counted from this
-- index alone (an index-only scan; a merge or nested-loop join of the groups' ranges)
-- instead of from the GIN index, which can count nothing without visiting every match's row
-- of `search_docs` (about 0.9 KB each) to see whether it is visible. At a million ads: a
-- word in 198,000 titles counted in 17 ms against 135 ms, two common words (41,000 ads
-- with both) 40 ms against 105 ms (store::search `count_title_postings`). Each row carries
-- the ad's area (its key as `search_docs_area` makes it), so that words within a radius
-- are counted from the same ranges, each row's area held against the areas within: a
-- common word within 50 km of a city, 200 ms from the GIN index and the area index.
--
-- Kept by triggers on `search_docs`, in the transaction of each change of an ad, as the
-- GIN index is. The "C" collation compares bytes: terms are ASCII, and nothing is sorted
-- for people by this column.
-- Writes to `search_docs` wait until this migration commits: a row another replica added
-- between the copy below and the trigger's creation would otherwise be missed for good.
LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE search_title_postings (
    term        TEXT COLLATE "C" NOT NULL,
    item_number BIGINT NOT NULL,
    area        TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (term, item_number) INCLUDE (area)
);

INSERT INTO search_title_postings (term, item_number, area)
SELECT unnest(tsvector_to_array(title_terms)), item_number,
       CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END
FROM search_docs;

-- No trigger on UPDATE: an ad's row changes by a delete and an insert (the triggers of
-- `advertisements`).
CREATE FUNCTION search_docs_to_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_title_postings
        WHERE term = ANY (tsvector_to_array(OLD.title_terms)) AND item_number = OLD.item_number;
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_title_postings (term, item_number, area)
        SELECT unnest(tsvector_to_array(NEW.title_terms)), NEW.item_number,
               CASE WHEN length(NEW.postcode) = 6 THEN 'NL' || substr(NEW.postcode, 1, 4)
                    ELSE 'BE' || NEW.postcode END;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER search_docs_to_postings AFTER INSERT OR DELETE ON search_docs
    FOR EACH ROW EXECUTE FUNCTION search_docs_to_postings();
