package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ThreadCreate stores a new thread.
func (s *DB) ThreadCreate(ctx context.Context, t store.Thread) error {
	_, err := s.SQL.ExecContext(ctx, s.q(`INSERT INTO threads (id, title, status, created_at, last_activity) VALUES (?, ?, ?, ?, ?)`),
		t.ID, t.Title, t.Status, s.tm(t.CreatedAt), s.tm(t.LastActivity))
	if err != nil {
		if s.uniqueErr(err) {
			return fmt.Errorf("thread %q: %w", t.ID, store.ErrExists)
		}
		return fmt.Errorf("thread create: %w", err)
	}
	return nil
}

const threadCols = `id, title, status, created_at, last_activity`

func scanThread(sc rowScanner) (store.Thread, error) {
	var t store.Thread
	var created, active scanTime
	err := sc.Scan(&t.ID, &t.Title, &t.Status, &created, &active)
	t.CreatedAt, t.LastActivity = created.T, active.T
	return t, err
}

// ThreadGet returns a thread.
func (s *DB) ThreadGet(ctx context.Context, id string) (*store.Thread, error) {
	t, err := scanThread(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+threadCols+` FROM threads WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("thread %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", id, err)
	}
	return &t, nil
}

// ThreadList returns threads, most recently active first.
func (s *DB) ThreadList(ctx context.Context, limit int) ([]store.Thread, error) {
	if limit <= 0 {
		limit = 50
	}
	return list(ctx, s.SQL, "thread list", s.q(`SELECT `+threadCols+` FROM threads ORDER BY last_activity DESC, id LIMIT ?`), []any{limit}, scanThread)
}

// ThreadTouch records activity.
func (s *DB) ThreadTouch(ctx context.Context, id string, at time.Time) error {
	return s.threadUpdate(ctx, id, `UPDATE threads SET last_activity = ? WHERE id = ?`, s.tm(at), id)
}

// ThreadClose closes a thread.
func (s *DB) ThreadClose(ctx context.Context, id string) error {
	return s.threadUpdate(ctx, id, `UPDATE threads SET status = 'closed' WHERE id = ?`, id)
}

func (s *DB) threadUpdate(ctx context.Context, id, query string, args ...any) error {
	res, err := s.SQL.ExecContext(ctx, s.q(query), args...)
	if err != nil {
		return fmt.Errorf("thread %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("thread %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("thread %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// ThreadResearches returns a thread's researches, oldest first.
func (s *DB) ThreadResearches(ctx context.Context, id string) ([]store.Research, error) {
	return s.researchRows(ctx, `SELECT id, question, status, created_at, updated_at, thread_id FROM researches WHERE thread_id = ? ORDER BY created_at, id`, id)
}
