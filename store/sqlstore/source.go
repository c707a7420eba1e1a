package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/quarryhq/quarry/store"
)

const sourceCols = `id, kb_id, url, doc_id, title, content, language, last_modified, crawled_at, is_stale, metadata, content_hash, etag, fail_count`

func scanSource(sc rowScanner) (*store.Source, error) {
	var src store.Source
	var lm, ca scanTime
	var meta []byte
	if err := sc.Scan(&src.ID, &src.KBID, &src.URL, &src.DocID, &src.Title, &src.Content, &src.Language, &lm, &ca, &src.IsStale, &meta, &src.ContentHash, &src.ETag, &src.FailCount); err != nil {
		return nil, err
	}
	src.LastModified = lm.ptr()
	src.CrawledAt = ca.T
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &src.Metadata); err != nil {
			return nil, fmt.Errorf("source metadata: %w", err)
		}
	}
	return &src, nil
}

// SourceGet returns one source by URL.
func (s *DB) SourceGet(ctx context.Context, kbID int64, url string) (*store.Source, error) {
	src, err := scanSource(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+sourceCols+` FROM sources WHERE kb_id = ? AND url = ?`), kbID, url))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("source %q: %w", url, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("source get: %w", err)
	}
	return src, nil
}

// SourceChunks lists a page of one source's chunks by index, embeddings
// left out, and the source's chunk count.
func (s *DB) SourceChunks(ctx context.Context, kbID int64, url string, offset, limit int) ([]store.Chunk, int, error) {
	var srcID int64
	var total int
	err := s.SQL.QueryRowContext(ctx, s.q(`SELECT s.id, (SELECT COUNT(*) FROM chunks c WHERE c.source_id = s.id) FROM sources s WHERE s.kb_id = ? AND s.url = ?`), kbID, url).Scan(&srcID, &total)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("source %q: %w", url, store.ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("source chunks: %w", err)
	}
	out, err := list(ctx, s.SQL, "source chunks", s.q(`SELECT id, source_id, kb_id, chunk_index, text, token_count, language FROM chunks WHERE source_id = ? ORDER BY chunk_index LIMIT ? OFFSET ?`), []any{srcID, limit, offset}, func(r rowScanner) (store.Chunk, error) {
		var c store.Chunk
		err := r.Scan(&c.ID, &c.SourceID, &c.KBID, &c.ChunkIndex, &c.Text, &c.TokenCount, &c.Language)
		return c, err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// SourceList lists sources (content left empty) by URL.
func (s *DB) SourceList(ctx context.Context, kbID int64) ([]store.Source, error) {
	return list(ctx, s.SQL, "source list", s.q(`SELECT `+strings.Replace(sourceCols, "content,", "'' AS content,", 1)+` FROM sources WHERE kb_id = ? ORDER BY url`), []any{kbID}, deref(scanSource))
}

// byURL is a value of a source's row, with its URL.
type byURL[V any] struct {
	url   string
	value V
}

// SourceHashes returns the content hash of each of urls the knowledge
// base has a source for, sourceRows URLs to a query.
func (s *DB) SourceHashes(ctx context.Context, kbID int64, urls []string) (map[string]string, error) {
	out := make(map[string]string)
	err := inBatches(urls, sourceRows, func(batch []string) error {
		args := make([]any, 0, len(batch)+1)
		args = append(args, kbID)
		for _, u := range batch {
			args = append(args, u)
		}
		rows, err := list(ctx, s.SQL, "source hashes", s.q(`SELECT url, content_hash FROM sources WHERE kb_id = ? AND url IN (`+marks(len(batch))+`)`), args, func(r rowScanner) (byURL[string], error) {
			var p byURL[string]
			return p, r.Scan(&p.url, &p.value)
		})
		for _, p := range rows {
			out[p.url] = p.value
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SourcePutBatch upserts sources and replaces their chunks in one transaction.
func (s *DB) SourcePutBatch(ctx context.Context, kbID int64, puts []store.SourcePut) ([]int64, error) {
	if len(puts) == 0 {
		return nil, nil
	}
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return nil, fmt.Errorf("source put: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.kbExists(ctx, tx, kbID); err != nil {
		return nil, fmt.Errorf("source put: %w", err)
	}
	ids, err := s.upsertSources(ctx, tx, kbID, puts)
	if err != nil {
		return nil, err
	}
	// Chunks are replaced after the sources are written: one DELETE and
	// the inserts for the whole batch.
	var replaced []int64
	var chunks []store.Chunk
	owner := map[int64]int{} // a replaced source's put
	for i, p := range puts {
		if p.Chunks == nil {
			continue
		}
		if last, ok := owner[ids[i]]; ok {
			// The same source twice in one batch: the later chunks
			// replace the earlier ones, as they would one put at a time.
			chunks = slices.DeleteFunc(chunks, func(c store.Chunk) bool { return c.SourceID == ids[last] })
		} else {
			replaced = append(replaced, ids[i])
		}
		owner[ids[i]] = i
		for _, c := range p.Chunks {
			c.SourceID = ids[i]
			chunks = append(chunks, c)
		}
	}
	if len(replaced) > 0 {
		args := make([]any, len(replaced))
		for i, id := range replaced {
			args[i] = id
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM chunks WHERE source_id IN (`+marks(len(replaced))+`)`), args...); err != nil {
			return nil, fmt.Errorf("source put: replace chunks: %w", err)
		}
	}
	if err := s.insertChunks(ctx, tx, kbID, chunks); err != nil {
		return nil, fmt.Errorf("source put: %w", err)
	}
	if err := bumpVersion(ctx, s, tx, kbID); err != nil {
		return nil, fmt.Errorf("source put: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("source put: commit: %w", err)
	}
	return ids, nil
}

// sourceRows is how many sources one INSERT writes: 13 parameters each,
// under SQLite's 32,766 and PostgreSQL's 65,535.
const sourceRows = 500

// upsertSources writes the sources of puts, many to a statement, in the
// order of their URLs, and returns each put's source id. The same URL
// twice in a batch is one source, written as the later put has it, as one
// put after the other would leave it.
func (s *DB) upsertSources(ctx context.Context, tx *sql.Tx, kbID int64, puts []store.SourcePut) ([]int64, error) {
	last := map[string]int{} // URL → its last put
	var order []int          // the puts written, each URL once
	for i, p := range puts {
		if err := validateSource(p.Source); err != nil {
			return nil, fmt.Errorf("source put %q: %w", p.Source.URL, err)
		}
		if _, ok := last[p.Source.URL]; !ok {
			order = append(order, i)
		}
		last[p.Source.URL] = i
	}
	// The rows are written in the order of their URLs, whatever order the
	// puts came in: two transactions writing some of the same sources
	// (two processes ingesting one site) then lock their rows in the
	// unique index in one order, and the second waits for the first
	// instead of each holding a row the other needs next.
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(puts[a].Source.URL, puts[b].Source.URL) })
	idOf := make(map[string]int64, len(order))
	err := inBatches(order, sourceRows, func(batch []int) error {
		var b strings.Builder
		b.WriteString(`INSERT INTO sources (kb_id, url, doc_id, title, content, language, last_modified, crawled_at, is_stale, metadata, content_hash, etag, fail_count) VALUES `)
		args := make([]any, 0, 13*len(batch))
		for k, first := range batch {
			src := puts[last[puts[first].Source.URL]].Source
			meta := []byte("{}")
			if src.Metadata != nil {
				var err error
				if meta, err = json.Marshal(src.Metadata); err != nil {
					return fmt.Errorf("source put %q: %w", src.URL, err)
				}
			}
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, kbID, src.URL, src.DocID, src.Title, src.Content, orUnd(src.Language), s.tmp(src.LastModified), s.tm(src.CrawledAt),
				src.IsStale, string(meta), src.ContentHash, src.ETag, src.FailCount)
		}
		b.WriteString(` ON CONFLICT (kb_id, url) DO UPDATE SET doc_id = excluded.doc_id, title = excluded.title, content = excluded.content,
				language = excluded.language, last_modified = excluded.last_modified, crawled_at = excluded.crawled_at,
				is_stale = excluded.is_stale, metadata = excluded.metadata, content_hash = excluded.content_hash,
				etag = excluded.etag, fail_count = excluded.fail_count
			RETURNING id, url`)
		rows, err := list(ctx, tx, fmt.Sprintf("source put %q…", puts[batch[0]].Source.URL), s.q(b.String()), args, func(r rowScanner) (byURL[int64], error) {
			var p byURL[int64]
			return p, r.Scan(&p.value, &p.url)
		})
		for _, p := range rows {
			idOf[p.url] = p.value
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(puts))
	for i, p := range puts {
		id, ok := idOf[p.Source.URL]
		if !ok {
			return nil, fmt.Errorf("source put %q: no id returned", p.Source.URL)
		}
		ids[i] = id
	}
	return ids, nil
}

// chunkRows is how many chunks one INSERT writes (8 parameters each,
// under SQLite's 32,766). SQLite's full-text index, kept by a trigger,
// writes what a statement added to disk when the next statement starts:
// a statement per chunk flushed a segment per chunk, and merging those
// segments was a third of an ingest's database work.
const chunkRows = 256

// insertChunks writes chunks, each of the source its SourceID names.
func (s *DB) insertChunks(ctx context.Context, tx *sql.Tx, kbID int64, chunks []store.Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	if s.dialect.InsertChunks != nil {
		return s.dialect.InsertChunks(ctx, tx, kbID, chunks)
	}
	return inBatches(chunks, chunkRows, func(batch []store.Chunk) error {
		var b strings.Builder
		b.WriteString(`INSERT INTO chunks (source_id, kb_id, chunk_index, text, token_count, language, embedding, terms) VALUES `)
		args := make([]any, 0, 8*len(batch))
		for i, c := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, c.SourceID, kbID, c.ChunkIndex, c.Text, c.TokenCount, orUnd(c.Language), store.EncodeVector(c.Embedding), c.Terms)
		}
		// The rows come back in no set order: each is known by its
		// source and place in it.
		b.WriteString(` RETURNING id, source_id, chunk_index`)
		type written struct{ id, source, index int64 }
		rows, err := list(ctx, tx, fmt.Sprintf("source %d chunk %d…", batch[0].SourceID, batch[0].ChunkIndex), s.q(b.String()), args, func(r rowScanner) (written, error) {
			var w written
			return w, r.Scan(&w.id, &w.source, &w.index)
		})
		if err != nil {
			return err
		}
		if s.dialect.AfterChunksInsert == nil {
			return nil
		}
		idOf := make(map[[2]int64]int64, len(rows))
		for _, w := range rows {
			idOf[[2]int64{w.source, w.index}] = w.id
		}
		ids := make([]int64, len(batch))
		for i, c := range batch {
			id, ok := idOf[[2]int64{c.SourceID, int64(c.ChunkIndex)}]
			if !ok {
				return fmt.Errorf("source %d chunk %d: no id returned", c.SourceID, c.ChunkIndex)
			}
			ids[i] = id
		}
		if err := s.dialect.AfterChunksInsert(ctx, tx, kbID, ids, batch); err != nil {
			return fmt.Errorf("source %d chunk %d…: vector codes: %w", batch[0].SourceID, batch[0].ChunkIndex, err)
		}
		return nil
	})
}

// SourceAppendChunks adds chunks to a source in one transaction and, with
// p.Final, sets its content hash and validators in the same one.
func (s *DB) SourceAppendChunks(ctx context.Context, kbID int64, p store.SourceAppendChunksParams) error {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return fmt.Errorf("source append chunks: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.kbExists(ctx, tx, kbID); err != nil {
		return fmt.Errorf("source append chunks: %w", err)
	}
	var one int
	err = tx.QueryRowContext(ctx, s.q(`SELECT 1 FROM sources WHERE id = ? AND kb_id = ?`), p.SourceID, kbID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("source %d was removed: %w", p.SourceID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("source append chunks: %w", err)
	}
	chunks := make([]store.Chunk, len(p.Chunks))
	for i, c := range p.Chunks {
		c.SourceID = p.SourceID
		chunks[i] = c
	}
	if err := s.insertChunks(ctx, tx, kbID, chunks); err != nil {
		return fmt.Errorf("source append chunks: source %d: %w", p.SourceID, err)
	}
	if p.Final {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE sources SET content_hash = ?, etag = ?, last_modified = ? WHERE id = ?`),
			p.ContentHash, p.ETag, s.tmp(p.LastModified), p.SourceID); err != nil {
			return fmt.Errorf("source append chunks: source %d: %w", p.SourceID, err)
		}
	}
	if err := bumpVersion(ctx, s, tx, kbID); err != nil {
		return fmt.Errorf("source append chunks: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("source append chunks: commit: %w", err)
	}
	return nil
}

// kbExists checks, inside a write transaction, that the knowledge base is
// still there (a "kb rm" may have raced the write), locking its row in
// PostgreSQL so it cannot be removed before the transaction ends.
func (s *DB) kbExists(ctx context.Context, tx *sql.Tx, kbID int64) error {
	query := `SELECT 1 FROM knowledge_bases WHERE id = ?`
	if s.dialect.Dollar {
		// Key share: a delete of the knowledge base waits, and another
		// batch's bump of its version (bumpVersion) does not.
		query += ` FOR KEY SHARE`
	}
	var one int
	err := tx.QueryRowContext(ctx, s.q(query), kbID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("knowledge base %d was removed: %w", kbID, store.ErrNotFound)
	}
	return err
}

func validateSource(src store.Source) error {
	if err := store.CheckSourceURL(src.URL); err != nil {
		return err
	}
	switch {
	case len([]rune(src.Title)) > 500:
		return &store.ValidationError{Field: "title", Rule: "must be at most 500 characters"}
	}
	return nil
}

// OrUnd is a language, "und" (undetermined) when empty.
func OrUnd(lang string) string { return orUnd(lang) }

func orUnd(lang string) string {
	if lang == "" {
		return "und"
	}
	return lang
}

// SourceDelete removes a source and its chunks.
func (s *DB) SourceDelete(ctx context.Context, kbID int64, url string) error {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return fmt.Errorf("source delete: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var id int64
	if err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM sources WHERE kb_id = ? AND url = ?`), kbID, url).Scan(&id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("source %q: %w", url, store.ErrNotFound)
		}
		return fmt.Errorf("source delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM chunks WHERE source_id = ?`), id); err != nil {
		return fmt.Errorf("source delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM sources WHERE id = ?`), id); err != nil {
		return fmt.Errorf("source delete: %w", err)
	}
	if err := bumpVersion(ctx, s, tx, kbID); err != nil {
		return fmt.Errorf("source delete: %w", err)
	}
	return tx.Commit()
}

// SourceTouch records successful fetches of unchanged sources: new
// validators and crawl time, failure count reset and stale cleared. Content
// and chunks are left alone. Unknown URLs are skipped.
func (s *DB) SourceTouch(ctx context.Context, kbID int64, touches []store.SourceTouch) error {
	if len(touches) == 0 {
		return nil
	}
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return fmt.Errorf("source touch: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	revived := false
	for _, t := range touches {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE sources SET is_stale = FALSE WHERE kb_id = ? AND url = ? AND is_stale`), kbID, t.URL)
		if err != nil {
			return fmt.Errorf("source touch %q: %w", t.URL, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			revived = true
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE sources SET etag = ?, last_modified = ?, crawled_at = ?, fail_count = 0 WHERE kb_id = ? AND url = ?`),
			t.ETag, s.tmp(t.LastModified), s.tm(t.CrawledAt), kbID, t.URL); err != nil {
			return fmt.Errorf("source touch %q: %w", t.URL, err)
		}
	}
	if revived {
		if err := bumpVersion(ctx, s, tx, kbID); err != nil {
			return fmt.Errorf("source touch: %w", err)
		}
	}
	return tx.Commit()
}

// SourceMarkFailure increments the failure count, marking the source stale
// at threshold consecutive failures. Stale sources are kept, never deleted.
func (s *DB) SourceMarkFailure(ctx context.Context, kbID int64, url string, threshold int) (bool, error) {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return false, fmt.Errorf("source mark failure: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var stale bool
	var fails int
	err = tx.QueryRowContext(ctx, s.q(`UPDATE sources SET fail_count = fail_count + 1,
		is_stale = (is_stale OR fail_count + 1 >= ?) WHERE kb_id = ? AND url = ? RETURNING is_stale, fail_count`), threshold, kbID, url).Scan(&stale, &fails)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("source %q: %w", url, store.ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("source mark failure: %w", err)
	}
	// Only becoming stale changes what searches see; a failure count does
	// not, so it does not invalidate the loaded indexes.
	if stale && fails == threshold {
		if err := bumpVersion(ctx, s, tx, kbID); err != nil {
			return false, fmt.Errorf("source mark failure: %w", err)
		}
	}
	return stale, tx.Commit()
}
