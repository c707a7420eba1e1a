// Package storetest is the conformance suite every store.Store backend runs.
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

// Opener returns a fresh, empty store for one test; it registers its own cleanup.
type Opener func(t *testing.T) store.Store

// Exercise runs the conformance suite against a backend.
func Exercise(t *testing.T, open Opener) {
	t.Helper()
	ctx := context.Background()

	t.Run("KBLifecycle", func(t *testing.T) {
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
	})

	t.Run("SourcesAndChunks", func(t *testing.T) {
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
	})

	// A document too large for one transaction: the source first, with no
	// chunks and an empty content hash, then its chunks batch by batch, the
	// last batch setting the hash and validators.
	t.Run("AppendChunks", func(t *testing.T) {
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
	})

	t.Run("StaleAfterThreeFailures", func(t *testing.T) {
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
	})

	t.Run("CrawlLogs", func(t *testing.T) {
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
	})

	t.Run("CrawlPending", func(t *testing.T) {
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
	})

	t.Run("Threads", func(t *testing.T) {
		s := open(t)
		t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		for i, id := range []string{"t-1", "t-2"} {
			if err := s.ThreadCreate(ctx, store.Thread{ID: id, Title: "about " + id, Status: "active", CreatedAt: t0, LastActivity: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ThreadCreate(ctx, store.Thread{ID: "t-1", Title: "again", Status: "active", CreatedAt: t0, LastActivity: t0}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("duplicate thread: %v", err)
		}
		if err := s.ThreadTouch(ctx, "t-1", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		list, err := s.ThreadList(ctx, 10)
		if err != nil || len(list) != 2 || list[0].ID != "t-1" || !list[0].LastActivity.Equal(t0.Add(time.Hour)) {
			t.Fatalf("list, most recent first: %+v %v", list, err)
		}
		if err := s.ThreadClose(ctx, "t-2"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ThreadGet(ctx, "t-2"); err != nil || got.Status != "closed" || got.Title != "about t-2" {
			t.Fatalf("closed: %+v %v", got, err)
		}
		for _, err := range []error{s.ThreadClose(ctx, "nope"), s.ThreadTouch(ctx, "nope", t0)} {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("missing thread: %v", err)
			}
		}
		if _, err := s.ThreadGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing thread: %v", err)
		}
		for i, id := range []string{"q-2", "q-1"} {
			r := store.Research{ID: id, Question: id, Status: "completed", CreatedAt: t0.Add(time.Duration(1-i) * time.Second), UpdatedAt: t0, ThreadID: "t-1", State: []byte(`{}`)}
			if err := s.ResearchSave(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
		}
		rs, err := s.ThreadResearches(ctx, "t-1")
		if err != nil || len(rs) != 2 || rs[0].ID != "q-1" || rs[1].ThreadID != "t-1" {
			t.Fatalf("thread researches, oldest first: %+v %v", rs, err)
		}
		if rs, err := s.ThreadResearches(ctx, "t-2"); err != nil || rs == nil || len(rs) != 0 {
			t.Fatalf("empty thread: %#v %v", rs, err)
		}
	})

	t.Run("Tokens", func(t *testing.T) {
		s := open(t)
		t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		if n, err := s.TokenLive(ctx); err != nil || n != 0 {
			t.Fatalf("live on an empty store: %d %v", n, err)
		}
		a := store.Token{ID: "tok-a", Name: "ci", Hash: "h-a", Scopes: []string{"research", "kb"}, CreatedAt: t0}
		if err := s.TokenCreate(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := s.TokenCreate(ctx, store.Token{ID: "tok-b", Name: "ci", Hash: "h-b", CreatedAt: t0}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("a second live token of one name: %v", err)
		}
		got, err := s.TokenByHash(ctx, "h-a")
		if err != nil || got.ID != "tok-a" || got.Name != "ci" || strings.Join(got.Scopes, ",") != "research,kb" || got.RevokedAt != nil || !got.CreatedAt.Equal(t0) {
			t.Fatalf("by hash: %+v %v", got, err)
		}
		if _, err := s.TokenByHash(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown hash: %v", err)
		}
		if err := s.TokenRevoke(ctx, "ci", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.TokenRevoke(ctx, "ci", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("revoke twice: %v", err)
		}
		got, err = s.TokenByHash(ctx, "h-a")
		if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("revoked token: %+v %v", got, err)
		}
		// The name is free again once its token is revoked.
		if err := s.TokenCreate(ctx, store.Token{ID: "tok-c", Name: "ci", Hash: "h-c", Scopes: []string{}, CreatedAt: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.TokenLive(ctx); err != nil || n != 1 {
			t.Fatalf("live: %d %v", n, err)
		}
		list, err := s.TokenList(ctx)
		if err != nil || len(list) != 2 || list[0].ID != "tok-a" || list[1].ID != "tok-c" || list[1].Scopes == nil {
			t.Fatalf("list: %+v %v", list, err)
		}
		if err := s.TokenRevoke(ctx, "tok-c", t0); err != nil {
			t.Fatalf("revoke by id: %v", err)
		}
	})

	t.Run("ResearchPage", func(t *testing.T) {
		s := open(t)
		t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		// Seven researches, two of them created at the same instant, so
		// the cursor must break ties by id.
		for i := range 7 {
			at := t0.Add(time.Duration(min(i, 5)) * time.Second)
			status, thread := "completed", "th-1"
			if i%2 == 1 {
				status, thread = "failed", "th-2"
			}
			r := store.Research{ID: fmt.Sprintf("r-%d", i), Question: "q", Status: status, CreatedAt: at, UpdatedAt: at, ThreadID: thread, State: []byte(`{}`)}
			if err := s.ResearchSave(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
		}
		var ids []string
		var cur *store.ResearchCursor
		for range 10 {
			page, err := s.ResearchPage(ctx, store.ResearchFilter{Limit: 3, Before: cur})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				ids = append(ids, r.ID)
			}
			if len(page) < 3 {
				break
			}
			last := page[len(page)-1]
			cur = &store.ResearchCursor{CreatedAt: last.CreatedAt, ID: last.ID}
		}
		if got := strings.Join(ids, " "); got != "r-5 r-6 r-4 r-3 r-2 r-1 r-0" {
			t.Fatalf("pages, newest first, ties by id: %s", got)
		}
		failed, err := s.ResearchPage(ctx, store.ResearchFilter{Status: "failed", ThreadID: "th-2"})
		if err != nil || len(failed) != 3 || failed[0].ID != "r-5" {
			t.Fatalf("filtered: %+v %v", failed, err)
		}
		counts, err := s.ResearchCounts(ctx)
		if err != nil || counts["completed"] != 4 || counts["failed"] != 3 || len(counts) != 2 {
			t.Fatalf("counts: %v %v", counts, err)
		}
		none, err := s.ResearchPage(ctx, store.ResearchFilter{ThreadID: "th-9"})
		if err != nil || none == nil || len(none) != 0 {
			t.Fatalf("empty page: %#v %v", none, err)
		}
	})

	t.Run("Console", func(t *testing.T) {
		s := open(t)
		k := mustKB(t, s, "scifact")
		t0 := time.Now().UTC().Truncate(time.Millisecond)
		qs := []store.DatasetQuestion{
			{QueryID: "q2", Text: "second", Golden: []store.GoldenRef{{DocID: "d9", ChunkIndex: -1}}},
			{QueryID: "q1", Text: "first", Reference: "an answer", Golden: []store.GoldenRef{{DocID: "d1", ChunkIndex: 0}, {DocID: "d2", ChunkIndex: -1}}},
		}
		d, err := s.DatasetCreate(ctx, store.Dataset{Name: "dev", KBID: k.ID, CreatedAt: t0}, qs)
		if err != nil || d.ID == 0 || d.Questions != 2 {
			t.Fatalf("dataset: %+v %v", d, err)
		}
		if _, err := s.DatasetCreate(ctx, store.Dataset{Name: "dev", KBID: k.ID, CreatedAt: t0}, nil); !errors.Is(err, store.ErrExists) {
			t.Fatalf("a taken name: %v", err)
		}
		if _, err := s.DatasetCreate(ctx, store.Dataset{Name: "twice", KBID: k.ID, CreatedAt: t0}, []store.DatasetQuestion{{QueryID: "a", Golden: []store.GoldenRef{}}, {QueryID: "a", Golden: []store.GoldenRef{}}}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("a question twice: %v", err)
		}
		if _, err := s.DatasetGet(ctx, "twice"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused dataset left a row: %v", err)
		}
		byID, err := s.DatasetGet(ctx, fmt.Sprint(d.ID))
		if err != nil || byID.Name != "dev" || byID.Questions != 2 || !byID.CreatedAt.Equal(t0) {
			t.Fatalf("by id: %+v %v", byID, err)
		}
		got, err := s.DatasetQuestions(ctx, d.ID)
		if err != nil || len(got) != 2 || got[0].QueryID != "q1" || got[0].Reference != "an answer" || len(got[0].Golden) != 2 || got[0].Golden[1] != (store.GoldenRef{DocID: "d2", ChunkIndex: -1}) {
			t.Fatalf("questions: %+v %v", got, err)
		}
		if q, err := s.DatasetQuestionByText(ctx, d.ID, "first"); err != nil || q.QueryID != "q1" || len(q.Golden) != 2 {
			t.Fatalf("question by text: %+v %v", q, err)
		}
		if _, err := s.DatasetQuestionByText(ctx, d.ID, "third"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no such question: %v", err)
		}
		p, err := s.PipelineCreate(ctx, store.Pipeline{Name: "hybrid", Type: "test", KBID: k.ID, DatasetID: &d.ID, Settings: []byte(`{"mode":"hybrid"}`), CreatedAt: t0, UpdatedAt: t0})
		if err != nil || p.ID == 0 {
			t.Fatal(err)
		}
		if _, err := s.PipelineCreate(ctx, store.Pipeline{Name: "bm25", Type: "normal", KBID: k.ID, Settings: []byte(`{}`), CreatedAt: t0, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PipelineCreate(ctx, store.Pipeline{Name: "bm25", Type: "normal", KBID: k.ID, Settings: []byte(`{}`), CreatedAt: t0, UpdatedAt: t0}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("a taken pipeline name: %v", err)
		}
		for _, c := range []struct {
			f    store.PipelineFilter
			want string
		}{{store.PipelineFilter{}, "bm25 hybrid"}, {store.PipelineFilter{Type: "test"}, "hybrid"}, {store.PipelineFilter{DatasetID: &d.ID}, "hybrid"}, {store.PipelineFilter{DatasetID: &d.ID, Type: "normal"}, ""}} {
			list, err := s.PipelineList(ctx, c.f)
			var names []string
			for _, p := range list {
				names = append(names, p.Name)
			}
			if err != nil || list == nil || strings.Join(names, " ") != c.want {
				t.Fatalf("filter %+v: %v %v", c.f, names, err)
			}
		}
		p.Type, p.Settings, p.UpdatedAt = "normal", []byte(`{"mode":"bm25"}`), t0.Add(time.Minute)
		if err := s.PipelineUpdate(ctx, *p); err != nil {
			t.Fatal(err)
		}
		again, err := s.PipelineGet(ctx, "hybrid")
		if err != nil || again.Type != "normal" || string(again.Settings) != `{"mode":"bm25"}` || *again.DatasetID != d.ID || !again.UpdatedAt.Equal(t0.Add(time.Minute)) || again.KBName != "scifact" || again.DatasetName != "dev" {
			t.Fatalf("updated: %+v %v", again, err)
		}
		run, err := s.EvalRunCreate(ctx, store.EvalRun{PipelineID: &p.ID, PipelineName: "hybrid", DatasetID: &d.ID, DatasetName: "dev", K: 10, CreatedAt: t0,
			Overall: []byte(`{"ndcg":0.5}`), Questions: []byte(`[{"query_id":"q1"}]`)})
		if err != nil || run.ID == 0 {
			t.Fatalf("eval run: %+v %v", run, err)
		}
		if _, err := s.EvalRunCreate(ctx, store.EvalRun{PipelineName: "gone", DatasetName: "dev", K: 5, CreatedAt: t0, Overall: []byte(`{}`), Questions: []byte(`[]`)}); err != nil {
			t.Fatal(err)
		}
		if runs, err := s.EvalRunList(ctx, &p.ID, 10); err != nil || len(runs) != 1 || runs[0].ID != run.ID || string(runs[0].Overall) != `{"ndcg":0.5}` || runs[0].Questions != nil {
			t.Fatalf("runs of a pipeline: %+v %v", runs, err)
		}
		if runs, err := s.EvalRunList(ctx, nil, 10); err != nil || len(runs) != 2 || runs[0].PipelineName != "gone" {
			t.Fatalf("all runs, newest first: %+v %v", runs, err)
		}
		// Deleting the dataset leaves its pipelines without one.
		if err := s.DatasetDelete(ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		if again, err := s.PipelineGet(ctx, fmt.Sprint(p.ID)); err != nil || again.DatasetID != nil {
			t.Fatalf("after the dataset went: %+v %v", again, err)
		}
		if err := s.PipelineDelete(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PipelineGet(ctx, "hybrid"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted pipeline: %v", err)
		}
		// A run outlives its pipeline and dataset, by name.
		if got, err := s.EvalRunGet(ctx, run.ID); err != nil || got.PipelineID != nil || got.DatasetID != nil || got.PipelineName != "hybrid" || got.K != 10 || !got.CreatedAt.Equal(t0) || string(got.Questions) != `[{"query_id":"q1"}]` {
			t.Fatalf("run after its pipeline went: %+v %v", got, err)
		}
		if _, err := s.EvalRunGet(ctx, run.ID+100); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no such run: %v", err)
		}
		for _, err := range []error{s.PipelineDelete(ctx, p.ID), s.DatasetDelete(ctx, d.ID)} {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("delete twice: %v", err)
			}
		}
	})

	t.Run("Researches", func(t *testing.T) {
		s := open(t)
		t0 := time.Now().Add(-time.Minute).UTC()
		r := store.Research{ID: "r-1", Question: "why?", Status: "processing", CreatedAt: t0, UpdatedAt: t0, State: []byte(`{"step":1,"text":"a\u0000b"}`)}
		ev := func(seq int64) store.ResearchEvent {
			return store.ResearchEvent{Seq: seq, Type: "status", At: t0, Data: []byte(`{"seq":` + fmt.Sprint(seq) + `}`)}
		}
		if err := s.ResearchSave(ctx, r, []store.ResearchEvent{ev(1), ev(2)}); err != nil {
			t.Fatal(err)
		}
		r.Status, r.State, r.UpdatedAt = "completed", []byte(`{"step":2}`), t0.Add(time.Second)
		if err := s.ResearchSave(ctx, r, []store.ResearchEvent{ev(3)}); err != nil {
			t.Fatal(err)
		}
		// A checkpoint that repeats an event is refused whole: the state
		// is not half-written.
		bad := r
		bad.State = []byte(`{"step":3}`)
		if err := s.ResearchSave(ctx, bad, []store.ResearchEvent{ev(4), ev(3)}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("duplicate event seq: %v", err)
		}
		got, err := s.ResearchGet(ctx, "r-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != "completed" || string(got.State) != `{"step":2}` || !got.CreatedAt.Equal(t0.Truncate(time.Microsecond)) && got.CreatedAt.Sub(t0).Abs() > time.Millisecond {
			t.Fatalf("get: %+v %s", got, got.State)
		}
		evs, err := s.ResearchEvents(ctx, "r-1", 1)
		if err != nil || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Seq != 3 || string(evs[1].Data) != `{"seq":3}` {
			t.Fatalf("events after 1: %+v %v", evs, err)
		}
		r2 := store.Research{ID: "r-2", Question: "how?", Status: "pending", CreatedAt: t0.Add(time.Second), UpdatedAt: t0, State: []byte(`{}`)}
		if err := s.ResearchSave(ctx, r2, nil); err != nil {
			t.Fatal(err)
		}
		list, err := s.ResearchList(ctx, 10)
		if err != nil || len(list) != 2 || list[0].ID != "r-2" || list[1].ID != "r-1" || list[0].State != nil {
			t.Fatalf("list newest first without state: %+v %v", list, err)
		}
		if _, err := s.ResearchGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}

		// Events appended alone; cancel requests; the canceled status.
		if err := s.ResearchAppendEvents(ctx, "r-1", []store.ResearchEvent{ev(4), ev(5)}); err != nil {
			t.Fatal(err)
		}
		if err := s.ResearchAppendEvents(ctx, "r-1", []store.ResearchEvent{ev(5)}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("append a repeated seq: %v", err)
		}
		if evs, _ := s.ResearchEvents(ctx, "r-1", 3); len(evs) != 2 || evs[1].Seq != 5 {
			t.Fatalf("appended events: %+v", evs)
		}
		if n, err := s.ResearchLastSeq(ctx, "r-1"); err != nil || n != 5 {
			t.Fatalf("last seq: %d %v", n, err)
		}
		if n, err := s.ResearchLastSeq(ctx, "nope"); err != nil || n != 0 {
			t.Fatalf("last seq of a research without events: %d %v", n, err)
		}
		if got, _ := s.ResearchGet(ctx, "r-1"); string(got.State) != `{"step":2}` {
			t.Fatalf("append touched the state: %s", got.State)
		}
		if c, err := s.ResearchCancelRequested(ctx, "r-1"); err != nil || c {
			t.Fatalf("cancel requested at start: %v %v", c, err)
		}
		if err := s.ResearchSetCancel(ctx, "r-1", true); err != nil {
			t.Fatal(err)
		}
		if c, err := s.ResearchCancelRequested(ctx, "r-1"); err != nil || !c {
			t.Fatalf("cancel not recorded: %v %v", c, err)
		}
		if err := s.ResearchSetCancel(ctx, "nope", true); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cancel of a missing research: %v", err)
		}
		canceled := r
		canceled.Status = "canceled"
		if err := s.ResearchSave(ctx, canceled, nil); err != nil {
			t.Fatalf("status canceled: %v", err)
		}
		if err := s.ResearchSetCancel(ctx, "r-1", false); err != nil {
			t.Fatal(err)
		}

		// Leases: one holder at a time; the holder renews; an ended lease
		// or a released one can be taken; a missing research is not found.
		now := time.Now().UTC()
		if err := s.ResearchClaim(ctx, "r-1", "a", now, now.Add(30*time.Second)); err != nil {
			t.Fatalf("claim: %v", err)
		}
		err = s.ResearchClaim(ctx, "r-1", "b", now, now.Add(30*time.Second))
		var le *store.LeaseError
		if !errors.Is(err, store.ErrBusy) || !errors.As(err, &le) || le.Owner != "a" || le.Until.Sub(now.Add(30*time.Second)).Abs() > time.Second {
			t.Fatalf("second claim: %v, want busy naming a", err)
		}
		if err := s.ResearchClaim(ctx, "r-1", "a", now.Add(10*time.Second), now.Add(40*time.Second)); err != nil {
			t.Fatalf("renew: %v", err)
		}
		if err := s.ResearchClaim(ctx, "r-1", "b", now.Add(35*time.Second), now.Add(60*time.Second)); !errors.Is(err, store.ErrBusy) {
			t.Fatalf("claim before the renewed lease ends: %v", err)
		}
		if err := s.ResearchClaim(ctx, "r-1", "b", now.Add(41*time.Second), now.Add(70*time.Second)); err != nil {
			t.Fatalf("claim after the lease ended: %v", err)
		}
		if err := s.ResearchRelease(ctx, "r-1", "a"); err != nil {
			t.Fatal(err)
		}
		if err := s.ResearchClaim(ctx, "r-1", "c", now, now.Add(time.Minute)); !errors.Is(err, store.ErrBusy) {
			t.Fatalf("a release by a non-holder must not free the lease: %v", err)
		}
		if err := s.ResearchRelease(ctx, "r-1", "b"); err != nil {
			t.Fatal(err)
		}
		if err := s.ResearchClaim(ctx, "r-1", "c", now, now.Add(time.Minute)); err != nil {
			t.Fatalf("claim after release: %v", err)
		}
		// A checkpoint leaves the lease alone.
		if err := s.ResearchSave(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.ResearchClaim(ctx, "r-1", "d", now, now.Add(time.Minute)); !errors.Is(err, store.ErrBusy) {
			t.Fatalf("lease lost on save: %v", err)
		}
		if err := s.ResearchClaim(ctx, "nope", "a", now, now.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("claim of a missing research: %v", err)
		}

		// Runnable: pending, or processing without a live lease.
		if ids, err := s.ResearchRunnable(ctx, now, 10); err != nil || len(ids) != 1 || ids[0] != "r-2" {
			t.Fatalf("runnable (r-1 completed, r-2 pending): %v %v", ids, err)
		}
		proc := r
		proc.Status = "processing"
		if err := s.ResearchSave(ctx, proc, nil); err != nil {
			t.Fatal(err)
		}
		if ids, _ := s.ResearchRunnable(ctx, now, 10); len(ids) != 1 {
			t.Fatalf("a processing research with a live lease is not runnable: %v", ids)
		}
		if held, err := s.ResearchHeld(ctx, now); err != nil || len(held) != 1 || held[0].ID != "r-1" || held[0].Owner != "c" {
			t.Fatalf("held: %+v %v", held, err)
		}
		if ids, _ := s.ResearchRunnable(ctx, now.Add(2*time.Minute), 10); len(ids) != 2 || ids[0] != "r-1" {
			t.Fatalf("once its lease ended it is, oldest first: %v", ids)
		}
		if ids, _ := s.ResearchRunnable(ctx, now.Add(2*time.Minute), 1); len(ids) != 1 {
			t.Fatalf("limit: %v", ids)
		}
		r2.Status = "done"
		if err := s.ResearchSave(ctx, r2, nil); err == nil {
			t.Fatal("bad status accepted")
		}
	})
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
	hits, err := s.ChunkVectorSearch(ctx, store.VectorQuery{KBID: kb.ID, Dimension: 4, Vector: []float32{1, 0.05, 0, 0}, K: 3})
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
