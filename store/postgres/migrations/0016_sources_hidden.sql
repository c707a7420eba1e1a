-- The sources whose chunks searches leave out: being written (a long
-- document appended in pieces has no content hash until its last piece)
-- or stale. A search in the database reads them in one probe and drops
-- their chunks itself, instead of joining every chunk it reads to its
-- source.
CREATE INDEX sources_hidden ON sources (kb_id) WHERE content_hash = '' OR is_stale;
