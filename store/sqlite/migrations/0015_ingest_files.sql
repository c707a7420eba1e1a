-- A background upload's files, kept until the job that ingests them is
-- done: any worker, on any machine sharing the store, can ingest them, and
-- a restart loses none.
CREATE TABLE ingest_files (
    ingest_id  TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    name       TEXT NOT NULL,
    data       BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (ingest_id, seq)
);
