-- Each ad's area as a term of `search_fts`'s tags (`z_nl3081`, `z_be9000`: `z_` and the
-- lowercase key of `search_docs_area`), written by the triggers from the postcode, so that
-- a search of words within a radius can count with FTS5 alone:
-- `words AND {tags}: (z_nl30* OR z_nl3081 ...)` (store::search::RadiusAreas). At a million
-- ads, a common word within 5 km of a city centre (65 areas, 115,000 ads within) counted
-- in 11 ms this way against 52 ms walking the ads within. The stored `tags` stay
-- as they are; the term is only in the index, so the delete trigger makes it again from
-- the old row, as FTS5 requires of an external-content table. The index is made afresh
-- (a minute or two at a million ads).
DROP TRIGGER search_docs_to_fts_insert;
DROP TRIGGER search_docs_to_fts_delete;
INSERT INTO search_fts (search_fts) VALUES ('delete-all');
INSERT INTO search_fts (rowid, title_words, body_words, tags)
SELECT item_number, title_words, body_words,
       tags || ' z_' || lower(CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4)
                                   ELSE 'BE' || postcode END)
FROM search_docs;

CREATE TRIGGER search_docs_to_fts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts (rowid, title_words, body_words, tags)
    VALUES (NEW.item_number, NEW.title_words, NEW.body_words,
            NEW.tags || ' z_' || lower(CASE WHEN length(NEW.postcode) = 6
                                            THEN 'NL' || substr(NEW.postcode, 1, 4)
                                            ELSE 'BE' || NEW.postcode END));
END;

CREATE TRIGGER search_docs_to_fts_delete AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, title_words, body_words, tags)
    VALUES ('delete', OLD.item_number, OLD.title_words, OLD.body_words,
            OLD.tags || ' z_' || lower(CASE WHEN length(OLD.postcode) = 6
                                            THEN 'NL' || substr(OLD.postcode, 1, 4)
                                            ELSE 'BE' || OLD.postcode END));
END;
