-- Users, OAuth clients and everything the authorization server issues. Tokens, codes,
-- secrets and session ids are stored only as SHA-256 hashes (hex).
CREATE TABLE users (
    user_id        INTEGER PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE,
    password_hash  TEXT NOT NULL,
    name           TEXT NOT NULL,
    postcode       TEXT,
    phone_number   TEXT,
    locale         TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('unconfirmed', 'confirmed')),
    dealer_package TEXT NOT NULL DEFAULT 'NONE',
    confirm_date   INTEGER,
    created_at     INTEGER NOT NULL
);

CREATE TABLE clients (
    client_id      TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    secret_hash    TEXT,
    redirect_uris  TEXT NOT NULL,
    scopes         TEXT NOT NULL,
    default_scopes TEXT NOT NULL,
    grants         TEXT NOT NULL,
    created_at     INTEGER NOT NULL
);

CREATE TABLE authorization_codes (
    code_hash      TEXT PRIMARY KEY,
    client_id      TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    user_id        INTEGER NOT NULL REFERENCES users (user_id),
    redirect_uri   TEXT NOT NULL,
    scope          TEXT NOT NULL,
    code_challenge TEXT,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER
);

-- A family is the chain of refresh tokens that one authorization (a code exchange) starts.
CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (user_id),
    scope      TEXT NOT NULL,
    family     TEXT NOT NULL,
    code_hash  TEXT,
    state      TEXT NOT NULL CHECK (state IN ('live', 'rotated', 'discarded', 'revoked')),
    issued_at  INTEGER NOT NULL,
    sequence   INTEGER NOT NULL
);
CREATE INDEX refresh_tokens_owner ON refresh_tokens (user_id, client_id, state, sequence);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family);

CREATE TABLE access_tokens (
    token_hash TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    user_id    INTEGER REFERENCES users (user_id),
    scope      TEXT NOT NULL,
    family     TEXT,
    code_hash  TEXT,
    issued_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX access_tokens_family ON access_tokens (family);
CREATE INDEX access_tokens_code ON access_tokens (code_hash);

CREATE TABLE consents (
    user_id    INTEGER NOT NULL REFERENCES users (user_id),
    client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    scope      TEXT NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id)
);

CREATE TABLE browser_sessions (
    session_hash TEXT PRIMARY KEY,
    csrf_token   TEXT NOT NULL,
    user_id      INTEGER REFERENCES users (user_id),
    expires_at   INTEGER NOT NULL
);

-- Failed sign-ins, per account and per client address, for throttling.
CREATE TABLE login_failures (
    throttle_key TEXT NOT NULL,
    failed_at    INTEGER NOT NULL
);
CREATE INDEX login_failures_key ON login_failures (throttle_key, failed_at);

-- Links mailed to confirm an account or a new e-mail address.
CREATE TABLE email_confirmations (
    token_hash TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (user_id),
    purpose    TEXT NOT NULL CHECK (purpose IN ('account', 'email-change')),
    new_email  TEXT,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
