-- Nothing to do on PostgreSQL: the SQLite side adds a full-text index of the featured ads'
-- words; here the featured part of a search is found by the feature indexes and the words'
-- GIN index together, as the planner chooses.
SELECT 1;
