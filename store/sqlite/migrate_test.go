package sqlite_test

import (
	"context"
	"database/sql"
	"embed"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/quarryhq/quarry/store/sqlstore"
)

//go:embed testdata/migrations/*.sql
var testMigrations embed.FS

// openRaw opens the database file at path as a process of its own would,
// waiting for the write lock at most wait.
func openRaw(t *testing.T, path string, wait time.Duration) *sql.DB {
	t.Helper()
	c, err := sqlite.NewConnector("file:" + path + "?_pragma=busy_timeout(" + strconv.FormatInt(wait.Milliseconds(), 10) + ")&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestMigrateWhileAnotherWrites: a process that opens a new database beside
// another one that applies the migrations and then goes on writing (an
// ingest) waits for the write lock longer than it may; the migrations the
// other recorded meanwhile are applied, not a failure ("database is
// locked" when seven `kb add --create` opened one new data directory).
func TestMigrateWhileAnotherWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	other := openRaw(t, path, 5*time.Second)
	// The other process holds the write lock, applying the first
	// migration and recording it.
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)`,
		`CREATE TABLE first_table (id INTEGER PRIMARY KEY)`,
		`INSERT INTO schema_migrations (version) VALUES ('0001_first.sql'), ('0002_second.sql')`,
		`CREATE TABLE second_table (id INTEGER PRIMARY KEY)`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s := sqlstore.New(openRaw(t, path, 300*time.Millisecond), sqlstore.Dialect{Name: "sqlite"})
	done := make(chan error, 1)
	go func() { done <- s.Migrate(ctx, testMigrations, "testdata/migrations") }()
	// This process has read that nothing is applied and waits for the
	// lock; the other commits and at once writes again, past the wait.
	time.Sleep(100 * time.Millisecond)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, err = other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `INSERT INTO first_table (id) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("migrate beside a writer: %v", err)
	}
}
