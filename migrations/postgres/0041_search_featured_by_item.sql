-- Nothing to do on PostgreSQL: its featured part reads the partial indexes of migration
-- 0035; SQLite's index of the featured ads by item number is its migration 0041.
SELECT 1;
