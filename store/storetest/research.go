package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ExerciseResearches is the conformance part for researches: state, events, pages, leases and cancels.
func ExerciseResearches(t *testing.T, open Opener) {
	t.Helper()
	t.Run("ResearchPage", func(t *testing.T) { researchPage(t, open) })
	t.Run("Researches", func(t *testing.T) { researches(t, open) })
}

// researchPage: researches are listed newest first a page at a time, the
// cursor breaking ties by id, filtered by status and thread.
func researchPage(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	// Seven researches, two of them created at the same instant, so
	// the cursor must break ties by id.
	for i := range 7 {
		at := t0.Add(time.Duration(min(i, 5)) * time.Second)
		status, thread := "completed", "th-1"
		if i%2 == 1 {
			status, thread = "failed", "th-2"
		}
		r := store.Research{ID: fmt.Sprintf("r-%d", i), Question: "q", Status: status, CreatedAt: at, UpdatedAt: at, ThreadID: thread, State: []byte(`{}`)}
		if err := s.ResearchSave(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	var cur *store.ResearchCursor
	for range 10 {
		page, err := s.ResearchPage(ctx, store.ResearchFilter{Limit: 3, Before: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			ids = append(ids, r.ID)
		}
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		cur = &store.ResearchCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if got := strings.Join(ids, " "); got != "r-5 r-6 r-4 r-3 r-2 r-1 r-0" {
		t.Fatalf("pages, newest first, ties by id: %s", got)
	}
	failed, err := s.ResearchPage(ctx, store.ResearchFilter{Status: "failed", ThreadID: "th-2"})
	if err != nil || len(failed) != 3 || failed[0].ID != "r-5" {
		t.Fatalf("filtered: %+v %v", failed, err)
	}
	counts, err := s.ResearchCounts(ctx)
	if err != nil || counts["completed"] != 4 || counts["failed"] != 3 || len(counts) != 2 {
		t.Fatalf("counts: %v %v", counts, err)
	}
	none, err := s.ResearchPage(ctx, store.ResearchFilter{ThreadID: "th-9"})
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("empty page: %#v %v", none, err)
	}
}

// researches: checkpoints with their events, events appended alone,
// cancel requests, leases, and which researches are runnable. It is one
// scenario over one store, each step on the rows the steps before it
// left, so it stays one function.
func researches(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	t0 := time.Now().Add(-time.Minute).UTC()
	r := store.Research{ID: "r-1", Question: "why?", Status: "processing", CreatedAt: t0, UpdatedAt: t0, State: []byte(`{"step":1,"text":"a\u0000b"}`)}
	ev := func(seq int64) store.ResearchEvent {
		return store.ResearchEvent{Seq: seq, Type: "status", At: t0, Data: []byte(`{"seq":` + fmt.Sprint(seq) + `}`)}
	}
	if err := s.ResearchSave(ctx, r, []store.ResearchEvent{ev(1), ev(2)}); err != nil {
		t.Fatal(err)
	}
	r.Status, r.State, r.UpdatedAt = "completed", []byte(`{"step":2}`), t0.Add(time.Second)
	if err := s.ResearchSave(ctx, r, []store.ResearchEvent{ev(3)}); err != nil {
		t.Fatal(err)
	}
	// A checkpoint that repeats an event is refused whole: the state
	// is not half-written.
	bad := r
	bad.State = []byte(`{"step":3}`)
	if err := s.ResearchSave(ctx, bad, []store.ResearchEvent{ev(4), ev(3)}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate event seq: %v", err)
	}
	got, err := s.ResearchGet(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "completed" || string(got.State) != `{"step":2}` || !got.CreatedAt.Equal(t0.Truncate(time.Microsecond)) && got.CreatedAt.Sub(t0).Abs() > time.Millisecond {
		t.Fatalf("get: %+v %s", got, got.State)
	}
	evs, err := s.ResearchEvents(ctx, "r-1", 1)
	if err != nil || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Seq != 3 || string(evs[1].Data) != `{"seq":3}` {
		t.Fatalf("events after 1: %+v %v", evs, err)
	}
	r2 := store.Research{ID: "r-2", Question: "how?", Status: "pending", CreatedAt: t0.Add(time.Second), UpdatedAt: t0, State: []byte(`{}`)}
	if err := s.ResearchSave(ctx, r2, nil); err != nil {
		t.Fatal(err)
	}
	list, err := s.ResearchList(ctx, 10)
	if err != nil || len(list) != 2 || list[0].ID != "r-2" || list[1].ID != "r-1" || list[0].State != nil {
		t.Fatalf("list newest first without state: %+v %v", list, err)
	}
	if _, err := s.ResearchGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}

	// Events appended alone; cancel requests; the canceled status.
	if err := s.ResearchAppendEvents(ctx, "r-1", []store.ResearchEvent{ev(4), ev(5)}); err != nil {
		t.Fatal(err)
	}
	if err := s.ResearchAppendEvents(ctx, "r-1", []store.ResearchEvent{ev(5)}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("append a repeated seq: %v", err)
	}
	if evs, _ := s.ResearchEvents(ctx, "r-1", 3); len(evs) != 2 || evs[1].Seq != 5 {
		t.Fatalf("appended events: %+v", evs)
	}
	if n, err := s.ResearchLastSeq(ctx, "r-1"); err != nil || n != 5 {
		t.Fatalf("last seq: %d %v", n, err)
	}
	if n, err := s.ResearchLastSeq(ctx, "nope"); err != nil || n != 0 {
		t.Fatalf("last seq of a research without events: %d %v", n, err)
	}
	if got, _ := s.ResearchGet(ctx, "r-1"); string(got.State) != `{"step":2}` {
		t.Fatalf("append touched the state: %s", got.State)
	}
	if c, err := s.ResearchCancelRequested(ctx, "r-1"); err != nil || c {
		t.Fatalf("cancel requested at start: %v %v", c, err)
	}
	if err := s.ResearchSetCancel(ctx, "r-1", true); err != nil {
		t.Fatal(err)
	}
	if c, err := s.ResearchCancelRequested(ctx, "r-1"); err != nil || !c {
		t.Fatalf("cancel not recorded: %v %v", c, err)
	}
	if err := s.ResearchSetCancel(ctx, "nope", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cancel of a missing research: %v", err)
	}
	canceled := r
	canceled.Status = "canceled"
	if err := s.ResearchSave(ctx, canceled, nil); err != nil {
		t.Fatalf("status canceled: %v", err)
	}
	if err := s.ResearchSetCancel(ctx, "r-1", false); err != nil {
		t.Fatal(err)
	}

	// Leases: one holder at a time; the holder renews; an ended lease
	// or a released one can be taken; a missing research is not found.
	now := time.Now().UTC()
	if err := s.ResearchClaim(ctx, "r-1", "a", now, now.Add(30*time.Second)); err != nil {
		t.Fatalf("claim: %v", err)
	}
	err = s.ResearchClaim(ctx, "r-1", "b", now, now.Add(30*time.Second))
	var le *store.LeaseError
	if !errors.Is(err, store.ErrBusy) || !errors.As(err, &le) || le.Owner != "a" || le.Until.Sub(now.Add(30*time.Second)).Abs() > time.Second {
		t.Fatalf("second claim: %v, want busy naming a", err)
	}
	if err := s.ResearchClaim(ctx, "r-1", "a", now.Add(10*time.Second), now.Add(40*time.Second)); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if err := s.ResearchClaim(ctx, "r-1", "b", now.Add(35*time.Second), now.Add(60*time.Second)); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("claim before the renewed lease ends: %v", err)
	}
	if err := s.ResearchClaim(ctx, "r-1", "b", now.Add(41*time.Second), now.Add(70*time.Second)); err != nil {
		t.Fatalf("claim after the lease ended: %v", err)
	}
	if err := s.ResearchRelease(ctx, "r-1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.ResearchClaim(ctx, "r-1", "c", now, now.Add(time.Minute)); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("a release by a non-holder must not free the lease: %v", err)
	}
	if err := s.ResearchRelease(ctx, "r-1", "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.ResearchClaim(ctx, "r-1", "c", now, now.Add(time.Minute)); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	// A checkpoint leaves the lease alone.
	if err := s.ResearchSave(ctx, r, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ResearchClaim(ctx, "r-1", "d", now, now.Add(time.Minute)); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("lease lost on save: %v", err)
	}
	if err := s.ResearchClaim(ctx, "nope", "a", now, now.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("claim of a missing research: %v", err)
	}

	// Runnable: pending, or processing without a live lease.
	if ids, err := s.ResearchRunnable(ctx, now, 10); err != nil || len(ids) != 1 || ids[0] != "r-2" {
		t.Fatalf("runnable (r-1 completed, r-2 pending): %v %v", ids, err)
	}
	proc := r
	proc.Status = "processing"
	if err := s.ResearchSave(ctx, proc, nil); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.ResearchRunnable(ctx, now, 10); len(ids) != 1 {
		t.Fatalf("a processing research with a live lease is not runnable: %v", ids)
	}
	if err := s.ResearchClaim(ctx, "r-2", "d", now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.ResearchRunnable(ctx, now.Add(2*time.Minute), 10); len(ids) != 2 || ids[0] != "r-1" {
		t.Fatalf("once its lease ended it is, oldest first: %v", ids)
	}
	if ids, _ := s.ResearchRunnable(ctx, now.Add(2*time.Minute), 1); len(ids) != 1 {
		t.Fatalf("limit: %v", ids)
	}
	// Given up: not while a process holds its lease; then no longer
	// runnable, failed in the list, its state kept; one that has ended
	// stays as it ended.
	if err := s.ResearchGiveUp(ctx, "r-2", now); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ResearchGet(ctx, "r-2"); got.Status != "pending" {
		t.Fatalf("given up while its lease was held: %s", got.Status)
	}
	if err := s.ResearchGiveUp(ctx, "r-1", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.ResearchRunnable(ctx, now.Add(2*time.Minute), 10); len(ids) != 1 || ids[0] != "r-2" {
		t.Fatalf("runnable after r-1 was given up: %v", ids)
	}
	if got, err := s.ResearchGet(ctx, "r-1"); err != nil || got.Status != "failed" || string(got.State) != string(r.State) {
		t.Fatalf("given up: %+v %v", got, err)
	}
	if st, err := s.ResearchStatus(ctx, "r-1"); err != nil || st != "failed" {
		t.Fatalf("status alone of r-1: %q %v", st, err)
	}
	if _, err := s.ResearchStatus(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("status of a missing research: %v", err)
	}
	done := r2
	done.Status = "completed"
	if err := s.ResearchSave(ctx, done, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ResearchGiveUp(ctx, "r-2", now); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ResearchGet(ctx, "r-2"); got.Status != "completed" {
		t.Fatalf("a completed research given up is %s", got.Status)
	}
	if err := s.ResearchGiveUp(ctx, "nope", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("give up of a missing research: %v", err)
	}
	r2.Status = "done"
	if err := s.ResearchSave(ctx, r2, nil); err == nil {
		t.Fatal("bad status accepted")
	}
}
