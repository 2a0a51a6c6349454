-- How many rows `search_docs` holds in each area (an ad's postcode's country and area,
-- `NL1097` or `BE9000`: the key of `search_docs_area`), kept by triggers in the transaction
-- of every change, so that a search within a radius and nothing else (the ads near me,
-- newest first) counts its matches from the few thousand areas within instead of an index
-- entry per ad (40 ms within 50 km at a million ads): their totals, less the few ads past
-- their close date and not yet swept (store::search). SQLite only, as `search_docs_total`.
CREATE TABLE search_area_counts (
    area TEXT PRIMARY KEY,
    n    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO search_area_counts (area, n)
SELECT CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END,
       COUNT(*)
FROM search_docs GROUP BY 1;

CREATE TRIGGER search_area_counts_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_area_counts (area, n) VALUES (
        CASE WHEN length(NEW.postcode) = 6 THEN 'NL' || substr(NEW.postcode, 1, 4) ELSE 'BE' || NEW.postcode END,
        1)
    ON CONFLICT (area) DO UPDATE SET n = n + 1;
END;

-- No trigger on UPDATE: an ad's row changes by a delete and an insert (the triggers of
-- `advertisements`), as `search_docs_total` relies on too.
CREATE TRIGGER search_area_counts_delete AFTER DELETE ON search_docs BEGIN
    UPDATE search_area_counts SET n = n - 1
    WHERE area = CASE WHEN length(OLD.postcode) = 6 THEN 'NL' || substr(OLD.postcode, 1, 4) ELSE 'BE' || OLD.postcode END;
END;

