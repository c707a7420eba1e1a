package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ResearchSave upserts a research and appends its new events in one
// transaction.
func (s *DB) ResearchSave(ctx context.Context, r store.Research, events []store.ResearchEvent) error {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return fmt.Errorf("research save %s: %w", r.ID, err)
	}
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, s.q(`INSERT INTO researches (id, question, status, created_at, updated_at, state, thread_id) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET question = excluded.question, status = excluded.status, updated_at = excluded.updated_at, state = excluded.state, thread_id = excluded.thread_id`),
		r.ID, r.Question, r.Status, s.tm(r.CreatedAt), s.tm(r.UpdatedAt), string(r.State), r.ThreadID)
	if err != nil {
		return fmt.Errorf("research save %s: %w", r.ID, err)
	}
	if err := s.insertEvents(ctx, tx, r.ID, events); err != nil {
		return fmt.Errorf("research save %s: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("research save %s: %w", r.ID, err)
	}
	return nil
}

// ResearchGet returns a research with its state.
func (s *DB) ResearchGet(ctx context.Context, id string) (*store.Research, error) {
	var r store.Research
	var created, updated scanTime
	var state string
	err := s.SQL.QueryRowContext(ctx, s.q(`SELECT id, question, status, created_at, updated_at, state, thread_id FROM researches WHERE id = ?`), id).
		Scan(&r.ID, &r.Question, &r.Status, &created, &updated, &state, &r.ThreadID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("research %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("research get %q: %w", id, err)
	}
	r.CreatedAt, r.UpdatedAt, r.State = created.T, updated.T, []byte(state)
	return &r, nil
}

// ResearchList returns the newest researches first, without state.
func (s *DB) ResearchList(ctx context.Context, limit int) ([]store.Research, error) {
	if limit <= 0 {
		limit = 50
	}
	return s.researchRows(ctx, `SELECT id, question, status, created_at, updated_at, thread_id FROM researches ORDER BY created_at DESC, id LIMIT ?`, limit)
}

// ResearchPage returns a page of researches, newest first, filtered by
// status and thread.
func (s *DB) ResearchPage(ctx context.Context, f store.ResearchFilter) ([]store.Research, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	var where []string
	var args []any
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.ThreadID != "" {
		where, args = append(where, "thread_id = ?"), append(args, f.ThreadID)
	}
	if c := f.Before; c != nil {
		at := s.tm(c.CreatedAt)
		where, args = append(where, "(created_at < ? OR (created_at = ? AND id > ?))"), append(args, at, at, c.ID)
	}
	query := `SELECT id, question, status, created_at, updated_at, thread_id FROM researches`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	return s.researchRows(ctx, query+` ORDER BY created_at DESC, id LIMIT ?`, append(args, f.Limit)...)
}

// ResearchCounts counts researches by status.
func (s *DB) ResearchCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.SQL.QueryContext(ctx, `SELECT status, COUNT(*) FROM researches GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("research counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("research counts: %w", err)
		}
		out[st] = n
	}
	return out, rows.Err()
}

func (s *DB) researchRows(ctx context.Context, query string, args ...any) ([]store.Research, error) {
	return list(ctx, s.SQL, "research list", s.q(query), args, func(sc rowScanner) (store.Research, error) {
		var r store.Research
		var created, updated scanTime
		err := sc.Scan(&r.ID, &r.Question, &r.Status, &created, &updated, &r.ThreadID)
		r.CreatedAt, r.UpdatedAt = created.T, updated.T
		return r, err
	})
}

// ResearchEvents returns a research's events after seq.
func (s *DB) ResearchEvents(ctx context.Context, id string, afterSeq int64) ([]store.ResearchEvent, error) {
	return list(ctx, s.SQL, fmt.Sprintf("research events %q", id), s.q(`SELECT seq, type, at, data FROM research_events WHERE research_id = ? AND seq > ? ORDER BY seq`), []any{id, afterSeq}, func(r rowScanner) (store.ResearchEvent, error) {
		var e store.ResearchEvent
		var at scanTime
		var data string
		err := r.Scan(&e.Seq, &e.Type, &at, &data)
		e.At, e.Data = at.T, []byte(data)
		return e, err
	})
}

// ResearchClaim takes or extends a research's lease.
func (s *DB) ResearchClaim(ctx context.Context, id, owner string, now, until time.Time) error {
	if owner == "" {
		return &store.ValidationError{Field: "owner", Rule: "must not be empty"}
	}
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE researches SET lease_owner = ?, lease_until = ?
		WHERE id = ? AND (lease_until IS NULL OR lease_until < ? OR lease_owner = ?)`), owner, s.tm(until), id, s.tm(now), owner)
	if err != nil {
		return fmt.Errorf("research claim %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("research claim %q: %w", id, err)
	}
	if n > 0 {
		return nil
	}
	var holder string
	var held scanTime
	err = s.SQL.QueryRowContext(ctx, s.q(`SELECT lease_owner, lease_until FROM researches WHERE id = ?`), id).Scan(&holder, &held)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("research %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("research claim %q: %w", id, err)
	}
	return &store.LeaseError{ID: id, Owner: holder, Until: held.T}
}

// ResearchRelease gives up owner's lease.
func (s *DB) ResearchRelease(ctx context.Context, id, owner string) error {
	if _, err := s.SQL.ExecContext(ctx, s.q(`UPDATE researches SET lease_owner = '', lease_until = NULL WHERE id = ? AND lease_owner = ?`), id, owner); err != nil {
		return fmt.Errorf("research release %q: %w", id, err)
	}
	return nil
}

func (s *DB) insertEvents(ctx context.Context, tx *sql.Tx, id string, events []store.ResearchEvent) error {
	for _, e := range events {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO research_events (research_id, seq, type, at, data) VALUES (?, ?, ?, ?, ?)`),
			id, e.Seq, e.Type, s.tm(e.At), string(e.Data)); err != nil {
			if s.uniqueErr(err) {
				return fmt.Errorf("event %d: %w", e.Seq, store.ErrExists)
			}
			return fmt.Errorf("event %d: %w", e.Seq, err)
		}
	}
	if len(events) > 0 && s.dialect.AfterEventsInsert != nil {
		if err := s.dialect.AfterEventsInsert(ctx, tx, id); err != nil {
			return fmt.Errorf("events stored: %w", err)
		}
	}
	return nil
}

// ResearchAppendEvents stores events without touching the state.
func (s *DB) ResearchAppendEvents(ctx context.Context, id string, events []store.ResearchEvent) error {
	if len(events) == 0 {
		return nil
	}
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return fmt.Errorf("research events %s: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.insertEvents(ctx, tx, id, events); err != nil {
		return fmt.Errorf("research events %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("research events %s: %w", id, err)
	}
	return nil
}

// ResearchSetCancel records or clears a cancel request.
func (s *DB) ResearchSetCancel(ctx context.Context, id string, requested bool) error {
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE researches SET cancel_requested = ? WHERE id = ?`), requested, id)
	if err != nil {
		return fmt.Errorf("research cancel %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("research cancel %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("research %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// ResearchCancelRequested reports whether a cancel was requested.
func (s *DB) ResearchCancelRequested(ctx context.Context, id string) (bool, error) {
	var v bool
	err := s.SQL.QueryRowContext(ctx, s.q(`SELECT cancel_requested FROM researches WHERE id = ?`), id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("research %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("research cancel %q: %w", id, err)
	}
	return v, nil
}

// ResearchRunnable lists researches a worker may take, oldest first.
func (s *DB) ResearchRunnable(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		limit = 10
	}
	return list(ctx, s.SQL, "research runnable", s.q(`SELECT id FROM researches
		WHERE status IN ('pending', 'processing') AND (lease_until IS NULL OR lease_until < ?)
		ORDER BY created_at, id LIMIT ?`), []any{s.tm(now), limit}, func(r rowScanner) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	})
}

// ResearchGiveUp marks a research still pending or processing, and run by
// no process, failed, in its status column alone.
func (s *DB) ResearchGiveUp(ctx context.Context, id string, at time.Time) error {
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE researches SET status = 'failed', updated_at = ?
		WHERE id = ? AND status IN ('pending', 'processing') AND (lease_until IS NULL OR lease_until < ?)`), s.tm(at), id, s.tm(at))
	if err != nil {
		return fmt.Errorf("research give up %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("research give up %q: %w", id, err)
	} else if n > 0 {
		return nil
	}
	if _, err := s.ResearchStatus(ctx, id); err != nil {
		return err // ErrNotFound when there is none
	}
	return nil // it had ended, or another process runs it
}

// ResearchStatus returns a research's status column alone.
func (s *DB) ResearchStatus(ctx context.Context, id string) (string, error) {
	var status string
	err := s.SQL.QueryRowContext(ctx, s.q(`SELECT status FROM researches WHERE id = ?`), id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("research %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("research status %q: %w", id, err)
	}
	return status, nil
}

// ResearchLastSeq returns the last event's sequence number, 0 if none.
func (s *DB) ResearchLastSeq(ctx context.Context, id string) (int64, error) {
	var n int64
	if err := s.SQL.QueryRowContext(ctx, s.q(`SELECT COALESCE(MAX(seq), 0) FROM research_events WHERE research_id = ?`), id).Scan(&n); err != nil {
		return 0, fmt.Errorf("research events %q: %w", id, err)
	}
	return n, nil
}
