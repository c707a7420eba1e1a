package kb_test

import (
	"context"
	"testing"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

// nearestRecorder is a real store that notes what each nearest-chunk
// search was asked.
type nearestRecorder struct {
	*sqlite.Store
	asked []store.VectorQuery
}

func (r *nearestRecorder) ChunkNearest(ctx context.Context, q store.VectorQuery) ([]store.VectorHit, error) {
	r.asked = append(r.asked, q)
	return r.Store.ChunkNearest(ctx, q)
}

// TestHybridListIsFused: a search in the store marks its vector list as
// fused when it is a hybrid search's (the store then searches it no deeper
// than its default), not when it is a vector search's.
func TestHybridListIsFused(t *testing.T) {
	ctx := context.Background()
	rec := &nearestRecorder{Store: openSQLite(t).(*sqlite.Store)}
	svc := kb.New(rec, nil)
	svc.SetInStore(true)
	emb := embed.Hash{}
	if _, err := svc.Create(ctx, "f", "", emb); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, "a.md", "The crawler re-crawls stale pages every five minutes.\n")
	if _, err := svc.AddPaths(ctx, "f", []string{dir}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode  string
		fused bool
	}{{kb.ModeHybrid, true}, {kb.ModeVector, false}} {
		rec.asked = nil
		hits, err := svc.Search(ctx, "f", emb, kb.Query{Text: "stale pages", K: 3, Mode: tc.mode})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%s: %d hits (%v)", tc.mode, len(hits), err)
		}
		if len(rec.asked) != 1 || rec.asked[0].Fused != tc.fused {
			t.Fatalf("%s: nearest-chunk searches %+v, want one with Fused %v", tc.mode, rec.asked, tc.fused)
		}
	}
}
