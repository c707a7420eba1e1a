package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/research"
)

// BenchmarkWorkerThroughput: researches per minute that a worker pool of
// 1, 2 and 4 runs on the offline engine over the bundled Wikipedia corpus,
// the questions being HotpotQA's dev questions (standard level).
func BenchmarkWorkerThroughput(b *testing.B) {
	ctx := context.Background()
	wiki := filepath.Join("..", "examples", "wiki", "corpus.jsonl")
	qs := hotpotQuestions(b, 40)
	dir := b.TempDir()
	a := app.New(app.Config{DataDir: dir, Embedder: "hash"}, nil)
	defer a.Close()
	a.SetLongLived(true) // as quarry worker and quarry serve are
	if err := a.IngestDocs(ctx, []string{wiki}, nopWriter{}); err != nil {
		b.Fatal(err)
	}
	src := "kb:" + app.DocsKBName(wiki)
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			rn, err := a.Runner(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var perMin float64
			for range b.N {
				var ids []string
				for _, q := range qs {
					r, err := rn.Create(ctx, q, research.Options{Sources: []string{src}, Level: "standard"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, r.ID)
				}
				done := make(chan string, len(ids))
				q, err := a.Jobs(ctx, app.JobOptions{Workers: workers, Runner: rn,
					OnResearchDone: func(id string, r *research.Research, err error) {
						if r != nil && r.Status == research.StatusProcessing {
							return // handed on
						}
						if err != nil || r.Status != research.StatusCompleted {
							b.Errorf("research %s: %v", id, err)
						}
						done <- id
					}})
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				for _, id := range ids {
					if err := q.EnqueueResearch(ctx, id); err != nil {
						b.Fatal(err)
					}
				}
				if err := q.Start(ctx); err != nil {
					b.Fatal(err)
				}
				for range ids {
					<-done
				}
				elapsed := time.Since(t0)
				if err := q.Close(); err != nil {
					b.Fatal(err)
				}
				perMin = float64(len(ids)) / elapsed.Minutes()
			}
			b.ReportMetric(perMin, "researches/min")
		})
	}
}

func hotpotQuestions(b *testing.B, n int) []string {
	f, err := os.Open(filepath.Join("..", "..", "shared", "data", "hotpotqa", "questions_dev.jsonl"))
	if err != nil {
		b.Fatalf("the benchmark needs ../shared/data: %v", err)
	}
	defer f.Close()
	var out []string
	dec := json.NewDecoder(f)
	for len(out) < n {
		var q struct{ Question string }
		if err := dec.Decode(&q); err != nil {
			b.Fatal(err)
		}
		out = append(out, q.Question)
	}
	return out
}
