// Command corpusgen writes a synthetic corpus for scale benchmarks
// (internal/corpusgen): N documents of sentences drawn from ../shared/data,
// about a chunk each, their sentences drawn from the whole pool (-shape
// mixed, the default) or each keeping to one source's subject (-shape
// topical).
//
//	go run ./bench/corpusgen -n 100000 -out /tmp/corpus-100k.jsonl
//	quarry kb add big /tmp/corpus-100k.jsonl --create
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quarryhq/quarry/internal/corpusgen"
)

func main() {
	n := flag.Int("n", 10000, "documents to write")
	out := flag.String("out", "", "file to write (default stdout)")
	seed := flag.Uint64("seed", 1, "random seed")
	from := flag.String("from", strings.Join(corpusgen.Sources, ","), "comma-separated BEIR corpora to draw sentences from")
	shape := flag.String("shape", "mixed", "mixed (sentences drawn from the whole pool) or topical (each document keeps to one source's subject)")
	flag.Parse()
	sh, err := corpusgen.ParseShape(*shape)
	if err == nil {
		err = run(*n, *out, *seed, strings.Split(*from, ","), sh)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpusgen:", err)
		os.Exit(1)
	}
}

func run(n int, out string, seed uint64, from []string, shape corpusgen.Shape) error {
	w := io.Writer(os.Stdout)
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return corpusgen.Generate(w, n, seed, from, shape)
}
