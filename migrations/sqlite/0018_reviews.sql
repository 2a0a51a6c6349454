-- Reviews of sellers by their buyers (docs/API.md "Reviews"): one per completed
-- transaction. `place` is the reviewer's town when they wrote it (from their postcode);
-- sub-scores are optional, each 1 to 5.
CREATE TABLE reviews (
    review_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    seller_id      INTEGER NOT NULL REFERENCES users (user_id),
    reviewer_id    INTEGER NOT NULL REFERENCES users (user_id),
    item_number    INTEGER NOT NULL,
    transaction_id INTEGER NOT NULL,
    reason         TEXT NOT NULL,
    place          TEXT NOT NULL,
    overall_score  INTEGER NOT NULL CHECK (overall_score BETWEEN 1 AND 5),
    communication  INTEGER CHECK (communication BETWEEN 1 AND 5),
    accuracy       INTEGER CHECK (accuracy BETWEEN 1 AND 5),
    delivery       INTEGER CHECK (delivery BETWEEN 1 AND 5),
    content        TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    UNIQUE (item_number, transaction_id),
    FOREIGN KEY (item_number, transaction_id)
        REFERENCES advertisement_transactions (item_number, transaction_id)
);
CREATE INDEX reviews_by_seller ON reviews (seller_id, review_id DESC);
