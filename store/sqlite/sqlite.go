// Package sqlite is the embedded store backend: one SQLite file through the
// pure-Go modernc.org/sqlite driver, no server and no cgo.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// busyWait is how long a writer waits for the database's one write lock:
// first in this process's queue (writeGate), then in SQLite's busy handler.
const busyWait = 10 * time.Second

// Store is the SQLite backend.
type Store struct {
	*sqlstore.DB
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database file at path and applies
// migrations. Use ":memory:" only in tests.
func Open(ctx context.Context, path string) (*Store, error) {
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(" + strconv.Itoa(int(busyWait/time.Millisecond)) + ")", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	base, err := sqlite.NewConnector("file:" + path + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	db := sql.OpenDB(gatedConnector{Connector: base, gate: newWriteGate(busyWait)})
	if path == ":memory:" {
		db.SetMaxOpenConns(1)
	}
	s := &Store{DB: sqlstore.New(db, sqlstore.Dialect{Name: "sqlite", IsUniqueViolation: isUnique, AfterChunksInsert: writeCodes})}
	if err := s.Migrate(ctx, migrations, "migrations"); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := s.backfillCodes(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

// writeCodes stores the vector codes of new chunks beside them, in one
// statement: ids[i] is chunks[i]'s row. A chunk without an embedding has
// none.
func writeCodes(ctx context.Context, tx *sql.Tx, kbID int64, ids []int64, chunks []store.Chunk) error {
	var b strings.Builder
	args := make([]any, 0, 3*len(chunks))
	for i, c := range chunks {
		if c.Embedding == nil {
			continue
		}
		if len(args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?)")
		args = append(args, kbID, ids[i], store.Code(c.Embedding))
	}
	if len(args) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO chunk_codes (kb_id, chunk_id, code) VALUES `+b.String(), args...)
	return err
}

// backfillCodes writes the codes of the chunks stored before codes were,
// once, in batches, then marks it done.
func (s *Store) backfillCodes(ctx context.Context) error {
	var one int
	err := s.SQL.QueryRowContext(ctx, `SELECT 1 FROM pending_backfill WHERE name = 'chunk_codes'`).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("backfill codes: %w", err)
	}
	for after := int64(0); ; {
		rows, err := s.SQL.QueryContext(ctx, `SELECT id, kb_id, embedding FROM chunks WHERE id > ? ORDER BY id LIMIT 2000`, after)
		if err != nil {
			return fmt.Errorf("backfill codes: %w", err)
		}
		type code struct {
			kb, id int64
			code   []byte
		}
		var batch []code
		for rows.Next() {
			var c code
			var b []byte
			if err := rows.Scan(&c.id, &c.kb, &b); err != nil {
				rows.Close()
				return fmt.Errorf("backfill codes: %w", err)
			}
			v, err := store.DecodeVector(b)
			if err != nil {
				rows.Close()
				return fmt.Errorf("backfill codes: chunk %d: %w", c.id, err)
			}
			c.code = store.Code(v)
			batch = append(batch, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("backfill codes: %w", err)
		}
		tx, err := s.SQL.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("backfill codes: %w", err)
		}
		for _, c := range batch {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO chunk_codes (kb_id, chunk_id, code) VALUES (?, ?, ?)`, c.kb, c.id, c.code); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("backfill codes: %w", err)
			}
		}
		if len(batch) == 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM pending_backfill WHERE name = 'chunk_codes'`); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("backfill codes: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("backfill codes: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		after = batch[len(batch)-1].id
	}
}

func isUnique(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}
