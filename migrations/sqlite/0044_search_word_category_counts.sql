-- Nothing to do on SQLite: FTS5 counts a word in a category from its doclists (migration
-- 0044 on PostgreSQL keeps a total per title word and category).
SELECT 1;
