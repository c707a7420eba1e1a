package kb_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store/sqlite"
)

// A knowledge base on the embedded store: create it, add documents, and
// search them by meaning and by words at once (hybrid, the default).
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "quarry-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "quarry.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	svc := kb.New(st, nil) // nil: no logging
	emb := embed.Hash{}    // the offline embedder
	notes, err := svc.Create(ctx, "notes", "team notes", emb)
	if err != nil {
		log.Fatal(err)
	}
	rep, err := svc.AddDocuments(ctx, notes, []kb.Document{
		{URL: "https://notes.example.com/crawler", Title: "Crawler", Text: "The crawler re-crawls every page every five minutes. A page that fails three times in a row is marked stale."},
		{URL: "https://notes.example.com/billing", Title: "Billing", Text: "Invoices are sent monthly by email to the account owner."},
	}, kb.AddOptions{Embedder: emb})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("added %d documents, %d chunks\n", rep.Added, rep.Chunks)

	hits, err := svc.Search(ctx, "notes", emb, kb.Query{Text: "when is a page marked stale", K: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.Title, h.SourceURL)
	}
	// Output:
	// added 2 documents, 2 chunks
	// Crawler https://notes.example.com/crawler
}
