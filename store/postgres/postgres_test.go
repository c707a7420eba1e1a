package postgres_test

import (
	"context"
	"testing"

	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/storetest"
)

func openPG(t *testing.T, env string, maxConns int) *postgres.Store {
	t.Helper()
	url := testpg.Schema(t, env)
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store { return openPG(t, "QUARRY_TEST_POSTGRES_URL", 0) })
}

// TestPGVector runs the suite and a native nearest-neighbour query on a
// server with pgvector (PGlite in CI; it serves one connection at a time).
func TestPGVector(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store { return openPG(t, "QUARRY_TEST_PGVECTOR_URL", 1) })
	t.Run("NearestNeighbours", func(t *testing.T) {
		s := openPG(t, "QUARRY_TEST_PGVECTOR_URL", 1)
		if !s.HasPGVector() {
			t.Fatal("QUARRY_TEST_PGVECTOR_URL server has no pgvector")
		}
		storetest.ExerciseVector(t, s)
	})
}
