-- RAG console evaluation runs: a pipeline on a dataset, figures as JSON.
CREATE TABLE eval_runs (
    id            INTEGER PRIMARY KEY,
    pipeline_id   INTEGER REFERENCES pipelines(id) ON DELETE SET NULL,
    pipeline_name TEXT NOT NULL,
    dataset_id    INTEGER REFERENCES eval_datasets(id) ON DELETE SET NULL,
    dataset_name  TEXT NOT NULL,
    k             INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    overall       TEXT NOT NULL,
    questions     TEXT NOT NULL
);
CREATE INDEX eval_runs_pipeline ON eval_runs (pipeline_id, id);
