package events

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

// A subscriber that panics fails the run's delivery, which Flush and
// Close report; the process goes on, and the events stay stored.
func TestDispatcherSubscriberPanic(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	if err := st.ResearchSave(ctx, store.Research{ID: "r1", Question: "q", Status: "processing", CreatedAt: now, UpdatedAt: now, State: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	record := func(seq int64) (store.ResearchEvent, error) {
		return store.ResearchEvent{Seq: seq, Type: "status", At: now, Data: []byte(`{}`)}, nil
	}
	d := NewDispatcher(st, "r1", record, nil, func(int64) { panic("subscriber bug") }, slog.New(slog.DiscardHandler))
	d.Enqueue(1)
	err = d.Flush()
	var pe *safe.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Flush = %v, want the subscriber's panic as an error", err)
	}
	if err := d.Close(); !errors.As(err, &pe) {
		t.Fatalf("Close = %v", err)
	}
	evs, err := st.ResearchEvents(ctx, "r1", 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("stored events: %v %v", evs, err)
	}
}
