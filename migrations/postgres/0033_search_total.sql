-- How many rows `search_docs` holds, as on SQLite (migration 0027 there), so that a search
-- without any filter (a front page; a query of stop words only) counts its matches without
-- reading an index entry per ad (95 ms at a million ads): the sum of `n`, less the few ads
-- past their close date and not yet swept (store::search). Here each statement that adds
-- or removes rows appends its own change instead of updating one row, for which every ad
-- write would queue; the upkeep folds the changes into one row now and then
-- (store::search::fold_counts), so the sum stays short.
-- Writes to `search_docs` wait until this migration commits: a row another replica added
-- between the copy below and the trigger's creation would otherwise be missed for good.
LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE search_docs_total (n BIGINT NOT NULL);
INSERT INTO search_docs_total (n) SELECT COUNT(*) FROM search_docs;

CREATE FUNCTION search_docs_total_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_docs_total (n) SELECT COUNT(*) FROM added HAVING COUNT(*) > 0;
    ELSE
        INSERT INTO search_docs_total (n) SELECT -COUNT(*) FROM removed HAVING COUNT(*) > 0;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER search_docs_total_insert AFTER INSERT ON search_docs
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION search_docs_total_change();
CREATE TRIGGER search_docs_total_delete AFTER DELETE ON search_docs
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION search_docs_total_change();
