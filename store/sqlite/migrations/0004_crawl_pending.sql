-- Pages a crawl found but could not fetch yet: kept on the frontier of
-- later runs (a page linked only from unchanged pages is otherwise never
-- asked again) until one succeeds or it failed too many runs in a row.
CREATE TABLE crawl_pending (
    kb_id      INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    url        TEXT NOT NULL,
    depth      INTEGER NOT NULL,
    fail_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kb_id, url)
);
