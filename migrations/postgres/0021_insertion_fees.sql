-- Insertion fees (docs/API.md "Insertion fees"): an ad that goes online for the first time
-- in a category whose insertionFee is above 0 is charged it in an order. Until that order
-- is paid (at once in the sandbox) the ad stays a draft that names the order here; the
-- payment publishes it in the same transaction.
ALTER TABLE advertisements ADD COLUMN awaiting_order BIGINT REFERENCES orders (order_id);
