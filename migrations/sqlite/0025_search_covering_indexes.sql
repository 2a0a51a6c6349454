-- A leaf category searched without words (store::search `Query::category`), with or without
-- a price range: the category's index carries the close date that every search checks and
-- the feature columns that split a page newest first into featured ads and the others, so
-- that the count and the page read the index alone (a page of a category with 4,000 ads
-- in its price range at a million ads: 15 ms reading each ad's row, 1.3 ms from the index).
-- (The PostgreSQL side also adds the postcode to the area index; SQLite reads that one
-- alone as it is.)
DROP INDEX search_docs_category_price;
CREATE INDEX search_docs_category_price
    ON search_docs (category_id, price_cents, close_date, top_until, bumped_until);
