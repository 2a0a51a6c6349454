-- Nothing to do on PostgreSQL: a saved search's identity column never gives an id again.
-- SQLite's table is remade with AUTOINCREMENT (migration 0062 there).
SELECT 1;
