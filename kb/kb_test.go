package kb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/eval"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
)

// backends runs fn against SQLite always and PostgreSQL when configured.
func backends(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, openSQLite(t))
	})
	for _, pg := range []struct {
		name, env string
		conns     int
	}{{"postgres", "QUARRY_TEST_POSTGRES_URL", 0}, {"pgvector", "QUARRY_TEST_PGVECTOR_URL", 1}} {
		t.Run(pg.name, func(t *testing.T) {
			if pg.conns == 0 {
				t.Parallel() // PGlite serves one connection: keep it serial
			}
			url := testpg.Schema(t, pg.env)
			st, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: pg.conns})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if pg.conns == 1 && !st.HasPGVector() {
				t.Fatalf("%s server has no pgvector", pg.env)
			}
			fn(t, st)
		})
	}
}

func openSQLite(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIngestAndSearch(t *testing.T) {
	backends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc := kb.New(st, nil)
		emb := embed.Hash{}
		if _, err := svc.Create(ctx, "notes", "", emb); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		write(t, dir, "docs/crawler.md", "# Crawler\n\nThe crawler handles stale pages by re-crawling them every five minutes. A page that fails three times is marked stale and kept.\n")
		write(t, dir, "docs/ask.txt", "Answers come from the top five chunks in the question's language.\n")
		write(t, dir, "docs/page.html", "<html><head><title>Billing</title><meta name=\"keywords\" content=\"invoice\"></head><body><p>Invoices are sent monthly by email to the account owner.</p></body></html>")
		write(t, dir, "docs/.hidden.md", "secret notes that must not be ingested")
		write(t, dir, "docs/empty.md", "")
		write(t, dir, "docs/binary.txt", "\x00\x01\x02\x03")
		jsonl := write(t, dir, "corpus.jsonl", `{"_id":"d1","title":"Solid-state batteries","text":"Solid-state batteries use a solid electrolyte instead of a liquid one."}
{"_id":"d2","title":"broken"
{"_id":"d1","title":"dup","text":"duplicate id"}
{"_id":"d3","text":"Lithium metal anodes raise energy density.","url":"https://example.org/lithium"}
`)
		rep, err := svc.AddPaths(ctx, "notes", []string{filepath.Join(dir, "docs"), jsonl, filepath.Join(dir, "missing.pdf")}, kb.AddOptions{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Added != 5 || rep.Unchanged != 0 || len(rep.Failed) != 5 {
			t.Fatalf("report: %+v", rep)
		}
		if pg, ok := st.(*postgres.Store); ok && pg.HasPGVector() {
			// The ingest built the knowledge base's HNSW index over its
			// first chunks.
			var indexed bool
			if err := pg.SQL.QueryRowContext(ctx, `SELECT count(*) = 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'chunks_cvec_kb%'`).Scan(&indexed); err != nil || !indexed {
				t.Fatalf("no HNSW index after the first ingest (%v)", err)
			}
		}
		reasons := ""
		for _, p := range rep.Failed {
			reasons += p.Origin + ": " + p.Reason + "\n"
		}
		for _, want := range []string{"empty.md: file is empty", "binary.txt: content is binary", "corpus.jsonl:2: invalid JSON", `corpus.jsonl:3: duplicate _id "d1" (first on line 1)`, "missing.pdf: stat"} {
			if !strings.Contains(reasons, want) {
				t.Errorf("failed list lacks %q:\n%s", want, reasons)
			}
		}

		res, err := svc.Search(ctx, "notes", emb, kb.Query{Text: "how does the crawler handle stale pages", K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].Title != "Crawler" || !strings.HasPrefix(res[0].SourceURL, "file://") || res[0].ChunkID == 0 || res[0].Score <= 0 {
			t.Fatalf("search: %+v", res)
		}
		res, _ = svc.Search(ctx, "notes", emb, kb.Query{Text: "solid electrolyte", K: 1, Mode: kb.ModeBM25})
		if len(res) != 1 || res[0].SourceURL != "kb://notes/d1" || res[0].DocID != "d1" {
			t.Fatalf("jsonl doc: %+v", res)
		}
		res, _ = svc.Search(ctx, "notes", emb, kb.Query{Text: "lithium anodes", K: 1, Mode: kb.ModeVector})
		if len(res) != 1 || res[0].SourceURL != "https://example.org/lithium" {
			t.Fatalf("url kept: %+v", res)
		}
		// Source filter.
		res, _ = svc.Search(ctx, "notes", emb, kb.Query{Text: "crawler invoices batteries", K: 10, Source: "kb://"})
		for _, r := range res {
			if !strings.HasPrefix(r.SourceURL, "kb://") {
				t.Fatalf("source filter let %s through", r.SourceURL)
			}
		}

		// Adding the same inputs again changes nothing; changing one file
		// replaces only its own chunks.
		before, _ := st.KBStats(ctx, mustKB(t, svc, "notes").ID)
		rep, err = svc.AddPaths(ctx, "notes", []string{filepath.Join(dir, "docs"), jsonl}, kb.AddOptions{Embedder: emb})
		if err != nil || rep.Added != 0 || rep.Updated != 0 || rep.Unchanged != 5 {
			t.Fatalf("re-add: %+v %v", rep, err)
		}
		write(t, dir, "docs/ask.txt", "Answers now come from the top seven chunks.\n")
		rep, err = svc.AddPaths(ctx, "notes", []string{filepath.Join(dir, "docs")}, kb.AddOptions{Embedder: emb})
		if err != nil || rep.Updated != 1 || rep.Unchanged != 2 {
			t.Fatalf("changed file: %+v %v", rep, err)
		}
		after, _ := st.KBStats(ctx, mustKB(t, svc, "notes").ID)
		if after.Sources != before.Sources || after.Chunks != before.Chunks {
			t.Fatalf("stats changed: %+v -> %+v", before, after)
		}
		res, _ = svc.Search(ctx, "notes", emb, kb.Query{Text: "seven chunks", K: 1, Mode: kb.ModeBM25})
		if len(res) != 1 || !strings.Contains(res[0].Text, "seven") {
			t.Fatalf("index not refreshed after update: %+v", res)
		}
	})
}

func mustKB(t *testing.T, svc *kb.Service, name string) *store.KB {
	t.Helper()
	k, err := svc.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := kb.New(openSQLite(t), nil)
	for _, name := range []string{"../etc", "a/b", `a\b`, "", ".hidden", "with space", strings.Repeat("x", 65)} {
		var ve *store.ValidationError
		if _, err := svc.Create(ctx, name, "", embed.Hash{}); !errors.As(err, &ve) || ve.Field != "name" {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := svc.Create(ctx, "kb1", "", embed.Hash{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q     kb.Query
		field string
	}{
		{kb.Query{Text: "", K: 5}, "query"},
		{kb.Query{Text: "   ", K: 5}, "query"},
		{kb.Query{Text: strings.Repeat("a", 10001), K: 5}, "query"},
		{kb.Query{Text: "ok", K: 0}, "k"},
		{kb.Query{Text: "ok", K: 5, Mode: "fuzzy"}, "mode"},
		{kb.Query{Text: "ok", K: 5, Fusion: "max"}, "fusion"},
	}
	for _, tt := range tests {
		var ve *store.ValidationError
		if _, err := svc.Search(ctx, "kb1", embed.Hash{}, tt.q); !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("query %+v: got %v, want a %s error", tt.q.Mode, err, tt.field)
		}
	}
	if _, err := svc.Search(ctx, "kb1", embed.Hash{}, kb.Query{Text: strings.Repeat("a", 10000), K: 5}); err != nil {
		t.Errorf("10,000 characters must be accepted: %v", err)
	}
	if _, err := svc.Search(ctx, "nope", embed.Hash{}, kb.Query{Text: "x", K: 5}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing kb: %v", err)
	}
	var mm *kb.EmbedderMismatchError
	if _, err := svc.Search(ctx, "kb1", embed.Hash{Dim: 128}, kb.Query{Text: "x", K: 5}); !errors.As(err, &mm) {
		t.Errorf("other embedder: %v", err)
	}
	if _, err := svc.AddPaths(ctx, "kb1", []string{"."}, kb.AddOptions{Embedder: embed.Hash{Dim: 128}}); !errors.As(err, &mm) {
		t.Errorf("ingest with other embedder: %v", err)
	}
}

// TestKoreanRetrieval measures MRR on a small Korean set whose queries and
// passages differ in particles and endings, against whitespace BM25.
func TestKoreanRetrieval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := kb.New(openSQLite(t), nil)
	emb := embed.Hash{}
	if _, err := svc.Create(ctx, "ko", "", emb); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "ko", []string{"testdata/korean/corpus.jsonl"}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	qf, _ := os.Open("testdata/korean/queries.jsonl")
	queries, err := corpus.ReadQueries(qf)
	if err != nil {
		t.Fatal(err)
	}
	rf, _ := os.Open("testdata/korean/qrels.tsv")
	qrels, err := corpus.ReadQrels(rf)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{kb.ModeBM25, kb.ModeHybrid} {
		r, err := eval.Retrieval(ctx, func(ctx context.Context, q string) ([]string, error) {
			res, err := svc.Search(ctx, "ko", emb, kb.Query{Text: q, K: 10, Mode: mode, Language: "ko"})
			var ids []string
			for _, x := range res {
				ids = append(ids, x.DocID)
			}
			return ids, err
		}, queries, qrels, 10)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Korean %s MRR@10 = %.3f over %d queries", mode, r.MRR, r.Queries)
		if r.MRR < 0.85 {
			t.Errorf("Korean %s MRR@10 = %.3f, want >= 0.85", mode, r.MRR)
		}
	}

	// Whitespace tokens, the baseline this design beats.
	ws := index.NewBM25(1.2, 0.75)
	var ids []string
	cf, _ := os.Open("testdata/korean/corpus.jsonl")
	_, _ = corpus.ReadDocs(cf, func(d corpus.Doc) error {
		ws.Add(len(ids), strings.Fields(d.Title+" "+d.Text))
		ids = append(ids, d.ID)
		return nil
	})
	var mrr float64
	for _, q := range queries {
		var ranked []string
		for _, h := range ws.Search(strings.Fields(q.Text), 10, nil) {
			ranked = append(ranked, ids[h.Doc])
		}
		mrr += eval.MRR(ranked, qrels[q.ID], 10)
	}
	mrr /= float64(len(queries))
	t.Logf("Korean whitespace-BM25 MRR@10 = %.3f", mrr)
	if mrr >= 0.85 {
		t.Errorf("whitespace baseline unexpectedly strong (%.3f): the test set no longer tests particles", mrr)
	}
}

// TestHostileDocuments: a javascript: or data: URL is reported and not
// stored, the rest of the file is ingested; a knowledge base removed while
// documents are added gives a clear not-found error, on every backend.
func TestHostileDocuments(t *testing.T) {
	backends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc := kb.New(st, nil)
		if _, err := svc.Create(ctx, "h", "", embed.Hash{}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		p := write(t, dir, "c.jsonl", "\ufeff"+`{"_id":"1","title":"ok","text":"A fine document."}
{"_id":"2","title":"x","text":"Click me.","url":"javascript:alert(1)"}
{"_id":"3","title":"y","text":"Data me.","url":"data:text/html,<script>alert(1)</script>"}
{"_id":"4","title":"z","text":"Controlled.","url":"https://example.com/a\u001b[2Jb"}
{"_id":"5","title":"w","text":"Fine page.","url":"https://example.com/ok"}
`)
		rep, err := svc.AddPaths(ctx, "h", []string{p}, kb.AddOptions{Embedder: embed.Hash{}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Added != 2 || len(rep.Failed) != 3 {
			t.Fatalf("added %d, failed %+v (the BOM line must count)", rep.Added, rep.Failed)
		}
		for _, f := range rep.Failed {
			if !strings.Contains(f.Reason, "url: must") {
				t.Errorf("problem %+v does not name the url rule", f)
			}
		}
		// Control characters and invalid bytes in titles and texts are not
		// stored.
		esc := write(t, dir, "esc.jsonl", `{"_id":"e1","title":"Evil \u001b[2J\u001b]0;pwned\u0007 title","text":"Text with \u001b[31mred\u001b[0m and \u202egnp.exe in it."}`+"\n")
		if _, err := svc.AddPaths(ctx, "h", []string{esc}, kb.AddOptions{Embedder: embed.Hash{}}); err != nil {
			t.Fatal(err)
		}
		k := mustKB(t, svc, "h")
		src, err := st.SourceGet(ctx, k.ID, "kb://h/e1")
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(src.Title+src.Content, "\x1b\x07\u202e") || !strings.Contains(src.Title, "Evil") || !strings.Contains(src.Content, "red") {
			t.Fatalf("stored %q / %q", src.Title, src.Content)
		}
		if err := svc.Delete(ctx, "h"); err != nil {
			t.Fatal(err)
		}
		_, err = svc.AddDocuments(ctx, k, []kb.Document{{URL: "https://example.com/new", Title: "t", Text: "Some new text.", Origin: "new"}}, kb.AddOptions{Embedder: embed.Hash{}})
		if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `knowledge base "h" was removed`) {
			t.Fatalf("add after rm: %v", err)
		}
	})
}

// TestSearchInStore: a one-shot process's search in the store (SQLite:
// FTS5 and the vector codes; PostgreSQL: BM25 in SQL over the GIN-indexed
// terms and pgvector or a scan) ranks as the in-memory index does, to the
// score, with the same filters, and sees a write at once.
func TestSearchInStore(t *testing.T) {
	backends(t, testSearchInStore)
}

func testSearchInStore(t *testing.T, st store.Store) {
	ctx := context.Background()
	mem, in := kb.New(st, nil), kb.New(st, nil)
	in.SetInStore(true)
	emb := embed.Hash{}
	if _, err := mem.Create(ctx, "notes", "", emb); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, "crawler.md", "# Crawler\n\nThe crawler handles stale pages by re-crawling them every five minutes. A page that fails three times is marked stale and kept.\n")
	write(t, dir, "ask.txt", "Answers come from the top five chunks in the question's language.\n")
	write(t, dir, "billing.html", "<html><head><title>Billing</title></head><body><p>Invoices are sent monthly by email to the account owner.</p></body></html>")
	write(t, dir, "ko.md", "# 크롤러\n\n크롤러는 오래된 페이지를 5분마다 다시 수집합니다.\n")
	write(t, dir, "sub/fees.md", "Fees are paid every month by bank transfer; invoices list them.\n")
	write(t, dir, "장부/요금.md", "Ledger fees are paid weekly; invoices list them too.\n")
	if _, err := mem.AddPaths(ctx, "notes", []string{dir}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []kb.Query{
		{Text: "how does the crawler handle stale pages", K: 3},
		{Text: "invoices monthly", K: 3, Mode: kb.ModeBM25},
		{Text: "who pays the fees", K: 2, Mode: kb.ModeVector},
		{Text: "크롤러 수집", K: 2, Language: "ko"},
		{Text: "invoices", K: 5, Source: "file://" + filepath.Join(dir, "sub")},
		{Text: "invoices", K: 5, Source: "file://" + filepath.Join(dir, "장")},
		{Text: "invoices", K: 5, Mode: kb.ModeVector, Source: "file://" + filepath.Join(dir, "장부")},
		{Text: "the of and", K: 3},
		// Bad input: punctuation only, 10,000 characters, filters that
		// match nothing.
		{Text: "?! … — ;;", K: 3},
		{Text: strings.Repeat("crawler invoices fees ", 455)[:10000], K: 3},
		{Text: "crawler stale pages", K: 3, Language: "fr"},
		{Text: "invoices", K: 3, Mode: kb.ModeVector, Source: "file:///nowhere/"},
		{Text: "invoices fees", K: 3, Mode: kb.ModeBM25, Source: "file:///nowhere/"},
	} {
		want, err := mem.Search(ctx, "notes", emb, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := in.Search(ctx, "notes", emb, q)
		if err != nil {
			t.Fatal(err)
		}
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].ChunkID == want[i].ChunkID && got[i].Text == want[i].Text && got[i].SourceURL == want[i].SourceURL &&
				math.Abs(got[i].Score-want[i].Score) < 1e-6
		}
		if !same {
			t.Errorf("%q (%s): in the store %+v, in memory %+v", q.Text, q.Mode, got, want)
		}
	}
	// A knowledge base with no chunks answers with none, in every mode.
	if _, err := mem.Create(ctx, "empty", "", emb); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{kb.ModeBM25, kb.ModeVector, kb.ModeHybrid} {
		if got, err := in.Search(ctx, "empty", emb, kb.Query{Text: "crawler", K: 3, Mode: mode}); err != nil || len(got) != 0 {
			t.Errorf("empty knowledge base, %s: %+v %v", mode, got, err)
		}
	}
	write(t, dir, "ask.txt", "Answers now come from the top seven chunks.\n")
	if _, err := in.AddPaths(ctx, "notes", []string{dir}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	res, err := in.Search(ctx, "notes", emb, kb.Query{Text: "seven chunks", K: 1, Mode: kb.ModeBM25})
	if err != nil || len(res) != 1 || !strings.Contains(res[0].Text, "seven") {
		t.Fatalf("a write not seen: %+v %v", res, err)
	}
}

// indexBuilding is a PostgreSQL store with pgvector whose knowledge
// bases have no vector index yet and too many chunks to rank exactly in a
// search's time: every vector search fails as the store then fails it.
type indexBuilding struct{ *postgres.Store }

func (indexBuilding) ChunkVectorSearch(context.Context, store.VectorQuery) ([]store.VectorHit, error) {
	return nil, fmt.Errorf("chunk vector search: %w", store.ErrVectorIndexBuilding)
}

func (b indexBuilding) ChunkNearest(ctx context.Context, q store.VectorQuery) ([]store.VectorHit, error) {
	return b.ChunkVectorSearch(ctx, q)
}

// TestSearchBesideAFirstBuild: while a knowledge base's vector index is
// being built and ranking its chunks by vector takes too long, a hybrid
// search ranks by terms alone and notes it, in memory and in the store;
// a vector search fails with a 503 saying why; a BM25 search is as ever.
func TestSearchBesideAFirstBuild(t *testing.T) {
	ctx := context.Background()
	pg, err := postgres.Open(ctx, testpg.Schema(t, "QUARRY_TEST_PGVECTOR_URL"), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	if !pg.HasPGVector() {
		t.Fatal("QUARRY_TEST_PGVECTOR_URL server has no pgvector")
	}
	emb := embed.Hash{}
	var logged bytes.Buffer
	mem, in := kb.New(indexBuilding{pg}, slog.New(slog.NewTextHandler(&logged, nil))), kb.New(indexBuilding{pg}, nil)
	in.SetInStore(true)
	if _, err := mem.Create(ctx, "notes", "", emb); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, "crawler.md", "# Crawler\n\nThe crawler handles stale pages by re-crawling them every five minutes.\n")
	write(t, dir, "billing.md", "# Billing\n\nInvoices are sent monthly by email to the account owner.\n")
	if _, err := mem.AddPaths(ctx, "notes", []string{dir}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	for name, svc := range map[string]*kb.Service{"in memory": mem, "in the store": in} {
		q := kb.Query{Text: "how does the crawler handle stale pages", K: 3}
		terms := q
		terms.Mode = kb.ModeBM25
		want, err := svc.SearchNoted(ctx, "notes", emb, terms)
		if err != nil || len(want.Results) == 0 || want.Notes != nil {
			t.Fatalf("%s, bm25: %+v %v", name, want, err)
		}
		got, err := svc.SearchNoted(ctx, "notes", emb, q)
		if err != nil {
			t.Fatalf("%s, hybrid: %v", name, err)
		}
		if len(got.Notes) != 1 || got.Notes[0] != kb.TermsAlone {
			t.Errorf("%s, hybrid: notes %q, want %q", name, got.Notes, kb.TermsAlone)
		}
		// A measurement takes none of it as hybrid's; the terms' own, as asked.
		if _, err := got.AsAsked(); !errors.Is(err, store.ErrVectorIndexBuilding) {
			t.Errorf("%s, hybrid as asked: %v, want store.ErrVectorIndexBuilding", name, err)
		}
		if res, err := want.AsAsked(); err != nil || len(res) != len(want.Results) {
			t.Errorf("%s, bm25 as asked: %d results, %v", name, len(res), err)
		}
		if len(got.Results) != len(want.Results) || got.Results[0].ChunkID != want.Results[0].ChunkID {
			t.Errorf("%s, hybrid: %+v, want the terms' ranking %+v", name, got.Results, want.Results)
		}
		q.Mode = kb.ModeVector
		if _, err := svc.SearchNoted(ctx, "notes", emb, q); !errors.Is(err, store.ErrVectorIndexBuilding) || errcode.Of(err) != errcode.Unavailable {
			t.Errorf("%s, vector: %v, want store.ErrVectorIndexBuilding", name, err)
		}
	}
	// Search's caller (ask, a research) drops the notes: they are logged.
	if res, err := mem.Search(ctx, "notes", emb, kb.Query{Text: "stale pages", K: 3}); err != nil || len(res) == 0 {
		t.Fatalf("Search: %+v %v", res, err)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), kb.TermsAlone) {
		t.Errorf("Search's note not logged as a warning: %q", logged.String())
	}
}

// TestFileNameNotUTF8: a file whose name is not UTF-8 (an old archive's
// Latin-1) is ingested on every store: its source URL escapes the bytes
// that are not, and its title, from the name, is text.
func TestFileNameNotUTF8(t *testing.T) {
	backends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc := kb.New(st, nil)
		emb := embed.Hash{}
		if _, err := svc.Create(ctx, "latin", "", emb); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		write(t, dir, "caf\xe9.txt", "The cafe opens at nine every morning.\n")
		rep, err := svc.AddPaths(ctx, "latin", []string{dir}, kb.AddOptions{Embedder: emb})
		if err != nil || rep.Added != 1 {
			t.Fatalf("report %+v, %v", rep, err)
		}
		res, err := svc.Search(ctx, "latin", emb, kb.Query{Text: "cafe opens", K: 1})
		if err != nil || len(res) != 1 {
			t.Fatalf("search: %+v %v", res, err)
		}
		if u := res[0].SourceURL; !utf8.ValidString(u) || !strings.HasSuffix(u, "/caf%E9.txt") {
			t.Errorf("source URL %q, want valid UTF-8 ending /caf%%E9.txt", u)
		}
		if !utf8.ValidString(res[0].Title) {
			t.Errorf("title %q is not UTF-8", res[0].Title)
		}
	})
}
