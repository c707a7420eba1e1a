// Package corpusgen writes synthetic corpora for scale benchmarks: N
// documents in BEIR's corpus format (JSON Lines of _id, title, text), each
// a handful of sentences drawn at random from real corpora (SciFact's
// abstracts and HotpotQA's paragraphs in ../shared/data), so vocabulary,
// sentence lengths and term statistics are those of real text while the
// documents are new. A document is about one chunk long; the same seed
// gives the same corpus.
package corpusgen

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/quarryhq/quarry/internal/textseg"
)

// Sources are the corpora sentences are drawn from, relative to the
// repository's root.
var Sources = []string{"../shared/data/scifact/corpus.jsonl", "../shared/data/hotpotqa/corpus.jsonl"}

type doc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Generate writes n documents drawn from the corpora at paths.
func Generate(w io.Writer, n int, seed uint64, paths []string) error {
	if n < 1 {
		return fmt.Errorf("n: must be at least 1, got %d", n)
	}
	var sentences, titles []string
	for _, path := range paths {
		if err := read(path, func(d doc) {
			titles = append(titles, d.Title)
			for _, sp := range textseg.Spans(d.Text) {
				if s := strings.TrimSpace(d.Text[sp.Start:sp.End]); len(s) > 20 {
					sentences = append(sentences, s)
				}
			}
		}); err != nil {
			return err
		}
	}
	if len(sentences) == 0 {
		return errors.New("no sentences read")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range n {
		k := 4 + r.IntN(5) // 4-8 sentences: about one chunk
		parts := make([]string, k)
		for j := range parts {
			parts[j] = sentences[r.IntN(len(sentences))]
		}
		d := doc{ID: fmt.Sprintf("g%07d", i), Title: titles[r.IntN(len(titles))], Text: strings.Join(parts, " ")}
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return bw.Flush()
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
