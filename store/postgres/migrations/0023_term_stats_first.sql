-- A chunk statement's triggers fire in the order of their names, and each
-- holds the rows it updates until its transaction ends: the knowledge
-- base's counts per language (0020), its terms' document frequencies
-- (0015), then its one row of term statistics (0012). Two transactions
-- writing chunks of one knowledge base at once (a first ingest writes two
-- batches at once; two processes may ingest into it) could each hold a
-- row the other's next statement needed: a batch of more chunks than one
-- INSERT writes, English then Korean, beside one Korean then English,
-- and PostgreSQL failed one with a deadlock. Renamed, the term statistics'
-- triggers fire first: a transaction takes the knowledge base's one row
-- before any other, and a second waits there, holding none of them, until
-- the first commits. The chunks themselves and their indexes are still
-- written side by side.
ALTER TRIGGER chunks_term_stats_insert ON chunks RENAME TO chunks_0_term_stats_insert;
ALTER TRIGGER chunks_term_stats_delete ON chunks RENAME TO chunks_0_term_stats_delete;
