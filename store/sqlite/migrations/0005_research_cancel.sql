-- Researches can be canceled (a status the first schema's CHECK did not
-- allow) and asked to cancel from another process. SQLite cannot change a
-- CHECK constraint, so both research tables are rebuilt: the events table
-- first, so that dropping the old researches table deletes nothing.
CREATE TABLE researches_new (
    id               TEXT PRIMARY KEY,
    question         TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending','processing','completed','failed','canceled')),
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    state            TEXT NOT NULL,
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
INSERT INTO researches_new (id, question, status, created_at, updated_at, state, lease_owner, lease_until)
    SELECT id, question, status, created_at, updated_at, state, lease_owner, lease_until FROM researches;
CREATE TABLE research_events_new (
    research_id TEXT NOT NULL REFERENCES researches_new(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL,
    at          TEXT NOT NULL,
    data        TEXT NOT NULL,
    PRIMARY KEY (research_id, seq)
);
INSERT INTO research_events_new SELECT research_id, seq, type, at, data FROM research_events;
DROP TABLE research_events;
DROP TABLE researches;
ALTER TABLE researches_new RENAME TO researches;
ALTER TABLE research_events_new RENAME TO research_events;
CREATE INDEX researches_created ON researches(created_at);
