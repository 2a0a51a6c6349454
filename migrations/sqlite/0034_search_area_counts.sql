-- Nothing to do on SQLite: migration 0028 keeps the totals per area there, one row each;
-- the PostgreSQL side keeps them as appended changes.
SELECT 1;
