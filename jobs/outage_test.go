package jobs_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/store/postgres"
)

// proxy forwards TCP to a PostgreSQL server; down cuts every connection
// and refuses new ones until up.
type proxy struct {
	ln     net.Listener
	target string
	down   atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.cut(); p.wg.Wait() })
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(s, c); s.Close() }()
		go func() { defer p.wg.Done(); _, _ = io.Copy(c, s); c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// rescueAfter is longer than the outage: a research still running when
// the database comes back finishes in its worker, not again in another.
const rescueAfter = 2 * time.Minute

// TestDatabaseAway: PostgreSQL disappears for 30 s (every connection cut,
// new ones refused) while a worker runs researches. When it is back the
// jobs resume: every research completes, each planned once.
func TestDatabaseAway(t *testing.T) {
	if testing.Short() {
		t.Skip("half a minute long")
	}
	dsn := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, u.Host)
	u.Host = px.ln.Addr().String()
	ctx := context.Background()
	st, err := postgres.Open(ctx, u.String(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fake, plans := model()
	src := &researchtest.Source{SourceName: "web", Entered: make(chan struct{})}
	src.Hold.Store(true)
	creator := runner(st, fake, src)
	var ids []string
	for i := range 4 {
		r, err := creator.Create(ctx, fmt.Sprintf("What is alpha number %d?", i), research.Options{Sources: []string{"web"}, Level: "quick", Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	enqueue(t, st, ids...)
	q, err := jobs.Open(ctx, st, jobs.Options{Workers: 2, Research: runner(st, fake, src), Poll: 100 * time.Millisecond, RescueAfter: rescueAfter})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-src.Entered
	px.down.Store(true)
	px.cut()
	src.Hold.Store(false)
	time.Sleep(30 * time.Second)
	px.down.Store(false)
	// A job River fetched as the connection was cut is running in the
	// database though no worker got it (the fetch committed, its reply was
	// lost); River rescues it RescueAfter after its attempt, at its next
	// rescue round (a minute apart at most), so the wait outlasts that (in
	// CI once: "still pending" 90 s after the database came back, 120 s
	// after the cut).
	completeAfter(t, st, ids, rescueAfter+time.Minute, "after the database came back")
	plans.Range(func(q, c any) bool {
		if n := c.(*atomic.Int64).Load(); n != 1 {
			t.Errorf("%s planned %d times", q, n)
		}
		return true
	})
}
