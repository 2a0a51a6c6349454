-- The featured part of a page of words (store::search::page): the few ads that have had a
-- feature (6,896 of a million seeded), by their words, as on SQLite (migration 0030
-- there). Without these, PostgreSQL intersected the partial indexes of the features with
-- every match of the words in the whole GIN index: 18 ms to build the bitmap of a word in
-- 137,000 titles, for 909 featured ads holding it (3 ms in all with these). A search's
-- condition `top_until > $1 OR bumped_until > $1` implies this predicate, so the planner
-- can use them; they only grow, as the partial indexes of the features do.
CREATE INDEX search_docs_featured_title_terms ON search_docs USING gin (title_terms)
    WITH (fastupdate = off) WHERE top_until IS NOT NULL OR bumped_until IS NOT NULL;
CREATE INDEX search_docs_featured_all_terms ON search_docs USING gin (all_terms)
    WITH (fastupdate = off) WHERE top_until IS NOT NULL OR bumped_until IS NOT NULL;
