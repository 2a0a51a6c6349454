-- Nothing to do on PostgreSQL: the SQLite side keeps a count of `search_docs` per area for
-- searches within a radius and nothing else; here every ad write would queue for its
-- area's row.
SELECT 1;
