-- Why the last attempt at a queued item failed, and when: for the hook's representation
-- (a client sees why its receiver gets nothing) and for an operator reading the mail
-- queue. Written by the same statement that sets the item due again, so a failure costs
-- no extra write; the row, and so the note, goes once the item is done or given up.
ALTER TABLE hook_deliveries ADD COLUMN last_error TEXT;
ALTER TABLE hook_deliveries ADD COLUMN failed_at INTEGER;
ALTER TABLE mail_queue ADD COLUMN last_error TEXT;
ALTER TABLE mail_queue ADD COLUMN failed_at INTEGER;
-- A hook's latest failure, read for its representation by this index rather than by a
-- sort of every failed delivery it waits for. Partial: a delivery is inserted without a
-- failure, so the index costs nothing until one fails.
CREATE INDEX hook_deliveries_failed ON hook_deliveries (hook_id, failed_at, delivery_id)
    WHERE failed_at IS NOT NULL;
