-- The featured part of a page without words (the ads near me, a front page) reads the ads
-- that have had a feature from this index alone, as SQLite reads `search_docs_featured`
-- (migration 0026 there): everything the part checks and returns (the features' ends, the
-- bump's rank, the close date, the postcode whose area the radius holds) is in it. Through
-- the partial indexes of the features, each featured ad's row was visited to learn its
-- area: 11 ms within 25 km at a million ads (6,896 featured), 2.9 ms from this index.
CREATE INDEX search_docs_featured_covering ON search_docs (top_until, bumped_until)
    INCLUDE (item_number, bump_rank, close_date, postcode)
    WHERE top_until IS NOT NULL OR bumped_until IS NOT NULL;
