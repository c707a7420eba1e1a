package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestWrites(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT 1":                                  false,
		"  select * from t":                         false,
		"-- note\nSELECT 1":                         false,
		"/* x */ PRAGMA table_info(t)":              false,
		"WITH a AS (SELECT 1) SELECT * FROM a":      false,
		"WITH a AS (SELECT 1) UPDATE t SET x = 1":   true,
		"SELECT updated_at FROM t":                  false,
		"UPDATE /* TEMPLATE: schema */river_job":    true,
		"INSERT INTO t VALUES (1) RETURNING id":     true,
		"DELETE FROM t":                             true,
		"CREATE TABLE t (x)":                        true,
		"(SELECT 1)":                                false,
		"":                                          true,
		"/* unterminated":                           true,
		"WITH a AS (SELECT 1) INSERT INTO t SELECT": true,
	} {
		if got := writes(q); got != want {
			t.Errorf("writes(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestGateHeldAcrossTransaction: a writing transaction holds the gate until
// it ends, a read-only one and plain reads never take it, and a RETURNING
// write holds it until its rows close.
func TestGateHeldAcrossTransaction(t *testing.T) {
	ctx := context.Background()
	db := gatedDB(t)
	gate := gateOf(t, db)
	held := func() bool { return len(gate.ch) == 1 }

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !held() {
		t.Error("a writing transaction does not hold the gate")
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM g`).Scan(&n); err != nil {
		t.Fatalf("a read beside a writing transaction: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if held() {
		t.Error("the gate is held after commit")
	}

	ro, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if held() {
		t.Error("a read-only transaction holds the gate")
	}
	if err := ro.Rollback(); err != nil {
		t.Fatal(err)
	}

	rows, err := db.QueryContext(ctx, `INSERT INTO g (x) VALUES (1) RETURNING x`)
	if err != nil {
		t.Fatal(err)
	}
	if !held() {
		t.Error("a RETURNING write does not hold the gate while its rows are open")
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if held() {
		t.Error("the gate is held after the rows closed")
	}
}

// TestGateManyWriters: writers on many connections all commit, none
// meeting a locked database.
func TestGateManyWriters(t *testing.T) {
	ctx := context.Background()
	db := gatedDB(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8*50)
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO g (x) VALUES (?)`, w*100+i); err != nil {
					_ = tx.Rollback()
					errs <- err
					return
				}
				if i%2 == 0 {
					time.Sleep(time.Millisecond) // hold the lock a while
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
				if _, err := db.ExecContext(ctx, `UPDATE g SET x = x WHERE x = ?`, w*100+i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM g`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 8*50 {
		t.Errorf("%d rows, want %d", n, 8*50)
	}
}

// gatedDB is a new store's database with a table g (x INTEGER).
func gatedDB(t *testing.T) *sql.DB {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.SQL.ExecContext(context.Background(), `CREATE TABLE g (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return s.SQL
}

// gateOf is the gate of db's connector.
func gateOf(t *testing.T, db *sql.DB) *writeGate {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var g *writeGate
	if err := conn.Raw(func(dc any) error {
		if gc, ok := dc.(*gatedConn); ok {
			g = gc.gate
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if g == nil {
		t.Fatal("the connection is not gated")
	}
	return g
}
