-- How many online ads hold each term of the titles and tags (a row of
-- `search_title_postings` each), so that a search of one word that has no other form, or
-- of one tag, and nothing else counts its matches from a kept total instead of reading
-- every entry of the word's range (a word in 198,000 titles: 17 ms at a million ads, and
-- more on a busy server): the sum of its changes, less the few ads past their close date
-- and not yet swept (store::search::postings). Kept as `search_area_counts` is (migration
-- 0034): each statement that adds or removes postings appends its change per term, and
-- the upkeep folds them (store::search::fold_counts).
-- Writes to `search_docs` (whose triggers write the postings) wait until this migration
-- commits: a posting added between the copy below and the trigger's creation would
-- otherwise be missed for good.
LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE search_term_counts (
    term TEXT COLLATE "C" NOT NULL,
    n    BIGINT NOT NULL
);
CREATE INDEX search_term_counts_term ON search_term_counts (term) INCLUDE (n);
INSERT INTO search_term_counts (term, n)
SELECT term, COUNT(*) FROM search_title_postings GROUP BY term;

CREATE FUNCTION search_term_counts_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_term_counts (term, n) SELECT term, COUNT(*) FROM added GROUP BY term;
    ELSE
        INSERT INTO search_term_counts (term, n) SELECT term, -COUNT(*) FROM removed GROUP BY term;
    END IF;
    RETURN NULL;
END;
$$;

-- Postings are only inserted and deleted (migration 0032).
CREATE TRIGGER search_term_counts_insert AFTER INSERT ON search_title_postings
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION search_term_counts_change();
CREATE TRIGGER search_term_counts_delete AFTER DELETE ON search_title_postings
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION search_term_counts_change();
