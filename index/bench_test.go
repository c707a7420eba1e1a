package index

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/philippgille/chromem-go"
)

// Vector search at 100,000 × 1536 dimensions (text-embedding-3-small's
// size): Quarry's quantised index, its exact scan, and chromem-go's exact
// search side by side. Recall@10 against exact is reported as a metric.
//
//	go test ./index -run '^$' -bench VectorSearch100k -benchtime 200x
const (
	benchN   = 100_000
	benchDim = 1536
)

var (
	benchOnce    sync.Once
	benchData    [][]float32
	benchQueries [][]float32
)

func benchFixture() ([][]float32, [][]float32) {
	benchOnce.Do(func() {
		r := rand.New(rand.NewPCG(7, 11))
		benchData, benchQueries = clustered(r, benchN, 200, benchDim, 1000, 1.5)
	})
	return benchData, benchQueries
}

func BenchmarkVectorSearch100k(b *testing.B) {
	data, queries := benchFixture()
	v := NewVectors(benchDim)
	for _, d := range data {
		_ = v.Add(d)
	}
	v.ExactBelow = 0
	v.buildCodes()

	b.Run("quarry-quantised", func(b *testing.B) {
		for i := range b.N {
			_, _ = v.Search(queries[i%len(queries)], 10, nil)
		}
		b.StopTimer()
		b.ReportMetric(recallAt(v, queries[:50], 10), "recall@10")
	})
	b.Run("quarry-exact", func(b *testing.B) {
		for i := range b.N {
			_ = v.SearchExact(queries[i%len(queries)], 10, nil)
		}
	})
	b.Run("chromem-go-exact", func(b *testing.B) {
		db := chromem.NewDB()
		col, err := db.CreateCollection("bench", nil, func(context.Context, string) ([]float32, error) { return nil, nil })
		if err != nil {
			b.Fatal(err)
		}
		docs := make([]chromem.Document, len(data))
		for i, d := range data {
			docs[i] = chromem.Document{ID: strconv.Itoa(i), Embedding: d, Content: "x"}
		}
		if err := col.AddDocuments(context.Background(), docs, runtime.NumCPU()); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := col.QueryEmbedding(context.Background(), queries[i%len(queries)], 10, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
