// Package index holds Quarry's in-process search structures: a BM25 inverted
// index and a vector index (exact cosine for small collections, 1-bit
// quantised candidates re-ranked exactly for large ones). Documents are
// dense int ids assigned by the caller, 0..n-1.
package index

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"strings"
)

// Hit is a document id with its score, higher is better.
type Hit struct {
	Doc   int
	Score float64
}

// BM25 is an inverted index scored with Okapi BM25 (Lucene's idf).
type BM25 struct {
	K1, B    float64
	postings map[string][]posting
	lens     []int32
	total    int64
}

type posting struct {
	doc int32
	tf  int32
}

// NewBM25 returns an empty index with the given parameters (k1 1.2, b 0.75
// when zero).
func NewBM25(k1, b float64) *BM25 {
	if k1 == 0 {
		k1 = 1.2
	}
	if b == 0 {
		b = 0.75
	}
	return &BM25{K1: k1, B: b, postings: map[string][]posting{}}
}

// Add indexes doc (which must be the next id, len so far) with its terms.
func (x *BM25) Add(doc int, terms []string) {
	for len(x.lens) <= doc {
		x.lens = append(x.lens, 0)
	}
	tf := make(map[string]int32, len(terms))
	for _, t := range terms {
		tf[t]++
	}
	for t, n := range tf {
		x.postings[t] = append(x.postings[t], posting{int32(doc), n})
	}
	x.lens[doc] = int32(len(terms))
	x.total += int64(len(terms))
}

// Len is the number of documents.
func (x *BM25) Len() int { return len(x.lens) }

// Search scores documents containing any query term (terms OR-ed; a term
// repeated in the query counts once; of a long query, its MaxQueryTerms
// rarest terms) and returns the top k that pass keep (nil keeps all).
func (x *BM25) Search(terms []string, k int, keep func(doc int) bool) []Hit {
	n := len(x.lens)
	if n == 0 || k <= 0 {
		return nil
	}
	avg := float64(x.total) / float64(n)
	scores := make(map[int32]float64)
	var held []string
	seen := map[string]bool{}
	for _, t := range terms {
		if !seen[t] && len(x.postings[t]) > 0 {
			held = append(held, t)
		}
		seen[t] = true
	}
	held = Rarest(held, func(t string) int64 { return int64(len(x.postings[t])) })
	for _, t := range held {
		ps := x.postings[t]
		idf := IDF(int64(n), int64(len(ps)))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := x.K1 * (1 - x.B + x.B*float64(x.lens[p.doc])/avg)
			scores[p.doc] += idf * tf * (x.K1 + 1) / (tf + norm)
		}
	}
	top := newTopK(k)
	for d, s := range scores {
		if keep != nil && !keep(int(d)) {
			continue
		}
		top.push(Hit{int(d), s})
	}
	return top.sorted()
}

// MaxQueryTerms bounds the terms a query is scored by: its rarest ones,
// which tell documents apart; the commoner ones of a long query (a pasted
// page) add little to a ranking and much to the work of one in a
// database.
const MaxQueryTerms = 32

// Rarest returns at most MaxQueryTerms of terms (distinct, each held by
// some document), the rarest by df, ties by term, rarest first.
func Rarest(terms []string, df func(string) int64) []string {
	out := slices.Clone(terms)
	slices.SortStableFunc(out, func(a, b string) int {
		if c := cmp.Compare(df(a), df(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out[:min(len(out), MaxQueryTerms)]
}

// topK keeps the k best hits in a min-heap.
type topK struct {
	k int
	h hitHeap
}

func newTopK(k int) *topK { return &topK{k: k, h: make(hitHeap, 0, k)} }

func (t *topK) push(h Hit) {
	if len(t.h) < t.k {
		heap.Push(&t.h, h)
		return
	}
	if less(t.h[0], h) {
		t.h[0] = h
		heap.Fix(&t.h, 0)
	}
}

// min score the heap holds when full, else -Inf.
func (t *topK) floor() float64 {
	if len(t.h) < t.k {
		return math.Inf(-1)
	}
	return t.h[0].Score
}

func (t *topK) sorted() []Hit {
	out := make([]Hit, len(t.h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&t.h).(Hit)
	}
	return out
}

// less orders by score, then by lower doc id winning ties (deterministic).
func less(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Doc > b.Doc
}

type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return less(h[i], h[j]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// IDF is Lucene's inverse document frequency of a term in df of n
// documents, as Search weighs it.
func IDF(n, df int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Top keeps the k best hits pushed to it.
type Top struct{ t *topK }

// NewTop returns an empty Top for k hits.
func NewTop(k int) *Top { return &Top{newTopK(k)} }

// Push offers a hit.
func (t *Top) Push(h Hit) { t.t.push(h) }

// Sorted returns the hits kept, best first.
func (t *Top) Sorted() []Hit { return t.t.sorted() }

// Len is how many hits are kept.
func (t *Top) Len() int { return len(t.t.h) }

// Floor is the lowest score kept once k hits are, else -Inf: a hit must
// beat it to be kept.
func (t *Top) Floor() float64 { return t.t.floor() }
