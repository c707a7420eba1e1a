// Package storetest is the conformance suite every store.Store backend runs.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/store"
)

// Opener returns a fresh, empty store for one test; it registers its own cleanup.
type Opener func(t *testing.T) store.Store

// Exercise runs the conformance suite against a backend: one part per
// entity, each a function a new entity adds beside the others.
func Exercise(t *testing.T, open Opener) {
	t.Helper()
	ExerciseKnowledgeBases(t, open)
	ExerciseThreads(t, open)
	ExerciseTokens(t, open)
	ExerciseIngests(t, open)
	ExerciseResearches(t, open)
	ExerciseConsole(t, open)
}

func mustKB(t *testing.T, s store.Store, name string) *store.KB {
	t.Helper()
	kb, err := s.KBCreate(context.Background(), store.KBCreateParams{Name: name, Embedder: "hash-v1", Dimension: 4})
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

func src(url, title, content string, lm *time.Time) store.Source {
	return store.Source{URL: url, Title: title, Content: content, Language: "en", LastModified: lm, CrawledAt: time.Now(),
		Metadata: map[string]string{"keywords": "k1, k2"}, ContentHash: "h-" + url}
}

func chunks(n, dim int) []store.Chunk {
	out := make([]store.Chunk, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(i) + 0.5*float32(j)
		}
		v[0] = 1
		out[i] = store.Chunk{ChunkIndex: i, Text: "chunk text", TokenCount: 10, Language: "en", Embedding: v, Terms: "term" + string(rune('0'+i))}
	}
	return out
}

// ExerciseVector checks native vector search: nearest chunks by cosine, best first.
func ExerciseVector(t *testing.T, s interface {
	store.Store
	store.VectorSearcher
}) {
	t.Helper()
	ctx := context.Background()
	kb := mustKB(t, s, "vec")
	vecs := [][]float32{{1, 0, 0, 0}, {0.9, 0.1, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {-1, 0, 0, 0}}
	var puts []store.SourcePut
	for i, v := range vecs {
		puts = append(puts, store.SourcePut{
			Source: src("https://v.test/"+string(rune('a'+i)), "V", "v", nil),
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "v", TokenCount: 1, Embedding: v}},
		})
	}
	ids, err := s.SourcePutBatch(ctx, kb.ID, puts)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := s.ChunkVectorSearch(ctx, store.VectorQuery{KBID: kb.ID, Dimension: 4, Vector: []float32{1, 0.05, 0, 0}, K: 3, Filter: store.ChunkFilter{IncludeStale: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Fatalf("hits: %+v", hits)
	}
	var got []string
	for _, h := range hits {
		c, err := s.ChunkGet(ctx, h.ChunkID)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.SourceURL)
	}
	if got[0] != "https://v.test/a" && got[0] != "https://v.test/b" || got[2] != "https://v.test/c" || hits[0].Score < hits[2].Score {
		t.Fatalf("order: %v %+v (ids %v)", got, hits, ids)
	}
	if _, err := s.ChunkVectorSearch(ctx, store.VectorQuery{KBID: kb.ID, Dimension: 4, Vector: []float32{1, 0}, K: 3}); err == nil {
		t.Fatal("wrong dimension accepted")
	}
}

// OpenAtOnce opens four stores at once over one new database (processes
// starting together: two `quarry kb add` on a new data directory,
// replicas on a new PostgreSQL database) and fails unless each opens,
// migrated, and reads.
func OpenAtOnce(t *testing.T, open func(ctx context.Context) (store.Store, error)) {
	t.Helper()
	ctx := context.Background()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			// A panic opening is that opener's failure, not the test binary's.
			errs <- safe.Call(func() error {
				s, err := open(ctx)
				if err != nil {
					return err
				}
				defer s.Close()
				_, err = s.KBList(ctx)
				return err
			})
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
