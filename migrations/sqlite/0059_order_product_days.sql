-- A renewal and an insertion fee keep the days they were bought for, as a feature does:
-- a payment confirmed after the operator changed the category's running days runs for
-- the days the order described. Optional for them (a product bought before this has
-- none: it runs for its category's days when paid), required for a feature. SQLite cannot
-- change a CHECK: the table is remade.
CREATE TABLE order_products_new (
    order_id    INTEGER NOT NULL REFERENCES orders (order_id),
    product_id  INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('renewal', 'feature', 'insertion')),
    -- The feature bought, for kind 'feature' only.
    feature     TEXT CHECK ((kind = 'feature') = (feature IS NOT NULL)),
    -- How many days the feature lasts, or the ad runs, as priced when it was bought.
    days        INTEGER CHECK ((kind <> 'feature' OR days IS NOT NULL) AND days >= 1),
    item_number INTEGER NOT NULL REFERENCES advertisements (item_number),
    description TEXT NOT NULL,
    price       INTEGER NOT NULL CHECK (price >= 0),
    vat         INTEGER NOT NULL CHECK (vat >= 0 AND vat <= price),
    PRIMARY KEY (order_id, product_id)
);
INSERT INTO order_products_new
    (order_id, product_id, kind, feature, days, item_number, description, price, vat)
    SELECT order_id, product_id, kind, feature, days, item_number, description, price, vat
    FROM order_products;
DROP TABLE order_products;
ALTER TABLE order_products_new RENAME TO order_products;
CREATE INDEX order_products_by_item ON order_products (item_number);
