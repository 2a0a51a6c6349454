-- The featured part of a page within a radius (store::search::page): the ads that have had
-- a feature, by their area (the key of `search_docs_area`), so that the part reads the
-- featured ads of the areas within the radius alone, each from this index alone. From
-- `search_docs_featured_covering` (migration 0037), ordered by the features' ends, it read
-- every featured ad's entry (6,896 at a million seeded ads) to hold its area against the
-- radius's: 1.7 to 2.2 ms within 5 to 25 km, 0.4 to 1.1 from this one (within 50 km, a
-- thousand areas, the planner keeps the other). A search's condition `top_until > $1 OR
-- bumped_until > $1` implies this predicate, as it does that of the others; partial, it
-- only grows as they do. SQLite's is its migration 0043.
CREATE INDEX search_docs_featured_area ON search_docs
    ((CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END))
    INCLUDE (item_number, top_until, bumped_until, bump_rank, close_date, postcode)
    WHERE top_until IS NOT NULL OR bumped_until IS NOT NULL;
