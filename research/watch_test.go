package research_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/events"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

// seqs collects the sequence numbers a watcher saw.
type seqs struct {
	mu sync.Mutex
	s  []int64
}

func (c *seqs) add(e store.ResearchEvent) error {
	c.mu.Lock()
	c.s = append(c.s, e.Seq)
	c.mu.Unlock()
	return nil
}

func (c *seqs) get() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.s...)
}

// checkRun fails unless got is exactly from..to, in order.
func checkRun(t *testing.T, name string, got []int64, from, to int64) {
	t.Helper()
	if int64(len(got)) != to-from+1 {
		t.Fatalf("%s: %d events (%v), want %d..%d", name, len(got), got, from, to)
	}
	for i, s := range got {
		if s != from+int64(i) {
			t.Fatalf("%s: event %d has seq %d, want %d (%v)", name, i, s, from+int64(i), got)
		}
	}
}

// TestWatch: watchers that join before, during and after a run, one that
// drops and rejoins, a slow one the broker cuts off, and one in "another
// process" (no broker, the store polled) each get every event once, in
// order, with no gap.
func TestWatch(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	b := events.NewBroker(4) // small, so the slow watcher is cut off
	src := &researchtest.Source{SourceName: "web", Latency: 20 * time.Millisecond}
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{src}, Store: st,
		Publish: b.Publish}
	r, err := rn.Create(context.Background(), "What is alpha and what is beta?", research.Options{Sources: []string{"web"}, Level: "standard"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	watch := func(name string, opt research.WatchOptions, fn func(store.ResearchEvent) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := research.Watch(ctx, st, r.ID, opt, fn); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}()
	}
	early, remote, slow := &seqs{}, &seqs{}, &seqs{}
	watch("early", research.WatchOptions{Broker: b}, early.add)
	watch("remote", research.WatchOptions{Poll: 5 * time.Millisecond}, remote.add)
	watch("slow", research.WatchOptions{Broker: b}, func(e store.ResearchEvent) error {
		time.Sleep(3 * time.Millisecond)
		return slow.add(e)
	})
	// One joins mid-run; one drops after its 5th event and rejoins.
	mid := &seqs{}
	dropped := &seqs{}
	started := make(chan struct{})
	go func() {
		<-started
		watch("mid", research.WatchOptions{Broker: b}, mid.add)
	}()
	dctx, dcancel := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := research.Watch(dctx, st, r.ID, research.WatchOptions{Broker: b}, func(e store.ResearchEvent) error {
			_ = dropped.add(e)
			if len(dropped.get()) == 5 {
				dcancel()
				return errors.New("dropped")
			}
			return nil
		})
		if err == nil {
			t.Error("the dropping watcher was not stopped")
		}
		// Rejoin after the last event seen.
		got := dropped.get()
		if err := research.Watch(ctx, st, r.ID, research.WatchOptions{Broker: b, After: got[len(got)-1]}, dropped.add); err != nil {
			t.Errorf("rejoin: %v", err)
		}
	}()
	var once sync.Once
	rn.OnEvent = func(e research.Event) {
		if e.Seq >= 10 {
			once.Do(func() { close(started) })
		}
	}
	time.Sleep(20 * time.Millisecond) // the watchers are waiting on a pending research
	done, err := rn.Run(ctx, r.ID)
	if err != nil || done.Status != research.StatusCompleted {
		t.Fatalf("run: %v", err)
	}
	wg.Wait()
	all, err := st.ResearchEvents(ctx, r.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(all))
	if n < 20 {
		t.Fatalf("only %d events", n)
	}
	checkRun(t, "early", early.get(), 1, n)
	checkRun(t, "remote", remote.get(), 1, n)
	checkRun(t, "slow", slow.get(), 1, n)
	checkRun(t, "dropped and rejoined", dropped.get(), 1, n)
	checkRun(t, "mid-run", mid.get(), 1, n)
	if b.Subscribers(r.ID) != 0 {
		t.Fatalf("%d subscriptions left open", b.Subscribers(r.ID))
	}

	// After the end: a watcher replays and returns; after beyond the last
	// event is invalid input naming the field.
	late := &seqs{}
	if err := research.Watch(ctx, st, r.ID, research.WatchOptions{Broker: b, After: n - 3}, late.add); err != nil {
		t.Fatal(err)
	}
	checkRun(t, "late", late.get(), n-2, n)
	var ve *store.ValidationError
	if err := research.Watch(ctx, st, r.ID, research.WatchOptions{After: n + 5}, late.add); !errors.As(err, &ve) || ve.Field != "after" {
		t.Fatalf("after beyond the end: %v", err)
	}
	if err := research.Watch(ctx, st, "no-such-id", research.WatchOptions{}, late.add); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

// TestCancel: Cancel stops a running research, which ends canceled at the
// stage it was in with its state kept; Run continues it to the end; a
// finished research cannot be canceled.
func TestCancel(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	src := &researchtest.Source{SourceName: "web", Block: "origins"} // blocks until canceled
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{src}, Store: st}
	r, err := rn.Create(context.Background(), "What are alpha origins?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	// Another runner, as in another process, asks for the cancel.
	other := &research.Runner{Engine: offline.Engine{}, Store: st}
	go func() {
		for src.Calls() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if err := other.Cancel(context.Background(), r.ID); err != nil {
			t.Errorf("cancel: %v", err)
		}
	}()
	t0 := time.Now()
	got, err := rn.Run(context.Background(), r.ID)
	if !errors.Is(err, research.ErrCanceled) || got.Status != research.StatusCanceled || got.FailedStage != research.StageExecuting {
		t.Fatalf("run: %v, status %s at %s", err, got.Status, got.FailedStage)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("the cancel took %s", d)
	}
	stored, _ := research.Load(context.Background(), st, r.ID)
	if stored.Status != research.StatusCanceled || stored.Plan == nil {
		t.Fatalf("stored: %s, plan %v", stored.Status, stored.Plan != nil)
	}
	rn.Sources = []search.Source{&researchtest.Source{SourceName: "web"}}
	done, err := rn.Run(context.Background(), r.ID)
	if err != nil || done.Status != research.StatusCompleted {
		t.Fatalf("run after cancel: %v", err)
	}
	if err := rn.Cancel(context.Background(), r.ID); errcode.Of(err) != errcode.Conflict {
		t.Fatalf("cancel of a completed research: %v", err)
	}
	if err := rn.Cancel(context.Background(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cancel of an unknown id: %v", err)
	}
}

// TestFinalEventWithState: when the event that says a research ended is
// published, the stored research already says so (they are written in one
// transaction), so a client that reads it on the stream's end never finds
// it still processing.
func TestFinalEventWithState(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	var mu sync.Mutex
	var seen []string
	publish := func(id string, e store.ResearchEvent) {
		if e.Type != research.EventStatus || !strings.Contains(string(e.Data), `"status":"completed"`) && !strings.Contains(string(e.Data), `"status":"failed"`) {
			return
		}
		r, err := st.ResearchGet(context.Background(), id)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			seen = append(seen, err.Error())
			return
		}
		seen = append(seen, r.Status)
	}
	src := &researchtest.Source{SourceName: "web", Latency: time.Millisecond}
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{src}, Store: st, Publish: publish}
	for _, q := range []string{"What is alpha?", "What is beta?", "What is gamma?"} {
		r, err := rn.Create(context.Background(), q, research.Options{Sources: []string{"web"}, Level: "quick"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rn.Work(context.Background(), r.ID); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("final events: %v", seen)
	}
	for _, s := range seen {
		if s != research.StatusCompleted {
			t.Fatalf("on its final event a research read back as %q", s)
		}
	}
}
