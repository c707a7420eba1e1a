package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const plan = `{"strategy":"s","sub_questions":[{"text":"alpha origins","priority":1,"queries":["alpha origins"]},{"text":"alpha uses","priority":2,"queries":["alpha uses"]}],"estimated_seconds":1}`

// model counts plans per research question.
func model() (*llmtest.Fake, *sync.Map) {
	plans := &sync.Map{}
	return &llmtest.Fake{Reply: func(_ int, req llm.Request) (string, error) {
		switch req.Schema.Name {
		case "research_plan":
			q := req.Messages[0].Content
			q = q[strings.Index(q, "Question: ")+10:]
			q = q[:strings.Index(q, "\n")]
			n, _ := plans.LoadOrStore(q, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return plan, nil
		case "research_analysis":
			return `{"learnings":[{"text":"Alpha is documented.","source_ids":["S1"]}],"directions":[],"is_complete":true,"confidence":0.9,"relevance":1,"quality":1}`, nil
		case "research_report":
			return `{"title":"Alpha","summary":"Alpha is documented [cite:S1].","sections":[]}`, nil
		case "citation_judge":
			return `{"verdicts":[]}`, nil
		}
		return "", fmt.Errorf("unexpected %s", req.Schema.Name)
	}}, plans
}

func runner(st store.Store, p llm.Provider, src search.Source) *research.Runner {
	return &research.Runner{Engine: &research.LLMEngine{Provider: p}, Fallback: offline.Engine{}, Sources: []search.Source{src}, Store: st}
}

// work starts a queue with n workers over st running rn; the returned
// func stops it (handing running researches back) and waits.
func work(t *testing.T, st store.Store, rn *research.Runner, n int) func() {
	t.Helper()
	q, err := jobs.Open(context.Background(), st, jobs.Options{Workers: n, Research: rn, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = q.Close() }) }
	t.Cleanup(stop)
	return stop
}

// enqueue queues stored researches.
func enqueue(t *testing.T, st store.Store, ids ...string) {
	t.Helper()
	q, err := jobs.Open(context.Background(), st, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, id := range ids {
		if err := q.EnqueueResearch(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
}

func waitAll(t *testing.T, st store.Store, ids []string, status string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for {
			r, err := research.Load(context.Background(), st, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status == status {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("research %s is %s, want %s", id, r.Status, status)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestTwoWorkersRunEachOnce: ten queued researches, two workers sharing
// the store: all complete, each planned exactly once.
func TestTwoWorkersRunEachOnce(t *testing.T) {
	st := researchtest.Store(t)
	fake, plans := model()
	src := researchtest.NewSource("web")
	var ids []string
	creator := runner(st, fake, src)
	for i := range 10 {
		r, err := creator.Create(context.Background(), fmt.Sprintf("What is alpha number %d?", i), research.Options{Sources: []string{"web"}, Level: "quick"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	enqueue(t, st, ids...)
	stop1 := work(t, st, runner(st, fake, src), 2)
	stop2 := work(t, st, runner(st, fake, src), 2)
	waitAll(t, st, ids, research.StatusCompleted)
	stop1()
	stop2()
	n := 0
	plans.Range(func(q, c any) bool {
		n++
		if c.(*atomic.Int64).Load() != 1 {
			t.Errorf("%s planned %d times", q, c.(*atomic.Int64).Load())
		}
		return true
	})
	if n != 10 {
		t.Fatalf("%d researches planned, want 10", n)
	}
}

// TestShutdownHandsOver: a worker that shuts down mid-research leaves it
// processing, checkpointed and unleased; another worker finishes it
// without planning it again.
func TestShutdownHandsOver(t *testing.T) {
	st := researchtest.Store(t)
	fake, plans := model()
	src := &researchtest.Source{SourceName: "web", Entered: make(chan struct{})}
	src.Hold.Store(true)
	r, err := runner(st, fake, src).Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, st, r.ID)
	stop1 := work(t, st, runner(st, fake, src), 1)
	<-src.Entered
	stop1()
	mid, _ := research.Load(context.Background(), st, r.ID)
	if mid.Status != research.StatusProcessing || mid.Plan == nil {
		t.Fatalf("after shutdown: %s, plan %v", mid.Status, mid.Plan != nil)
	}
	src.Hold.Store(false)
	stop2 := work(t, st, runner(st, fake, src), 1)
	waitAll(t, st, []string{r.ID}, research.StatusCompleted)
	stop2()
	c, _ := plans.Load("What is alpha?")
	if c.(*atomic.Int64).Load() != 1 {
		t.Fatalf("planned %d times", c.(*atomic.Int64).Load())
	}
}

// TestCrashedLeaseIsRescued: a research whose runner died (its lease, held
// by a process on another host, ran out) is taken by a worker.
func TestCrashedLeaseIsRescued(t *testing.T) {
	st := researchtest.Store(t)
	fake, _ := model()
	src := researchtest.NewSource("web")
	rn := runner(st, fake, src)
	r, err := rn.Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := st.ResearchClaim(context.Background(), r.ID, "elsewhere:1/dead", now.Add(-time.Minute), now.Add(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	enqueue(t, st, r.ID)
	stop := work(t, st, rn, 1)
	waitAll(t, st, []string{r.ID}, research.StatusCompleted)
	stop()
}

// TestQueuedCancel: a research canceled while it waited is not run.
func TestQueuedCancel(t *testing.T) {
	st := researchtest.Store(t)
	fake, plans := model()
	rn := runner(st, fake, researchtest.NewSource("web"))
	r, err := rn.Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rn.Cancel(context.Background(), r.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := research.Load(context.Background(), st, r.ID)
	if got.Status != research.StatusCanceled {
		t.Fatalf("status %s", got.Status)
	}
	enqueue(t, st, r.ID)
	stop := work(t, st, rn, 1)
	time.Sleep(300 * time.Millisecond)
	stop()
	if _, ok := plans.Load("What is alpha?"); ok {
		t.Fatal("a canceled research was run")
	}
	if _, err := rn.Work(context.Background(), r.ID); err != nil && !errors.Is(err, research.ErrCanceled) {
		t.Fatal(err)
	}
}

// panicky panics in every attempt at one research, outside the research's
// own recovery (as a bug in the worker's code would), and runs the others.
type panicky struct {
	*research.Runner
	bad      string
	attempts atomic.Int64
}

func (p *panicky) Work(ctx context.Context, id string) (*research.Research, error) {
	if id == p.bad {
		p.attempts.Add(1)
		panic("boom in " + id)
	}
	return p.Runner.Work(ctx, id)
}

// TestPanicEveryAttempt: a research whose every attempt panics ends failed
// after the last attempt, saying why; the worker's other researches
// complete and the process lives.
func TestPanicEveryAttempt(t *testing.T) {
	st := researchtest.Store(t)
	fake, _ := model()
	rn := runner(st, fake, researchtest.NewSource("web"))
	var ids []string
	for i := range 4 {
		r, err := rn.Create(context.Background(), fmt.Sprintf("What is alpha number %d?", i), research.Options{Sources: []string{"web"}, Level: "quick"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	p := &panicky{Runner: rn, bad: ids[1]}
	enqueue(t, st, ids...)
	q, err := jobs.Open(context.Background(), st, jobs.Options{Workers: 2, Research: p, Poll: 20 * time.Millisecond, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitAll(t, st, []string{ids[0], ids[2], ids[3]}, research.StatusCompleted)
	waitAll(t, st, []string{ids[1]}, research.StatusFailed)
	bad, _ := research.Load(context.Background(), st, ids[1])
	if want := research.MaxAttempts + 2; p.attempts.Load() != int64(want) || !strings.Contains(bad.Error, "boom in") || !strings.Contains(bad.Error, "gave up after") {
		t.Fatalf("%d attempts (want %d); error %q", p.attempts.Load(), want, bad.Error)
	}
}

// unwritable is a runner whose research cannot be read or written: every
// attempt fails, and so does recording the failure.
type unwritable struct {
	*research.Runner
	bad   string
	fails atomic.Int64
}

func (u *unwritable) Work(ctx context.Context, id string) (*research.Research, error) {
	if id == u.bad {
		return nil, errors.New("stored state: invalid character")
	}
	return u.Runner.Work(ctx, id)
}

func (u *unwritable) Fail(ctx context.Context, id string, cause error) (*research.Research, error) {
	if id == u.bad {
		u.fails.Add(1)
		return nil, errors.New("stored state: invalid character")
	}
	return u.Runner.Fail(ctx, id, cause)
}

// TestGivenUpWhenItsFailureCannotBeRecorded: a research whose every
// attempt fails, and whose failure cannot be recorded either, is marked
// failed in its status, so the requeue does not queue it again for ever.
func TestGivenUpWhenItsFailureCannotBeRecorded(t *testing.T) {
	st := researchtest.Store(t)
	fake, _ := model()
	rn := runner(st, fake, researchtest.NewSource("web"))
	r, err := rn.Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	u := &unwritable{Runner: rn, bad: r.ID}
	enqueue(t, st, r.ID)
	q, err := jobs.Open(context.Background(), st, jobs.Options{Workers: 1, Research: u, Poll: 20 * time.Millisecond, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for u.fails.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the last attempt never came")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		got, err := st.ResearchGet(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == research.StatusFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s after the queue gave up, want failed", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	now, _ := st.Now(context.Background())
	if ids, err := st.ResearchRunnable(context.Background(), now.Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Fatalf("runnable after it was given up: %v %v", ids, err)
	}
	// Read, it says it failed and why, though its state was not changed;
	// a watch delivers what it stored and returns.
	if got, err := research.Load(context.Background(), st, r.ID); err != nil || got.Status != research.StatusFailed || !strings.Contains(got.Error, "given up") {
		t.Fatalf("read after it was given up: %+v %v", got, err)
	}
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := research.Watch(wctx, st, r.ID, research.WatchOptions{}, func(store.ResearchEvent) error { return nil }); err != nil {
		t.Fatalf("watching a research given up: %v, want it to return", err)
	}
}
