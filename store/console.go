package store

import (
	"context"
	"time"
)

// Dataset is an evaluation dataset: questions with their
// golden chunks, over one knowledge base.
type Dataset struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	KBID        int64     `json:"kb_id"`
	Questions   int       `json:"questions"`
	CreatedAt   time.Time `json:"created_at"`
}

// GoldenRef points at a golden chunk by its document and position, which
// survive a re-ingest (row ids do not). ChunkIndex -1 is every chunk of
// the document (a document-level judgement, as BEIR's qrels are).
type GoldenRef struct {
	DocID      string `json:"doc_id"`
	ChunkIndex int    `json:"chunk_index"`
}

// DatasetQuestion is one question of a dataset.
type DatasetQuestion struct {
	QueryID   string      `json:"query_id"`
	Text      string      `json:"text"`
	Reference string      `json:"reference,omitempty"`
	Golden    []GoldenRef `json:"golden"`
}

// Pipeline is a retrieval configuration over a knowledge base:
// type normal or test (a test pipeline marks golden chunks), an optional
// dataset, and its settings as JSON.
type Pipeline struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Type      string    `json:"pipeline_type"`
	KBID      int64     `json:"kb_id"`
	DatasetID *int64    `json:"dataset_id,omitempty"`
	Settings  []byte    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// KBName and DatasetName are read with the pipeline (not written).
	KBName      string `json:"-"`
	DatasetName string `json:"-"`
}

// PipelineFilter selects pipelines.
type PipelineFilter struct {
	DatasetID *int64
	Type      string
}

// ConsoleStore persists the RAG console's datasets and pipelines.
type ConsoleStore interface {
	// DatasetCreate stores a dataset and its questions in one
	// transaction; ErrExists for a taken name.
	DatasetCreate(ctx context.Context, d Dataset, qs []DatasetQuestion) (*Dataset, error)
	// DatasetGet finds a dataset by name or, when name is a number, id.
	DatasetGet(ctx context.Context, nameOrID string) (*Dataset, error)
	DatasetList(ctx context.Context) ([]Dataset, error)
	DatasetQuestions(ctx context.Context, id int64) ([]DatasetQuestion, error)
	// DatasetQuestionByText finds the question of a dataset with this
	// text; ErrNotFound if none.
	DatasetQuestionByText(ctx context.Context, id int64, text string) (*DatasetQuestion, error)
	DatasetDelete(ctx context.Context, id int64) error

	PipelineCreate(ctx context.Context, p Pipeline) (*Pipeline, error)
	// PipelineGet finds a pipeline by name or, when name is a number, id.
	PipelineGet(ctx context.Context, nameOrID string) (*Pipeline, error)
	PipelineList(ctx context.Context, f PipelineFilter) ([]Pipeline, error)
	PipelineUpdate(ctx context.Context, p Pipeline) error
	PipelineDelete(ctx context.Context, id int64) error
}

// EvalRun is one evaluation of a pipeline on a dataset, with its overall
// and per-question figures as JSON. The pipeline's and dataset's names
// are kept with it, so a run outlives them.
type EvalRun struct {
	ID           int64     `json:"id"`
	PipelineID   *int64    `json:"pipeline_id,omitempty"`
	PipelineName string    `json:"pipeline"`
	DatasetID    *int64    `json:"dataset_id,omitempty"`
	DatasetName  string    `json:"dataset"`
	K            int       `json:"k"`
	CreatedAt    time.Time `json:"created_at"`
	Overall      []byte    `json:"-"`
	Questions    []byte    `json:"-"`
}

// EvalRunStore persists evaluation runs.
type EvalRunStore interface {
	EvalRunCreate(ctx context.Context, r EvalRun) (*EvalRun, error)
	// EvalRunGet returns a run with its questions.
	EvalRunGet(ctx context.Context, id int64) (*EvalRun, error)
	// EvalRunList lists runs newest first, without their questions; a
	// pipeline id selects its runs.
	EvalRunList(ctx context.Context, pipelineID *int64, limit int) ([]EvalRun, error)
}
