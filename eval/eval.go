// Package eval measures retrieval quality with the standard IR metrics
// (nDCG, recall, MRR at k) over BEIR-style queries and relevance judgements.
package eval

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/quarryhq/quarry/corpus"
)

// Searcher returns document ids, best first, for a query.
type Searcher func(ctx context.Context, query string) ([]string, error)

// Result is one evaluation's figures.
type Result struct {
	NDCG        float64 `json:"ndcg"`
	Recall      float64 `json:"recall"`
	MRR         float64 `json:"mrr"`
	RecallAt100 float64 `json:"recall_at_100"`
	K           int     `json:"k"`
	Queries     int     `json:"queries"`
	Mode        string  `json:"mode"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
}

// Retrieval runs every query that has judgements and averages the metrics.
func Retrieval(ctx context.Context, search Searcher, queries []corpus.Query, qrels corpus.Qrels, k int) (Result, error) {
	if k < 1 {
		return Result{}, fmt.Errorf("k: must be at least 1, got %d", k)
	}
	res := Result{K: k}
	var lat []float64
	for _, q := range queries {
		rel := qrels[q.ID]
		if len(rel) == 0 {
			continue
		}
		start := time.Now()
		docs, err := search(ctx, q.Text)
		if err != nil {
			return res, fmt.Errorf("query %s: %w", q.ID, err)
		}
		lat = append(lat, float64(time.Since(start).Microseconds())/1000)
		res.Queries++
		res.NDCG += NDCG(docs, rel, k)
		res.Recall += Recall(docs, rel, k)
		res.MRR += MRR(docs, rel, k)
		res.RecallAt100 += Recall(docs, rel, 100)
	}
	if res.Queries == 0 {
		return res, fmt.Errorf("no query has relevance judgements")
	}
	n := float64(res.Queries)
	res.NDCG, res.Recall, res.MRR, res.RecallAt100 = res.NDCG/n, res.Recall/n, res.MRR/n, res.RecallAt100/n
	res.P50ms, res.P99ms = Percentile(lat, 50), Percentile(lat, 99)
	return res, nil
}

// NDCG at k with graded gains (2^rel - 1 discounted by log2(rank+1)).
func NDCG(docs []string, rel map[string]int, k int) float64 {
	var dcg float64
	for i, d := range docs[:min(k, len(docs))] {
		if g := rel[d]; g > 0 {
			dcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
		}
	}
	var gains []int
	for _, g := range rel {
		if g > 0 {
			gains = append(gains, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(gains)))
	var idcg float64
	for i, g := range gains[:min(k, len(gains))] {
		idcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Recall at k: the share of relevant documents retrieved in the top k.
func Recall(docs []string, rel map[string]int, k int) float64 {
	total, hit := 0, 0
	for _, g := range rel {
		if g > 0 {
			total++
		}
	}
	for _, d := range docs[:min(k, len(docs))] {
		if rel[d] > 0 {
			hit++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(hit) / float64(total)
}

// MRR at k: the reciprocal rank of the first relevant document.
func MRR(docs []string, rel map[string]int, k int) float64 {
	for i, d := range docs[:min(k, len(docs))] {
		if rel[d] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Percentile of xs (nearest rank), 0 for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(len(s)-1, i))]
}
