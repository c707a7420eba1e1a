package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
	"github.com/quarryhq/quarry/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "quarry.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.KBCreate(ctx, store.KBCreateParams{Name: "keep", Embedder: "e", Dimension: 2}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	s, err = sqlite.Open(ctx, path) // migrations must not run twice
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.KBGet(ctx, "keep"); err != nil {
		t.Fatal(err)
	}
}

// Processes that open a new database at once each get it migrated once
// (two `quarry kb add` on a new data directory: the second had failed
// with "table knowledge_bases already exists").
func TestOpenAtOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	storetest.OpenAtOnce(t, func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) })
}
