-- Nothing to do on PostgreSQL: the SQLite side replaces its two feature indexes with one
-- that a search's featured part reads alone; PostgreSQL's planner combines its two partial
-- indexes in a bitmap and reads few rows either way.
SELECT 1;
