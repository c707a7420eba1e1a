-- API tokens for quarry serve: only the SHA-256 of the secret is kept.
CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    scopes     TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens(name) WHERE revoked_at IS NULL;
CREATE INDEX researches_status_created ON researches(status, created_at);
