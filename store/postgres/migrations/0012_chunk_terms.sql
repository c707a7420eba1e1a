-- Search in the database: each chunk's analysed terms (Quarry's own:
-- stems, Korean bigrams) as a tsvector, GIN-indexed, with its term count,
-- and each knowledge base's chunk and term counts kept by triggers, so
-- BM25 (Lucene's idf over the knowledge base) is computed in SQL and a
-- process searches without loading a knowledge base.
ALTER TABLE chunks ADD COLUMN terms_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', terms)) STORED;
ALTER TABLE chunks ADD COLUMN term_count INTEGER GENERATED ALWAYS AS (length(terms) - length(replace(terms, ' ', '')) + (terms <> '')::int) STORED;
CREATE INDEX chunks_terms ON chunks USING gin (terms_tsv);

CREATE TABLE kb_term_stats (
    kb_id  BIGINT PRIMARY KEY REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    chunks BIGINT NOT NULL DEFAULT 0,
    terms  BIGINT NOT NULL DEFAULT 0
);

INSERT INTO kb_term_stats (kb_id, chunks, terms) SELECT kb_id, count(*), sum(term_count) FROM chunks GROUP BY kb_id;

-- Statement-level: one update of a knowledge base's counts per statement
-- (a batch of chunks), not one per row.
CREATE FUNCTION kb_term_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO kb_term_stats (kb_id, chunks, terms)
        SELECT kb_id, count(*), sum(term_count) FROM new_rows GROUP BY kb_id
        ON CONFLICT (kb_id) DO UPDATE SET chunks = kb_term_stats.chunks + EXCLUDED.chunks, terms = kb_term_stats.terms + EXCLUDED.terms;
    RETURN NULL;
END $$;

CREATE FUNCTION kb_term_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE kb_term_stats k SET chunks = k.chunks - d.chunks, terms = k.terms - d.terms
        FROM (SELECT kb_id, count(*) AS chunks, sum(term_count) AS terms FROM old_rows GROUP BY kb_id) d
        WHERE k.kb_id = d.kb_id;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_term_stats_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION kb_term_stats_insert();
CREATE TRIGGER chunks_term_stats_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION kb_term_stats_delete();
