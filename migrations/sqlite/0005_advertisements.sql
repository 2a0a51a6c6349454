-- Advertisements. The item id is `m` + item_number. Price model and category attributes
-- are JSON texts (read and written whole); `version` grows with every change (the ETag).
CREATE TABLE advertisements (
    item_number      INTEGER PRIMARY KEY,
    seller_id        INTEGER NOT NULL REFERENCES users (user_id),
    category_id      INTEGER NOT NULL REFERENCES categories (category_id),
    status           TEXT NOT NULL CHECK (status IN
                         ('draft', 'online', 'paused', 'expired', 'closed', 'deleted', 'rejected')),
    rejection_reason TEXT,
    title            TEXT NOT NULL,
    description      TEXT NOT NULL,
    price_model      TEXT NOT NULL,
    attributes       TEXT NOT NULL,
    postcode         TEXT NOT NULL,
    locale           TEXT NOT NULL,
    reserved         INTEGER NOT NULL,
    show_on_map      INTEGER NOT NULL,
    start_date       INTEGER,
    close_date       INTEGER,
    version          INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX advertisements_seller ON advertisements (seller_id, item_number);
CREATE INDEX advertisements_expiry ON advertisements (status, close_date);
