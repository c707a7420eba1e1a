// Package sqlstore implements store.Store over database/sql. The SQLite and
// PostgreSQL backends share it and differ only in their Dialect and schema.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/store"
)

// Dialect captures the differences between SQL engines.
type Dialect struct {
	Name string
	// Dollar placeholders ($1) instead of '?'.
	Dollar bool
	// IsUniqueViolation reports a unique-constraint error.
	IsUniqueViolation func(error) bool
	// AfterChunkInsert runs in the chunk-writing transaction after each
	// chunk's row is written (SQLite's vector codes).
	AfterChunkInsert func(ctx context.Context, tx *sql.Tx, chunkID int64, c store.Chunk) error
	// InsertChunks, when set, writes a source's chunks in place of a row
	// at a time (PostgreSQL: multi-row inserts, pgvector's column with
	// them).
	InsertChunks func(ctx context.Context, tx *sql.Tx, kbID, sourceID int64, chunks []store.Chunk) error
	// AfterEventsInsert runs in the transaction that stored a research's
	// events (PostgreSQL: NOTIFY, so watchers in other processes wake).
	AfterEventsInsert func(ctx context.Context, tx *sql.Tx, researchID string) error
	// BeginWrite opens a write transaction.
	BeginWrite func(ctx context.Context, db *sql.DB) (*sql.Tx, error)
}

// DB is a store.Store over database/sql.
type DB struct {
	SQL     *sql.DB
	dialect Dialect
}

// New wraps an open database. Call Migrate before use.
func New(db *sql.DB, d Dialect) *DB {
	if d.BeginWrite == nil {
		d.BeginWrite = func(ctx context.Context, db *sql.DB) (*sql.Tx, error) { return db.BeginTx(ctx, nil) }
	}
	return &DB{SQL: db, dialect: d}
}

var _ store.Store = (*DB)(nil)

// Close closes the database.
func (s *DB) Close() error { return s.SQL.Close() }

func (s *DB) q(query string) string {
	if !s.dialect.Dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Migrate applies the embedded *.sql files in order, each once, recording
// them in schema_migrations.
func (s *DB) Migrate(ctx context.Context, files embed.FS, dir string) error {
	if _, err := s.SQL.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		var one int
		err := s.SQL.QueryRowContext(ctx, s.q(`SELECT 1 FROM schema_migrations WHERE version = ?`), name).Scan(&one)
		if err == nil {
			continue
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		body, err := fs.ReadFile(files, dir+"/"+name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		tx, err := s.dialect.BeginWrite(ctx, s.SQL)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version) VALUES (?)`), name); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

// Time is stored as RFC 3339 text in SQLite and TIMESTAMPTZ in PostgreSQL;
// tm converts for writing and scanTime reads either.
func (s *DB) tm(t time.Time) any {
	t = t.UTC()
	if s.dialect.Dollar {
		return t
	}
	return t.Format(textTime)
}

// textTime sorts lexically in time order (fixed-width fraction, UTC).
const textTime = "2006-01-02T15:04:05.000000000Z07:00"

func (s *DB) tmp(t *time.Time) any {
	if t == nil {
		return nil
	}
	return s.tm(*t)
}

type scanTime struct {
	T     time.Time
	Valid bool
}

func (st *scanTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		st.Valid = false
		return nil
	case time.Time:
		st.T, st.Valid = x.UTC(), true
		return nil
	case string:
		return st.parse(x)
	case []byte:
		return st.parse(string(x))
	}
	return fmt.Errorf("scan time: unsupported %T", v)
}

func (st *scanTime) parse(s string) error {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			st.T, st.Valid = t.UTC(), true
			return nil
		}
	}
	return fmt.Errorf("scan time: cannot parse %q", s)
}

func (st scanTime) ptr() *time.Time {
	if !st.Valid {
		return nil
	}
	t := st.T
	return &t
}

func (s *DB) uniqueErr(err error) bool {
	return s.dialect.IsUniqueViolation != nil && s.dialect.IsUniqueViolation(err)
}

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

func scanKB(sc interface{ Scan(...any) error }) (*store.KB, error) {
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
	rows, err := s.SQL.QueryContext(ctx, `SELECT `+kbCols+` FROM knowledge_bases ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("kb list: %w", err)
	}
	defer rows.Close()
	var out []store.KB
	for rows.Next() {
		kb, err := scanKB(rows)
		if err != nil {
			return nil, fmt.Errorf("kb list: %w", err)
		}
		out = append(out, *kb)
	}
	return out, rows.Err()
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

const sourceCols = `id, kb_id, url, doc_id, title, content, language, last_modified, crawled_at, is_stale, metadata, content_hash, etag, fail_count`

func scanSource(sc interface{ Scan(...any) error }) (*store.Source, error) {
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
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT id, source_id, kb_id, chunk_index, text, token_count, language FROM chunks WHERE source_id = ? ORDER BY chunk_index LIMIT ? OFFSET ?`), srcID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("source chunks: %w", err)
	}
	defer rows.Close()
	out := []store.Chunk{}
	for rows.Next() {
		var c store.Chunk
		if err := rows.Scan(&c.ID, &c.SourceID, &c.KBID, &c.ChunkIndex, &c.Text, &c.TokenCount, &c.Language); err != nil {
			return nil, 0, fmt.Errorf("source chunks: %w", err)
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

// SourceList lists sources (content left empty) by URL.
func (s *DB) SourceList(ctx context.Context, kbID int64) ([]store.Source, error) {
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT `+strings.Replace(sourceCols, "content,", "'' AS content,", 1)+` FROM sources WHERE kb_id = ? ORDER BY url`), kbID)
	if err != nil {
		return nil, fmt.Errorf("source list: %w", err)
	}
	defer rows.Close()
	var out []store.Source
	for rows.Next() {
		src, err := scanSource(rows)
		if err != nil {
			return nil, fmt.Errorf("source list: %w", err)
		}
		out = append(out, *src)
	}
	return out, rows.Err()
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
	ids := make([]int64, len(puts))
	for i, p := range puts {
		src := p.Source
		if err := validateSource(src); err != nil {
			return nil, fmt.Errorf("source put %q: %w", src.URL, err)
		}
		meta, err := json.Marshal(src.Metadata)
		if err != nil {
			return nil, fmt.Errorf("source put %q: %w", src.URL, err)
		}
		if src.Metadata == nil {
			meta = []byte("{}")
		}
		err = tx.QueryRowContext(ctx, s.q(`INSERT INTO sources (kb_id, url, doc_id, title, content, language, last_modified, crawled_at, is_stale, metadata, content_hash, etag, fail_count)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (kb_id, url) DO UPDATE SET doc_id = excluded.doc_id, title = excluded.title, content = excluded.content,
				language = excluded.language, last_modified = excluded.last_modified, crawled_at = excluded.crawled_at,
				is_stale = excluded.is_stale, metadata = excluded.metadata, content_hash = excluded.content_hash,
				etag = excluded.etag, fail_count = excluded.fail_count
			RETURNING id`),
			kbID, src.URL, src.DocID, src.Title, src.Content, orUnd(src.Language), s.tmp(src.LastModified), s.tm(src.CrawledAt),
			src.IsStale, string(meta), src.ContentHash, src.ETag, src.FailCount).Scan(&ids[i])
		if err != nil {
			return nil, fmt.Errorf("source put %q: %w", src.URL, err)
		}
		if p.Chunks == nil {
			continue
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM chunks WHERE source_id = ?`), ids[i]); err != nil {
			return nil, fmt.Errorf("source put %q: replace chunks: %w", src.URL, err)
		}
		if err := s.insertChunks(ctx, tx, kbID, ids[i], p.Chunks); err != nil {
			return nil, fmt.Errorf("source put %q: %w", src.URL, err)
		}
	}
	if err := bumpVersion(ctx, s, tx, kbID); err != nil {
		return nil, fmt.Errorf("source put: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("source put: commit: %w", err)
	}
	return ids, nil
}

func (s *DB) insertChunks(ctx context.Context, tx *sql.Tx, kbID, sourceID int64, chunks []store.Chunk) error {
	if s.dialect.InsertChunks != nil {
		return s.dialect.InsertChunks(ctx, tx, kbID, sourceID, chunks)
	}
	for _, c := range chunks {
		var cid int64
		err := tx.QueryRowContext(ctx, s.q(`INSERT INTO chunks (source_id, kb_id, chunk_index, text, token_count, language, embedding, terms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			sourceID, kbID, c.ChunkIndex, c.Text, c.TokenCount, orUnd(c.Language), store.EncodeVector(c.Embedding), c.Terms).Scan(&cid)
		if err != nil {
			return fmt.Errorf("chunk %d: %w", c.ChunkIndex, err)
		}
		c.KBID, c.SourceID = kbID, sourceID
		if s.dialect.AfterChunkInsert != nil && c.Embedding != nil {
			if err := s.dialect.AfterChunkInsert(ctx, tx, cid, c); err != nil {
				return fmt.Errorf("chunk %d vector: %w", c.ChunkIndex, err)
			}
		}
	}
	return nil
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
	if err := s.insertChunks(ctx, tx, kbID, p.SourceID, p.Chunks); err != nil {
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
		query += ` FOR SHARE`
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

const chunkCols = `c.id, c.source_id, c.kb_id, c.chunk_index, c.text, c.token_count, c.language, c.embedding, c.terms, s.url, s.title, s.doc_id, s.is_stale`

func scanChunk(sc interface{ Scan(...any) error }) (*store.IndexedChunk, error) {
	var c store.IndexedChunk
	var emb []byte
	if err := sc.Scan(&c.ID, &c.SourceID, &c.KBID, &c.ChunkIndex, &c.Text, &c.TokenCount, &c.Language, &emb, &c.Terms, &c.SourceURL, &c.SourceTitle, &c.DocID, &c.IsStale); err != nil {
		return nil, err
	}
	v, err := store.DecodeVector(emb)
	if err != nil {
		return nil, err
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
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT c.id, s.is_stale FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.kb_id = ? AND s.content_hash <> '' ORDER BY c.id`), kbID)
	if err != nil {
		return nil, fmt.Errorf("chunk states: %w", err)
	}
	defer rows.Close()
	out := []store.ChunkState{}
	for rows.Next() {
		var c store.ChunkState
		if err := rows.Scan(&c.ID, &c.IsStale); err != nil {
			return nil, fmt.Errorf("chunk states: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ChunkScanAfter scans the chunks whose id is over afterID, in id order.
func (s *DB) ChunkScanAfter(ctx context.Context, kbID, afterID int64, fn func(store.IndexedChunk) error) error {
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT `+chunkCols+` FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.kb_id = ? AND c.id > ? AND s.content_hash <> '' ORDER BY c.id`), kbID, afterID)
	if err != nil {
		return fmt.Errorf("chunk scan: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanChunk(rows)
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
	c, err := scanChunk(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+chunkCols+` FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("chunk %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("chunk get: %w", err)
	}
	return c, nil
}

// CrawlLogCreate starts a crawl log in the running state.
func (s *DB) CrawlLogCreate(ctx context.Context, kbID int64, url string, startedAt time.Time) (*store.CrawlLog, error) {
	l := &store.CrawlLog{KBID: kbID, URL: url, Status: store.CrawlRunning, StartedAt: startedAt.UTC()}
	err := s.SQL.QueryRowContext(ctx, s.q(`INSERT INTO crawl_logs (kb_id, url, status, started_at) VALUES (?, ?, ?, ?) RETURNING id`),
		kbID, url, l.Status, s.tm(l.StartedAt)).Scan(&l.ID)
	if err != nil {
		return nil, fmt.Errorf("crawl log create: %w", err)
	}
	return l, nil
}

// CrawlLogUpdate sets a crawl log's status and counters.
func (s *DB) CrawlLogUpdate(ctx context.Context, p store.CrawlLogUpdateParams) error {
	switch p.Status {
	case store.CrawlRunning, store.CrawlSuccess, store.CrawlFailed:
	default:
		return fmt.Errorf("crawl log update: %w", &store.ValidationError{Field: "status", Rule: "must be running, success or failed"})
	}
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE crawl_logs SET status = ?, pages_crawled = ?, pages_updated = ?, pages_failed = ?,
		error_message = ?, duration_seconds = ?, finished_at = ? WHERE id = ?`),
		p.Status, p.PagesCrawled, p.PagesUpdated, p.PagesFailed, p.ErrorMessage, p.DurationSeconds, s.tmp(p.FinishedAt), p.ID)
	if err != nil {
		return fmt.Errorf("crawl log update: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("crawl log %d: %w", p.ID, store.ErrNotFound)
	}
	return nil
}

// CrawlLogList returns a KB's crawl logs, newest first.
func (s *DB) CrawlLogList(ctx context.Context, kbID int64, limit int) ([]store.CrawlLog, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT id, kb_id, url, status, pages_crawled, pages_updated, pages_failed, error_message, duration_seconds, started_at, finished_at
		FROM crawl_logs WHERE kb_id = ? ORDER BY started_at DESC, id DESC LIMIT ?`), kbID, limit)
	if err != nil {
		return nil, fmt.Errorf("crawl log list: %w", err)
	}
	defer rows.Close()
	var out []store.CrawlLog
	for rows.Next() {
		var l store.CrawlLog
		var st, ft scanTime
		if err := rows.Scan(&l.ID, &l.KBID, &l.URL, &l.Status, &l.PagesCrawled, &l.PagesUpdated, &l.PagesFailed, &l.ErrorMessage, &l.DurationSeconds, &st, &ft); err != nil {
			return nil, fmt.Errorf("crawl log list: %w", err)
		}
		l.StartedAt, l.FinishedAt = st.T, ft.ptr()
		out = append(out, l)
	}
	return out, rows.Err()
}

// CrawlLogPurge deletes logs started before olderThan (90 days).
func (s *DB) CrawlLogPurge(ctx context.Context, olderThan time.Time) (int, error) {
	res, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM crawl_logs WHERE started_at < ?`), s.tm(olderThan))
	if err != nil {
		return 0, fmt.Errorf("crawl log purge: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// CrawlPendingList returns the pages found but not fetched yet.
func (s *DB) CrawlPendingList(ctx context.Context, kbID int64) ([]store.PendingPage, error) {
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT url, depth, fail_count FROM crawl_pending WHERE kb_id = ? ORDER BY url`), kbID)
	if err != nil {
		return nil, fmt.Errorf("crawl pending: %w", err)
	}
	defer rows.Close()
	var out []store.PendingPage
	for rows.Next() {
		var p store.PendingPage
		if err := rows.Scan(&p.URL, &p.Depth, &p.FailCount); err != nil {
			return nil, fmt.Errorf("crawl pending: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// CrawlPendingFail counts a failed run for a page not fetched yet.
func (s *DB) CrawlPendingFail(ctx context.Context, kbID int64, url string, depth, giveUpAfter int) (bool, error) {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return false, fmt.Errorf("crawl pending %q: %w", url, err)
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO crawl_pending (kb_id, url, depth, fail_count) VALUES (?, ?, ?, 1)
		ON CONFLICT (kb_id, url) DO UPDATE SET fail_count = crawl_pending.fail_count + 1,
			depth = CASE WHEN excluded.depth < crawl_pending.depth THEN excluded.depth ELSE crawl_pending.depth END
		RETURNING fail_count`), kbID, url, depth).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("crawl pending %q: %w", url, err)
	}
	dropped := n >= giveUpAfter
	if dropped {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM crawl_pending WHERE kb_id = ? AND url = ?`), kbID, url); err != nil {
			return false, fmt.Errorf("crawl pending %q: %w", url, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("crawl pending %q: %w", url, err)
	}
	return dropped, nil
}

// CrawlPendingDone removes a page that has now been fetched.
func (s *DB) CrawlPendingDone(ctx context.Context, kbID int64, url string) error {
	if _, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM crawl_pending WHERE kb_id = ? AND url = ?`), kbID, url); err != nil {
		return fmt.Errorf("crawl pending %q: %w", url, err)
	}
	return nil
}
