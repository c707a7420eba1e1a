package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
)

// crawls records scheduled crawl runs per knowledge base and the most that
// ran at once for any one of them.
type crawls struct {
	mu      sync.Mutex
	runs    map[string]int
	running map[string]int
	most    int
	slots   map[string]map[time.Time]int
}

func (c *crawls) Crawl(ctx context.Context, a jobs.CrawlArgs) (*store.CrawlLog, error) {
	c.mu.Lock()
	c.runs[a.KB]++
	c.running[a.KB]++
	c.most = max(c.most, c.running[a.KB])
	if c.slots[a.KB] == nil {
		c.slots[a.KB] = map[time.Time]int{}
	}
	c.slots[a.KB][a.Slot]++
	c.mu.Unlock()
	select { // a crawl takes a while
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
	}
	c.mu.Lock()
	c.running[a.KB]--
	c.mu.Unlock()
	return &store.CrawlLog{Status: store.CrawlSuccess}, nil
}

// TestScheduleOncePerSlot: two knowledge bases scheduled every interval,
// four processes running jobs on one store: each knowledge base is crawled
// once per interval, never twice at once. On PostgreSQL the figure
// (every 5 s for 60 s: 12 ± 1 runs); on SQLite every 2 s for 12 s.
func TestScheduleOncePerSlot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		open   func(t *testing.T) store.Store
		every  time.Duration
		window time.Duration
	}{
		{"sqlite", func(t *testing.T) store.Store { return researchtest.Store(t) }, 2 * time.Second, 12 * time.Second},
		{"postgres", openPG, 5 * time.Second, 60 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.window > 10*time.Second {
				t.Skip("a minute long")
			}
			st := tc.open(t)
			ctx := context.Background()
			c := &crawls{runs: map[string]int{}, running: map[string]int{}, slots: map[string]map[time.Time]int{}}
			var kbs []string
			var ids []int64
			for i := range 2 {
				k, err := st.KBCreate(ctx, store.KBCreateParams{Name: fmt.Sprintf("site%d", i), Embedder: "hash-v1/64", Dimension: 64})
				if err != nil {
					t.Fatal(err)
				}
				kbs = append(kbs, k.Name)
				ids = append(ids, k.ID)
			}
			var queues []*jobs.Queue
			for range 4 {
				q, err := jobs.Open(ctx, st, jobs.Options{Workers: 1, Research: noResearch{}, Crawl: c, Poll: 50 * time.Millisecond, ScheduleEvery: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				if err := q.Start(ctx); err != nil {
					t.Fatal(err)
				}
				queues = append(queues, q)
			}
			// The window starts once every process runs: the schedules are
			// set now, their first runs due at once. It is measured on the
			// database's clock, the one slots are set on; runs of slots due
			// after it (while the processes close) are not counted.
			start, err := st.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if _, err := jobs.SetSchedule(ctx, st, id, jobs.ScheduleSpec{URL: "https://docs.example.com/", Every: tc.every, Options: crawlOpts}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(tc.window)
			end, err := st.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range queues {
				if err := q.Close(); err != nil {
					t.Fatal(err)
				}
			}
			elapsed := end.Sub(start)
			want := int((elapsed + tc.every - 1) / tc.every) // slots due at start, start+every, … before end
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, k := range kbs {
				var slots []time.Time
				for slot, n := range c.slots[k] {
					if n != 1 {
						t.Errorf("%s: slot %s ran %d times", k, slot, n)
					}
					slots = append(slots, slot)
				}
				slices.SortFunc(slots, time.Time.Compare)
				inWindow := 0
				for i, slot := range slots {
					if i > 0 && slot.Sub(slots[i-1]) < tc.every {
						t.Errorf("%s: slots %s and %s are closer than every %s", k, slots[i-1], slot, tc.every)
					}
					if !slot.Before(start.Add(-time.Second)) && slot.Before(end) {
						inWindow++
					}
				}
				// More slots than the window holds is a slot run twice
				// or early; fewer, under load, is a slot skipped while
				// the one before still ran, as designed, so only a
				// schedule that stopped after its first slots fails.
				if inWindow < max(2, want/2) || inWindow > want+1 {
					t.Errorf("%s: %d slots run in %s at every %s, want %d to %d (all runs %v)", k, inWindow, elapsed, tc.every, max(2, want/2), want+1, slots)
				}
				// And the slots keep their interval: a slot skipped now
				// and then does not move the median gap, a schedule
				// running at twice its interval does.
				var gaps []time.Duration
				for i := 1; i < len(slots); i++ {
					gaps = append(gaps, slots[i].Sub(slots[i-1]))
				}
				slices.Sort(gaps)
				if len(gaps) > 0 && gaps[len(gaps)/2] > tc.every*3/2 {
					t.Errorf("%s: median gap between slots %s at every %s (all runs %v)", k, gaps[len(gaps)/2], tc.every, slots)
				}
			}
			if c.most != 1 {
				t.Errorf("%d crawls of one knowledge base ran at once", c.most)
			}
			t.Logf("runs %v over %s at every %s, 4 processes", c.runs, tc.window, tc.every)
		})
	}
}

func openPG(t *testing.T) store.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL"), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// noResearch is a queue's research runner where none is queued.
type noResearch struct{}

func (noResearch) Work(context.Context, string) (*research.Research, error) {
	return nil, errors.New("no research here")
}

func (noResearch) Fail(context.Context, string, error) (*research.Research, error) {
	return nil, errors.New("no research here")
}

var crawlOpts = crawl.Options{MaxPages: 10, MaxDepth: 1, Concurrency: 1}
