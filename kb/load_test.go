package kb_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
)

// slowScan holds ChunkScan of one knowledge base until release is closed,
// and counts the scans.
type slowScan struct {
	store.Store
	slowKB  int64
	release chan struct{}
	scans   atomic.Int64
}

func (s *slowScan) ChunkScan(ctx context.Context, kbID int64, fn func(store.IndexedChunk) error) error {
	if kbID == s.slowKB {
		s.scans.Add(1)
		<-s.release
	}
	return s.Store.ChunkScan(ctx, kbID, fn)
}

// TestLoadsDoNotBlockOtherKBs: while one knowledge base's index loads,
// searches on another go on; concurrent searches of the loading one share
// one load.
func TestLoadsDoNotBlockOtherKBs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := openSQLite(t)
	setup := kb.New(base, nil)
	dir := t.TempDir()
	for _, name := range []string{"slow", "fast"} {
		if _, err := setup.Create(ctx, name, "", embed.Hash{}); err != nil {
			t.Fatal(err)
		}
		p := write(t, dir, name+".md", "# "+name+"\n\nThe "+name+" knowledge base talks about rivers and mountains.\n")
		if _, err := setup.AddPaths(ctx, name, []string{p}, kb.AddOptions{Embedder: embed.Hash{}}); err != nil {
			t.Fatal(err)
		}
	}
	slowKB, err := setup.Get(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	st := &slowScan{Store: base, slowKB: slowKB.ID, release: make(chan struct{})}
	svc := kb.New(st, nil)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := svc.Search(ctx, "slow", embed.Hash{}, kb.Query{Text: "rivers", K: 3}); err != nil {
				t.Error(err)
			}
		}()
	}
	for st.scans.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan error, 1)
	go func() {
		_, err := svc.Search(ctx, "fast", embed.Hash{}, kb.Query{Text: "mountains", K: 3})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a search on another knowledge base waited for the load")
	}
	close(st.release)
	wg.Wait()
	if n := st.scans.Load(); n != 1 {
		t.Fatalf("%d loads of one knowledge base, want 1", n)
	}
}
