-- Each knowledge base's document frequency per term (the chunks holding
-- it), kept by statement-level triggers like kb_term_stats, so a search in
-- the database reads a term's idf in one index probe instead of counting
-- its chunks. Terms are upserted in order, so two transactions writing the
-- same knowledge base take the rows' locks in the same order and never
-- deadlock on them.
CREATE TABLE kb_term_df (
    kb_id BIGINT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    term  TEXT   NOT NULL,
    df    BIGINT NOT NULL,
    PRIMARY KEY (kb_id, term)
);

INSERT INTO kb_term_df (kb_id, term, df)
    SELECT c.kb_id, t.term, count(*) FROM chunks c, unnest(tsvector_to_array(c.terms_tsv)) AS t(term) GROUP BY c.kb_id, t.term;

CREATE FUNCTION kb_term_df_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO kb_term_df (kb_id, term, df)
        SELECT n.kb_id, t.term, count(*) FROM new_rows n, unnest(tsvector_to_array(n.terms_tsv)) AS t(term)
        GROUP BY n.kb_id, t.term ORDER BY n.kb_id, t.term
        ON CONFLICT (kb_id, term) DO UPDATE SET df = kb_term_df.df + EXCLUDED.df;
    RETURN NULL;
END $$;

CREATE FUNCTION kb_term_df_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE kb_term_df k SET df = k.df - d.df
        FROM (SELECT o.kb_id, t.term, count(*) AS df FROM old_rows o, unnest(tsvector_to_array(o.terms_tsv)) AS t(term)
              GROUP BY o.kb_id, t.term ORDER BY o.kb_id, t.term) d
        WHERE k.kb_id = d.kb_id AND k.term = d.term;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_term_df_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION kb_term_df_insert();
CREATE TRIGGER chunks_term_df_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION kb_term_df_delete();
