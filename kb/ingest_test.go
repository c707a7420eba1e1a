package kb_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/kb/chunk"
	"github.com/quarryhq/quarry/store"
)

// failingEmbedder is the offline embedder, except that its failOn-th call
// (counting from 1) fails.
type failingEmbedder struct {
	embed.Hash
	mu     sync.Mutex
	calls  int
	failOn int
}

func (f *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls++
	fail := f.calls == f.failOn
	f.mu.Unlock()
	if fail {
		return nil, errors.New("embedding service unavailable")
	}
	return f.Hash.Embed(ctx, texts)
}

// longText has paragraphs on many subjects, so chunks differ in terms.
func longText(paragraphs int) string {
	var b strings.Builder
	for i := range paragraphs {
		fmt.Fprintf(&b, "Paragraph %d is about topic%d. It has a few sentences of its own, %d of them in all. The crawler and the index both read it.\n\n", i, i%7, i%5+2)
	}
	return b.String()
}

// storedChunks returns a knowledge base's chunks of url, without ids.
func storedChunks(t *testing.T, st store.Store, kbID int64, url string) []store.Chunk {
	t.Helper()
	var out []store.Chunk
	err := st.ChunkScan(context.Background(), kbID, func(c store.IndexedChunk) error {
		if c.SourceURL == url {
			c.Chunk.ID, c.Chunk.SourceID, c.Chunk.KBID = 0, 0, 0
			out = append(out, c.Chunk)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIngestLongDocument: a document with more chunks than a batch is
// written batch by batch and ends up with exactly the chunks a one-batch
// write gives it; unchanged, it is skipped; an ingest that fails part-way
// leaves it incomplete (empty content hash, no validators) and the next
// ingest completes it; changed, its chunks are replaced.
func TestIngestLongDocument(t *testing.T) {
	backends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc := kb.New(st, nil)
		emb := embed.Hash{}
		streamed, err := svc.Create(ctx, "streamed", "", emb)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := svc.Create(ctx, "whole", "", emb)
		if err != nil {
			t.Fatal(err)
		}
		copt := chunk.Options{MaxTokens: 64, Overlap: 8}
		lm := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
		doc := kb.Document{URL: "https://example.org/long", Title: "Long read", Text: longText(60), ETag: `"v1"`, LastModified: &lm, Origin: "long"}
		short := kb.Document{URL: "https://example.org/short", Title: "Short", Text: "A short note.", Origin: "short"}
		pieces, err := chunk.Split(doc.Text, copt)
		if err != nil {
			t.Fatal(err)
		}
		if len(pieces) < 20 {
			t.Fatalf("only %d chunks: the test needs many batches", len(pieces))
		}
		tokens, err := chunk.CountTokens(short.Text)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pieces {
			tokens += p.Tokens
		}

		rep, err := svc.AddDocuments(ctx, whole, []kb.Document{doc, short}, kb.AddOptions{Embedder: emb, Chunking: copt})
		if err != nil || rep.Added != 2 {
			t.Fatalf("one batch: %+v %v", rep, err)
		}
		want := storedChunks(t, st, whole.ID, doc.URL)
		if len(want) != len(pieces) {
			t.Fatalf("one batch stored %d chunks, Split gives %d", len(want), len(pieces))
		}

		opt := kb.AddOptions{Embedder: emb, Chunking: copt, ChunkBatch: 4}
		rep, err = svc.AddDocuments(ctx, streamed, []kb.Document{doc, short}, opt)
		if err != nil || rep.Added != 2 || rep.Chunks != len(pieces)+1 || rep.Tokens != tokens {
			t.Fatalf("streamed: %+v %v (want %d chunks, %d tokens)", rep, err, len(pieces)+1, tokens)
		}
		if got := storedChunks(t, st, streamed.ID, doc.URL); !reflect.DeepEqual(got, want) {
			t.Fatalf("streamed chunks differ from the one-batch write:\ngot  %d %+v\nwant %d %+v", len(got), got[:2], len(want), want[:2])
		}
		src, err := st.SourceGet(ctx, streamed.ID, doc.URL)
		if err != nil || src.ContentHash == "" || src.ETag != `"v1"` || src.LastModified == nil || !src.LastModified.Equal(lm) || src.Content != doc.Text {
			t.Fatalf("streamed source: %+v %v", src, err)
		}
		ref, _ := st.SourceGet(ctx, whole.ID, doc.URL)
		if src.ContentHash != ref.ContentHash || src.Language != ref.Language || src.Title != ref.Title {
			t.Fatalf("streamed source %+v differs from %+v", src, ref)
		}

		// Unchanged: skipped, nothing written.
		v0, _ := st.KBVersion(ctx, streamed.ID)
		rep, err = svc.AddDocuments(ctx, streamed, []kb.Document{doc, short}, opt)
		if err != nil || rep.Unchanged != 2 || rep.Added+rep.Updated != 0 {
			t.Fatalf("unchanged: %+v %v", rep, err)
		}
		if v1, _ := st.KBVersion(ctx, streamed.ID); v1 != v0 {
			t.Fatalf("an unchanged ingest wrote: version %d -> %d", v0, v1)
		}

		// The index is loaded now: what follows reaches it by catch-ups.
		if res, err := svc.Search(ctx, "streamed", emb, kb.Query{Text: "topic3 crawler", K: 3, Mode: kb.ModeBM25}); err != nil || len(res) == 0 {
			t.Fatalf("search: %+v %v", res, err)
		}

		// Changed, and the embedder fails on the third batch: the document
		// is left incomplete, not passing for the old or the new text.
		changed := doc
		changed.Text = longText(45)
		changed.ETag = `"v2"`
		bad := &failingEmbedder{failOn: 3}
		rep, err = svc.AddDocuments(ctx, streamed, []kb.Document{changed}, kb.AddOptions{Embedder: bad, Chunking: copt, ChunkBatch: 4})
		if err == nil || !strings.Contains(err.Error(), "embedding service unavailable") || rep.Updated != 0 {
			t.Fatalf("failing embedder: %+v %v", rep, err)
		}
		src, err = st.SourceGet(ctx, streamed.ID, doc.URL)
		if err != nil || src.ContentHash != "" || src.ETag != "" || src.LastModified != nil {
			t.Fatalf("a source cut short looks complete: %+v %v", src, err)
		}
		// (How many batches were written before the failure depends on how
		// far the pipeline got.)
		if n := len(storedChunks(t, st, streamed.ID, doc.URL)); n >= len(pieces) {
			t.Fatalf("%d chunks after the failure", n)
		}
		// A document is searchable whole or not at all: none of the
		// batches written before the failure is.
		res, err := svc.Search(ctx, "streamed", emb, kb.Query{Text: "topic3 crawler paragraph", K: 100, Mode: kb.ModeBM25})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.SourceURL == doc.URL {
				t.Fatalf("chunk %d of a document cut short is searchable", r.ChunkIndex)
			}
		}
		// The next ingest redoes it, even of the old text: it adds the
		// document, which no search could find; the one after updates it.
		for i, d := range []kb.Document{doc, changed} {
			rep, err = svc.AddDocuments(ctx, streamed, []kb.Document{d, short}, opt)
			if err != nil || rep.Added != 1-i || rep.Updated != i || rep.Unchanged != 1 {
				t.Fatalf("re-run %d: %+v %v", i, rep, err)
			}
		}
		if _, err := svc.AddDocuments(ctx, whole, []kb.Document{changed}, kb.AddOptions{Embedder: emb, Chunking: copt}); err != nil {
			t.Fatal(err)
		}
		got, want := storedChunks(t, st, streamed.ID, doc.URL), storedChunks(t, st, whole.ID, doc.URL)
		if len(want) >= len(pieces) || !reflect.DeepEqual(got, want) {
			t.Fatalf("after the re-run: %d chunks, want %d like the one-batch write", len(got), len(want))
		}
		src, _ = st.SourceGet(ctx, streamed.ID, doc.URL)
		if src.ContentHash == "" || src.ETag != `"v2"` || src.Content != changed.Text {
			t.Fatalf("re-run source: %+v", src)
		}
		if stats, _ := st.KBStats(ctx, streamed.ID); stats.Sources != 2 || stats.Chunks != len(want)+1 {
			t.Fatalf("stats after the re-run: %+v", stats)
		}
		res, err = svc.Search(ctx, "streamed", emb, kb.Query{Text: "topic3 crawler", K: 3, Mode: kb.ModeBM25})
		if err != nil || len(res) == 0 || res[0].SourceURL != doc.URL {
			t.Fatalf("search after streaming: %+v %v", res, err)
		}
	})
}

// TestIngestLongDocumentKBRemoved: a knowledge base removed while a long
// document streams in gives the clear not-found error.
func TestIngestLongDocumentKBRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openSQLite(t)
	svc := kb.New(st, nil)
	k, err := svc.Create(ctx, "gone", "", embed.Hash{})
	if err != nil {
		t.Fatal(err)
	}
	emb := &removingEmbedder{removeOn: 2, remove: func() error { return svc.Delete(ctx, "gone") }}
	doc := kb.Document{URL: "https://example.org/long", Title: "Long", Text: longText(40), Origin: "long"}
	_, err = svc.AddDocuments(ctx, k, []kb.Document{doc}, kb.AddOptions{Embedder: emb, Chunking: chunk.Options{MaxTokens: 64, Overlap: 8}, ChunkBatch: 4})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `knowledge base "gone" was removed`) {
		t.Fatalf("got %v", err)
	}
}

// removingEmbedder calls remove before its removeOn-th call.
type removingEmbedder struct {
	embed.Hash
	calls    int
	removeOn int
	remove   func() error
}

func (r *removingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if r.calls++; r.calls == r.removeOn {
		if err := r.remove(); err != nil {
			return nil, err
		}
	}
	return r.Hash.Embed(ctx, texts)
}

// TestIngestStopsAtAFailedBatch: batches are prepared one ahead of the
// one being written; when the embedder fails on the third batch, the two
// before it are written and kept, nothing after it is, the error is the
// embedder's, and no preparing goroutine is left behind (goleak).
func TestIngestStopsAtAFailedBatch(t *testing.T) {
	backends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc := kb.New(st, nil)
		base, err := svc.Create(ctx, "batches", "", embed.Hash{})
		if err != nil {
			t.Fatal(err)
		}
		var docs []kb.Document
		for i := range 50 {
			docs = append(docs, kb.Document{URL: fmt.Sprintf("kb://batches/%d", i), Title: "d", Text: fmt.Sprintf("Document %d says something about topic %d.", i, i%7)})
		}
		bad := &failingEmbedder{failOn: 3}
		rep, err := svc.AddDocuments(ctx, base, docs, kb.AddOptions{Embedder: bad, BatchSize: 10})
		if err == nil || !strings.Contains(err.Error(), "embedding service unavailable") {
			t.Fatalf("err = %v, want the embedder's", err)
		}
		if rep.Added != 20 {
			t.Fatalf("added %d, want the 20 of the two batches before the failure", rep.Added)
		}
		if s, err := st.KBStats(ctx, base.ID); err != nil || s.Sources != 20 {
			t.Fatalf("stored %+v (%v), want 20 sources", s, err)
		}
		// Cancelled from the start: nothing is written, the context's error.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := svc.AddDocuments(cctx, base, docs, kb.AddOptions{Embedder: embed.Hash{}, BatchSize: 10}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled ingest: %v", err)
		}
	})
}

// TestOfflineVectorsAsTheEmbedderGivesThem: an ingest with the offline
// embedder reuses each chunk's analysed terms for its vector, and the
// vector is the one the embedder gives the chunk's title and text, with a
// title and without, in English and in Korean, so a query embedded the
// ordinary way meets the same space.
func TestOfflineVectorsAsTheEmbedderGivesThem(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	svc := kb.New(st, nil)
	emb := embed.Hash{Dim: 64}
	base, err := svc.Create(ctx, "vectors", "", emb)
	if err != nil {
		t.Fatal(err)
	}
	docs := []kb.Document{
		{URL: "kb://v/titled", Title: "Crawler Settings", Text: "The crawler re-crawls every page every five minutes.\n\nA page that fails three times in a row is marked stale."},
		{URL: "kb://v/untitled", Text: "Running running runner RUNS: stems, stop words (the, a) and numbers 3.5 and 1,000."},
		{URL: "kb://v/korean", Title: "한글", Text: "한글의 자모는 모두 24자이며, 세종대왕이 1443년에 창제하였다. 개통되었다."},
		{URL: "kb://v/long", Title: "Long", Text: longText(40)},
	}
	if _, err := svc.AddDocuments(ctx, base, docs, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = st.ChunkScan(ctx, base.ID, func(c store.IndexedChunk) error {
		text := c.Text
		if c.SourceTitle != "" {
			text = c.SourceTitle + "\n" + c.Text
		}
		// Equal but for the order features sharing a bucket were added in.
		if want := emb.Vector(text); len(want) != len(c.Embedding) || index.Cosine(want, c.Embedding) < 1-1e-6 {
			t.Errorf("%s chunk %d: stored vector differs from the embedder's", c.SourceURL, c.ChunkIndex)
		}
		n++
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("%d chunks scanned: %v", n, err)
	}
}

// TestFencesAreNotTerms: the fences extraction writes around code are not
// words of a chunk: a query with "text" does not find every chunk that
// holds a listing, while the listing's own words are terms.
func TestFencesAreNotTerms(t *testing.T) {
	backends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc := kb.New(st, nil)
		emb := embed.Hash{}
		k, err := svc.Create(ctx, "fenced", "", emb)
		if err != nil {
			t.Fatal(err)
		}
		doc := kb.Document{URL: "https://example.org/gc", Title: "Cleaning up", Text: "Pack the loose objects by hand:\n\n```text\ngit gc --aggressive\n````\n\nThe collector runs by itself too.", Origin: "gc"}
		if _, err := svc.AddDocuments(ctx, k, []kb.Document{doc}, kb.AddOptions{Embedder: emb}); err != nil {
			t.Fatal(err)
		}
		cs := storedChunks(t, st, k.ID, doc.URL)
		if len(cs) != 1 {
			t.Fatalf("%d chunks", len(cs))
		}
		terms := " " + cs[0].Terms + " "
		if strings.Contains(terms, " text ") || !strings.Contains(terms, " aggress ") || !strings.Contains(cs[0].Text, "```text") {
			t.Fatalf("terms %q of %q", cs[0].Terms, cs[0].Text)
		}
	})
}

// TestListingFencedInEveryChunk: a document whose listing is longer than
// a chunk is stored with the listing fenced in every chunk it spans, as
// one batch and streamed (more chunks than ChunkBatch), so that a chunk
// read alone (ask) reads it as code, not prose.
func TestListingFencedInEveryChunk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openSQLite(t)
	svc := kb.New(st, nil)
	k, err := svc.Create(ctx, "code", "", embed.Hash{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("The operation below runs raw SQL.\n\n```text\n")
	for i := range 60 {
		fmt.Fprintf(&b, "sql, params = sqls[%d]\nschema_editor.execute(sql, params=params)\n", i)
	}
	b.WriteString("```\n\nThe rest of the page is prose.\n")
	docs := []kb.Document{
		{URL: "https://example.org/batch", Title: "Batch", Text: b.String(), Origin: "batch"},
		{URL: "https://example.org/streamed", Title: "Streamed", Text: b.String(), Origin: "streamed"},
	}
	for i, d := range docs {
		opt := kb.AddOptions{Embedder: embed.Hash{}, Chunking: chunk.Options{MaxTokens: 96}}
		if i == 1 {
			opt.ChunkBatch = 2
		}
		if _, err := svc.AddDocuments(ctx, k, []kb.Document{d}, opt); err != nil {
			t.Fatal(err)
		}
	}
	byURL := map[string][]string{}
	if err := st.ChunkScan(ctx, k.ID, func(c store.IndexedChunk) error {
		byURL[c.SourceURL] = append(byURL[c.SourceURL], c.Text)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		texts := byURL[d.URL]
		if len(texts) < 3 {
			t.Fatalf("%s: %d chunks, want the listing over several", d.URL, len(texts))
		}
		for i, text := range texts[1 : len(texts)-1] {
			if !strings.HasPrefix(text, "```text\n") || !strings.HasSuffix(text, "\n```") {
				t.Errorf("%s: chunk %d, inside the listing, is not fenced:\n%s", d.URL, i+1, text)
			}
		}
	}
}
