-- Nothing to do on SQLite: the PostgreSQL side adds a table of each online ad's title
-- terms, to count a search of words without visiting every match's row; FTS5 counts its
-- matches from its own doclists.
SELECT 1;
