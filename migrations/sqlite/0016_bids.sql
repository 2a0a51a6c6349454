-- Bids on advertisements whose price model is `bidding` (usecase::bids has the rules).
-- A withdrawn or removed bid is deleted: nothing of it is kept. The id is global; paths
-- name it under its ad. Listed highest first, earlier first among equal amounts.
CREATE TABLE bids (
    bid_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    item_number INTEGER NOT NULL REFERENCES advertisements (item_number),
    bidder_id   INTEGER NOT NULL REFERENCES users (user_id),
    amount      INTEGER NOT NULL CHECK (amount > 0),
    placed_at   INTEGER NOT NULL
);
CREATE INDEX bids_by_amount ON bids (item_number, amount DESC, bid_id);
CREATE INDEX bids_by_bidder ON bids (bidder_id);
