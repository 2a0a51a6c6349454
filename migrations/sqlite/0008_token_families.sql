-- The tokens issued from one authorization code form one family, now named by the code's
-- hash: revoking what a replayed code issued is then a lookup by family (indexed on both
-- token tables), and access tokens need no index of their own on the code. Families were
-- already one per code exchange, so renaming them keeps every family whole.
UPDATE refresh_tokens SET family = code_hash WHERE code_hash IS NOT NULL;
UPDATE access_tokens SET family = code_hash WHERE code_hash IS NOT NULL;
DROP INDEX access_tokens_code;
-- A new refresh token takes the next `sequence` (MAX + 1): without an index that was a scan
-- of every refresh token ever issued, on the single writer, for every refresh.
CREATE INDEX refresh_tokens_sequence ON refresh_tokens (sequence);
