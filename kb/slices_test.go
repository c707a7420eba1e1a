package kb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

// tunedStore counts the Tuner calls an ingest makes.
type tunedStore struct {
	*sqlite.Store
	before, after int
	written       []int
	afterTakes    time.Duration // how long AfterIngest works
}

func (t *tunedStore) AfterIngest(_ context.Context, _ *store.KB, written int) error {
	t.after++
	t.written = append(t.written, written)
	time.Sleep(t.afterTakes)
	return nil
}

func (t *tunedStore) WhileIngesting(context.Context, *store.KB, int) error { return nil }

func (t *tunedStore) BeforeIngest(context.Context, *store.KB) (int, error) {
	t.before++
	return 1, nil
}

// TestAddPathsInSlices: a corpus larger than a slice is written a slice
// at a time as one ingest: one report, a URL given twice refused across
// slices as within one, bad lines reported, and the knowledge base's
// indexes brought up to date once, over every chunk written.
func TestAddPathsInSlices(t *testing.T) {
	defer func(d, b int) { sliceDocs, sliceBytes = d, b }(sliceDocs, sliceBytes)
	sliceDocs, sliceBytes = 3, 1<<20
	ctx := context.Background()
	dir := t.TempDir()
	sq, err := sqlite.Open(ctx, filepath.Join(dir, "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &tunedStore{Store: sq, afterTakes: 50 * time.Millisecond}
	s := New(st, nil)
	emb := embed.Hash{Dim: 64}
	if _, err := s.Create(ctx, "big", "", emb); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"_id": "d%d", "title": "Doc %d", "text": "Paragraph %d is about walnut%d."}`, i, i, i, i))
	}
	lines = append(lines, `{"_id": "d11", "url": "kb://big/d2", "text": "The same address as d2, given again."}`, `not json`)
	a := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(a, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(md, []byte("# Notes\n\nA note about almonds.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var progress []Progress
	rep, err := s.AddPaths(ctx, "big", []string{a, md}, AddOptions{Embedder: emb, Progress: func(p Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 11 || rep.Chunks != 11 || len(rep.Failed) != 2 {
		t.Fatalf("report %+v, want 11 added in 11 chunks and 2 failed", rep)
	}
	if !strings.Contains(rep.Failed[0].Reason+rep.Failed[1].Reason, "duplicate source URL kb://big/d2") {
		t.Fatalf("the URL given twice across slices was not refused: %+v", rep.Failed)
	}
	if st.before != 1 {
		t.Fatalf("BeforeIngest called %d times, want once for the ingest's four slices", st.before)
	}
	if st.after != 1 || st.written[0] != 11 {
		t.Fatalf("AfterIngest called %d times with %v, want once with 11", st.after, st.written)
	}
	if rep.WrittenSeconds <= 0 || rep.Seconds-rep.WrittenSeconds < st.afterTakes.Seconds() {
		t.Fatalf("written after %vs, done after %vs: the store's work after the writes (%v) is not between them", rep.WrittenSeconds, rep.Seconds, st.afterTakes)
	}
	if len(progress) < 4 || progress[len(progress)-1] != (Progress{Done: 11, Total: 11}) {
		t.Fatalf("progress %v, want a report per slice ending at 11 of 11", progress)
	}
	for _, w := range []string{"walnut0", "walnut9", "almonds"} {
		res, err := s.Search(ctx, "big", emb, Query{Text: w, K: 1, Mode: ModeBM25})
		if err != nil || len(res) == 0 {
			t.Fatalf("%s not found: %v", w, err)
		}
	}
	// Again: every document unchanged, in slices too.
	rep, err = s.AddPaths(ctx, "big", []string{a, md}, AddOptions{Embedder: emb})
	if err != nil || rep.Unchanged != 11 || rep.Added+rep.Updated != 0 {
		t.Fatalf("second ingest %+v, %v: want 11 unchanged", rep, err)
	}
}
