-- The featured part of a page within a radius without words (store::search::page): the
-- ads that have had a feature, by their area (the key of `search_docs_area`), so that the
-- part reads the featured ads of the areas within the radius alone, each from this index
-- alone, instead of the range of every featured ad running now in `search_docs_featured`
-- (migration 0026), each area held against the radius's: at a million seeded ads 0.8 to
-- 2.6 ms, 0.2 to 1.4 from this one. Partial, as that one: only ads that ever had a feature
-- are in it. PostgreSQL's is its migration 0043.
CREATE INDEX search_docs_featured_area ON search_docs (
    (CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END),
    item_number, close_date, top_until, bumped_until, bump_rank, postcode
) WHERE top_until IS NOT NULL OR bumped_until IS NOT NULL;
