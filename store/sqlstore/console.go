package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/store"
)

// DatasetCreate stores a dataset and its questions in one transaction.
func (s *DB) DatasetCreate(ctx context.Context, d store.Dataset, qs []store.DatasetQuestion) (*store.Dataset, error) {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return nil, fmt.Errorf("dataset create: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO eval_datasets (name, description, kb_id, created_at) VALUES (?, ?, ?, ?) RETURNING id`),
		d.Name, d.Description, d.KBID, s.tm(d.CreatedAt)).Scan(&d.ID)
	if err != nil {
		if s.uniqueErr(err) {
			return nil, fmt.Errorf("dataset %q: %w", d.Name, store.ErrExists)
		}
		return nil, fmt.Errorf("dataset create: %w", err)
	}
	for _, q := range qs {
		golden, err := json.Marshal(q.Golden)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO eval_questions (dataset_id, query_id, text, reference, golden) VALUES (?, ?, ?, ?, ?)`),
			d.ID, q.QueryID, q.Text, q.Reference, string(golden)); err != nil {
			if s.uniqueErr(err) {
				return nil, fmt.Errorf("dataset %q: question %q twice: %w", d.Name, q.QueryID, store.ErrExists)
			}
			return nil, fmt.Errorf("dataset create: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("dataset create: %w", err)
	}
	d.Questions = len(qs)
	return &d, nil
}

const datasetSelect = `SELECT d.id, d.name, d.description, d.kb_id, d.created_at, (SELECT COUNT(*) FROM eval_questions q WHERE q.dataset_id = d.id) FROM eval_datasets d`

func scanDataset(sc rowScanner) (*store.Dataset, error) {
	var d store.Dataset
	var created scanTime
	if err := sc.Scan(&d.ID, &d.Name, &d.Description, &d.KBID, &created, &d.Questions); err != nil {
		return nil, err
	}
	d.CreatedAt = created.T
	return &d, nil
}

// byNameOrID is the WHERE clause for a name, or an id when it is a number.
func byNameOrID(v string) (string, any) {
	if id, err := strconv.ParseInt(v, 10, 64); err == nil {
		return ` WHERE id = ?`, id
	}
	return ` WHERE name = ?`, v
}

// DatasetGet finds a dataset by name or id.
func (s *DB) DatasetGet(ctx context.Context, nameOrID string) (*store.Dataset, error) {
	where, arg := byNameOrID(nameOrID)
	d, err := scanDataset(s.SQL.QueryRowContext(ctx, s.q(datasetSelect+strings.Replace(where, "WHERE ", "WHERE d.", 1)), arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("dataset %q: %w", nameOrID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %q: %w", nameOrID, err)
	}
	return d, nil
}

// DatasetList lists datasets by name.
func (s *DB) DatasetList(ctx context.Context) ([]store.Dataset, error) {
	return list(ctx, s.SQL, "dataset list", datasetSelect+` ORDER BY d.name`, nil, deref(scanDataset))
}

// DatasetQuestions returns a dataset's questions by query id.
func (s *DB) DatasetQuestions(ctx context.Context, id int64) ([]store.DatasetQuestion, error) {
	return list(ctx, s.SQL, "dataset questions", s.q(`SELECT query_id, text, reference, golden FROM eval_questions WHERE dataset_id = ? ORDER BY query_id`), []any{id}, deref(scanQuestion))
}

// DatasetQuestionByText finds a dataset's question by its text.
func (s *DB) DatasetQuestionByText(ctx context.Context, id int64, text string) (*store.DatasetQuestion, error) {
	q, err := scanQuestion(s.SQL.QueryRowContext(ctx, s.q(`SELECT query_id, text, reference, golden FROM eval_questions WHERE dataset_id = ? AND text = ? ORDER BY query_id LIMIT 1`), id, text))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("dataset %d question: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %d question: %w", id, err)
	}
	return q, nil
}

func scanQuestion(sc rowScanner) (*store.DatasetQuestion, error) {
	var q store.DatasetQuestion
	var golden string
	if err := sc.Scan(&q.QueryID, &q.Text, &q.Reference, &golden); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(golden), &q.Golden); err != nil {
		return nil, fmt.Errorf("question %q: golden: %w", q.QueryID, err)
	}
	return &q, nil
}

// DatasetDelete removes a dataset; its pipelines keep going without one.
func (s *DB) DatasetDelete(ctx context.Context, id int64) error {
	return s.deleteRow(ctx, `DELETE FROM eval_datasets WHERE id = ?`, "dataset", id)
}

func (s *DB) deleteRow(ctx context.Context, query, what string, id int64) error {
	res, err := s.SQL.ExecContext(ctx, s.q(query), id)
	if err != nil {
		return fmt.Errorf("%s %d: %w", what, id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s %d: %w", what, id, err)
	} else if n == 0 {
		return fmt.Errorf("%s %d: %w", what, id, store.ErrNotFound)
	}
	return nil
}

// pipelineSelect reads pipelines with their knowledge base's and
// dataset's names.
const pipelineSelect = `SELECT p.id, p.name, p.pipeline_type, p.kb_id, p.dataset_id, p.settings, p.created_at, p.updated_at, k.name, COALESCE(d.name, '')
	FROM pipelines p JOIN knowledge_bases k ON k.id = p.kb_id LEFT JOIN eval_datasets d ON d.id = p.dataset_id`

func scanPipeline(sc rowScanner) (*store.Pipeline, error) {
	var p store.Pipeline
	var ds sql.NullInt64
	var settings string
	var created, updated scanTime
	if err := sc.Scan(&p.ID, &p.Name, &p.Type, &p.KBID, &ds, &settings, &created, &updated, &p.KBName, &p.DatasetName); err != nil {
		return nil, err
	}
	if ds.Valid {
		p.DatasetID = &ds.Int64
	}
	p.Settings, p.CreatedAt, p.UpdatedAt = []byte(settings), created.T, updated.T
	return &p, nil
}

// PipelineCreate stores a pipeline.
func (s *DB) PipelineCreate(ctx context.Context, p store.Pipeline) (*store.Pipeline, error) {
	err := s.SQL.QueryRowContext(ctx, s.q(`INSERT INTO pipelines (name, pipeline_type, kb_id, dataset_id, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		p.Name, p.Type, p.KBID, p.DatasetID, string(p.Settings), s.tm(p.CreatedAt), s.tm(p.UpdatedAt)).Scan(&p.ID)
	if err != nil {
		if s.uniqueErr(err) {
			return nil, fmt.Errorf("pipeline %q: %w", p.Name, store.ErrExists)
		}
		return nil, fmt.Errorf("pipeline create: %w", err)
	}
	return &p, nil
}

// PipelineGet finds a pipeline by name or id.
func (s *DB) PipelineGet(ctx context.Context, nameOrID string) (*store.Pipeline, error) {
	where, arg := byNameOrID(nameOrID)
	p, err := scanPipeline(s.SQL.QueryRowContext(ctx, s.q(pipelineSelect+strings.Replace(where, "WHERE ", "WHERE p.", 1)), arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("pipeline %q: %w", nameOrID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: %w", nameOrID, err)
	}
	return p, nil
}

// PipelineList lists pipelines by name, filtered.
func (s *DB) PipelineList(ctx context.Context, f store.PipelineFilter) ([]store.Pipeline, error) {
	query := pipelineSelect + ` WHERE 1 = 1`
	var args []any
	if f.DatasetID != nil {
		query, args = query+` AND p.dataset_id = ?`, append(args, *f.DatasetID)
	}
	if f.Type != "" {
		query, args = query+` AND p.pipeline_type = ?`, append(args, f.Type)
	}
	return list(ctx, s.SQL, "pipeline list", s.q(query+` ORDER BY p.name`), args, deref(scanPipeline))
}

// PipelineUpdate rewrites a pipeline's fields.
func (s *DB) PipelineUpdate(ctx context.Context, p store.Pipeline) error {
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE pipelines SET name = ?, pipeline_type = ?, kb_id = ?, dataset_id = ?, settings = ?, updated_at = ? WHERE id = ?`),
		p.Name, p.Type, p.KBID, p.DatasetID, string(p.Settings), s.tm(p.UpdatedAt), p.ID)
	if err != nil {
		if s.uniqueErr(err) {
			return fmt.Errorf("pipeline %q: %w", p.Name, store.ErrExists)
		}
		return fmt.Errorf("pipeline update: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("pipeline update: %w", err)
	} else if n == 0 {
		return fmt.Errorf("pipeline %d: %w", p.ID, store.ErrNotFound)
	}
	return nil
}

// PipelineDelete removes a pipeline.
func (s *DB) PipelineDelete(ctx context.Context, id int64) error {
	return s.deleteRow(ctx, `DELETE FROM pipelines WHERE id = ?`, "pipeline", id)
}

// EvalRunCreate stores an evaluation run.
func (s *DB) EvalRunCreate(ctx context.Context, r store.EvalRun) (*store.EvalRun, error) {
	err := s.SQL.QueryRowContext(ctx, s.q(`INSERT INTO eval_runs (pipeline_id, pipeline_name, dataset_id, dataset_name, k, created_at, overall, questions) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		r.PipelineID, r.PipelineName, r.DatasetID, r.DatasetName, r.K, s.tm(r.CreatedAt), string(r.Overall), string(r.Questions)).Scan(&r.ID)
	if err != nil {
		return nil, fmt.Errorf("eval run create: %w", err)
	}
	return &r, nil
}

func scanEvalRun(sc rowScanner, withQuestions bool) (*store.EvalRun, error) {
	var r store.EvalRun
	var pid, did sql.NullInt64
	var created scanTime
	var overall, questions string
	dest := []any{&r.ID, &pid, &r.PipelineName, &did, &r.DatasetName, &r.K, &created, &overall}
	if withQuestions {
		dest = append(dest, &questions)
	}
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	if pid.Valid {
		r.PipelineID = &pid.Int64
	}
	if did.Valid {
		r.DatasetID = &did.Int64
	}
	r.CreatedAt, r.Overall = created.T, []byte(overall)
	if withQuestions {
		r.Questions = []byte(questions)
	}
	return &r, nil
}

const evalRunColumns = `id, pipeline_id, pipeline_name, dataset_id, dataset_name, k, created_at, overall`

// EvalRunGet returns a run with its questions.
func (s *DB) EvalRunGet(ctx context.Context, id int64) (*store.EvalRun, error) {
	r, err := scanEvalRun(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+evalRunColumns+`, questions FROM eval_runs WHERE id = ?`), id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("eval run %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("eval run %d: %w", id, err)
	}
	return r, nil
}

// EvalRunList lists runs newest first, without their questions.
func (s *DB) EvalRunList(ctx context.Context, pipelineID *int64, limit int) ([]store.EvalRun, error) {
	query, args := `SELECT `+evalRunColumns+` FROM eval_runs`, []any{}
	if pipelineID != nil {
		query, args = query+` WHERE pipeline_id = ?`, append(args, *pipelineID)
	}
	return list(ctx, s.SQL, "eval run list", s.q(query+` ORDER BY id DESC LIMIT ?`), append(args, limit), func(r rowScanner) (store.EvalRun, error) {
		run, err := scanEvalRun(r, false)
		if err != nil {
			return store.EvalRun{}, err
		}
		return *run, nil
	})
}
