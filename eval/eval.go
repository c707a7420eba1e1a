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
	Precision   float64 `json:"precision"`
	MRR         float64 `json:"mrr"`
	HitRate     float64 `json:"hit_rate"`
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
		res.Add(Score(docs, rel, k))
	}
	if res.Queries == 0 {
		return res, fmt.Errorf("no query has relevance judgements")
	}
	res.Average()
	res.P50ms, res.P99ms = Percentile(lat, 50), Percentile(lat, 99)
	return res, nil
}

// Scores are one query's figures at k. Hit is 1 when a relevant document
// is in the top k, else 0 (its mean is the hit rate).
type Scores struct {
	NDCG        float64 `json:"ndcg"`
	Recall      float64 `json:"recall"`
	Precision   float64 `json:"precision"`
	MRR         float64 `json:"mrr"`
	Hit         float64 `json:"hit"`
	RecallAt100 float64 `json:"recall_at_100"`
}

// Score measures one ranking against its judgements.
func Score(docs []string, rel map[string]int, k int) Scores {
	s := Scores{NDCG: NDCG(docs, rel, k), Recall: Recall(docs, rel, k), Precision: Precision(docs, rel, k), MRR: MRR(docs, rel, k), RecallAt100: Recall(docs, rel, 100)}
	if s.MRR > 0 {
		s.Hit = 1
	}
	return s
}

// Add sums a query's scores into r; Average then divides by the count.
func (r *Result) Add(s Scores) {
	r.Queries++
	r.NDCG += s.NDCG
	r.Recall += s.Recall
	r.Precision += s.Precision
	r.MRR += s.MRR
	r.HitRate += s.Hit
	r.RecallAt100 += s.RecallAt100
}

// Average turns the sums of Add into means.
func (r *Result) Average() {
	if r.Queries == 0 {
		return
	}
	n := float64(r.Queries)
	r.NDCG, r.Recall, r.Precision, r.MRR, r.HitRate, r.RecallAt100 = r.NDCG/n, r.Recall/n, r.Precision/n, r.MRR/n, r.HitRate/n, r.RecallAt100/n
}

// Precision at k: the share of the top k that is relevant (k the
// denominator, as trec_eval's P_k).
func Precision(docs []string, rel map[string]int, k int) float64 {
	hit := 0
	for _, d := range docs[:min(k, len(docs))] {
		if rel[d] > 0 {
			hit++
		}
	}
	return float64(hit) / float64(k)
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
