package sqlstore_test

import (
	"math"
	"strings"
	"testing"
	"unicode"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlstore"
)

// fieldsScore is BM25 over a chunk's terms split into fields, the
// in-memory index's way.
func fieldsScore(stored string, terms []string, idf []float64, k1, b, avg float64) float64 {
	fields := strings.Fields(stored)
	norm := k1 * (1 - b + b*float64(len(fields))/avg)
	var score float64
	for i, t := range terms {
		tf := 0
		for _, f := range fields {
			if f == t {
				tf++
			}
		}
		if tf > 0 {
			score += idf[i] * float64(tf) * (k1 + 1) / (float64(tf) + norm)
		}
	}
	return score
}

// FuzzTermScorer: a query term is counted only where it stands as a
// whole term, never inside a longer one ("cell" in "cells", "ab" in
// "aab"), as splitting the terms counts it.
func FuzzTermScorer(f *testing.F) {
	f.Add("cell cells cell acell cell", "cell", "ab")
	f.Add("aab ab aab ab", "ab", "b")
	f.Add("", "x", "y")
	f.Add("x", "x", "x y")
	f.Fuzz(func(t *testing.T, stored, t1, t2 string) {
		// Stored terms as ingest writes them: non-empty, joined by one space.
		stored = strings.Join(strings.Fields(stored), " ")
		terms := []string{}
		for _, q := range []string{t1, t2} {
			if q != "" && !strings.ContainsFunc(q, unicode.IsSpace) && !strings.Contains(strings.Join(terms, "\x00"), q) {
				terms = append(terms, q)
			}
		}
		idf := []float64{1.5, 0.7}[:len(terms)]
		q := store.TermQuery{K1: 1.2, B: 0.75}
		got := sqlstore.NewTermScorer(q, 7, terms, idf).Score(stored)
		want := fieldsScore(stored, terms, idf, 1.2, 0.75, 7)
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("Score(%q) over %q = %v, split into terms %v", stored, terms, got, want)
		}
	})
}

// BenchmarkTermScorer scores a chunk of 106 stored terms, the mean of
// 1M generated chunks, against a query of 12 terms, the way a search in
// PostgreSQL scores each chunk it reads.
//
//	go test ./store/sqlstore -run '^$' -bench TermScorer
func BenchmarkTermScorer(b *testing.B) {
	words := strings.Fields(`cell protein express gene patient studi increas associ level activ effect
		model respons function reduc role signal tissu mice human diseas clinic treatment differ rate
		mechan induc cancer tumor growth regul receptor pathway mutat inhibit develop`)
	var stored []string
	for i := range 106 {
		stored = append(stored, words[(i*7+i/3)%len(words)])
	}
	terms := []string{"cell", "tumor", "suppress", "apoptosi", "p53", "mice", "regul", "express", "loss", "kinas", "phosphoryl", "human"}
	idf := make([]float64, len(terms))
	for i := range idf {
		idf[i] = 1 + float64(i)/10
	}
	s := sqlstore.NewTermScorer(store.TermQuery{K1: 1.2, B: 0.75}, 106, terms, idf)
	text := strings.Join(stored, " ")
	b.ReportAllocs()
	for b.Loop() {
		s.Score(text)
	}
}
