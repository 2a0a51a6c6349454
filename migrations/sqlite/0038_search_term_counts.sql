-- Nothing to do on SQLite: FTS5 counts a word's matches from its doclist, without an
-- index entry read per match (migration 0038 on PostgreSQL keeps totals per term).
SELECT 1;
