-- A client registered with client scopes only (create_account, confirm_upcall, webhooks)
-- could send a user through the authorization endpoint and get a code with no scope at
-- all; the authorization endpoint refuses that now (invalid_scope). The refresh tokens
-- such codes gave are revoked: a live refresh token makes its client a recipient of the
-- user's events, which a grant of nothing should not.
UPDATE refresh_tokens SET state = 'revoked', spent_at = CAST(EXTRACT(EPOCH FROM now()) AS BIGINT)
WHERE state = 'live' AND scope = '';
