-- Besides each term's total (migration 0038), how many online ads hold each pair of their
-- titles' words of which one begins the other (`garant garantie`: the two words, the
-- shorter first, with a space between, which no term holds; tags, which hold `_`, are
-- left out), kept in `search_term_counts` by the same statement triggers on the postings,
-- so that a search of one word alone whose two forms in titles are its stem and itself
-- counts from three totals, their union being their totals less the pair's (store::search),
-- instead of joining the forms' ranges in full (54 ms for `garantie | garant` at a million
-- ads). SQLite keeps the same totals in its migration 0040.
-- Writes to `search_docs` (whose triggers write the postings) wait until this migration
-- commits: a posting added between the copy below and the function's change would
-- otherwise be missed for good.
LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO search_term_counts (term, n)
SELECT a.term || ' ' || b.term, COUNT(*)
FROM search_title_postings a JOIN search_title_postings b USING (item_number)
WHERE length(a.term) < length(b.term) AND starts_with(b.term, a.term)
  AND strpos(b.term, '_') = 0
GROUP BY 1;

CREATE OR REPLACE FUNCTION search_term_counts_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_term_counts (term, n) SELECT term, COUNT(*) FROM added GROUP BY term;
        INSERT INTO search_term_counts (term, n)
        SELECT a.term || ' ' || b.term, COUNT(*)
        FROM added a JOIN added b USING (item_number)
        WHERE length(a.term) < length(b.term) AND starts_with(b.term, a.term)
          AND strpos(b.term, '_') = 0
        GROUP BY 1;
    ELSE
        INSERT INTO search_term_counts (term, n) SELECT term, -COUNT(*) FROM removed GROUP BY term;
        INSERT INTO search_term_counts (term, n)
        SELECT a.term || ' ' || b.term, -COUNT(*)
        FROM removed a JOIN removed b USING (item_number)
        WHERE length(a.term) < length(b.term) AND starts_with(b.term, a.term)
          AND strpos(b.term, '_') = 0
        GROUP BY 1;
    END IF;
    RETURN NULL;
END;
$$;
