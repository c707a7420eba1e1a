// Package testpg gives tests their own PostgreSQL schema on the server named
// by QUARRY_TEST_POSTGRES_URL (or QUARRY_TEST_PGVECTOR_URL for a server with
// pgvector, such as PGlite). Without the variable the test is skipped, except
// under CI=true where a missing service is a failure.
package testpg

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // driver
	"go.uber.org/goleak"
)

// IgnoreCancelRequests is the goleak option for packages whose tests use
// PGlite. When a context ends while a query runs, pgx closes that
// connection in a goroutine that first sends the server a cancel request
// and waits for its answer, for at most 15 s. PostgreSQL answers in
// milliseconds; PGlite serves one connection at a time and answers only
// when that goroutine gives up (measured: 15.0 s against 58 ms), so a test
// that ends work mid-query leaves it behind for a while.
var IgnoreCancelRequests = goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgconn.(*PgConn).asyncClose.func1")

// Schema creates a fresh schema on the server in env var envVar and returns
// a connection URL whose search_path points at it. The schema is dropped when
// the test ends, unless QUARRY_TEST_KEEP_SCHEMA=1 (then its URL is logged).
func Schema(t testing.TB, envVar string) string {
	t.Helper()
	base := os.Getenv(envVar)
	if base == "" {
		if os.Getenv("CI") == "true" && envVar == "QUARRY_TEST_POSTGRES_URL" {
			t.Fatalf("%s is not set: CI requires PostgreSQL", envVar)
		}
		t.Skipf("%s not set", envVar)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "qt_" + hex.EncodeToString(b)
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	// Where the server has pgvector, install it once in public, as a
	// shared server's administrator would: created by the first test in its
	// own schema, it would go when that schema is dropped, under the feet
	// of the tests running beside it. A server without it, or a race with
	// another test creating it, is no failure here.
	_, _ = db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS vector SCHEMA public`)
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		_ = db.Close()
		t.Fatalf("create schema: %v", err)
	}
	_ = db.Close()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	if envVar == "QUARRY_TEST_PGVECTOR_URL" && q.Get("default_query_exec_mode") == "" {
		// PGlite keeps one backend session across client connections, so
		// pgx's named statement cache collides; use unnamed statements.
		q.Set("default_query_exec_mode", "exec")
	}
	u.RawQuery = q.Encode()
	if os.Getenv("QUARRY_TEST_KEEP_SCHEMA") == "1" {
		// A benchmark's data, kept for a replica to be measured over it.
		t.Logf("schema kept: %s", u)
		return u.String()
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		_, _ = db.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
	})
	return u.String()
}
