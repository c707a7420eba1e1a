package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ExerciseKnowledgeBases is the conformance part for knowledge bases, their sources, chunks, crawl logs and pending pages.
func ExerciseKnowledgeBases(t *testing.T, open Opener) {
	t.Helper()
	t.Run("KBLifecycle", func(t *testing.T) { kbLifecycle(t, open) })
	t.Run("SourcesAndChunks", func(t *testing.T) { sourcesAndChunks(t, open) })
	t.Run("AppendChunks", func(t *testing.T) { appendChunks(t, open) })
	t.Run("SameSourceTwiceInABatch", func(t *testing.T) { sameSourceTwice(t, open) })
	t.Run("StaleAfterThreeFailures", func(t *testing.T) { staleAfterThreeFailures(t, open) })
	t.Run("CrawlLogs", func(t *testing.T) { crawlLogs(t, open) })
	t.Run("CrawlPending", func(t *testing.T) { crawlPending(t, open) })
}

// kbLifecycle: a knowledge base is created once by name, read, listed
// newest first and deleted; a second delete finds nothing.
func kbLifecycle(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "notes", Embedder: "hash-v1", Dimension: 8})
	if err != nil {
		t.Fatal(err)
	}
	if kb.ID == 0 || kb.CreatedAt.IsZero() {
		t.Fatalf("kb not filled: %+v", kb)
	}
	if _, err := s.KBCreate(ctx, store.KBCreateParams{Name: "notes", Embedder: "hash-v1", Dimension: 8}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate create: got %v, want ErrExists", err)
	}
	got, err := s.KBGet(ctx, "notes")
	if err != nil || got.ID != kb.ID || got.Embedder != "hash-v1" || got.Dimension != 8 {
		t.Fatalf("get: %+v %v", got, err)
	}
	if !got.CreatedAt.Equal(kb.CreatedAt.Truncate(time.Microsecond)) && got.CreatedAt.Sub(kb.CreatedAt).Abs() > time.Millisecond {
		t.Fatalf("created_at round trip: %v vs %v", got.CreatedAt, kb.CreatedAt)
	}
	if _, err := s.KBCreate(ctx, store.KBCreateParams{Name: "another", Embedder: "hash-v1", Dimension: 8}); err != nil {
		t.Fatal(err)
	}
	list, err := s.KBList(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "another" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := s.KBDelete(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KBGet(ctx, "notes"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := s.KBDelete(ctx, "notes"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

// sourcesAndChunks: sources are written with their chunks in batches and
// read back, listed, filtered and deleted, and every write moves the
// knowledge base's version. It is one scenario over one store, each step
// on the rows the steps before it left, so it stays one function.
func sourcesAndChunks(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	kb := mustKB(t, s, "docs")
	v0, _ := s.KBVersion(ctx, kb.ID)
	lm := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	ids, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{
		{Source: src("file:///a.md", "A", "alpha text", &lm), Chunks: chunks(2, 4)},
		{Source: src("file:///b.md", "B", "beta text", nil), Chunks: chunks(3, 4)},
	})
	if err != nil || len(ids) != 2 {
		t.Fatalf("put: %v %v", ids, err)
	}
	if v1, _ := s.KBVersion(ctx, kb.ID); v1 <= v0 {
		t.Fatalf("version did not increase: %d -> %d", v0, v1)
	}
	got, err := s.SourceGet(ctx, kb.ID, "file:///a.md")
	if err != nil {
		t.Fatal(err)
	}
	cs, total, err := s.SourceChunks(ctx, kb.ID, "file:///b.md", 0, 10)
	if err != nil || total != 3 || len(cs) != 3 || cs[0].ChunkIndex != 0 || cs[2].ChunkIndex != 2 || cs[1].Text != "chunk text" || cs[1].TokenCount != 10 || cs[1].SourceID != ids[1] {
		t.Fatalf("source chunks: %+v %d %v", cs, total, err)
	}
	if cs, total, err := s.SourceChunks(ctx, kb.ID, "file:///b.md", 1, 1); err != nil || total != 3 || len(cs) != 1 || cs[0].ChunkIndex != 1 {
		t.Fatalf("a page of source chunks: %+v %d %v", cs, total, err)
	}
	if _, _, err := s.SourceChunks(ctx, kb.ID, "file:///none.md", 0, 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("chunks of a missing source: %v", err)
	}
	if got.Title != "A" || got.Content != "alpha text" || got.Language != "en" || got.Metadata["keywords"] != "k1, k2" ||
		got.LastModified == nil || !got.LastModified.Equal(lm) || got.ContentHash != "h-file:///a.md" {
		t.Fatalf("source round trip: %+v", got)
	}
	st, err := s.KBStats(ctx, kb.ID)
	if err != nil || st.Sources != 2 || st.Chunks != 5 || st.Stale != 0 || st.Tokens != 50 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	var scanned []store.IndexedChunk
	if err := s.ChunkScan(ctx, kb.ID, func(c store.IndexedChunk) error { scanned = append(scanned, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(scanned) != 5 || scanned[0].SourceURL != "file:///a.md" || scanned[0].SourceTitle != "A" || len(scanned[0].Embedding) != 4 || scanned[0].Terms != "term0" {
		t.Fatalf("scan: %+v", scanned)
	}
	var after []int64
	if err := s.ChunkScanAfter(ctx, kb.ID, scanned[2].ID, func(c store.IndexedChunk) error { after = append(after, c.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || after[0] != scanned[3].ID || after[1] != scanned[4].ID {
		t.Fatalf("scan after %d: %v", scanned[2].ID, after)
	}
	if ts, ok := s.(store.TextScanner); ok {
		var text []store.IndexedChunk
		if err := ts.ChunkScanTextAfter(ctx, kb.ID, scanned[0].ID, func(c store.IndexedChunk) error { text = append(text, c); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(text) != 4 || text[0].ID != scanned[1].ID || text[0].Embedding != nil || text[0].Terms != scanned[1].Terms || text[0].SourceURL != scanned[1].SourceURL {
			t.Fatalf("scan without embeddings after %d: %+v", scanned[0].ID, text)
		}
	}
	states, err := s.ChunkStates(ctx, kb.ID)
	if err != nil || len(states) != 5 || states[0].ID != scanned[0].ID || states[4].ID != scanned[4].ID || states[0].IsStale {
		t.Fatalf("chunk states: %+v %v", states, err)
	}
	c, err := s.ChunkGet(ctx, scanned[4].ID)
	if err != nil || c.SourceURL != "file:///b.md" || c.ChunkIndex != 2 || c.Embedding[3] != 3.5 {
		t.Fatalf("chunk get: %+v %v", c, err)
	}

	// Replacing b's chunks leaves a's alone.
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: src("file:///b.md", "B2", "beta v2", nil), Chunks: chunks(1, 4)}}); err != nil {
		t.Fatal(err)
	}
	st, _ = s.KBStats(ctx, kb.ID)
	if st.Sources != 2 || st.Chunks != 3 {
		t.Fatalf("after replace: %+v", st)
	}

	// A batch that breaks a rule is rolled back whole: nothing half-written.
	bad := []store.SourcePut{
		{Source: src("file:///c.md", "C", "gamma", nil), Chunks: chunks(1, 4)},
		{Source: src("file:///d.md", "D", "delta", nil), Chunks: append(chunks(1, 4), chunks(1, 4)...)},
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, bad); err == nil {
		t.Fatal("duplicate chunk_index accepted")
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: src("", "E", "x", nil)}}); err == nil {
		t.Fatal("empty url accepted")
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: src("https://x.test/"+strings.Repeat("p", 500), "E", "x", nil)}}); err == nil {
		t.Fatal("url over 500 characters accepted")
	}
	st, _ = s.KBStats(ctx, kb.ID)
	if st.Sources != 2 || st.Chunks != 3 {
		t.Fatalf("failed batch left rows behind: %+v", st)
	}

	list, err := s.SourceList(ctx, kb.ID)
	if err != nil || len(list) != 2 || list[1].Title != "B2" || list[1].Content != "" {
		t.Fatalf("source list: %+v %v", list, err)
	}
	if err := s.SourceDelete(ctx, kb.ID, "file:///a.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SourceGet(ctx, kb.ID, "file:///a.md"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	st, _ = s.KBStats(ctx, kb.ID)
	if st.Sources != 1 || st.Chunks != 1 {
		t.Fatalf("after delete: %+v", st)
	}
	// Deleting the KB removes its sources and chunks.
	if err := s.KBDelete(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = s.ChunkScan(ctx, kb.ID, func(store.IndexedChunk) error { n++; return nil })
	if n != 0 {
		t.Fatalf("%d chunks survived kb delete", n)
	}
}

// appendChunks: a document too large for one transaction: the source first, with no
// chunks and an empty content hash, then its chunks batch by batch, the
// last batch setting the hash and validators.
// sameSourceTwice: a batch that puts one URL twice ends with the later
// put's chunks, as two puts one after the other would.
func sameSourceTwice(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	kb := mustKB(t, s, "twice")
	first, later := chunks(3, 4), chunks(2, 4)
	later[1].Text = "the later text"
	ids, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{
		{Source: src("file:///t.md", "T", "one", nil), Chunks: first},
		{Source: src("file:///u.md", "U", "u", nil), Chunks: chunks(1, 4)},
		{Source: src("file:///t.md", "T", "two", nil), Chunks: later},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 || ids[0] != ids[2] || ids[0] == ids[1] {
		t.Fatalf("ids %v: want one id for the URL put twice, another for the other", ids)
	}
	got, total, err := s.SourceChunks(ctx, kb.ID, "file:///t.md", 0, 10)
	if err != nil || total != 2 || len(got) != 2 || got[1].Text != "the later text" {
		t.Fatalf("chunks of a source put twice: %d %+v %v", total, got, err)
	}
	if sg, err := s.SourceGet(ctx, kb.ID, "file:///t.md"); err != nil || sg.Content != "two" || sg.ID != ids[0] {
		t.Fatalf("the source put twice is %+v (%v), want the later content", sg, err)
	}
	if st, err := s.KBStats(ctx, kb.ID); err != nil || st.Sources != 2 || st.Chunks != 3 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	// More sources than one statement writes: each put gets its own
	// source's id, in order.
	var many []store.SourcePut
	for i := range 1234 {
		many = append(many, store.SourcePut{Source: src(fmt.Sprintf("file:///many/%d.md", i), "M", fmt.Sprint("content ", i), nil), Chunks: chunks(1, 4)})
	}
	ids, err = s.SourcePutBatch(ctx, kb.ID, many)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 499, 500, 1233} {
		sg, err := s.SourceGet(ctx, kb.ID, many[i].Source.URL)
		if err != nil || sg.ID != ids[i] || sg.Content != fmt.Sprint("content ", i) {
			t.Fatalf("put %d: id %d, source %+v (%v)", i, ids[i], sg, err)
		}
	}
	if st, err := s.KBStats(ctx, kb.ID); err != nil || st.Sources != 2+1234 || st.Chunks != 3+1234 {
		t.Fatalf("stats after many: %+v %v", st, err)
	}
	// The hashes an ingest compares, of the URLs it asks for only.
	urls := []string{"file:///t.md", "file:///nowhere.md"}
	for _, p := range many {
		urls = append(urls, p.Source.URL)
	}
	hashes, err := s.SourceHashes(ctx, kb.ID, urls)
	if err != nil || len(hashes) != 1+1234 || hashes["file:///t.md"] != src("file:///t.md", "T", "two", nil).ContentHash || hashes[many[700].Source.URL] != many[700].Source.ContentHash {
		t.Fatalf("source hashes: %d of them, %v", len(hashes), err)
	}
	if _, ok := hashes["file:///u.md"]; ok {
		t.Fatal("source hashes: a URL not asked for")
	}
}

func appendChunks(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	kb := mustKB(t, s, "big")
	first := src("https://x.test/big", "Big", "a long text", nil)
	first.ContentHash, first.ETag = "", ""
	ids, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: first, Chunks: []store.Chunk{}}})
	if err != nil {
		t.Fatal(err)
	}
	batch := func(from, n int) []store.Chunk { return chunks(from+n, 4)[from:] }
	if err := s.SourceAppendChunks(ctx, kb.ID, store.SourceAppendChunksParams{SourceID: ids[0], Chunks: batch(0, 2)}); err != nil {
		t.Fatal(err)
	}
	v0, _ := s.KBVersion(ctx, kb.ID)
	// A batch repeating a chunk index is refused whole.
	if err := s.SourceAppendChunks(ctx, kb.ID, store.SourceAppendChunksParams{SourceID: ids[0], Chunks: batch(1, 2)}); err == nil {
		t.Fatal("duplicate chunk_index accepted")
	}
	got, _ := s.SourceGet(ctx, kb.ID, "https://x.test/big")
	if st, _ := s.KBStats(ctx, kb.ID); st.Chunks != 2 || got.ContentHash != "" {
		t.Fatalf("after a refused batch: %+v, hash %q", st, got.ContentHash)
	}
	lm := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.SourceAppendChunks(ctx, kb.ID, store.SourceAppendChunksParams{SourceID: ids[0], Chunks: batch(2, 3),
		Final: true, ContentHash: "h-big", ETag: `"e1"`, LastModified: &lm}); err != nil {
		t.Fatal(err)
	}
	if v1, _ := s.KBVersion(ctx, kb.ID); v1 <= v0 {
		t.Fatalf("version did not increase: %d -> %d", v0, v1)
	}
	got, err = s.SourceGet(ctx, kb.ID, "https://x.test/big")
	if err != nil || got.ContentHash != "h-big" || got.ETag != `"e1"` || got.LastModified == nil || !got.LastModified.Equal(lm) || got.Content != "a long text" {
		t.Fatalf("final batch did not complete the source: %+v %v", got, err)
	}
	var idx []int
	if err := s.ChunkScan(ctx, kb.ID, func(c store.IndexedChunk) error {
		idx = append(idx, c.ChunkIndex)
		if c.SourceURL != "https://x.test/big" || len(c.Embedding) != 4 {
			t.Errorf("chunk %+v", c)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(idx) != "[0 1 2 3 4]" {
		t.Fatalf("chunk indexes %v", idx)
	}
	// A source or knowledge base removed meanwhile is not found.
	if err := s.SourceDelete(ctx, kb.ID, "https://x.test/big"); err != nil {
		t.Fatal(err)
	}
	if err := s.SourceAppendChunks(ctx, kb.ID, store.SourceAppendChunksParams{SourceID: ids[0], Chunks: batch(5, 1)}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("append to a removed source: %v", err)
	}
	other := mustKB(t, s, "other")
	ids, err = s.SourcePutBatch(ctx, other.ID, []store.SourcePut{{Source: first, Chunks: []store.Chunk{}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SourceAppendChunks(ctx, kb.ID, store.SourceAppendChunksParams{SourceID: ids[0], Chunks: batch(0, 1)}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("append to another knowledge base's source: %v", err)
	}
	if err := s.KBDelete(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if err := s.SourceAppendChunks(ctx, other.ID, store.SourceAppendChunksParams{SourceID: ids[0], Chunks: batch(0, 1)}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("append after kb delete: %v", err)
	}
}

// staleAfterThreeFailures: a source that fails three times in a row is
// stale; a success clears it.
func staleAfterThreeFailures(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	kb := mustKB(t, s, "site")
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: src("https://x.test/p", "P", "page", nil), Chunks: chunks(1, 4)}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		stale, err := s.SourceMarkFailure(ctx, kb.ID, "https://x.test/p", 3)
		if err != nil {
			t.Fatal(err)
		}
		if stale != (i == 3) {
			t.Fatalf("failure %d: stale=%v", i, stale)
		}
	}
	st, _ := s.KBStats(ctx, kb.ID)
	if st.Stale != 1 || st.Sources != 1 || st.Chunks != 1 {
		t.Fatalf("stale source must be kept: %+v", st)
	}
	if states, err := s.ChunkStates(ctx, kb.ID); err != nil || len(states) != 1 || !states[0].IsStale {
		t.Fatalf("chunk states of a stale source: %+v %v", states, err)
	}
	if _, err := s.SourceMarkFailure(ctx, kb.ID, "https://x.test/missing", 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing source: %v", err)
	}
	// A later successful fetch of the unchanged page revives it.
	v0, _ := s.KBVersion(ctx, kb.ID)
	lm := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.SourceTouch(ctx, kb.ID, []store.SourceTouch{{URL: "https://x.test/p", ETag: `"e2"`, LastModified: &lm, CrawledAt: time.Now()}, {URL: "https://x.test/unknown"}}); err != nil {
		t.Fatal(err)
	}
	src, err := s.SourceGet(ctx, kb.ID, "https://x.test/p")
	if err != nil {
		t.Fatal(err)
	}
	if src.IsStale || src.FailCount != 0 || src.ETag != `"e2"` || src.LastModified == nil || !src.LastModified.Equal(lm) {
		t.Fatalf("touched source: %+v", src)
	}
	if v1, _ := s.KBVersion(ctx, kb.ID); v1 == v0 {
		t.Fatal("reviving a stale source must bump the version (search excludes stale sources)")
	}
	st, _ = s.KBStats(ctx, kb.ID)
	if st.Stale != 0 || st.Chunks != 1 {
		t.Fatalf("after touch: %+v", st)
	}
}

// crawlLogs: a crawl's log is kept and listed newest first.
func crawlLogs(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	kb := mustKB(t, s, "crawl")
	old := time.Now().Add(-100 * 24 * time.Hour)
	recent := time.Now().Add(-time.Hour)
	l1, err := s.CrawlLogCreate(ctx, kb.ID, "https://x.test/", old)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := s.CrawlLogCreate(ctx, kb.ID, "https://x.test/", recent)
	if err != nil {
		t.Fatal(err)
	}
	fin := recent.Add(90 * time.Second)
	if err := s.CrawlLogUpdate(ctx, store.CrawlLogUpdateParams{ID: l2.ID, Status: store.CrawlSuccess, PagesCrawled: 10, PagesUpdated: 2, PagesFailed: 1, DurationSeconds: 90, FinishedAt: &fin}); err != nil {
		t.Fatal(err)
	}
	if err := s.CrawlLogUpdate(ctx, store.CrawlLogUpdateParams{ID: l1.ID, Status: "done"}); err == nil {
		t.Fatal("bad status accepted")
	}
	logs, err := s.CrawlLogList(ctx, kb.ID, 10)
	if err != nil || len(logs) != 2 {
		t.Fatalf("list: %+v %v", logs, err)
	}
	if logs[0].ID != l2.ID || logs[0].Status != store.CrawlSuccess || logs[0].PagesCrawled != 10 || logs[0].FinishedAt == nil || logs[1].Status != store.CrawlRunning {
		t.Fatalf("newest first with fields: %+v", logs)
	}
	n, err := s.CrawlLogPurge(ctx, time.Now().Add(-90*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	logs, _ = s.CrawlLogList(ctx, kb.ID, 10)
	if len(logs) != 1 || logs[0].ID != l2.ID {
		t.Fatalf("after purge: %+v", logs)
	}
}

// crawlPending: a page the crawl could not fetch stays pending until it
// has failed as often as allowed.
func crawlPending(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "p", Embedder: "hash-v1/8", Dimension: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true} {
		dropped, err := s.CrawlPendingFail(ctx, kb.ID, "https://ex.test/a", 3-i, 3)
		if err != nil || dropped != want {
			t.Fatalf("fail %d: dropped %v %v", i+1, dropped, err)
		}
		if i == 1 {
			ps, err := s.CrawlPendingList(ctx, kb.ID)
			if err != nil || len(ps) != 1 || ps[0] != (store.PendingPage{URL: "https://ex.test/a", Depth: 2, FailCount: 2}) {
				t.Fatalf("pending after 2 failures: %+v %v", ps, err)
			}
		}
	}
	if ps, _ := s.CrawlPendingList(ctx, kb.ID); len(ps) != 0 {
		t.Fatalf("dropped page still pending: %+v", ps)
	}
	if _, err := s.CrawlPendingFail(ctx, kb.ID, "https://ex.test/b", 1, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.CrawlPendingDone(ctx, kb.ID, "https://ex.test/b"); err != nil {
		t.Fatal(err)
	}
	if ps, _ := s.CrawlPendingList(ctx, kb.ID); len(ps) != 0 {
		t.Fatalf("done page still pending: %+v", ps)
	}
}
