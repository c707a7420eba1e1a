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

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

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
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	if path == ":memory:" {
		db.SetMaxOpenConns(1)
	}
	s := &Store{DB: sqlstore.New(db, sqlstore.Dialect{Name: "sqlite", IsUniqueViolation: isUnique})}
	if err := s.Migrate(ctx, migrations, "migrations"); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

func isUnique(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}
