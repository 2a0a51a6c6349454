-- Sales of an advertisement, numbered within it (1, 2, ...).
CREATE TABLE advertisement_transactions (
    item_number    BIGINT NOT NULL REFERENCES advertisements (item_number),
    transaction_id BIGINT NOT NULL,
    buyer_id       BIGINT NOT NULL REFERENCES users (user_id),
    amount         BIGINT NOT NULL,
    shipping_costs BIGINT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('CREATED', 'COMPLETED', 'CANCELLED')),
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (item_number, transaction_id)
);

-- Phone calls about an advertisement reported by a client (upcall confirmations).
CREATE TABLE upcall_confirmations (
    item_number  BIGINT NOT NULL REFERENCES advertisements (item_number),
    client_id    TEXT NOT NULL,
    caller_phone TEXT NOT NULL,
    callee_phone TEXT NOT NULL,
    start_time   BIGINT NOT NULL,
    end_time     BIGINT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX upcall_confirmations_item ON upcall_confirmations (item_number);

-- What happened to an advertisement, counted as it happens.
CREATE TABLE advertisement_statistics (
    item_number     BIGINT PRIMARY KEY REFERENCES advertisements (item_number),
    views           BIGINT NOT NULL DEFAULT 0,
    asqs            BIGINT NOT NULL DEFAULT 0,
    bids            BIGINT NOT NULL DEFAULT 0,
    url_clicks      BIGINT NOT NULL DEFAULT 0,
    phone_clicks    BIGINT NOT NULL DEFAULT 0,
    favorite_clicks BIGINT NOT NULL DEFAULT 0
);
