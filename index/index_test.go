package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBM25Ranking(t *testing.T) {
	t.Parallel()
	x := NewBM25(1.2, 0.75)
	x.Add(0, []string{"crawler", "stale", "page"})
	x.Add(1, []string{"invoice", "email"})
	x.Add(2, []string{"crawler", "schedule", "crawler"})
	hits := x.Search([]string{"crawler", "stale"}, 10, nil)
	if len(hits) != 2 || hits[0].Doc != 0 || hits[1].Doc != 2 {
		t.Fatalf("hits %+v", hits)
	}
	if hits := x.Search([]string{"crawler"}, 10, func(d int) bool { return d != 2 }); len(hits) != 1 || hits[0].Doc != 0 {
		t.Fatalf("filter: %+v", hits)
	}
	if hits := x.Search([]string{"absent"}, 10, nil); len(hits) != 0 {
		t.Fatalf("absent term matched: %+v", hits)
	}
}

// clustered makes n unit vectors around c cluster centres, like real
// embeddings (uniform random vectors have no neighbours worth finding).
// Queries are drawn from the same centres as the data.
func clustered(r *rand.Rand, n, nq, dim, c int, noise float64) (data, queries [][]float32) {
	centres := make([][]float32, c)
	for i := range centres {
		centres[i] = randUnit(r, dim, nil, 0)
	}
	sample := func(n int) [][]float32 {
		out := make([][]float32, n)
		for i := range out {
			out[i] = randUnit(r, dim, centres[r.IntN(c)], noise)
		}
		return out
	}
	return sample(n), sample(nq)
}

func randUnit(r *rand.Rand, dim int, centre []float32, noise float64) []float32 {
	v := make([]float32, dim)
	var s float64
	for j := range v {
		x := r.NormFloat64()
		if centre != nil {
			x = float64(centre[j])*math.Sqrt(float64(dim)) + noise*x
		}
		v[j] = float32(x)
		s += x * x
	}
	for j := range v {
		v[j] /= float32(math.Sqrt(s))
	}
	return v
}

func recallAt(v *Vectors, queries [][]float32, k int) float64 {
	var hit, total int
	for _, q := range queries {
		want := v.SearchExact(q, k, nil)
		got, _ := v.Search(q, k, nil)
		for _, w := range want {
			total++
			if slices.ContainsFunc(got, func(h Hit) bool { return h.Doc == w.Doc }) {
				hit++
			}
		}
	}
	return float64(hit) / float64(total)
}

func TestQuantisedRecall(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	data, queries := clustered(r, 30000, 50, 256, 300, 1.5)
	v := NewVectors(256)
	for _, d := range data {
		if err := v.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Add(make([]float32, 3)); err == nil {
		t.Fatal("wrong dimension accepted")
	}
	v.ExactBelow = 0
	if rec := recallAt(v, queries, 10); rec < 0.95 {
		t.Fatalf("recall@10 against exact = %.3f, want >= 0.95", rec)
	}
	// Growing the index after codes were built keeps results correct.
	_ = v.Add(queries[0])
	got, _ := v.Search(queries[0], 1, nil)
	if got[0].Doc != v.Len()-1 {
		t.Fatalf("new vector not found: %+v", got)
	}
}

// hashed is a vector as a feature-hashing embedder makes one: each feature
// adds ±1 to one of dim buckets, then the vector is made unit length.
func hashed(features []uint64, dim int) []float32 {
	v := make([]float32, dim)
	for _, f := range features {
		h := f * 0x9e3779b97f4a7c15
		sign := float32(1)
		if h>>63 == 1 {
			sign = -1
		}
		v[(h>>20)%uint64(dim)] += sign
	}
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	if s > 0 {
		for j := range v {
			v[j] /= float32(math.Sqrt(s))
		}
	}
	return v
}

// TestShortQueryRecall: documents of many hashed features (dense) and
// queries of a few (sparse, most components zero), as the offline
// embedder gives them. Sign codes of such a query say nothing, so codes
// are scored against the query's own components; the candidates a search
// of 100 compares exactly hold the true ten nearest.
func TestShortQueryRecall(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	const dim, n = 384, 30000
	v := NewVectors(dim)
	docs := make([][]uint64, n)
	for i := range docs {
		docs[i] = make([]uint64, 600)
		for j := range docs[i] {
			docs[i][j] = r.Uint64N(200000) // a vocabulary of features
		}
		if err := v.Add(hashed(docs[i], dim)); err != nil {
			t.Fatal(err)
		}
	}
	v.ExactBelow = 0
	var hit, total int
	for range 30 {
		d := docs[r.IntN(n)]
		q := hashed([]uint64{d[0], d[1], d[2], d[3], d[4], d[5], r.Uint64N(200000)}, dim)
		want := v.SearchExact(q, 10, nil)
		got, _ := v.Search(q, 100, nil)
		for _, w := range want {
			total++
			if slices.ContainsFunc(got[:10], func(h Hit) bool { return h.Doc == w.Doc }) {
				hit++
			}
		}
	}
	if rec := float64(hit) / float64(total); rec < 0.9 {
		t.Fatalf("recall@10 of short queries = %.3f, want >= 0.9", rec)
	}
}

// TestLongQueryScoresItsRarestTerms: a query of more than MaxQueryTerms
// distinct terms ranks as its MaxQueryTerms rarest alone; a repeated term
// or one no document holds does not take a place among them.
func TestLongQueryScoresItsRarestTerms(t *testing.T) {
	t.Parallel()
	x := NewBM25(1.2, 0.75)
	for d := range 200 {
		var terms []string
		for w := range 60 {
			if d%(w+1) == 0 { // w0 in every document, w59 in few
				terms = append(terms, fmt.Sprintf("w%d", w))
			}
		}
		x.Add(d, terms)
	}
	var q []string
	for w := range 60 {
		q = append(q, fmt.Sprintf("w%d", w), "nowhere", fmt.Sprintf("w%d", w))
	}
	var rarest []string
	for w := 59; w >= 60-32; w-- {
		rarest = append(rarest, fmt.Sprintf("w%d", w))
	}
	got, want := x.Search(q, 20, nil), x.Search(rarest, 20, nil)
	if !slices.Equal(got, want) {
		t.Fatalf("long query: %v\nits 32 rarest terms: %v", got, want)
	}
	// w0, in every document, is not among them: not every document
	// matches.
	if n := len(x.Search(q, 200, nil)); n == 200 {
		t.Fatalf("%d of 200 documents match: the commoner terms were scored", n)
	}
	if all := x.Search([]string{"w0", "w1"}, 200, nil); len(all) != 200 {
		t.Fatalf("a short query lost terms: %d hits", len(all))
	}
}
