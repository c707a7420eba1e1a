package sqlite_test

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

// TestChunkTermSearch: chunks are ranked by BM25 over their terms within
// their knowledge base, the filters hold, incomplete documents are never
// found, and the index follows every write that removes chunks (a
// source replaced or removed, a knowledge base removed).
func TestChunkTermSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "docs", Embedder: "e", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.KBCreate(ctx, store.KBCreateParams{Name: "other", Embedder: "e", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	src := func(url, lang string, stale bool) store.Source {
		return store.Source{URL: url, Title: url, Content: "x", Language: lang, CrawledAt: time.Now(), IsStale: stale, ContentHash: "h"}
	}
	chunk := func(i int, terms string, v ...float32) store.Chunk {
		return store.Chunk{ChunkIndex: i, Text: terms, Terms: terms, Language: "en", Embedding: v}
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{
		{Source: src("https://a.test/gc", "en", false), Chunks: []store.Chunk{chunk(0, "gc auto default 6700 loos object", 1, 0), chunk(1, "gc prune expir", 0, 1)}},
		{Source: src("https://a.test/push", "en", false), Chunks: []store.Chunk{chunk(0, "push default simpl current branch", 0.6, 0.8)}},
		{Source: src("https://b.test/old", "en", true), Chunks: []store.Chunk{chunk(0, "gc auto stale copi", 1, 0)}},
		{Source: src("https://a.test/ko", "ko", false), Chunks: []store.Chunk{{ChunkIndex: 0, Text: "기본값", Terms: "기본 본값 gc", Language: "ko", Embedding: []float32{1, 0}}}},
	}); err != nil {
		t.Fatal(err)
	}
	// A document still being written: its content hash is empty.
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: store.Source{URL: "https://a.test/partial", Title: "p", Content: "x", CrawledAt: time.Now()}, Chunks: []store.Chunk{chunk(0, "gc auto partial")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SourcePutBatch(ctx, other.ID, []store.SourcePut{{Source: src("https://a.test/gc", "en", false), Chunks: []store.Chunk{chunk(0, "gc auto gc auto gc auto")}}}); err != nil {
		t.Fatal(err)
	}
	urls := func(f store.ChunkFilter, terms ...string) []string {
		t.Helper()
		hits, err := s.ChunkTermSearch(ctx, store.TermQuery{KBID: kb.ID, Terms: terms, K: 10, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(hits))
		for i, h := range hits {
			ids[i] = h.ChunkID
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("not ranked: %+v", hits)
			}
		}
		cs, err := s.ChunksGet(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, strings.TrimPrefix(c.SourceURL, "https://"))
		}
		return out
	}
	if got := urls(store.ChunkFilter{}, "gc", "auto"); !slices.Equal(got, []string{"a.test/gc", "a.test/gc", "a.test/ko"}) {
		t.Fatalf("gc auto: %v", got)
	}
	if got := urls(store.ChunkFilter{IncludeStale: true}, "auto"); !slices.Equal(got, []string{"b.test/old", "a.test/gc"}) {
		t.Fatalf("with stale: %v", got)
	}
	if got := urls(store.ChunkFilter{Language: "ko"}, "gc", "기본"); !slices.Equal(got, []string{"a.test/ko"}) {
		t.Fatalf("ko: %v", got)
	}
	if got := urls(store.ChunkFilter{SourcePrefix: "https://a.test/p"}, "default"); !slices.Equal(got, []string{"a.test/push"}) {
		t.Fatalf("prefix: %v", got)
	}
	if got := urls(store.ChunkFilter{}, `"`, "it's", "nothing"); len(got) != 0 {
		t.Fatalf("quotes: %v", got)
	}
	if got := urls(store.ChunkFilter{}); len(got) != 0 {
		t.Fatalf("no terms: %v", got)
	}
	near, err := s.ChunkNearest(ctx, store.VectorQuery{KBID: kb.ID, Vector: []float32{0, 1}, K: 2, Filter: store.ChunkFilter{Language: "en"}})
	if err != nil || len(near) != 2 || near[0].Score != 1 || math.Abs(near[1].Score-0.8) > 1e-6 {
		t.Fatalf("nearest: %+v %v", near, err)
	}
	// Replacing a source's chunks and removing a source leave the index
	// with what is there.
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: src("https://a.test/gc", "en", false), Chunks: []store.Chunk{chunk(0, "collect garbag")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SourceDelete(ctx, kb.ID, "https://a.test/ko"); err != nil {
		t.Fatal(err)
	}
	if got := urls(store.ChunkFilter{}, "gc", "auto", "garbag"); !slices.Equal(got, []string{"a.test/gc"}) {
		t.Fatalf("after writes: %v", got)
	}
	if err := s.KBDelete(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?`, "_kb"+strconv.FormatInt(other.ID, 10)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a removed knowledge base's chunks left in the index: %d %v", n, err)
	}
}

// TestChunkNearestAtScale: past rerank×K chunks the codes choose the
// candidates, which still hold the true nearest; a filter that keeps
// few of them falls back to comparing all it keeps; the codes of chunks
// written before codes existed are filled in by the next open.
func TestChunkNearestAtScale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "many", Embedder: "e", Dimension: 64})
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	vec := func(i int) []float32 {
		v := make([]float32, 64)
		for j := range v {
			v[j] = float32(math.Sin(float64(i*64+j) * 0.7))
		}
		var norm float64
		for _, f := range v {
			norm += float64(f * f)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(norm))
		}
		return v
	}
	var puts []store.SourcePut
	for i := range n {
		lang := "en"
		if i == 17 {
			lang = "ko"
		}
		puts = append(puts, store.SourcePut{Source: store.Source{URL: "https://a.test/" + strconv.Itoa(i), Title: "t", Content: "x", Language: lang, CrawledAt: time.Now(), ContentHash: "h"},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "x", Terms: "x", Language: lang, Embedding: vec(i)}}})
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, puts); err != nil {
		t.Fatal(err)
	}
	// Chunks are written many to a statement, their rows returned in no
	// set order: each code is its own chunk's.
	rows, err := s.SQL.QueryContext(ctx, `SELECT s.url, c.code FROM chunk_codes c JOIN chunks ch ON ch.id = c.chunk_id JOIN sources s ON s.id = ch.source_id`)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var url string
		var code []byte
		if err := rows.Scan(&url, &code); err != nil {
			t.Fatal(err)
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(url, "https://a.test/"))
		if !bytes.Equal(code, store.Code(vec(i))) {
			t.Fatalf("%s holds another chunk's code", url)
		}
		seen++
	}
	if err := rows.Close(); err != nil || seen != n {
		t.Fatalf("%d codes of %d: %v", seen, n, err)
	}
	check := func(s *sqlite.Store) {
		t.Helper()
		// K=2: 8 candidates of 600. The query is chunk 300's vector.
		hits, err := s.ChunkNearest(ctx, store.VectorQuery{KBID: kb.ID, Vector: vec(300), K: 2})
		if err != nil || len(hits) != 2 || math.Abs(hits[0].Score-1) > 1e-5 {
			t.Fatalf("nearest: %+v %v", hits, err)
		}
		c, err := s.ChunksGet(ctx, []int64{hits[0].ChunkID})
		if err != nil || len(c) != 1 || c[0].SourceURL != "https://a.test/300" {
			t.Fatalf("nearest is %+v %v", c, err)
		}
		// Only chunk 17 is Korean: far from the query, found by the fallback.
		hits, err = s.ChunkNearest(ctx, store.VectorQuery{KBID: kb.ID, Vector: vec(300), K: 2, Filter: store.ChunkFilter{Language: "ko"}})
		if err != nil || len(hits) != 1 {
			t.Fatalf("filtered: %+v %v", hits, err)
		}
	}
	check(s)
	// As a database from before codes: none stored, the backfill pending.
	if _, err := s.SQL.ExecContext(ctx, `DELETE FROM chunk_codes; INSERT INTO pending_backfill (name) VALUES ('chunk_codes')`); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var codes, pending int
	if err := s.SQL.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM chunk_codes), (SELECT count(*) FROM pending_backfill)`).Scan(&codes, &pending); err != nil || codes != n || pending != 0 {
		t.Fatalf("backfill: %d codes, %d pending, %v", codes, pending, err)
	}
	check(s)
}
