package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/store"
)

// IngestPut writes a background upload's record (insert or replace).
func (s *DB) IngestPut(ctx context.Context, in store.Ingest) error {
	_, err := s.SQL.ExecContext(ctx, s.q(`INSERT INTO ingests (id, kb_name, owner, status, state, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, state = excluded.state, updated_at = excluded.updated_at`),
		in.ID, in.KB, in.Owner, in.Status, string(in.State), s.tm(in.StartedAt), s.tm(in.UpdatedAt))
	if err != nil {
		return fmt.Errorf("ingest %s: %w", in.ID, err)
	}
	return nil
}

const ingestCols = `id, kb_name, owner, status, state, started_at, updated_at`

func scanIngest(sc rowScanner) (store.Ingest, error) {
	var in store.Ingest
	var state string
	var started, updated scanTime
	err := sc.Scan(&in.ID, &in.KB, &in.Owner, &in.Status, &state, &started, &updated)
	in.State, in.StartedAt, in.UpdatedAt = []byte(state), started.T, updated.T
	return in, err
}

// IngestGet returns a background upload's record.
func (s *DB) IngestGet(ctx context.Context, id string) (*store.Ingest, error) {
	in, err := scanIngest(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+ingestCols+` FROM ingests WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("ingest %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("ingest %s: %w", id, err)
	}
	return &in, nil
}

// IngestRunning lists the uploads recorded as running, oldest first.
func (s *DB) IngestRunning(ctx context.Context) ([]store.Ingest, error) {
	return list(ctx, s.SQL, "ingests running", s.q(`SELECT `+ingestCols+` FROM ingests WHERE status = ? ORDER BY started_at, id`), []any{store.IngestRunning}, scanIngest)
}

// IngestFilePut keeps one file of a background upload.
func (s *DB) IngestFilePut(ctx context.Context, f store.IngestFile) error {
	if _, err := s.SQL.ExecContext(ctx, s.q(`INSERT INTO ingest_files (ingest_id, seq, name, data, created_at) VALUES (?, ?, ?, ?, ?)`),
		f.IngestID, f.Seq, f.Name, f.Data, s.tm(f.CreatedAt)); err != nil {
		return fmt.Errorf("ingest file %s/%d: %w", f.IngestID, f.Seq, err)
	}
	return nil
}

// IngestFiles returns an upload's files in order.
func (s *DB) IngestFiles(ctx context.Context, ingestID string) ([]store.IngestFile, error) {
	return list(ctx, s.SQL, "ingest files "+ingestID, s.q(`SELECT seq, name, data, created_at FROM ingest_files WHERE ingest_id = ? ORDER BY seq`), []any{ingestID}, func(r rowScanner) (store.IngestFile, error) {
		f := store.IngestFile{IngestID: ingestID}
		var at scanTime
		err := r.Scan(&f.Seq, &f.Name, &f.Data, &at)
		f.CreatedAt = at.T
		return f, err
	})
}

// IngestFilesDelete drops an upload's files.
func (s *DB) IngestFilesDelete(ctx context.Context, ingestID string) error {
	if _, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM ingest_files WHERE ingest_id = ?`), ingestID); err != nil {
		return fmt.Errorf("ingest files %s: %w", ingestID, err)
	}
	return nil
}

// IngestFilesPurge drops old files of uploads that are not running.
func (s *DB) IngestFilesPurge(ctx context.Context, before time.Time) (int, error) {
	res, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM ingest_files WHERE created_at < ?
		AND ingest_id NOT IN (SELECT id FROM ingests WHERE status = ?)`), s.tm(before), store.IngestRunning)
	if err != nil {
		return 0, fmt.Errorf("ingest files purge: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
