-- Each chunk's vector quantised to a byte a component (store.Code), in a
-- narrow table of its own: a one-shot vector search scans these (388
-- bytes a chunk at 384 dimensions) instead of every chunk's row, and
-- compares the embeddings of the best candidates only. Written with the chunk; the codes of
-- chunks written before are filled in once, by the process that opens
-- the database first (pending_backfill).
CREATE TABLE chunk_codes (
    kb_id    INTEGER NOT NULL,
    chunk_id INTEGER NOT NULL,
    code     BLOB NOT NULL,
    PRIMARY KEY (kb_id, chunk_id)
) WITHOUT ROWID;

CREATE TRIGGER chunk_codes_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_codes WHERE kb_id = old.kb_id AND chunk_id = old.id;
END;

CREATE TABLE pending_backfill (name TEXT PRIMARY KEY);
INSERT INTO pending_backfill (name) SELECT 'chunk_codes' WHERE EXISTS (SELECT 1 FROM chunks);
