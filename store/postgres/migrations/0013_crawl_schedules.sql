-- A knowledge base's re-crawl schedule (every 5 minutes). Any
-- process running jobs reads the due ones; next_at moves by compare-and-set,
-- so each due run is queued once.
CREATE TABLE crawl_schedules (
    kb_id       BIGINT PRIMARY KEY REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    every_ms    BIGINT NOT NULL CHECK (every_ms >= 1000),
    options     JSONB NOT NULL DEFAULT '{}',
    enabled     BOOLEAN NOT NULL DEFAULT TRUE,
    next_at     TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX crawl_schedules_due ON crawl_schedules (next_at) WHERE enabled;
