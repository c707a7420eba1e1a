-- Full-text index of every chunk's analysed terms (the words Quarry's own
-- analyser produced: stems, Korean bigrams), so a one-shot process ranks a
-- knowledge base by BM25 in SQLite (FTS5) instead of loading it. A row's
-- text is its knowledge base's token (_kb<id>: an analysed term never holds '_') and its terms; the index keeps
-- no copy of them (contentless), and triggers keep it in step with chunks.
CREATE VIRTUAL TABLE chunk_fts USING fts5(
    terms,
    content = '',
    contentless_delete = 1,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '''_'"
);

INSERT INTO chunk_fts (rowid, terms) SELECT id, '_kb' || kb_id || ' ' || terms FROM chunks;

CREATE TRIGGER chunk_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunk_fts (rowid, terms) VALUES (new.id, '_kb' || new.kb_id || ' ' || new.terms);
END;

CREATE TRIGGER chunk_fts_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_fts WHERE rowid = old.id;
END;

CREATE TRIGGER chunk_fts_update AFTER UPDATE OF terms, kb_id ON chunks BEGIN
    DELETE FROM chunk_fts WHERE rowid = old.id;
    INSERT INTO chunk_fts (rowid, terms) VALUES (new.id, '_kb' || new.kb_id || ' ' || new.terms);
END;

-- Each knowledge base's chunk and term counts, for BM25's document-length
-- normalisation; kept by the same triggers. A chunk's term count is its
-- spaces plus one (terms are single-space separated).
CREATE TABLE kb_term_stats (
    kb_id  INTEGER PRIMARY KEY,
    chunks INTEGER NOT NULL DEFAULT 0,
    terms  INTEGER NOT NULL DEFAULT 0
);

INSERT INTO kb_term_stats (kb_id, chunks, terms)
    SELECT kb_id, count(*), sum(length(terms) - length(replace(terms, ' ', '')) + (terms <> '')) FROM chunks GROUP BY kb_id;

CREATE TRIGGER kb_term_stats_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO kb_term_stats (kb_id, chunks, terms)
        VALUES (new.kb_id, 1, length(new.terms) - length(replace(new.terms, ' ', '')) + (new.terms <> ''))
        ON CONFLICT (kb_id) DO UPDATE SET chunks = chunks + 1, terms = terms + excluded.terms;
END;

CREATE TRIGGER kb_term_stats_delete AFTER DELETE ON chunks BEGIN
    UPDATE kb_term_stats SET chunks = chunks - 1,
        terms = terms - (length(old.terms) - length(replace(old.terms, ' ', '')) + (old.terms <> ''))
        WHERE kb_id = old.kb_id;
END;
