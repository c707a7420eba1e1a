-- When a knowledge base's exact vector ranking (it has no HNSW index yet:
-- its first ingest is being written or built) last took longer than a
-- search waits for it (postgres.go, exactVectorBudget): every process's
-- searches of it — another replica's, a one-shot command's — fail at once
-- for exactRetry after, instead of each waiting its budget again.
CREATE TABLE kb_exact_slow (
    kb_id BIGINT PRIMARY KEY REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    at    TIMESTAMPTZ NOT NULL
);
