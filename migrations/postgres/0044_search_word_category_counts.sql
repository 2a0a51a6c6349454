-- Besides each term's total and those of pairs of a word's forms (migrations 0038, 0040,
-- 0042), how many online ads hold each word of their titles in each of their categories:
-- the word, a space, and the category's tag (`fiets c_402` for the leaf, `fiets p_4` for
-- its L1), kept in `search_term_counts` by the same statement triggers on the postings, so
-- that a search of one word in a category (a fifth of R2's mix) counts from one total
-- (store::search::postings) instead of holding the word's postings against the
-- category's (at a million ads those of R2's mix took 6.8 ms on average, 3.7 after). Two
-- rows of changes more per title word of each ad written (a seed of 100,000 ads took 114
-- s against 92). SQLite counts these from FTS5's doclists and keeps nothing (its
-- migration 0044).
-- Writes to `search_docs` (whose triggers write the postings) wait until this migration
-- commits: a posting added between the copy below and the function's change would
-- otherwise be missed for good.
LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO search_term_counts (term, n)
SELECT w.term || ' ' || c.term, COUNT(*)
FROM search_title_postings c JOIN search_title_postings w USING (item_number)
WHERE (starts_with(c.term, 'c_') OR starts_with(c.term, 'p_')) AND strpos(w.term, '_') = 0
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
        INSERT INTO search_term_counts (term, n)
        SELECT w.term || ' ' || c.term, COUNT(*)
        FROM added c JOIN added w USING (item_number)
        WHERE (starts_with(c.term, 'c_') OR starts_with(c.term, 'p_')) AND strpos(w.term, '_') = 0
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
        INSERT INTO search_term_counts (term, n)
        SELECT w.term || ' ' || c.term, -COUNT(*)
        FROM removed c JOIN removed w USING (item_number)
        WHERE (starts_with(c.term, 'c_') OR starts_with(c.term, 'p_')) AND strpos(w.term, '_') = 0
        GROUP BY 1;
    END IF;
    RETURN NULL;
END;
$$;
