-- Nothing to do on SQLite: FTS5 counts words within a radius from the doclists of the
-- words and of the areas' terms (migrations 0031 and 0039); migration 0045 on PostgreSQL
-- indexes its postings by word and area.
SELECT 1;
