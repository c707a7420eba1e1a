package console_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/eval"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

// sciFact is SciFact ingested into a SQLite knowledge base "scifact" with
// the train claims as dataset "scifact-dev".
type sciFact struct {
	c       *console.Service
	kb      *kb.Service
	emb     embed.Embedder
	d       *store.Dataset
	queries []corpus.Query
	qrels   corpus.Qrels
}

// openSciFact needs ../shared/data/scifact.
func openSciFact(b *testing.B) *sciFact {
	const dir = "../../shared/data/scifact/"
	open := func(name string) *os.File {
		f, err := os.Open(dir + name)
		if err != nil {
			b.Fatalf("the benchmark needs ../shared/data/scifact: %v", err)
		}
		return f
	}
	qf, rf := open("queries_train.jsonl"), open("qrels_train.tsv")
	defer qf.Close()
	defer rf.Close()
	queries, err := corpus.ReadQueries(qf)
	if err != nil {
		b.Fatal(err)
	}
	qrels, err := corpus.ReadQrels(rf)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := kb.New(st, nil)
	emb := embed.Hash{Dim: 384}
	if _, err := svc.Create(ctx, "scifact", "", emb); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "scifact", []string{dir + "corpus.jsonl"}, kb.AddOptions{Embedder: emb}); err != nil {
		b.Fatal(err)
	}
	c := &console.Service{Store: st, KBs: func(context.Context, string) (*kb.Service, embed.Embedder, error) { return svc, emb, nil }}
	d, err := c.ImportBEIR(ctx, "scifact-dev", "scifact", queries, qrels)
	if err != nil {
		b.Fatal(err)
	}
	return &sciFact{c: c, kb: svc, emb: emb, d: d, queries: queries, qrels: qrels}
}

// BenchmarkEvalSciFact evaluates a BM25 and a hybrid pipeline on the
// SciFact train claims with eval pipeline's code and reports nDCG@10 and
// recall@10 of each, next to eval retrieval's nDCG@10 on the same
// settings; it fails if the two differ.
func BenchmarkEvalSciFact(b *testing.B) {
	ctx := context.Background()
	sf := openSciFact(b)
	for _, m := range []string{"bm25", "hybrid"} {
		if _, err := sf.c.CreatePipeline(ctx, console.PipelineSpec{Name: m, Type: console.TypeTest, KB: "scifact", Dataset: sf.d.Name, Settings: console.Settings{Mode: m, TopK: 10}}); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		cmp, err := sf.c.Evaluate(ctx, console.EvalRequest{Pipelines: []string{"bm25", "hybrid"}, K: 10})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range cmp.Runs {
			search := func(ctx context.Context, q string) ([]string, error) {
				res, err := sf.kb.Search(ctx, "scifact", sf.emb, kb.Query{Text: q, K: 300, Mode: r.Settings.Mode})
				return kb.DocRanking(res), err
			}
			want, err := eval.Retrieval(ctx, search, sf.queries, sf.qrels, 10)
			if err != nil {
				b.Fatal(err)
			}
			if math.Abs(want.NDCG-r.Overall.NDCG) > 1e-9 || want.Queries != r.Overall.Queries {
				b.Fatalf("%s: eval pipeline nDCG@10 %.6f over %d, eval retrieval %.6f over %d", r.Pipeline, r.Overall.NDCG, r.Overall.Queries, want.NDCG, want.Queries)
			}
			b.ReportMetric(r.Overall.NDCG, r.Pipeline+"-ndcg@10")
			b.ReportMetric(r.Overall.Recall, r.Pipeline+"-recall@10")
			b.ReportMetric(want.NDCG, r.Pipeline+"-eval-retrieval-ndcg@10")
		}
	}
}

// BenchmarkRetrieveSciFact retrieves every SciFact train claim through a
// test pipeline (hybrid, top 10) and reports the p50 and p99 of
// retrieval_time (target: under 3 s) and the share of queries
// whose first result is golden. It needs ../shared/data/scifact.
func BenchmarkRetrieveSciFact(b *testing.B) {
	ctx := context.Background()
	sf := openSciFact(b)
	c, d := sf.c, sf.d
	if _, err := c.CreatePipeline(ctx, console.PipelineSpec{Name: "hybrid", Type: console.TypeTest, KB: "scifact", Dataset: d.Name, Settings: console.Settings{Mode: "hybrid", TopK: 10}}); err != nil {
		b.Fatal(err)
	}
	qs, err := c.Store.DatasetQuestions(ctx, d.ID)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Retrieve(ctx, "hybrid", qs[0].Text, 0); err != nil { // load the index
		b.Fatal(err)
	}
	for range b.N {
		var times []time.Duration
		golden1 := 0
		for _, q := range qs {
			r, err := c.Retrieve(ctx, "hybrid", q.Text, 0)
			if err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Duration(r.RetrievalTime*float64(time.Second)))
			if len(r.Chunks) > 0 && r.Chunks[0].IsGolden != nil && *r.Chunks[0].IsGolden {
				golden1++
			}
		}
		slices.Sort(times)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
		b.ReportMetric(ms(times[len(times)*99/100]), "p99-ms")
		b.ReportMetric(float64(golden1)/float64(len(qs)), "golden-at-1")
	}
}
