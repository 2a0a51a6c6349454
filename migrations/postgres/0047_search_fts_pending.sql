-- Nothing to do on PostgreSQL: its index entries are written by the statement that
-- changes a row, with no segment per statement; migration 0047 on SQLite queues the FTS5
-- index's changes until the writer commits.
SELECT 1;
