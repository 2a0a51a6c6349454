-- Sales of an advertisement, numbered within it (1, 2, ...).
CREATE TABLE advertisement_transactions (
    item_number    INTEGER NOT NULL REFERENCES advertisements (item_number),
    transaction_id INTEGER NOT NULL,
    buyer_id       INTEGER NOT NULL REFERENCES users (user_id),
    amount         INTEGER NOT NULL,
    shipping_costs INTEGER NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('CREATED', 'COMPLETED', 'CANCELLED')),
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (item_number, transaction_id)
);

-- Phone calls about an advertisement reported by a client (upcall confirmations).
CREATE TABLE upcall_confirmations (
    item_number  INTEGER NOT NULL REFERENCES advertisements (item_number),
    client_id    TEXT NOT NULL,
    caller_phone TEXT NOT NULL,
    callee_phone TEXT NOT NULL,
    start_time   INTEGER NOT NULL,
    end_time     INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX upcall_confirmations_item ON upcall_confirmations (item_number);

-- What happened to an advertisement, counted as it happens.
CREATE TABLE advertisement_statistics (
    item_number     INTEGER PRIMARY KEY REFERENCES advertisements (item_number),
    views           INTEGER NOT NULL DEFAULT 0,
    asqs            INTEGER NOT NULL DEFAULT 0,
    bids            INTEGER NOT NULL DEFAULT 0,
    url_clicks      INTEGER NOT NULL DEFAULT 0,
    phone_clicks    INTEGER NOT NULL DEFAULT 0,
    favorite_clicks INTEGER NOT NULL DEFAULT 0
);
