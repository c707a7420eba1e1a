-- A knowledge base's first ingest counts its terms' document frequencies
-- once, at its end, instead of at each batch: kb_term_df_insert upserted
-- some 30 rows a chunk (7,449 for a batch of 251 generated chunks, 80 ms),
-- about two fifths of the database's work while the chunks are written
-- (43% of its samples), where counting
-- every chunk of the knowledge base afterwards takes 2-4 s per 100,000.
-- While a knowledge base is here its inserts leave kb_term_df alone and
-- its searches count each query term's chunks instead (search.go,
-- termIDFs); the ingest that put it here removes it and counts (postgres.go,
-- settleTermDF), as does the next ingest into it when that one failed.
--
-- An insert or a delete of chunks takes a share lock on the knowledge
-- base's row here for the rest of its transaction, and the count removes
-- the row first, so it waits for every write that left kb_term_df alone
-- to commit and counts what they left; a write after the removal waits
-- for the count to commit and then updates the counts as before. Both
-- take the row here before any of kb_term_df's.
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

CREATE OR REPLACE FUNCTION kb_term_df_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pending BIGINT[];
BEGIN
    pending := ARRAY(SELECT p.kb_id FROM kb_term_df_pending p
        WHERE p.kb_id IN (SELECT DISTINCT o.kb_id FROM old_rows o) ORDER BY p.kb_id FOR SHARE);
    UPDATE kb_term_df k SET df = k.df - d.df
        FROM (SELECT o.kb_id, t.term, count(*) AS df FROM old_rows o, unnest(tsvector_to_array(o.terms_tsv)) AS t(term)
              WHERE o.kb_id <> ALL (pending)
              GROUP BY o.kb_id, t.term ORDER BY o.kb_id, t.term) d
        WHERE k.kb_id = d.kb_id AND k.term = d.term;
    RETURN NULL;
END $$;
