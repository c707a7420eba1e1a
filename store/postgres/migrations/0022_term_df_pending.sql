-- A knowledge base's first ingest counts its terms' document frequencies
-- once, at its end, instead of at each batch: kb_term_df_insert upserted
-- some 30 rows a chunk (7,449 for a batch of 251 generated chunks, 80 ms),
-- about two fifths of the database's work in an ingest, where counting
-- every chunk of the knowledge base afterwards takes 2-4 s per 100,000.
-- While a knowledge base is here its inserts leave kb_term_df alone and
-- its searches count each query term's chunks instead (search.go,
-- termIDFs); the ingest that put it here removes it and counts (postgres.go,
-- settleTermDF), as does the next ingest into it when that one failed.
--
-- An insert takes a share lock on the knowledge base's row here for the
-- rest of its transaction, and the count removes the row first, so it
-- waits for every insert that left kb_term_df alone to commit and counts
-- their chunks; an insert after the removal waits for the count to commit
-- and then upserts its own terms as before.
CREATE TABLE kb_term_df_pending (
    kb_id BIGINT PRIMARY KEY REFERENCES knowledge_bases(id) ON DELETE CASCADE
);

CREATE OR REPLACE FUNCTION kb_term_df_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pending BIGINT[];
BEGIN
    pending := ARRAY(SELECT p.kb_id FROM kb_term_df_pending p
        WHERE p.kb_id IN (SELECT DISTINCT n.kb_id FROM new_rows n) ORDER BY p.kb_id FOR SHARE);
    INSERT INTO kb_term_df (kb_id, term, df)
        SELECT n.kb_id, t.term, count(*) FROM new_rows n, unnest(tsvector_to_array(n.terms_tsv)) AS t(term)
        WHERE n.kb_id <> ALL (pending)
        GROUP BY n.kb_id, t.term ORDER BY n.kb_id, t.term
        ON CONFLICT (kb_id, term) DO UPDATE SET df = kb_term_df.df + EXCLUDED.df;
    RETURN NULL;
END $$;
