-- Search within a radius (store::search): the areas within it are found in `locations`
-- (a few thousand rows), then their ads by this index, instead of measuring every ad. The
-- expression is an ad's area as search joins it: a six-character postcode is Dutch and its
-- area its four digits, any other is a Belgian postcode; queries repeat it to the letter.
-- With the close date, a count within a radius reads the index alone.
CREATE INDEX search_docs_area ON search_docs
    ((CASE WHEN length(postcode) = 6 THEN 'NL' || substr(postcode, 1, 4) ELSE 'BE' || postcode END),
     close_date);
