package kb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/store/sqlite"
)

// TestIndexCatchesUp: a loaded index takes what a write added, replaced
// or made stale without loading again, while searches run; past a share
// of deleted chunks it loads again.
func TestIndexCatchesUp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := New(st, nil)
	emb := embed.Hash{Dim: 64}
	k, err := s.Create(ctx, "n", "", emb)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddPaths(ctx, "n", []string{p}, AddOptions{Embedder: emb}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	found := func(word string) bool {
		t.Helper()
		res, err := s.Search(ctx, "n", emb, Query{Text: word, K: 5, Mode: ModeBM25})
		if err != nil {
			t.Fatal(err)
		}
		return len(res) > 0
	}
	for i := range 8 {
		write(fmt.Sprintf("doc%d.md", i), fmt.Sprintf("Document %d talks about walnut%d and nothing else.", i, i))
	}
	if !found("walnut3") {
		t.Fatal("not loaded")
	}
	first := s.indexes[k.ID]

	// Searches keep running while writes land (run with -race).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Search(ctx, "n", emb, Query{Text: "walnut1 document", K: 5}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	write("new.md", "A new page about hazelnuts.")
	write("doc2.md", "Document 2 now talks about almonds.")
	if !found("hazelnuts") || !found("almonds") || found("walnut2") {
		t.Fatal("the index did not catch up with an added and a replaced document")
	}
	for range 3 {
		if _, err := st.SourceMarkFailure(ctx, k.ID, "file://"+filepath.Join(dir, "doc5.md"), 3); err != nil {
			t.Fatal(err)
		}
	}
	if found("walnut5") {
		t.Fatal("a stale source is still searched")
	}
	close(stop)
	wg.Wait()
	if s.indexes[k.ID] != first {
		t.Fatal("the index was loaded again instead of catching up")
	}
	v, _ := st.KBVersion(ctx, k.ID)
	if first.version.Load() != v || len(first.dead) != 1 {
		t.Fatalf("version %d of %d, %d dead", first.version.Load(), v, len(first.dead))
	}

	// Replacing most documents loads the index again.
	for i := range 6 {
		write(fmt.Sprintf("doc%d.md", i), fmt.Sprintf("Document %d is about pecans%d now.", i, i))
	}
	if !found("pecans4") || found("walnut4") {
		t.Fatal("after many replacements")
	}
	if s.indexes[k.ID] == first {
		t.Fatal("an index with most chunks dead was not loaded again")
	}
}
