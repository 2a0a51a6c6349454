-- Nothing to do on PostgreSQL: the totals of the titles' terms are kept from the postings
-- (migration 0038); SQLite keeps them from `search_docs` in its migration 0040.
SELECT 1;
