-- What the hourly upkeep deletes, found without scanning the token tables: access tokens
-- and codes long expired, refresh tokens long spent (rotated, discarded or revoked).
CREATE INDEX access_tokens_expiry ON access_tokens (expires_at);
CREATE INDEX authorization_codes_expiry ON authorization_codes (expires_at);
CREATE INDEX refresh_tokens_spent ON refresh_tokens (state, issued_at);
