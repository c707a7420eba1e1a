// Command corpusgen writes a synthetic corpus for scale benchmarks: N
// documents in BEIR's corpus format (JSON Lines of _id, title, text), each
// a handful of sentences drawn at random from real corpora (by default
// ../shared/data's SciFact abstracts and HotpotQA paragraphs), so the
// vocabulary, sentence lengths and term statistics are those of real text
// while the documents are new. Each document is about one chunk long. The
// same seed gives the same corpus.
//
//	go run ./bench/corpusgen -n 100000 -out /tmp/corpus-100k.jsonl
//	quarry kb add big /tmp/corpus-100k.jsonl --create
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/quarryhq/quarry/internal/textseg"
)

func main() {
	n := flag.Int("n", 10000, "documents to write")
	out := flag.String("out", "", "file to write (default stdout)")
	seed := flag.Uint64("seed", 1, "random seed")
	from := flag.String("from", "../shared/data/scifact/corpus.jsonl,../shared/data/hotpotqa/corpus.jsonl", "comma-separated BEIR corpora to draw sentences from")
	flag.Parse()
	if err := run(*n, *out, *seed, strings.Split(*from, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "corpusgen:", err)
		os.Exit(1)
	}
}

type doc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

func run(n int, out string, seed uint64, from []string) error {
	if n < 1 {
		return fmt.Errorf("n: must be at least 1, got %d", n)
	}
	var sentences, titles []string
	for _, path := range from {
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
	w := io.Writer(os.Stdout)
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
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
