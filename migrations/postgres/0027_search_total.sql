-- Nothing to do on PostgreSQL: the SQLite side keeps a count of `search_docs` for searches
-- without any filter; here every ad write would queue for that one row.
SELECT 1;
