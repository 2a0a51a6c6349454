-- How many rows `search_docs` holds, kept by triggers in the transaction of every change,
-- so that a search without any filter (a front page: every online ad, newest first)
-- counts its matches without reading an index entry per ad (58 ms at a million ads):
-- the total, less the few ads past their close date and not yet swept (store::search).
-- SQLite only: with one writer at a time the single row holds up no one; on PostgreSQL
-- every ad write would queue for it.
CREATE TABLE search_docs_total (n INTEGER NOT NULL);
INSERT INTO search_docs_total (n) SELECT COUNT(*) FROM search_docs;

CREATE TRIGGER search_docs_total_insert AFTER INSERT ON search_docs BEGIN
    UPDATE search_docs_total SET n = n + 1;
END;

CREATE TRIGGER search_docs_total_delete AFTER DELETE ON search_docs BEGIN
    UPDATE search_docs_total SET n = n - 1;
END;
