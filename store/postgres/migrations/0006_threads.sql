-- Conversation threads: every research belongs to one.
CREATE TABLE threads (
    id            TEXT PRIMARY KEY,
    title         TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('active','closed')),
    created_at    TIMESTAMPTZ NOT NULL,
    last_activity TIMESTAMPTZ NOT NULL
);
CREATE INDEX threads_activity ON threads(last_activity);
ALTER TABLE researches ADD COLUMN thread_id TEXT NOT NULL DEFAULT '';
CREATE INDEX researches_thread ON researches(thread_id, created_at);
