package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/quarryhq/quarry/store"
)

// FilterSQL is the WHERE clause (after a first condition, with '?'
// placeholders) of the chunks f keeps, over chunks c and their sources s;
// incomplete documents (no content hash yet) are never kept.
func FilterSQL(f store.ChunkFilter) (string, []any) {
	where := ` AND s.content_hash <> ''`
	var args []any
	if !f.IncludeStale {
		where += ` AND NOT s.is_stale`
	}
	if f.Language != "" {
		where += ` AND c.language = ?`
		args = append(args, f.Language)
	}
	if f.SourcePrefix != "" {
		where += ` AND substr(s.url, 1, ?) = ?`
		args = append(args, len(f.SourcePrefix), f.SourcePrefix)
	}
	return where, args
}

// Rebind turns a query's '?' placeholders into the dialect's.
func (s *DB) Rebind(query string) string { return s.q(query) }

// ChunksGet returns chunks by id, with their sources' fields, in the
// order asked, without their embeddings and terms; missing ones are left
// out.
func (s *DB) ChunksGet(ctx context.Context, ids []int64) ([]store.IndexedChunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT c.id, c.source_id, c.kb_id, c.chunk_index, c.text, c.token_count, c.language, s.url, s.title, s.doc_id, s.is_stale
		FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id IN (`+marks+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("chunks get: %w", err)
	}
	defer rows.Close()
	byID := map[int64]store.IndexedChunk{}
	for rows.Next() {
		var c store.IndexedChunk
		if err := rows.Scan(&c.ID, &c.SourceID, &c.KBID, &c.ChunkIndex, &c.Text, &c.TokenCount, &c.Language, &c.SourceURL, &c.SourceTitle, &c.DocID, &c.IsStale); err != nil {
			return nil, fmt.Errorf("chunks get: %w", err)
		}
		byID[c.ID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunks get: %w", err)
	}
	out := make([]store.IndexedChunk, 0, len(ids))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}
