-- The pairs of a title's words whose totals are kept (migration 0040) widen from a word
-- and another that begins with it to any two words that begin with the same two letters
-- or one within the other: a word and its stem whichever way the stemmer changed it
-- (`steef stevige`, `toebehoor toebehoren`, `bruik gebruikt`), so that a search of one
-- word of two such forms counts from totals too, and its group is cut to one form where
-- every title holding one holds the other (store::search::totals). A pair's key is its two
-- words, the shorter first (of two as long, the first in byte order), with a space
-- between; tags, which hold `_`, are left out. SQLite keeps the same totals in its
-- migration 0042.
-- Writes to `search_docs` (whose triggers write the postings) wait until this migration
-- commits: a posting added between the copy below and the function's change would
-- otherwise be missed for good.
LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE;

-- The pairs migration 0040 did not keep: those whose longer word does not begin with the
-- shorter.
INSERT INTO search_term_counts (term, n)
SELECT a.term || ' ' || b.term, COUNT(*)
FROM search_title_postings a JOIN search_title_postings b USING (item_number)
WHERE (length(a.term), a.term) < (length(b.term), b.term)
  AND (left(a.term, 2) = left(b.term, 2) OR strpos(b.term, a.term) > 0)
  AND NOT starts_with(b.term, a.term)
  AND strpos(a.term, '_') = 0 AND strpos(b.term, '_') = 0
GROUP BY 1;

CREATE OR REPLACE FUNCTION search_term_counts_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_term_counts (term, n) SELECT term, COUNT(*) FROM added GROUP BY term;
        INSERT INTO search_term_counts (term, n)
        SELECT a.term || ' ' || b.term, COUNT(*)
        FROM added a JOIN added b USING (item_number)
        WHERE (length(a.term), a.term) < (length(b.term), b.term)
          AND (left(a.term, 2) = left(b.term, 2) OR strpos(b.term, a.term) > 0)
          AND strpos(a.term, '_') = 0 AND strpos(b.term, '_') = 0
        GROUP BY 1;
    ELSE
        INSERT INTO search_term_counts (term, n) SELECT term, -COUNT(*) FROM removed GROUP BY term;
        INSERT INTO search_term_counts (term, n)
        SELECT a.term || ' ' || b.term, -COUNT(*)
        FROM removed a JOIN removed b USING (item_number)
        WHERE (length(a.term), a.term) < (length(b.term), b.term)
          AND (left(a.term, 2) = left(b.term, 2) OR strpos(b.term, a.term) > 0)
          AND strpos(a.term, '_') = 0 AND strpos(b.term, '_') = 0
        GROUP BY 1;
    END IF;
    RETURN NULL;
END;
$$;
