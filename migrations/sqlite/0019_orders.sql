-- Orders (docs/API.md "Orders and renewal"): what a user buys, in integer euro cents with
-- VAT included; each product says what it buys, and its effect is applied in the same
-- transaction that marks the order paid.
CREATE TABLE orders (
    order_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    buyer_id   INTEGER NOT NULL REFERENCES users (user_id),
    status     TEXT NOT NULL CHECK (status IN ('new', 'payment required', 'paid', 'refused', 'closed')),
    created_at INTEGER NOT NULL,
    paid_at    INTEGER
);
CREATE INDEX orders_by_buyer ON orders (buyer_id, order_id);
CREATE TABLE order_products (
    order_id    INTEGER NOT NULL REFERENCES orders (order_id),
    product_id  INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('renewal')),
    item_number INTEGER NOT NULL REFERENCES advertisements (item_number),
    description TEXT NOT NULL,
    price       INTEGER NOT NULL CHECK (price >= 0),
    vat         INTEGER NOT NULL CHECK (vat >= 0 AND vat <= price),
    PRIMARY KEY (order_id, product_id)
);
