-- Nothing to do on PostgreSQL: the SQLite side adds an index of each ad's area by its item
-- number for counting words within a radius; here the planner joins the words' matches
-- with the areas within from its own statistics.
SELECT 1;
