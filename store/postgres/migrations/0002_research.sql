CREATE TABLE researches (
    id         TEXT PRIMARY KEY,
    question   TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('pending','processing','completed','failed')),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    state      TEXT NOT NULL
);
CREATE INDEX researches_created ON researches(created_at);

CREATE TABLE research_events (
    research_id TEXT NOT NULL REFERENCES researches(id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL,
    type        TEXT NOT NULL,
    at          TIMESTAMPTZ NOT NULL,
    data        TEXT NOT NULL,
    PRIMARY KEY (research_id, seq)
);
