package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quarryhq/quarry/store"
)

var _ store.TextScanner = (*DB)(nil)

// chunkCols are the columns scanChunk reads: the embedding twice, as
// stored in the embedding column and, when the dialect has one, in its
// native vector column; without embeddings, both are NULL.
func (s *DB) chunkCols(embeddings bool) string {
	stored, native := "c.embedding", "NULL"
	if !embeddings {
		stored = "NULL"
	} else if s.dialect.NativeVector != nil {
		if expr, _ := s.dialect.NativeVector(); expr != "" {
			native = expr
		}
	}
	return `c.id, c.source_id, c.kb_id, c.chunk_index, c.text, c.token_count, c.language, ` + stored + `, ` + native + `, c.terms, s.url, s.title, s.doc_id, s.is_stale`
}

func (s *DB) scanChunk(sc rowScanner) (*store.IndexedChunk, error) {
	var c store.IndexedChunk
	var emb, native []byte
	if err := sc.Scan(&c.ID, &c.SourceID, &c.KBID, &c.ChunkIndex, &c.Text, &c.TokenCount, &c.Language, &emb, &native, &c.Terms, &c.SourceURL, &c.SourceTitle, &c.DocID, &c.IsStale); err != nil {
		return nil, err
	}
	decode := store.DecodeVector
	if len(emb) == 0 && len(native) > 0 && s.dialect.NativeVector != nil {
		_, decode = s.dialect.NativeVector()
		emb = native
	}
	v, err := decode(emb)
	if err != nil {
		return nil, fmt.Errorf("chunk %d embedding: %w", c.ID, err)
	}
	c.Embedding = v
	return &c, nil
}

// ChunkScan streams a KB's chunks in id order.
func (s *DB) ChunkScan(ctx context.Context, kbID int64, fn func(store.IndexedChunk) error) error {
	return s.ChunkScanAfter(ctx, kbID, 0, fn)
}

// ChunkStates lists the KB's chunk ids in order with their source's
// staleness.
func (s *DB) ChunkStates(ctx context.Context, kbID int64) ([]store.ChunkState, error) {
	return list(ctx, s.SQL, "chunk states", s.q(`SELECT c.id, s.is_stale FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.kb_id = ? AND s.content_hash <> '' ORDER BY c.id`), []any{kbID}, func(r rowScanner) (store.ChunkState, error) {
		var c store.ChunkState
		err := r.Scan(&c.ID, &c.IsStale)
		return c, err
	})
}

// ChunkScanAfter scans the chunks whose id is over afterID, in id order.
func (s *DB) ChunkScanAfter(ctx context.Context, kbID, afterID int64, fn func(store.IndexedChunk) error) error {
	return s.chunkScanAfter(ctx, kbID, afterID, true, fn)
}

// ChunkScanTextAfter is ChunkScanAfter without the embeddings.
func (s *DB) ChunkScanTextAfter(ctx context.Context, kbID, afterID int64, fn func(store.IndexedChunk) error) error {
	return s.chunkScanAfter(ctx, kbID, afterID, false, fn)
}

func (s *DB) chunkScanAfter(ctx context.Context, kbID, afterID int64, embeddings bool, fn func(store.IndexedChunk) error) error {
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT `+s.chunkCols(embeddings)+` FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.kb_id = ? AND c.id > ? AND s.content_hash <> '' ORDER BY c.id`), kbID, afterID)
	if err != nil {
		return fmt.Errorf("chunk scan: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := s.scanChunk(rows)
		if err != nil {
			return fmt.Errorf("chunk scan: %w", err)
		}
		if err := fn(*c); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ChunkGet returns one chunk with its source fields.
func (s *DB) ChunkGet(ctx context.Context, id int64) (*store.IndexedChunk, error) {
	c, err := s.scanChunk(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+s.chunkCols(true)+` FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("chunk %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("chunk get: %w", err)
	}
	return c, nil
}
