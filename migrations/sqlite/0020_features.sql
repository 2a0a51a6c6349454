-- Features (docs/API.md "Features"): paid promotions of an ad. Each bought feature is an
-- order product of kind 'feature' naming it; its effect is a date on the ad until which it
-- lasts, set in the transaction that marks the order paid. Search reads two of them from
-- its index rows: a top-of-the-day ad comes first, and a bumped ad sorts by its bump.
CREATE TABLE feature_prices (
    -- 0: every category (the price list's default); else an L1 or a leaf category.
    category_id INTEGER NOT NULL,
    feature     TEXT NOT NULL,
    -- NULL: not sold in this category.
    price       INTEGER CHECK (price >= 0),
    days        INTEGER NOT NULL CHECK (days >= 1),
    PRIMARY KEY (category_id, feature)
);

ALTER TABLE advertisements ADD COLUMN top_until INTEGER;
ALTER TABLE advertisements ADD COLUMN bumped_until INTEGER;
-- The largest item number when the ad was bumped: it sorts among the ads by date as if
-- placed then (after every ad placed before the bump, before every ad placed after).
ALTER TABLE advertisements ADD COLUMN bump_rank INTEGER;
ALTER TABLE advertisements ADD COLUMN sticker_until INTEGER;
ALTER TABLE advertisements ADD COLUMN url_until INTEGER;
ALTER TABLE advertisements ADD COLUMN homepage_until INTEGER;

ALTER TABLE search_docs ADD COLUMN top_until INTEGER;
ALTER TABLE search_docs ADD COLUMN bumped_until INTEGER;
ALTER TABLE search_docs ADD COLUMN bump_rank INTEGER;
CREATE INDEX search_docs_top ON search_docs (top_until) WHERE top_until IS NOT NULL;
CREATE INDEX search_docs_bumped ON search_docs (bumped_until) WHERE bumped_until IS NOT NULL;

DROP TRIGGER ads_to_search_insert;
DROP TRIGGER ads_to_search_update;

CREATE TRIGGER ads_to_search_insert AFTER INSERT ON advertisements
WHEN NEW.status = 'online' AND NEW.search_version > 0 BEGIN
    INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                             title_words, body_words, tags, postcode, attributes,
                             top_until, bumped_until, bump_rank)
    VALUES (NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
            NEW.search_title, NEW.search_body, NEW.search_tags, NEW.postcode, NEW.attributes,
            NEW.top_until, NEW.bumped_until, NEW.bump_rank);
END;

-- Not on version, updated_at or transaction_count: a sale or a view flush leaves the index.
CREATE TRIGGER ads_to_search_update AFTER UPDATE OF status, category_id, price_cents,
    close_date, search_title, search_body, search_tags, search_version, postcode, attributes,
    top_until, bumped_until, bump_rank
    ON advertisements BEGIN
    DELETE FROM search_docs WHERE item_number = OLD.item_number;
    INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                             title_words, body_words, tags, postcode, attributes,
                             top_until, bumped_until, bump_rank)
    SELECT NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
           NEW.search_title, NEW.search_body, NEW.search_tags, NEW.postcode, NEW.attributes,
           NEW.top_until, NEW.bumped_until, NEW.bump_rank
    WHERE NEW.status = 'online' AND NEW.search_version > 0;
END;

-- Order products may now be features and insertion fees (SQLite cannot widen a CHECK:
-- the table is remade).
CREATE TABLE order_products_new (
    order_id    INTEGER NOT NULL REFERENCES orders (order_id),
    product_id  INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('renewal', 'feature', 'insertion')),
    -- The feature bought, for kind 'feature' only.
    feature     TEXT CHECK ((kind = 'feature') = (feature IS NOT NULL)),
    -- How many days the feature lasts, as priced when it was bought.
    days        INTEGER CHECK ((kind = 'feature') = (days IS NOT NULL) AND days >= 1),
    item_number INTEGER NOT NULL REFERENCES advertisements (item_number),
    description TEXT NOT NULL,
    price       INTEGER NOT NULL CHECK (price >= 0),
    vat         INTEGER NOT NULL CHECK (vat >= 0 AND vat <= price),
    PRIMARY KEY (order_id, product_id)
);
INSERT INTO order_products_new (order_id, product_id, kind, item_number, description, price, vat)
    SELECT order_id, product_id, kind, item_number, description, price, vat FROM order_products;
DROP TABLE order_products;
ALTER TABLE order_products_new RENAME TO order_products;
CREATE INDEX order_products_by_item ON order_products (item_number);
