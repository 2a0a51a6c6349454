-- Postcodes with their place, province and coordinates (issue 12 point 1): what
-- GET /v1/locations answers, where an ad's cityName comes from, and the points that search
-- measures distances between. Keyed by country, because 8301 is a Dutch area (Emmeloord)
-- and a Belgian postcode (Ramskapelle). Dutch rows are 4-digit areas ('8301') or, after an
-- operator imported GeoNames' NL_full, whole postcodes ('8301AA'); a lookup of a whole
-- postcode falls back to its area (data/README.md, "Finding a postcode").
--
-- A new database gets data/locations.txt at first start (app::prepare_database);
-- `souk locations import FILE` adds and updates rows.
CREATE TABLE locations (
    country       TEXT NOT NULL,             -- 'NL' | 'BE'
    postcode      TEXT NOT NULL,             -- normalised: '8301', '8301AA', '9000'
    place         TEXT NOT NULL,
    province      TEXT NOT NULL,
    province_code TEXT NOT NULL,             -- ISO 3166-2 part: 'FL', 'VOV', 'BRU'
    latitude      DOUBLE PRECISION NOT NULL, -- WGS84 degrees
    longitude     DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (country, postcode)
);
-- Search finds the postcodes within a radius by a bounding box on this index first.
CREATE INDEX locations_point ON locations (latitude, longitude);
