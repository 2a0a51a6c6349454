-- Nothing to do on SQLite: migration 0027 keeps the total there, in one row; the
-- PostgreSQL side keeps it as appended changes.
SELECT 1;
