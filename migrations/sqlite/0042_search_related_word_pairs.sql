-- The pairs of a title's words whose totals are kept (migration 0040) widen from a word
-- and another that begins with it to any two words that begin with the same two letters
-- or one within the other: a word and its stem whichever way the stemmer changed it
-- (`steef stevige`, `toebehoor toebehoren`, `bruik gebruikt`), so that a search of one
-- word of two such forms counts from totals too, and its group is cut to one form where
-- every title holding one holds the other (store::search::totals). A pair's key is its two
-- words, the shorter first (of two as long, the first in byte order), with a space
-- between. PostgreSQL keeps the same totals from its postings (its migration 0042).

-- The pairs migration 0040 did not keep: those whose longer word does not begin with the
-- shorter.
INSERT INTO search_title_term_counts (term, n)
SELECT a.value || ' ' || b.value, COUNT(*)
FROM search_docs d,
     json_each('["' || replace(rtrim(d.title_words), ' ', '","') || '"]') a,
     json_each('["' || replace(rtrim(d.title_words), ' ', '","') || '"]') b
WHERE a.value <> '' AND (length(a.value), a.value) < (length(b.value), b.value)
  AND (substr(a.value, 1, 2) = substr(b.value, 1, 2) OR instr(b.value, a.value) > 0)
  AND substr(b.value, 1, length(a.value)) <> a.value
GROUP BY 1;

DROP TRIGGER search_title_term_counts_insert;
DROP TRIGGER search_title_term_counts_delete;

CREATE TRIGGER search_title_term_counts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_title_term_counts (term, n)
    SELECT value, 1 FROM json_each('["' || replace(rtrim(NEW.title_words), ' ', '","') || '"]')
    WHERE value <> ''
    ON CONFLICT (term) DO UPDATE SET n = n + 1;
    INSERT INTO search_title_term_counts (term, n)
    SELECT a.value || ' ' || b.value, 1
    FROM json_each('["' || replace(rtrim(NEW.title_words), ' ', '","') || '"]') a,
         json_each('["' || replace(rtrim(NEW.title_words), ' ', '","') || '"]') b
    WHERE a.value <> '' AND (length(a.value), a.value) < (length(b.value), b.value)
      AND (substr(a.value, 1, 2) = substr(b.value, 1, 2) OR instr(b.value, a.value) > 0)
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
        WHERE a.value <> '' AND (length(a.value), a.value) < (length(b.value), b.value)
          AND (substr(a.value, 1, 2) = substr(b.value, 1, 2) OR instr(b.value, a.value) > 0));
END;
