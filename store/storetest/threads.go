package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ExerciseThreads is the conformance part for threads.
func ExerciseThreads(t *testing.T, open Opener) {
	t.Helper()
	ctx := context.Background()
	t.Run("Threads", func(t *testing.T) {
		s := open(t)
		t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		for i, id := range []string{"t-1", "t-2"} {
			if err := s.ThreadCreate(ctx, store.Thread{ID: id, Title: "about " + id, Status: "active", CreatedAt: t0, LastActivity: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ThreadCreate(ctx, store.Thread{ID: "t-1", Title: "again", Status: "active", CreatedAt: t0, LastActivity: t0}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("duplicate thread: %v", err)
		}
		if err := s.ThreadTouch(ctx, "t-1", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		list, err := s.ThreadList(ctx, 10)
		if err != nil || len(list) != 2 || list[0].ID != "t-1" || !list[0].LastActivity.Equal(t0.Add(time.Hour)) {
			t.Fatalf("list, most recent first: %+v %v", list, err)
		}
		if err := s.ThreadClose(ctx, "t-2"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ThreadGet(ctx, "t-2"); err != nil || got.Status != "closed" || got.Title != "about t-2" {
			t.Fatalf("closed: %+v %v", got, err)
		}
		for _, err := range []error{s.ThreadClose(ctx, "nope"), s.ThreadTouch(ctx, "nope", t0)} {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("missing thread: %v", err)
			}
		}
		if _, err := s.ThreadGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing thread: %v", err)
		}
		for i, id := range []string{"q-2", "q-1"} {
			r := store.Research{ID: id, Question: id, Status: "completed", CreatedAt: t0.Add(time.Duration(1-i) * time.Second), UpdatedAt: t0, ThreadID: "t-1", State: []byte(`{}`)}
			if err := s.ResearchSave(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
		}
		rs, err := s.ThreadResearches(ctx, "t-1")
		if err != nil || len(rs) != 2 || rs[0].ID != "q-1" || rs[1].ThreadID != "t-1" {
			t.Fatalf("thread researches, oldest first: %+v %v", rs, err)
		}
		if rs, err := s.ThreadResearches(ctx, "t-2"); err != nil || rs == nil || len(rs) != 0 {
			t.Fatalf("empty thread: %#v %v", rs, err)
		}
	})
}
