package jobs_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
)

// TestPostgresConnectionsKilled: PostgreSQL drops every connection of a
// running worker (as a server restart does) while its researches are
// mid-run. No research is left processing: each is finished, by the same
// worker once its store reconnects, from its checkpoint.
func TestPostgresConnectionsKilled(t *testing.T) {
	dsn := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("quarry-pgfault-%d", time.Now().UnixNano())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
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
		r, err := creator.Create(ctx, fmt.Sprintf("What is alpha number %d?", i), research.Options{Sources: []string{"web"}, Level: "quick"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	enqueue(t, st, ids...)
	stop := work(t, st, runner(st, fake, src), 2)
	defer stop()
	<-src.Entered

	// Drop every connection the worker's store holds, from outside.
	admin, err := sql.Open("pgx", strings.Split(dsn, "?")[0]+"?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var killed int
	if err := admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("no connection of the worker's store was found to terminate")
	}
	src.Hold.Store(false)

	// An attempt whose connection died while it released its lease
	// leaves the lease to run out (30 s) before the next attempt may take
	// the research: wait past that, with room for a loaded machine.
	completeAfter(t, st, ids, 90*time.Second, "after the connections were dropped")
	n := 0
	plans.Range(func(q, c any) bool {
		n++
		return true
	})
	if n != 4 {
		t.Fatalf("%d researches planned, want 4", n)
	}
	t.Logf("terminated %d connections", killed)
}

// completeAfter waits up to wait for every research to end, and fails
// unless each completed; after says what they went through.
func completeAfter(t *testing.T, st store.Store, ids []string, wait time.Duration, after string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for _, id := range ids {
		for {
			r, err := research.Load(context.Background(), st, id)
			if err == nil && r.Status != research.StatusPending && r.Status != research.StatusProcessing {
				if r.Status != research.StatusCompleted {
					t.Fatalf("research %s ended %s (%s at %s)", id, r.Status, r.Error, r.FailedStage)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("research %s still %v %s (%v)", id, r.Status, after, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
