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

CREATE FUNCTION kb_term_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO kb_term_stats (kb_id, chunks, terms) VALUES (NEW.kb_id, 1, NEW.term_count)
            ON CONFLICT (kb_id) DO UPDATE SET chunks = kb_term_stats.chunks + 1, terms = kb_term_stats.terms + EXCLUDED.terms;
        RETURN NEW;
    END IF;
    UPDATE kb_term_stats SET chunks = chunks - 1, terms = terms - OLD.term_count WHERE kb_id = OLD.kb_id;
    RETURN OLD;
END $$;

CREATE TRIGGER chunks_term_stats AFTER INSERT OR DELETE ON chunks FOR EACH ROW EXECUTE FUNCTION kb_term_stats_add();
