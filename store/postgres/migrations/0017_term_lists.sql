-- Impact-ordered lists of each knowledge base's common terms, so a BM25
-- search in the database reads the few chunks that can make its top K
-- instead of every chunk holding a common term (see termlists.go).
--
-- kb_term_list_builds: the last build of a knowledge base's lists, with
-- the chunk count, mean chunk length and BM25 parameters its impacts were
-- computed with, the length of its lists (terms in more chunks than that
-- have a list), and the chunks written since.
CREATE TABLE kb_term_list_builds (
    kb_id    BIGINT PRIMARY KEY REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    chunks   BIGINT           NOT NULL,
    avg_len  DOUBLE PRECISION NOT NULL,
    k1       DOUBLE PRECISION NOT NULL,
    b        DOUBLE PRECISION NOT NULL,
    list_len INTEGER          NOT NULL,
    written  BIGINT           NOT NULL DEFAULT 0
);

-- kb_term_lists: a common term's chunks of greatest impact (BM25's term
-- frequency part) at the build, and floor, which no other chunk written
-- before the build exceeds (impacts and floors rounded up to float4).
CREATE TABLE kb_term_lists (
    kb_id   BIGINT   NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    term    TEXT     NOT NULL,
    floor   REAL     NOT NULL,
    chunks  BIGINT[] NOT NULL,
    impacts REAL[]   NOT NULL,
    PRIMARY KEY (kb_id, term)
);

-- kb_term_list_adds: chunks written since the build whose impact for a
-- listed term exceeds its floor (until the next build merges them).
CREATE TABLE kb_term_list_adds (
    kb_id    BIGINT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    term     TEXT   NOT NULL,
    chunk_id BIGINT NOT NULL,
    impact   REAL   NOT NULL
);
CREATE INDEX kb_term_list_adds_term ON kb_term_list_adds (kb_id, term);
