-- When a refresh token was spent: rotated (its successor issued), discarded by the 20-token
-- rule, or revoked. The hourly upkeep forgets spent tokens 30 days after this, so that a
-- token first refreshed late in its life still revokes its family when presented again for
-- those 30 days; the rule read from the successor (the next token of the family) cost a
-- probe of the family per candidate, and could leave a token whose successor went first.
-- Tokens spent before this migration: a rotated one when its successor was issued, others
-- when they were issued (the rule until now).
ALTER TABLE refresh_tokens ADD COLUMN spent_at BIGINT;
UPDATE refresh_tokens SET spent_at = COALESCE(
    (SELECT MIN(n.issued_at) FROM refresh_tokens n
     WHERE n.family = refresh_tokens.family AND n.sequence > refresh_tokens.sequence),
    issued_at)
WHERE state = 'rotated';
UPDATE refresh_tokens SET spent_at = issued_at WHERE state IN ('discarded', 'revoked');
CREATE INDEX refresh_tokens_spent_at ON refresh_tokens (spent_at) WHERE spent_at IS NOT NULL;
