-- A term list's entries as one binary string, 12 bytes an entry (the
-- chunk's id as int8, then its impact as float4, both big-endian, highest
-- impact first), in place of two arrays: a search through the lists reads
-- each common term's list, and a thousand-entry array went to Quarry as
-- text and was parsed element by element (at 1M generated chunks, 5 ms of
-- a 40 ms search).
ALTER TABLE kb_term_lists ADD COLUMN entries BYTEA;
UPDATE kb_term_lists SET entries = coalesce(
    (SELECT string_agg(int8send(u.c) || float4send(u.i), ''::bytea ORDER BY u.o)
     FROM unnest(chunks, impacts) WITH ORDINALITY AS u(c, i, o)), ''::bytea);
ALTER TABLE kb_term_lists ALTER COLUMN entries SET NOT NULL;
ALTER TABLE kb_term_lists DROP COLUMN chunks, DROP COLUMN impacts;
