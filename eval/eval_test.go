package eval

import (
	"context"
	"math"
	"testing"

	"github.com/quarryhq/quarry/corpus"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMetrics(t *testing.T) {
	t.Parallel()
	rel := map[string]int{"a": 1, "b": 1}
	docs := []string{"x", "a", "y", "b"}
	if got := MRR(docs, rel, 10); !near(got, 0.5) {
		t.Errorf("MRR = %v", got)
	}
	if got := Recall(docs, rel, 2); !near(got, 0.5) {
		t.Errorf("Recall@2 = %v", got)
	}
	want := (1/math.Log2(3) + 1/math.Log2(5)) / (1 + 1/math.Log2(3))
	if got := NDCG(docs, rel, 10); !near(got, want) {
		t.Errorf("NDCG = %v, want %v", got, want)
	}
	if got := NDCG([]string{"a", "b"}, rel, 10); !near(got, 1) {
		t.Errorf("perfect NDCG = %v", got)
	}
	if got := Precision(docs, rel, 4); !near(got, 0.5) {
		t.Errorf("Precision@4 = %v", got)
	}
	if got := Precision(docs, rel, 10); !near(got, 0.2) {
		t.Errorf("Precision@10 (k the denominator) = %v", got)
	}
	if s := Score(docs, rel, 1); s.Hit != 0 || s.Precision != 0 {
		t.Errorf("no hit in the top 1: %+v", s)
	}
	if s := Score(docs, rel, 2); s.Hit != 1 || !near(s.Precision, 0.5) {
		t.Errorf("a hit in the top 2: %+v", s)
	}
	if got := Percentile([]float64{5, 1, 3, 2, 4}, 50); got != 3 {
		t.Errorf("p50 = %v", got)
	}
}

func TestRetrievalSkipsUnjudgedQueries(t *testing.T) {
	t.Parallel()
	qs := []corpus.Query{{ID: "1", Text: "one"}, {ID: "2", Text: "two"}}
	qrels := corpus.Qrels{"1": {"d1": 1}}
	r, err := Retrieval(context.Background(), func(_ context.Context, q string) ([]string, error) {
		return []string{"d1"}, nil
	}, qs, qrels, 10)
	if err != nil || r.Queries != 1 || r.NDCG != 1 || r.MRR != 1 || r.HitRate != 1 || !near(r.Precision, 0.1) {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := Retrieval(context.Background(), nil, qs, qrels, 0); err == nil {
		t.Fatal("k=0 accepted")
	}
}
