package kb_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/internal/corpusgen"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
)

// BenchmarkScale builds a knowledge base of QUARRY_BENCH_DOCS generated
// documents (internal/corpusgen: about a chunk each; default 20,000; each
// sentence drawn from the whole pool, or with QUARRY_BENCH_SHAPE=topical
// each document keeping to one source's subject) and
// reports, on SQLite and (with QUARRY_TEST_POSTGRES_URL) PostgreSQL:
// ingest chunks/s and the database's size; a one-shot search in the store (a fresh service that
// loads nothing, as a CLI command) p50/p99 for bm25, vector and hybrid;
// and a resident service's first search (it loads the knowledge base),
// the Go heap that holds it and its warm p50/p99; and how long a document
// added through another service (a replica) takes to be found through the
// resident one, and through one searching in the store, the add included. Queries are SciFact's
// training claims. It needs ../shared/data.
//
//	QUARRY_BENCH_DOCS=100000 go test ./kb -run '^$' -bench Scale -benchtime 1x -timeout 60m
func BenchmarkScale(b *testing.B) {
	n := 20000
	if v := os.Getenv("QUARRY_BENCH_DOCS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("QUARRY_BENCH_DOCS: %v", err)
		}
	}
	corpus := filepath.Join(b.TempDir(), "corpus.jsonl")
	f, err := os.Create(corpus)
	if err != nil {
		b.Fatal(err)
	}
	var sources []string
	for _, s := range corpusgen.Sources {
		sources = append(sources, filepath.Join("..", s))
	}
	shape, err := corpusgen.ParseShape(cmp.Or(os.Getenv("QUARRY_BENCH_SHAPE"), "mixed"))
	if err != nil {
		b.Fatalf("QUARRY_BENCH_SHAPE: %v", err)
	}
	if err := corpusgen.Generate(f, n, 1, sources, shape); err != nil {
		b.Fatal(err)
	}
	_ = f.Close()
	queries := claims(b, filepath.Join("..", "..", "shared", "data", "scifact", "queries_train.jsonl"), 200)
	b.Run("sqlite", func(b *testing.B) {
		dir := b.TempDir()
		st, err := sqlite.Open(context.Background(), filepath.Join(dir, "q.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		scale(b, st, corpus, queries, func() int64 { return dirSize(dir) })
	})
	if os.Getenv("QUARRY_TEST_POSTGRES_URL") != "" {
		b.Run("postgres", func(b *testing.B) {
			// QUARRY_INDEX_MEMORY: the vector index build's memory, in MB.
			mem, _ := strconv.Atoi(os.Getenv("QUARRY_INDEX_MEMORY"))
			st, err := postgres.Open(context.Background(), testpg.Schema(b, "QUARRY_TEST_POSTGRES_URL"), postgres.Options{IndexMemoryMB: mem})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			b.Logf("pgvector: %v", st.HasPGVector())
			scale(b, st, corpus, queries, func() int64 {
				var n int64
				err := st.SQL.QueryRow(`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
					JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')`).Scan(&n)
				if err != nil {
					b.Fatal(err)
				}
				return n
			})
		})
	}
}

func scale(b *testing.B, st store.Store, corpus string, queries []string, size func() int64) {
	ctx := context.Background()
	emb := embed.Hash{}
	for range b.N {
		svc := kb.New(st, nil)
		_ = svc.Delete(ctx, "scale")
		if _, err := svc.Create(ctx, "scale", "", emb); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		rep, err := svc.AddPaths(ctx, "scale", []string{corpus}, kb.AddOptions{Embedder: emb})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Chunks)/time.Since(t0).Seconds(), "ingest-chunks/s")
		// Searchable from then: the rest is the vector index's build.
		b.ReportMetric(float64(rep.Chunks)/rep.WrittenSeconds, "written-chunks/s")
		if size != nil {
			b.ReportMetric(float64(size())/(1<<20), "db-MB")
		}
		modes := []string{kb.ModeBM25, kb.ModeVector, kb.ModeHybrid}
		if _, ok := st.(store.TermSearcher); ok {
			for _, mode := range modes {
				p50, p99 := latencies(b, queries, func(q string) error {
					one := kb.New(st, nil) // a one-shot command's service
					one.SetInStore(true)
					_, err := one.Search(ctx, "scale", emb, kb.Query{Text: q, K: 10, Mode: mode})
					return err
				})
				b.ReportMetric(p50, "instore-"+mode+"-p50-ms")
				b.ReportMetric(p99, "instore-"+mode+"-p99-ms")
			}
			// A replica that searches in the database (--search database).
			replica := kb.New(st, nil)
			replica.SetInStore(true)
			b.ReportMetric(writeVisible(b, st, replica, "qzxwvutsrq"), "instore-write-visible-ms")
		}
		res := kb.New(st, nil)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 = time.Now()
		if _, err := res.Search(ctx, "scale", emb, kb.Query{Text: queries[0], K: 10}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(t0).Milliseconds()), "resident-first-ms")
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-min(after.HeapInuse, before.HeapInuse))/(1<<20), "resident-heap-MB")
		for _, mode := range modes {
			p50, p99 := latencies(b, queries, func(q string) error {
				_, err := res.Search(ctx, "scale", emb, kb.Query{Text: q, K: 10, Mode: mode})
				return err
			})
			b.ReportMetric(p50, "resident-"+mode+"-p50-ms")
			b.ReportMetric(p99, "resident-"+mode+"-p99-ms")
		}
		b.ReportMetric(writeVisible(b, st, res, "zyxwvutsrq"), "write-visible-ms")
		if pg, ok := st.(*postgres.Store); ok && pg.HasPGVector() {
			vectorRecall(b, st, pg, "scale", queries).report(b)
		}
	}
}

// writeVisible adds a document through one service (a replica) and
// returns how long until a search through res, another replica (its
// index loaded, or searching in the database), finds it.
func writeVisible(b *testing.B, st store.Store, res *kb.Service, word string) float64 {
	ctx := context.Background()
	emb := embed.Hash{}
	writer := kb.New(st, nil)
	p := filepath.Join(b.TempDir(), word+".md")
	if err := os.WriteFile(p, []byte("# Late\n\nThe "+word+" arrived after everything else was written.\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if _, err := writer.AddPaths(ctx, "scale", []string{p}, kb.AddOptions{Embedder: emb}); err != nil {
		b.Fatal(err)
	}
	for time.Since(t0) < time.Minute {
		hits, err := res.Search(ctx, "scale", emb, kb.Query{Text: word, K: 1, Mode: kb.ModeBM25})
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) > 0 && strings.Contains(hits[0].Text, word) {
			return float64(time.Since(t0).Microseconds()) / 1000
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatal("a document added through one replica was not searchable through another within a minute")
	return 0
}

func latencies(b *testing.B, queries []string, fn func(string) error) (p50, p99 float64) {
	d := make([]float64, len(queries))
	for i, q := range queries {
		t0 := time.Now()
		if err := fn(q); err != nil {
			b.Fatal(err)
		}
		d[i] = float64(time.Since(t0).Microseconds()) / 1000
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*99/100]
}

func claims(b *testing.B, path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("needs ../shared/data: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < n {
		var q struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			b.Fatal(err)
		}
		out = append(out, q.Text)
	}
	return out
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}

// recall is how much of the exact nearest chunks a store's vector index
// finds.
type recall struct {
	at10, at100 float64 // shares of the exact 10 found, asked for 10 and 100
	// ties is at10 with a chunk as near as the exact tenth, within
	// tieEpsilon of its cosine, counted as found (ann-benchmarks' rule: a
	// corpus that holds a text twice has two equal answers), and share
	// the found ten's summed cosine over the exact ten's.
	ties, share float64
}

// tieEpsilon is how much less than the exact tenth's cosine a chunk may
// score and still count as one of the nearest ten.
const tieEpsilon = 1e-3

func (r recall) report(b *testing.B) {
	b.ReportMetric(r.at10, "vector-recall@10")
	b.ReportMetric(r.at100, "vector-recall@10-of-100")
	b.ReportMetric(r.ties, "vector-recall@10-ties")
	b.ReportMetric(r.share, "vector-score-share@10")
}

// vectorRecall measures the store's native vector search against the
// exact 10 nearest chunks (by cosine, every embedding compared) over the
// queries' embeddings, asked for 10 and for the 100 a vector or hybrid
// search asks for, of which it keeps the first 10.
func vectorRecall(b *testing.B, st store.Store, vs store.VectorSearcher, name string, queries []string) recall {
	ctx := context.Background()
	kbRow, err := st.KBGet(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	var ids []int64
	var vecs [][]float32
	at := map[int64]int{}
	if err := st.ChunkScan(ctx, kbRow.ID, func(c store.IndexedChunk) error {
		at[c.ID] = len(ids)
		ids, vecs = append(ids, c.ID), append(vecs, c.Embedding)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	qvs, err := embed.Hash{}.Embed(ctx, queries)
	if err != nil {
		b.Fatal(err)
	}
	var r recall
	found, total := map[int]int{}, 0 // by how many were asked for
	for _, qv := range qvs {
		top := index.NewTop(10)
		for i, v := range vecs {
			top.Push(index.Hit{Doc: i, Score: index.Cosine(qv, v)})
		}
		exact := map[int64]bool{}
		sum, tenth := 0.0, 0.0
		for _, h := range top.Sorted() {
			exact[ids[h.Doc]] = true
			sum, tenth = sum+h.Score, h.Score
		}
		total += len(exact)
		for _, k := range []int{10, 100} {
			hits, err := vs.ChunkVectorSearch(ctx, store.VectorQuery{KBID: kbRow.ID, Dimension: len(qv), Vector: qv, K: k, Filter: store.ChunkFilter{IncludeStale: true}})
			if err != nil {
				b.Fatal(err)
			}
			got := 0.0
			for _, h := range hits[:min(10, len(hits))] {
				if exact[h.ChunkID] {
					found[k]++
				}
				if k != 10 {
					continue
				}
				cos := index.Cosine(qv, vecs[at[h.ChunkID]])
				got += cos
				if cos >= tenth-tieEpsilon {
					r.ties++
				}
			}
			if k == 10 && sum > 0 {
				r.share += got / sum
			}
		}
	}
	r.at10 = float64(found[10]) / float64(total)
	r.at100 = float64(found[100]) / float64(total)
	r.ties /= float64(total)
	r.share /= float64(len(qvs))
	return r
}

// BenchmarkScaleSearch measures searches in the database over a knowledge
// base already there (a `kb add` of a generated corpus, or the schema
// BenchmarkScale kept with QUARRY_TEST_KEEP_SCHEMA=1): in-store p50/p99
// for bm25, vector and hybrid over SciFact's first 200 training claims,
// K=10, each mode's searches run once before they are timed (that pass's
// p50 reported as cold), with the knowledge base's term lists and without
// them (its build row set aside for the run and put back), and how many
// searches ranked the same chunks both ways. It needs
// QUARRY_BENCH_DATABASE_URL and ../shared/data; QUARRY_BENCH_KB names the
// knowledge base (default "scale"); QUARRY_BENCH_BUILD=1 builds the lists
// first; QUARRY_BENCH_EXACT=1 makes the searches with lists prove their
// top K (--exact-search); QUARRY_BENCH_RECALL=1 measures the vector
// index's recall against an exact scan (every embedding read into
// memory), QUARRY_BENCH_RECALL=only that and nothing else; QUARRY_VECTOR_EF sets the vector searches' least ef_search
// (--vector-ef).
//
//	QUARRY_BENCH_DATABASE_URL=postgres://… go test ./kb -run '^$' -bench ScaleSearch -benchtime 1x
func BenchmarkScaleSearch(b *testing.B) {
	url := os.Getenv("QUARRY_BENCH_DATABASE_URL")
	if url == "" {
		b.Skip("QUARRY_BENCH_DATABASE_URL names the database to search")
	}
	name := cmp.Or(os.Getenv("QUARRY_BENCH_KB"), "scale")
	ctx := context.Background()
	var ef int
	if v := os.Getenv("QUARRY_VECTOR_EF"); v != "" {
		var err error
		if ef, err = strconv.Atoi(v); err != nil || ef < 1 || ef > 1000 {
			b.Fatalf("QUARRY_VECTOR_EF=%q: must be a number from 1 to 1000", v)
		}
	}
	st, err := postgres.Open(ctx, url, postgres.Options{ExactSearch: os.Getenv("QUARRY_BENCH_EXACT") == "1", VectorSearchEF: ef})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	kbRow, err := st.KBGet(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("QUARRY_BENCH_BUILD") == "1" {
		t0 := time.Now()
		if err := st.BuildTermLists(ctx, kbRow.ID); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "lists-build-s")
	}
	queries := claims(b, filepath.Join("..", "..", "shared", "data", "scifact", "queries_train.jsonl"), 200)
	emb := embed.Hash{}
	scores := map[string]float64{} // the sum of each search's top scores, by label, mode and query
	run := func(label string) map[string][]int64 {
		got := map[string][]int64{}
		for _, mode := range []string{kb.ModeBM25, kb.ModeVector, kb.ModeHybrid} {
			search := func(q string) ([]kb.Result, error) {
				one := kb.New(st, nil)
				one.SetInStore(true)
				return one.Search(ctx, name, emb, kb.Query{Text: q, K: 10, Mode: mode})
			}
			// The first pass is the cold one: a new connection's
			// backend maps each shared buffer it touches (with 8 GB of
			// them at 1M chunks, vector p50 28 ms on a first pass, 11 on
			// the next); a long-lived replica searches as the second does.
			cold, _ := latencies(b, queries, func(q string) error {
				_, err := search(q)
				return err
			})
			p50, p99 := latencies(b, queries, func(q string) error {
				hits, err := search(q)
				for _, h := range hits {
					got[mode+q] = append(got[mode+q], h.ChunkID)
					scores[label+mode+q] += h.Score
				}
				return err
			})
			b.ReportMetric(cold, label+mode+"-cold-p50-ms")
			b.ReportMetric(p50, label+mode+"-p50-ms")
			b.ReportMetric(p99, label+mode+"-p99-ms")
		}
		return got
	}
	if r := os.Getenv("QUARRY_BENCH_RECALL"); (r == "1" || r == "only") && st.HasPGVector() {
		vectorRecall(b, st, st, name, queries).report(b)
		if r == "only" {
			return
		}
	}
	for range b.N {
		with := run("lists-")
		// The same searches without the lists: their build row set aside
		// (and put back however the run ends).
		var saved []any
		row := st.SQL.QueryRowContext(ctx, `SELECT chunks, avg_len, k1, b, list_len, written FROM kb_term_list_builds WHERE kb_id = $1`, kbRow.ID)
		var chunks, listLen, written int64
		var avg, k1, bb float64
		if err := row.Scan(&chunks, &avg, &k1, &bb, &listLen, &written); err == nil {
			saved = []any{kbRow.ID, chunks, avg, k1, bb, listLen, written}
		}
		if _, err := st.SQL.ExecContext(ctx, `DELETE FROM kb_term_list_builds WHERE kb_id = $1`, kbRow.ID); err != nil {
			b.Fatal(err)
		}
		without := func() map[string][]int64 {
			defer func() {
				if saved != nil {
					if _, err := st.SQL.ExecContext(ctx, `INSERT INTO kb_term_list_builds (kb_id, chunks, avg_len, k1, b, list_len, written) VALUES ($1, $2, $3, $4, $5, $6, $7)`, saved...); err != nil {
						b.Error(err)
					}
				}
			}()
			return run("exact-")
		}()
		same, overlap, hyb := 0, 0.0, 0.0
		for _, q := range queries {
			if slices.Equal(with[kb.ModeBM25+q], without[kb.ModeBM25+q]) {
				same++
			}
			overlap += overlapOf(with[kb.ModeBM25+q], without[kb.ModeBM25+q])
			hyb += overlapOf(with[kb.ModeHybrid+q], without[kb.ModeHybrid+q])
		}
		b.ReportMetric(float64(same), "bm25-same-of-200")
		b.ReportMetric(overlap/float64(len(queries)), "bm25-overlap@10")
		b.ReportMetric(hyb/float64(len(queries)), "hybrid-overlap@10")
		// The share of the exact top 10's summed BM25 score the lists'
		// top 10 reaches: equal-scoring chunks (a sentence the generated
		// corpus repeats) count as the same.
		ratio := 0.0
		for _, q := range queries {
			if e := scores["exact-"+kb.ModeBM25+q]; e > 0 {
				ratio += scores["lists-"+kb.ModeBM25+q] / e
			} else {
				ratio++
			}
		}
		b.ReportMetric(ratio/float64(len(queries)), "bm25-score-share@10")
	}
}

// overlapOf is the share of want's chunks that got holds (1 when both are
// empty).
func overlapOf(got, want []int64) float64 {
	if len(want) == 0 {
		return 1
	}
	n := 0
	for _, id := range want {
		if slices.Contains(got, id) {
			n++
		}
	}
	return float64(n) / float64(len(want))
}
