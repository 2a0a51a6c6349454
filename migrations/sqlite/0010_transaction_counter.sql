-- Transactions are numbered within their ad from a counter on the ad: `UPDATE ... RETURNING`
-- takes the ad's row lock, so sales recorded at once get 1, 2, ... in turn (MAX + 1 gave
-- two of them the same number on PostgreSQL, and the primary key refused the second).
ALTER TABLE advertisements ADD COLUMN transaction_count INTEGER NOT NULL DEFAULT 0;
UPDATE advertisements SET transaction_count =
    (SELECT MAX(t.transaction_id) FROM advertisement_transactions t
     WHERE t.item_number = advertisements.item_number)
WHERE item_number IN (SELECT item_number FROM advertisement_transactions);
