-- Nothing to do on PostgreSQL: a search within a radius holds the ads' areas against those
-- within (migration 0034's `search_area_counts`, the area in `search_title_postings`); the
-- region and district terms of migration 0039 on SQLite serve FTS5's counts.
SELECT 1;
