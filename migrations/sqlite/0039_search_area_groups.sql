-- Besides its area (`z_nl3081`, migration 0031), each ad's region and district as terms of
-- `search_fts`'s tags: `y_nl30` (the country and the postcode's first two digits) and
-- `x_nl308` (its first three), so that a search of words within a radius names a whole
-- region or district as one term (store::search::RadiusAreas::terms) instead of a prefix
-- (`z_nl30*`), whose lists FTS5 merged anew for every query: at a million ads, a common word
-- within 50 km (five regions) counted in 44 ms that way and in 23 ms this way, a word in
-- 39,000 titles within 5 km of Rotterdam (one region) in 21 ms and 10 ms. A key shorter
-- than the postcode's (from a postcode an earlier release took) gives shorter terms, which
-- no query names: a query names regions of four characters and districts of five. As in
-- 0031, the stored `tags` stay as they are and the index is made afresh (about 15 s at a
-- million ads).
DROP TRIGGER search_docs_to_fts_insert;
DROP TRIGGER search_docs_to_fts_delete;
INSERT INTO search_fts (search_fts) VALUES ('delete-all');
INSERT INTO search_fts (rowid, title_words, body_words, tags)
SELECT item_number, title_words, body_words,
       tags || ' z_' || area || ' y_' || substr(area, 1, 4) || ' x_' || substr(area, 1, 5)
FROM (SELECT item_number, title_words, body_words, tags,
             lower(CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4)
                        ELSE 'BE' || postcode END) AS area
      FROM search_docs);

CREATE TRIGGER search_docs_to_fts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts (rowid, title_words, body_words, tags)
    SELECT NEW.item_number, NEW.title_words, NEW.body_words,
           NEW.tags || ' z_' || area || ' y_' || substr(area, 1, 4) || ' x_' || substr(area, 1, 5)
    FROM (SELECT lower(CASE WHEN length(NEW.postcode) = 6 THEN 'NL' || substr(NEW.postcode, 1, 4)
                            ELSE 'BE' || NEW.postcode END) AS area);
END;

CREATE TRIGGER search_docs_to_fts_delete AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, title_words, body_words, tags)
    SELECT 'delete', OLD.item_number, OLD.title_words, OLD.body_words,
           OLD.tags || ' z_' || area || ' y_' || substr(area, 1, 4) || ' x_' || substr(area, 1, 5)
    FROM (SELECT lower(CASE WHEN length(OLD.postcode) = 6 THEN 'NL' || substr(OLD.postcode, 1, 4)
                            ELSE 'BE' || OLD.postcode END) AS area);
END;
