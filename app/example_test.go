package app_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/research"
)

// The research service as every command, the server and the workers get
// it: app assembles it from a configuration (here the embedded store and
// the offline engine), and a research runs to its stored report.
func Example_research() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "quarry-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	a := app.New(app.Config{DataDir: dir, Embedder: "hash"}, nil)
	defer a.Close()

	notes := filepath.Join("..", "examples", "notes")
	if err := a.IngestDocs(ctx, []string{notes}, io.Discard); err != nil { // a knowledge base of the folder
		log.Fatal(err)
	}
	rn, err := a.Runner(ctx)
	if err != nil {
		log.Fatal(err)
	}
	r, err := rn.Start(ctx, "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?",
		research.Options{Sources: []string{"kb:" + app.DocsKBName(notes)}, Level: "quick"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.Report.Engine)
	first, _, _ := strings.Cut(r.Report.Summary, "\n")
	fmt.Println(first)
	// Output:
	// completed offline
	// Derived from the quotes below: Giuseppe Verdi (1813) was born before Antonín Dvořák (1841). [1] [2]
}
