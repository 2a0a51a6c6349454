-- How many rows of `search_docs` hold each term of the titles (a word of `title_words`), and
-- each pair of a title's terms of which one begins the other (`garant garantie`: the two
-- terms, the shorter first, with a space between, which no term holds), kept by triggers
-- in the transaction of every change, so that a search of one word and nothing else
-- counts its matches from totals (store::search) instead of FTS5 reading every entry of
-- its forms' lists (a word in 174,000 titles: 6 ms at a million ads): the word's forms in
-- titles are mostly one (`mooie`, whose other form `mooi` is in no title) or two, its stem
-- and itself, one the beginning of the other, whose union is their totals less the pair's.
-- Less, in either case, the few ads past their close date and not yet swept. PostgreSQL
-- keeps the same totals from its postings (migrations 0038 and 0040).
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
-- Each title split apart and its terms paired: with the totals above, 26 s at a million
-- ads by `souk migrate` (1,595 pairs).
INSERT INTO search_title_term_counts (term, n)
SELECT a.value || ' ' || b.value, COUNT(*)
FROM search_docs d,
     json_each('["' || replace(rtrim(d.title_words), ' ', '","') || '"]') a,
     json_each('["' || replace(rtrim(d.title_words), ' ', '","') || '"]') b
WHERE a.value <> '' AND length(a.value) < length(b.value)
  AND substr(b.value, 1, length(a.value)) = a.value
GROUP BY 1;

CREATE TRIGGER search_title_term_counts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_title_term_counts (term, n)
    SELECT value, 1 FROM json_each('["' || replace(rtrim(NEW.title_words), ' ', '","') || '"]')
    WHERE value <> ''
    ON CONFLICT (term) DO UPDATE SET n = n + 1;
    INSERT INTO search_title_term_counts (term, n)
    SELECT a.value || ' ' || b.value, 1
    FROM json_each('["' || replace(rtrim(NEW.title_words), ' ', '","') || '"]') a,
         json_each('["' || replace(rtrim(NEW.title_words), ' ', '","') || '"]') b
    WHERE a.value <> '' AND length(a.value) < length(b.value)
      AND substr(b.value, 1, length(a.value)) = a.value
    ON CONFLICT (term) DO UPDATE SET n = n + 1;
END;

-- No trigger on UPDATE: an ad's row changes by a delete and an insert (the triggers of
-- `advertisements`), as `search_area_counts` relies on too.
CREATE TRIGGER search_title_term_counts_delete AFTER DELETE ON search_docs BEGIN
    UPDATE search_title_term_counts SET n = n - 1
    WHERE term IN (SELECT value FROM json_each(
        '["' || replace(rtrim(OLD.title_words), ' ', '","') || '"]'));
    UPDATE search_title_term_counts SET n = n - 1
    WHERE term IN (
        SELECT a.value || ' ' || b.value
        FROM json_each('["' || replace(rtrim(OLD.title_words), ' ', '","') || '"]') a,
             json_each('["' || replace(rtrim(OLD.title_words), ' ', '","') || '"]') b
        WHERE a.value <> '' AND length(a.value) < length(b.value)
          AND substr(b.value, 1, length(a.value)) = a.value);
END;
