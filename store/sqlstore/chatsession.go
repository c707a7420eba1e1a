package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/store"
)

const chatCols = `id, language, created_at, last_activity, message_count, messages`

func scanChat(sc rowScanner) (*store.ChatSession, error) {
	var c store.ChatSession
	var created, active scanTime
	var msgs string
	if err := sc.Scan(&c.ID, &c.Language, &created, &active, &c.Count, &msgs); err != nil {
		return nil, err
	}
	c.CreatedAt, c.LastActivity, c.Messages = created.T, active.T, []byte(msgs)
	return &c, nil
}

// ChatSessionCreate stores a new session.
func (s *DB) ChatSessionCreate(ctx context.Context, c store.ChatSession) error {
	_, err := s.SQL.ExecContext(ctx, s.q(`INSERT INTO chat_sessions (`+chatCols+`) VALUES (?, ?, ?, ?, ?, ?)`),
		c.ID, c.Language, s.tm(c.CreatedAt), s.tm(c.LastActivity), c.Count, string(c.Messages))
	if err != nil {
		if s.uniqueErr(err) {
			return fmt.Errorf("session %q: %w", c.ID, store.ErrExists)
		}
		return fmt.Errorf("session create: %w", err)
	}
	return nil
}

// ChatSessionGet returns a session.
func (s *DB) ChatSessionGet(ctx context.Context, id string) (*store.ChatSession, error) {
	c, err := scanChat(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+chatCols+` FROM chat_sessions WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	return c, nil
}

// ChatSessionUpdate reads, changes and writes a session in one
// transaction (SQLite's is a write transaction from the start; PostgreSQL
// locks the row).
func (s *DB) ChatSessionUpdate(ctx context.Context, id string, fn func(*store.ChatSession) error) (*store.ChatSession, error) {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	query := `SELECT ` + chatCols + ` FROM chat_sessions WHERE id = ?`
	if s.dialect.Dollar {
		query += ` FOR UPDATE`
	}
	c, err := scanChat(tx.QueryRowContext(ctx, s.q(query), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	if err := fn(c); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE chat_sessions SET last_activity = ?, message_count = ?, messages = ? WHERE id = ?`),
		s.tm(c.LastActivity), c.Count, string(c.Messages), id); err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	return c, nil
}

// ChatSessionDelete removes a session.
func (s *DB) ChatSessionDelete(ctx context.Context, id string) error {
	res, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM chat_sessions WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("session %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("session %q: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// ChatSessionPurge deletes sessions last active before before.
func (s *DB) ChatSessionPurge(ctx context.Context, before time.Time) (int, error) {
	res, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM chat_sessions WHERE last_activity < ?`), s.tm(before))
	if err != nil {
		return 0, fmt.Errorf("session purge: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
