-- An index of a knowledge base's sources by URL compared byte by byte
-- (text_pattern_ops), whatever the database's collation, holding their
-- ids (read from the index alone): a search filtered to a source prefix
-- finds the sources under it first, and one that no source is under
-- reads nothing (at 1,001,803 generated chunks a BM25 search with a
-- prefix no source had read for 9-11 s, a hybrid one 10-11 s).
CREATE INDEX sources_url_bytes ON sources (kb_id, url text_pattern_ops) INCLUDE (id);
