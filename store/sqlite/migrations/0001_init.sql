CREATE TABLE knowledge_bases (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    embedder    TEXT NOT NULL,
    dimension   INTEGER NOT NULL,
    version     INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
);

CREATE TABLE sources (
    id            INTEGER PRIMARY KEY,
    kb_id         INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    url           TEXT NOT NULL CHECK (length(url) BETWEEN 1 AND 500),
    doc_id        TEXT NOT NULL DEFAULT '',
    title         TEXT NOT NULL DEFAULT '',
    content       TEXT NOT NULL DEFAULT '',
    language      TEXT NOT NULL DEFAULT 'und',
    last_modified TEXT,
    crawled_at    TEXT NOT NULL,
    is_stale      INTEGER NOT NULL DEFAULT 0,
    metadata      TEXT NOT NULL DEFAULT '{}',
    content_hash  TEXT NOT NULL DEFAULT '',
    etag          TEXT NOT NULL DEFAULT '',
    fail_count    INTEGER NOT NULL DEFAULT 0,
    UNIQUE (kb_id, url)
);

CREATE TABLE chunks (
    id          INTEGER PRIMARY KEY,
    source_id   INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    kb_id       INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL,
    text        TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    language    TEXT NOT NULL DEFAULT 'und',
    embedding   BLOB,
    terms       TEXT NOT NULL DEFAULT '',
    UNIQUE (source_id, chunk_index)
);
CREATE INDEX chunks_kb ON chunks(kb_id, id);

CREATE TABLE crawl_logs (
    id               INTEGER PRIMARY KEY,
    kb_id            INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('running','success','failed')),
    pages_crawled    INTEGER NOT NULL DEFAULT 0,
    pages_updated    INTEGER NOT NULL DEFAULT 0,
    pages_failed     INTEGER NOT NULL DEFAULT 0,
    error_message    TEXT NOT NULL DEFAULT '',
    duration_seconds REAL NOT NULL DEFAULT 0,
    started_at       TEXT NOT NULL,
    finished_at      TEXT
);
CREATE INDEX crawl_logs_kb ON crawl_logs(kb_id, started_at);
