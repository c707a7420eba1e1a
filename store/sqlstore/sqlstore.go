// Package sqlstore implements store.Store over database/sql. The SQLite and
// PostgreSQL backends share it and differ only in their Dialect and schema.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
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
	// AfterChunksInsert runs in the chunk-writing transaction after each
	// INSERT of chunks (at most chunkRows) of knowledge base kbID, ids[i]
	// being chunks[i]'s row (SQLite's vector codes).
	AfterChunksInsert func(ctx context.Context, tx *sql.Tx, kbID int64, ids []int64, chunks []store.Chunk) error
	// InsertChunks, when set, writes the chunks of several sources (each
	// chunk's SourceID set) in place of a row at a time (PostgreSQL:
	// multi-row inserts across sources, pgvector's column with them, so
	// statement triggers run once per batch, not once per source).
	InsertChunks func(ctx context.Context, tx *sql.Tx, kbID int64, chunks []store.Chunk) error
	// NativeVector, when set and returning an expression, is where chunks
	// whose embedding column is empty keep their embedding instead: the
	// SQL expression over chunks c that reads it as bytes, and how to
	// decode them (PostgreSQL with pgvector stores each embedding once, in
	// its vector column).
	NativeVector func() (expr string, decode func([]byte) ([]float32, error))
	// AfterEventsInsert runs in the transaction that stored a research's
	// events (PostgreSQL: NOTIFY, so watchers in other processes wake).
	AfterEventsInsert func(ctx context.Context, tx *sql.Tx, researchID string) error
	// AtLeast and Below compare text byte by byte, whatever the
	// collation (">=" and "<" when empty: SQLite's default collation is
	// bytewise; PostgreSQL's text_pattern_ops operators are "~>=~" and
	// "~<~").
	AtLeast, Below string
	// BeginWrite opens a write transaction.
	BeginWrite func(ctx context.Context, db *sql.DB) (*sql.Tx, error)
	// LockMigrations, when set, is run first in each transaction that
	// migrates, to keep other processes' migrations out until it ends
	// (PostgreSQL: an advisory lock; SQLite's write transactions
	// already exclude one another). Every migration runs in a
	// transaction: one that cannot (CREATE INDEX CONCURRENTLY) has no
	// place here.
	LockMigrations string
}

// DB is a store.Store over database/sql.
type DB struct {
	SQL     *sql.DB
	dialect Dialect
}

// New wraps an open database. Call Migrate before use.
func New(db *sql.DB, d Dialect) *DB {
	if d.AtLeast == "" {
		d.AtLeast, d.Below = ">=", "<"
	}
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
// them in schema_migrations. Processes that open a new database at once
// each apply what is left: a migration is applied in a write transaction
// that first takes the dialect's lock, then checks it is still not
// recorded.
func (s *DB) Migrate(ctx context.Context, files embed.FS, dir string) error {
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
	applied := map[string]bool{}
	// A database migrated before says what it holds, which needs no lock.
	// A new one has no table to read (an error that migrate's own
	// statements meet again, and return, if it is any other).
	rows, err := s.SQL.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err == nil {
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return fmt.Errorf("migrate: %w", err)
			}
			applied[v] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	for _, name := range names {
		if applied[name] {
			continue
		}
		body, err := fs.ReadFile(files, dir+"/"+name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if err := s.migrate(ctx, name, string(body)); err != nil {
			// A process that applied it may hold the write lock for longer
			// than the wait for it (an ingest it began once migrated): a
			// migration recorded meanwhile is applied, whoever applied it.
			if s.recorded(ctx, name) {
				continue
			}
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

// recorded reports a migration schema_migrations records, read without
// a lock.
func (s *DB) recorded(ctx context.Context, name string) bool {
	var one int
	return s.SQL.QueryRowContext(ctx, s.q(`SELECT 1 FROM schema_migrations WHERE version = ?`), name).Scan(&one) == nil
}

// migrate applies one migration unless another process has meanwhile.
func (s *DB) migrate(ctx context.Context, name, body string) error {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	if s.dialect.LockMigrations != "" {
		if _, err := tx.ExecContext(ctx, s.dialect.LockMigrations); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY)`); err != nil {
		return err
	}
	var one int
	err = tx.QueryRowContext(ctx, s.q(`SELECT 1 FROM schema_migrations WHERE version = ?`), name).Scan(&one)
	if err == nil {
		return nil // applied by another process
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version) VALUES (?)`), name); err != nil {
		return err
	}
	return tx.Commit()
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

// querier runs queries: *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// marks is n '?' placeholders separated by commas, for an IN list.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// inBatches calls fn with items, at most size at a time, until one fails.
func inBatches[T any](items []T, size int, fn func(batch []T) error) error {
	for len(items) > 0 {
		n := min(len(items), size)
		if err := fn(items[:n]); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

// rowScanner is a row to scan: *sql.Row or *sql.Rows.
type rowScanner = interface{ Scan(...any) error }

// list runs a query and scans each of its rows with scan, in order: what
// names the operation in its errors. It never returns a nil slice, so an
// empty list is [] in JSON.
func list[T any](ctx context.Context, db querier, what, query string, args []any, scan func(rowScanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// deref makes a scanner of pointers one of values, for list.
func deref[T any](scan func(rowScanner) (*T, error)) func(rowScanner) (T, error) {
	return func(r rowScanner) (T, error) {
		p, err := scan(r)
		if err != nil {
			var zero T
			return zero, err
		}
		return *p, nil
	}
}
