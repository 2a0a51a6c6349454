-- Nothing to do on SQLite: migration 0026 made its index of the featured ads cover what
-- a search reads of them.
SELECT 1;
