// Package kbtest is the one set-up of tests that search a knowledge base:
// an embedded store of the test's own, a service over it and a knowledge
// base holding the given files.
package kbtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store/sqlite"
)

// New returns a service over a store in the test's temporary directory,
// closed when the test ends, with a knowledge base name embedded by emb
// that holds paths (files, folders or corpora, as kb.Service.AddPaths
// reads them).
func New(t testing.TB, name string, emb embed.Embedder, paths ...string) *kb.Service {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := kb.New(st, nil)
	if _, err := svc.Create(ctx, name, "", emb); err != nil {
		t.Fatal(err)
	}
	if len(paths) > 0 {
		if _, err := svc.AddPaths(ctx, name, paths, kb.AddOptions{Embedder: emb}); err != nil {
			t.Fatal(err)
		}
	}
	return svc
}
