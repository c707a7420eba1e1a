package app_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var corpus = filepath.Join("..", "cmd", "quarry", "testdata", "research", "corpus.jsonl")

// watchAcross runs a research in one App and watches it from another on
// the same store; it returns the sequence numbers seen and their
// store-to-receive latencies.
func watchAcross(t *testing.T, cfg app.Config) ([]int64, []time.Duration, int64) {
	t.Helper()
	ctx := context.Background()
	runner, watcher := app.New(cfg, nil), app.New(cfg, nil)
	t.Cleanup(func() { runner.Close(); watcher.Close() })
	if err := runner.IngestDocs(ctx, []string{corpus}, nopWriter{}); err != nil {
		t.Fatal(err)
	}
	rn, err := runner.Runner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rn.Create(ctx, "Who was Giuseppe Verdi?", research.Options{Sources: []string{"kb:" + app.DocsKBName(corpus)}, Level: "standard"})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	var lat []time.Duration
	done := make(chan error, 1)
	go func() {
		done <- watcher.Watch(ctx, r.ID, 0, func(e store.ResearchEvent) error {
			seqs = append(seqs, e.Seq)
			lat = append(lat, time.Since(e.At))
			return nil
		})
	}()
	time.Sleep(100 * time.Millisecond) // the watcher waits on a pending research
	if _, err := rn.Run(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not see the research end")
	}
	evs, err := runner.CurrentStore().ResearchEvents(ctx, r.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return seqs, lat, int64(len(evs))
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func checkSeqs(t *testing.T, seqs []int64, n int64) {
	t.Helper()
	if int64(len(seqs)) != n {
		t.Fatalf("saw %d events of %d", len(seqs), n)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, s)
		}
	}
}

// TestWatchAcrossProcessesPostgres: a research run by one App (a worker)
// and watched from another (a server) on PostgreSQL arrives whole, in
// order, through LISTEN/NOTIFY.
func TestWatchAcrossProcessesPostgres(t *testing.T) {
	url := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	seqs, lat, n := watchAcross(t, app.Config{DatabaseURL: url, Embedder: "hash"})
	checkSeqs(t, seqs, n)
	slices.Sort(lat)
	t.Logf("%d events; store-to-receive p50 %s, p99 %s", n, lat[len(lat)/2], lat[len(lat)*99/100])
}

// TestWatchAcrossProcessesSQLite: the same on the embedded store, where
// the watcher reads the store.
func TestWatchAcrossProcessesSQLite(t *testing.T) {
	seqs, _, n := watchAcross(t, app.Config{DataDir: t.TempDir(), Embedder: "hash"})
	checkSeqs(t, seqs, n)
}
