-- Nothing to do on PostgreSQL: the SQLite side adds each ad's area as a term of its
-- full-text index, for counting words within a small radius with FTS5 alone; here the
-- areas within are bound as a list and the planner joins them with the words' matches.
SELECT 1;
