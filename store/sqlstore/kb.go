package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/store"
)

// KBCreate creates a knowledge base; ErrExists if the name is taken.
func (s *DB) KBCreate(ctx context.Context, p store.KBCreateParams) (*store.KB, error) {
	kb := &store.KB{Name: p.Name, Description: p.Description, Embedder: p.Embedder, Dimension: p.Dimension, CreatedAt: time.Now().UTC()}
	err := s.SQL.QueryRowContext(ctx, s.q(`INSERT INTO knowledge_bases (name, description, embedder, dimension, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`),
		p.Name, p.Description, p.Embedder, p.Dimension, s.tm(kb.CreatedAt)).Scan(&kb.ID)
	if err != nil {
		if s.uniqueErr(err) {
			return nil, fmt.Errorf("kb create %q: %w", p.Name, store.ErrExists)
		}
		return nil, fmt.Errorf("kb create %q: %w", p.Name, err)
	}
	return kb, nil
}

const kbCols = `id, name, description, embedder, dimension, version, created_at`

func scanKB(sc rowScanner) (*store.KB, error) {
	var kb store.KB
	var ct scanTime
	if err := sc.Scan(&kb.ID, &kb.Name, &kb.Description, &kb.Embedder, &kb.Dimension, &kb.Version, &ct); err != nil {
		return nil, err
	}
	kb.CreatedAt = ct.T
	return &kb, nil
}

// KBGet returns a knowledge base by name.
func (s *DB) KBGet(ctx context.Context, name string) (*store.KB, error) {
	kb, err := scanKB(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+kbCols+` FROM knowledge_bases WHERE name = ?`), name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("knowledge base %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("kb get %q: %w", name, err)
	}
	return kb, nil
}

// KBList lists knowledge bases by name.
func (s *DB) KBList(ctx context.Context) ([]store.KB, error) {
	return list(ctx, s.SQL, "kb list", `SELECT `+kbCols+` FROM knowledge_bases ORDER BY name`, nil, deref(scanKB))
}

// KBDelete removes a knowledge base and everything in it.
func (s *DB) KBDelete(ctx context.Context, name string) error {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return fmt.Errorf("kb delete %q: %w", name, err)
	}
	defer func() { _ = tx.Rollback() }()
	var id int64
	if err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM knowledge_bases WHERE name = ?`), name).Scan(&id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("knowledge base %q: %w", name, store.ErrNotFound)
		}
		return fmt.Errorf("kb delete %q: %w", name, err)
	}
	// Children first so the delete does not depend on cascades being enabled.
	for _, stmt := range []string{
		`DELETE FROM chunks WHERE kb_id = ?`,
		`DELETE FROM sources WHERE kb_id = ?`,
		`DELETE FROM crawl_logs WHERE kb_id = ?`,
		`DELETE FROM knowledge_bases WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, s.q(stmt), id); err != nil {
			return fmt.Errorf("kb delete %q: %w", name, err)
		}
	}
	return tx.Commit()
}

// KBStats counts sources, chunks, stale sources and tokens.
func (s *DB) KBStats(ctx context.Context, kbID int64) (store.KBStats, error) {
	var st store.KBStats
	err := s.SQL.QueryRowContext(ctx, s.q(`SELECT
		(SELECT COUNT(*) FROM sources WHERE kb_id = ?),
		(SELECT COUNT(*) FROM chunks WHERE kb_id = ?),
		(SELECT COUNT(*) FROM sources WHERE kb_id = ? AND is_stale),
		(SELECT COALESCE(SUM(token_count), 0) FROM chunks WHERE kb_id = ?)`), kbID, kbID, kbID, kbID).
		Scan(&st.Sources, &st.Chunks, &st.Stale, &st.Tokens)
	if err != nil {
		return st, fmt.Errorf("kb stats: %w", err)
	}
	return st, nil
}

// KBVersion returns the KB's change counter.
func (s *DB) KBVersion(ctx context.Context, kbID int64) (int64, error) {
	var v int64
	err := s.SQL.QueryRowContext(ctx, s.q(`SELECT version FROM knowledge_bases WHERE id = ?`), kbID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("kb version %d: %w", kbID, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("kb version: %w", err)
	}
	return v, nil
}

func bumpVersion(ctx context.Context, s *DB, tx *sql.Tx, kbID int64) error {
	_, err := tx.ExecContext(ctx, s.q(`UPDATE knowledge_bases SET version = version + 1 WHERE id = ?`), kbID)
	return err
}
