-- Background uploads: their status outlives the process that ingests them.
CREATE TABLE ingests (
    id         TEXT PRIMARY KEY,
    kb_name    TEXT NOT NULL,
    owner      TEXT NOT NULL,
    status     TEXT NOT NULL,
    state      TEXT NOT NULL,
    started_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX ingests_status ON ingests(status);
