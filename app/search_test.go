package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/kb"
)

// TestLongLivedSearch: where a long-lived process searches, by store and
// --search; a one-shot process always searches in the database.
func TestLongLivedSearch(t *testing.T) {
	t.Parallel()
	pg := "postgres://db/quarry"
	for _, tc := range []struct {
		search, db string
		longLived  bool
		resident   bool
	}{
		{"", "", true, true},  // auto on SQLite: memory
		{"", pg, true, false}, // auto on PostgreSQL: the database
		{"auto", pg, true, false},
		{"memory", pg, true, true},
		{"database", "", true, false},
		{"memory", "", false, false}, // one-shot
		{"", "", false, false},
	} {
		a := app.New(app.Config{Search: tc.search, DatabaseURL: tc.db}, nil)
		a.SetLongLived(tc.longLived)
		if got := a.Resident(); got != tc.resident {
			t.Errorf("search %q, database %q, long-lived %v: resident %v, want %v", tc.search, tc.db, tc.longLived, got, tc.resident)
		}
		a.Close()
	}
}

// TestReplicasOnPostgresHoldNothing: two long-lived processes on one
// PostgreSQL database, as two replicas of quarry serve: the one that
// searches loads no knowledge base, and finds a document the other adds
// on its very next search.
func TestReplicasOnPostgresHoldNothing(t *testing.T) {
	url := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	ctx := context.Background()
	cfg := app.Config{DatabaseURL: url, Embedder: "hash"}
	writer, reader := app.New(cfg, nil), app.New(cfg, nil)
	t.Cleanup(func() { writer.Close(); reader.Close() })
	writer.SetLongLived(true)
	reader.SetLongLived(true)
	if err := writer.IngestDocs(ctx, []string{corpus}, nopWriter{}); err != nil {
		t.Fatal(err)
	}
	name := app.DocsKBName(corpus)
	svc, err := reader.KB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	search := func(q string) []kb.Result {
		t.Helper()
		hits, err := svc.Search(ctx, name, embed.Hash{}, kb.Query{Text: q, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	if hits := search("Giuseppe Verdi opera"); len(hits) == 0 {
		t.Fatal("no hits")
	}
	late := filepath.Join(t.TempDir(), "late.md")
	if err := os.WriteFile(late, []byte("# Late\n\nThe zyxwvutsrq arrived after everything else was written.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wsvc, err := writer.KB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wsvc.AddPaths(ctx, name, []string{late}, kb.AddOptions{Embedder: embed.Hash{}}); err != nil {
		t.Fatal(err)
	}
	if hits := search("zyxwvutsrq"); len(hits) == 0 || !strings.Contains(hits[0].Text, "zyxwvutsrq") {
		t.Fatalf("the other replica's write is not found on the next search: %+v", hits)
	}
	if n := svc.Loaded(); n != 0 {
		t.Fatalf("the replica holds %d knowledge bases in memory, want none", n)
	}
}
