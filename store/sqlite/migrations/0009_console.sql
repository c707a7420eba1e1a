-- The RAG console: evaluation datasets and pipelines.
CREATE TABLE eval_datasets (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    kb_id       INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL
);
CREATE TABLE eval_questions (
    dataset_id INTEGER NOT NULL REFERENCES eval_datasets(id) ON DELETE CASCADE,
    query_id   TEXT NOT NULL,
    text       TEXT NOT NULL,
    reference  TEXT NOT NULL DEFAULT '',
    golden     TEXT NOT NULL,
    PRIMARY KEY (dataset_id, query_id)
);
CREATE TABLE pipelines (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    pipeline_type TEXT NOT NULL CHECK (pipeline_type IN ('normal','test')),
    kb_id         INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    dataset_id    INTEGER REFERENCES eval_datasets(id) ON DELETE SET NULL,
    settings      TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
