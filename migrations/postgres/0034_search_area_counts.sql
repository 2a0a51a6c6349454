-- How many rows `search_docs` holds in each area (the key of `search_docs_area`, `NL1097`
-- or `BE9000`), as on SQLite (migration 0028 there), so that a search within a radius and
-- nothing else (the ads near me) counts its matches from the areas within instead of an
-- index entry per ad (40 to 50 ms within 50 km at a million ads): the sums of their
-- changes, less the few ads past their close date and not yet swept (store::search).
-- Kept as `search_docs_total` is (migration 0033): each statement that adds or removes rows
-- appends its change per area, and the upkeep folds them (store::search::fold_counts).
-- Writes to `search_docs` wait until this migration commits: a row another replica added
-- between the copy below and the trigger's creation would otherwise be missed for good.
LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE search_area_counts (
    area TEXT COLLATE "C" NOT NULL,
    n    BIGINT NOT NULL
);
CREATE INDEX search_area_counts_area ON search_area_counts (area) INCLUDE (n);
INSERT INTO search_area_counts (area, n)
SELECT CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END,
       COUNT(*)
FROM search_docs GROUP BY 1;

CREATE FUNCTION search_area_counts_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_area_counts (area, n)
        SELECT CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END,
               COUNT(*)
        FROM added GROUP BY 1;
    ELSE
        INSERT INTO search_area_counts (area, n)
        SELECT CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END,
               -COUNT(*)
        FROM removed GROUP BY 1;
    END IF;
    RETURN NULL;
END;
$$;

-- No trigger on UPDATE: an ad's row changes by a delete and an insert (the triggers of
-- `advertisements`), as `search_docs_total` relies on too.
CREATE TRIGGER search_area_counts_insert AFTER INSERT ON search_docs
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION search_area_counts_change();
CREATE TRIGGER search_area_counts_delete AFTER DELETE ON search_docs
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION search_area_counts_change();
