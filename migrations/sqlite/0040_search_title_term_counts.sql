-- How many rows of `search_docs` hold each word of the titles (a term of `title_words`),
-- kept by triggers in the transaction of every change, so that a search of one word and
-- nothing else whose other forms are in no title (`mooie`, whose group `mooie | mooi` meets
-- no `mooi`) counts its matches from the one form's total instead of FTS5 reading every
-- entry of its list (a word in 174,000 titles: 6 ms at a million ads): the total, less the
-- few ads past their close date and not yet swept (store::search). PostgreSQL keeps its
-- own from the postings (migration 0038).
CREATE TABLE search_title_term_counts (
    term TEXT PRIMARY KEY,
    n    INTEGER NOT NULL
) WITHOUT ROWID;

-- The index's own count of each term's rows in the titles: the same set of rows, read far
-- faster than each title split apart.
CREATE VIRTUAL TABLE temp.search_fts_columns USING fts5vocab(main, search_fts, 'col');
INSERT INTO search_title_term_counts (term, n)
SELECT term, doc FROM temp.search_fts_columns WHERE col = 'title_words';
DROP TABLE temp.search_fts_columns;

-- `title_words` is terms of [a-z0-9], each once and each followed by one space
-- (domain::search::text::index_words), so it makes a JSON array by plain replacement.
CREATE TRIGGER search_title_term_counts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_title_term_counts (term, n)
    SELECT value, 1 FROM json_each('["' || replace(rtrim(NEW.title_words), ' ', '","') || '"]')
    WHERE value <> ''
    ON CONFLICT (term) DO UPDATE SET n = n + 1;
END;

-- No trigger on UPDATE: an ad's row changes by a delete and an insert (the triggers of
-- `advertisements`), as `search_area_counts` relies on too.
CREATE TRIGGER search_title_term_counts_delete AFTER DELETE ON search_docs BEGIN
    UPDATE search_title_term_counts SET n = n - 1
    WHERE term IN (SELECT value FROM json_each(
        '["' || replace(rtrim(OLD.title_words), ' ', '","') || '"]'));
END;
