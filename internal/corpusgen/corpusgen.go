// Package corpusgen writes synthetic corpora for scale benchmarks: N
// documents in BEIR's corpus format (JSON Lines of _id, title, text), each
// a handful of sentences drawn from real corpora (SciFact's abstracts and
// HotpotQA's paragraphs in ../shared/data), so vocabulary, sentence lengths
// and term statistics are those of real text while the documents are new.
// A document is about one chunk long; the same seed gives the same corpus.
//
// Two shapes are written. [Mixed] documents (the default) draw every
// sentence from the whole pool at random: no two of them are nearer than
// chance, the worst case for a nearest-neighbour index. [Topical]
// documents each keep to one source document's subject, as a page does (a
// run of its sentences, with sentences of the source documents nearest to
// it by rare words shared), so a corpus clusters by subject; but with
// about 11,000 source documents, a million topical documents are some 90
// variations on each, far nearer to one another than a real corpus's
// pages. Neither is a real corpus of that size; between them they bound
// what a nearest-neighbour index does with one.
package corpusgen

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/quarryhq/quarry/internal/textseg"
)

// Sources are the corpora sentences are drawn from, relative to the
// repository's root.
var Sources = []string{"../shared/data/scifact/corpus.jsonl", "../shared/data/hotpotqa/corpus.jsonl"}

// Shape is how a generated document draws its sentences.
type Shape int

const (
	// Mixed documents draw each sentence from the whole pool.
	Mixed Shape = iota
	// Topical documents keep to one source document's subject.
	Topical
)

// ParseShape reads a shape's name: "topical" or "mixed".
func ParseShape(s string) (Shape, error) {
	switch s {
	case "topical":
		return Topical, nil
	case "mixed":
		return Mixed, nil
	}
	return 0, fmt.Errorf("shape: want topical or mixed, got %q", s)
}

// Tuning of topical documents.
const (
	// ownShare is the chance a sentence of a topical document is the next
	// of its source document's run rather than a neighbour's.
	ownShare = 0.7
	// neighbours is how many nearest source documents lend sentences.
	neighbours = 8
	// rareDF is the most source documents a word may be in to count as
	// a subject's: past it, words such as "patients" or "film" join
	// documents on different subjects.
	rareDF = 40
)

type doc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// source is one source document: its title and sentences.
type source struct {
	title     string
	sentences []string
	near      []int // the nearest other sources, nearest first
}

// Generate writes n documents of the given shape drawn from the corpora at
// paths.
func Generate(w io.Writer, n int, seed uint64, paths []string, shape Shape) error {
	if n < 1 {
		return fmt.Errorf("n: must be at least 1, got %d", n)
	}
	var sources []source
	var sentences, titles []string
	for _, path := range paths {
		if err := read(path, func(d doc) {
			titles = append(titles, d.Title)
			s := source{title: d.Title}
			for _, sp := range textseg.Spans(d.Text) {
				if t := strings.TrimSpace(d.Text[sp.Start:sp.End]); len(t) > 20 {
					s.sentences = append(s.sentences, t)
				}
			}
			if len(s.sentences) > 0 {
				sources = append(sources, s)
				sentences = append(sentences, s.sentences...)
			}
		}); err != nil {
			return err
		}
	}
	if len(sentences) == 0 {
		return errors.New("no sentences read")
	}
	if shape == Topical {
		linkNearest(sources)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range n {
		k := 4 + r.IntN(5) // 4-8 sentences: about one chunk
		parts := make([]string, k)
		var title string
		switch shape {
		case Topical:
			s := &sources[r.IntN(len(sources))]
			next := r.IntN(len(s.sentences))
			for j := range parts {
				if len(s.near) == 0 || r.Float64() < ownShare {
					parts[j] = s.sentences[next%len(s.sentences)]
					next++
					continue
				}
				o := &sources[s.near[r.IntN(len(s.near))]]
				parts[j] = o.sentences[r.IntN(len(o.sentences))]
			}
			title = s.title
		default:
			for j := range parts {
				parts[j] = sentences[r.IntN(len(sentences))]
			}
			title = titles[r.IntN(len(titles))]
		}
		d := doc{ID: fmt.Sprintf("g%07d", i), Title: title, Text: strings.Join(parts, " ")}
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// linkNearest gives each source the neighbours sources that share the
// most of its rare words (words of four letters or more in two to rareDF
// sources), of those that share at least two.
func linkNearest(sources []source) {
	words := make([][]int, len(sources)) // each source's distinct word ids
	ids := map[string]int{}
	var df []int
	for i, s := range sources {
		seen := map[int]bool{}
		for _, t := range s.sentences {
			for _, f := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
				if len(f) < 4 {
					continue
				}
				id, ok := ids[f]
				if !ok {
					id = len(df)
					ids[f] = id
					df = append(df, 0)
				}
				if !seen[id] {
					seen[id] = true
					df[id]++
					words[i] = append(words[i], id)
				}
			}
		}
	}
	postings := make([][]int, len(df))
	for i, ws := range words {
		for _, w := range ws {
			if df[w] >= 2 && df[w] <= rareDF {
				postings[w] = append(postings[w], i)
			}
		}
	}
	shared := make([]int, len(sources))
	var touched []int
	for i, ws := range words {
		for _, w := range ws {
			for _, j := range postings[w] {
				if j == i {
					continue
				}
				if shared[j] == 0 {
					touched = append(touched, j)
				}
				shared[j]++
			}
		}
		slices.SortFunc(touched, func(a, b int) int { return cmp.Or(cmp.Compare(shared[b], shared[a]), cmp.Compare(a, b)) })
		for _, j := range touched {
			if len(sources[i].near) == neighbours || shared[j] < 2 {
				break
			}
			sources[i].near = append(sources[i].near, j)
		}
		for _, j := range touched {
			shared[j] = 0
		}
		touched = touched[:0]
	}
}

func read(path string, fn func(doc)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var d doc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fn(d)
	}
	return sc.Err()
}
