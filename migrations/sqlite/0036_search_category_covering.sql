-- Nothing to do on SQLite: its index of a category's ads holds the row id, the item number.
SELECT 1;
