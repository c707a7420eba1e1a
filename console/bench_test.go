package console_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store/sqlite"
)

// BenchmarkRetrieveSciFact retrieves every SciFact train claim through a
// test pipeline (hybrid, top 10) and reports the p50 and p99 of
// retrieval_time (seed 004's target: under 3 s) and the share of queries
// whose first result is golden. It needs ../shared/data/scifact.
func BenchmarkRetrieveSciFact(b *testing.B) {
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
	defer st.Close()
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
	if _, err := c.CreatePipeline(ctx, console.PipelineSpec{Name: "hybrid", Type: console.TypeTest, KB: "scifact", Dataset: d.Name, Settings: console.Settings{Mode: "hybrid", TopK: 10}}); err != nil {
		b.Fatal(err)
	}
	qs, err := st.DatasetQuestions(ctx, d.ID)
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
