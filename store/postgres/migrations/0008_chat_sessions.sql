-- Q&A conversations of the embedded mode (Redis keeps them when configured).
CREATE TABLE chat_sessions (
    id            TEXT PRIMARY KEY,
    language      TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    last_activity TIMESTAMPTZ NOT NULL,
    message_count INTEGER NOT NULL,
    messages      TEXT NOT NULL
);
CREATE INDEX chat_sessions_activity ON chat_sessions(last_activity);
