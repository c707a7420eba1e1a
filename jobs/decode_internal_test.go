package jobs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store/sqlite"
)

// oldResearchArgs are a research job's arguments as an older or newer
// Quarry might have written them: its id a number.
type oldResearchArgs struct {
	ID int `json:"id"`
}

func (oldResearchArgs) Kind() string { return "research" }

// TestArgsThatDoNotDecode: a job whose arguments no longer decode is
// retried a bounded number of times, then discarded with the reason; the
// worker goes on.
func TestArgsThatDoNotDecode(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := Open(ctx, st, Options{Workers: 1, Research: nopRunner{}, Poll: 20 * time.Millisecond, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.client.Insert(ctx, oldResearchArgs{ID: 7}, nil); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state, errs string
		var attempt int
		if err := st.SQL.QueryRowContext(ctx, `SELECT state, attempt, COALESCE(errors, '') FROM river_job WHERE kind = 'research'`).Scan(&state, &attempt, &errs); err != nil {
			t.Fatal(err)
		}
		if state == "discarded" {
			if attempt != 5 {
				t.Fatalf("discarded after %d attempts, want 5", attempt)
			}
			t.Logf("discarded after %d attempts; last error: %.200s", attempt, errs)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job is %s after %d attempts", state, attempt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nopRunner runs no research: none decodes.
type nopRunner struct{}

func (nopRunner) Work(context.Context, string) (*research.Research, error) {
	return nil, errors.New("no research runs here")
}

func (nopRunner) Fail(context.Context, string, error) (*research.Research, error) {
	return nil, errors.New("no research runs here")
}
