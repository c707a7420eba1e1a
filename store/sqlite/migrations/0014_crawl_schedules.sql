-- A knowledge base's re-crawl schedule (every 5 minutes). Any
-- process running jobs reads the due ones; next_at moves by compare-and-set,
-- so each due run is queued once.
CREATE TABLE crawl_schedules (
    kb_id       INTEGER PRIMARY KEY REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    every_ms    INTEGER NOT NULL CHECK (every_ms >= 1000),
    options     TEXT NOT NULL DEFAULT '{}',
    enabled     INTEGER NOT NULL DEFAULT 1,
    next_at     TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX crawl_schedules_due ON crawl_schedules (next_at) WHERE enabled = 1;
