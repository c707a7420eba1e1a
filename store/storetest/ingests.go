package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ExerciseIngests is the conformance part for background uploads'
// records.
func ExerciseIngests(t *testing.T, open Opener) {
	t.Helper()
	ctx := context.Background()
	t.Run("Ingests", func(t *testing.T) {
		s := open(t)
		t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		a := store.Ingest{ID: "in-a", KB: "notes", Owner: "host:1", Status: store.IngestRunning, State: []byte(`{"id":"in-a"}`), StartedAt: t0, UpdatedAt: t0}
		b := store.Ingest{ID: "in-b", KB: "notes", Owner: "host:2", Status: store.IngestRunning, State: []byte(`{"id":"in-b"}`), StartedAt: t0.Add(time.Second), UpdatedAt: t0}
		for _, in := range []store.Ingest{b, a} {
			if err := s.IngestPut(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.IngestGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown id: %v", err)
		}
		run, err := s.IngestRunning(ctx)
		if err != nil || len(run) != 2 || run[0].ID != "in-a" || run[1].Owner != "host:2" || !run[0].StartedAt.Equal(t0) {
			t.Fatalf("running: %+v %v", run, err)
		}
		b.Status, b.State, b.UpdatedAt = "completed", []byte(`{"id":"in-b","status":"completed"}`), t0.Add(time.Minute)
		if err := s.IngestPut(ctx, b); err != nil {
			t.Fatal(err)
		}
		got, err := s.IngestGet(ctx, "in-b")
		if err != nil || got.Status != "completed" || string(got.State) != `{"id":"in-b","status":"completed"}` || !got.UpdatedAt.Equal(t0.Add(time.Minute)) || got.KB != "notes" {
			t.Fatalf("after the update: %+v %v", got, err)
		}
		if run, _ := s.IngestRunning(ctx); len(run) != 1 || run[0].ID != "in-a" {
			t.Fatalf("running after one finished: %+v", run)
		}
	})
}
