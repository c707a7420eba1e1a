package kbsource_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb/kbtest"
	"github.com/quarryhq/quarry/search/kbsource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A search finds passages (chunks); a search for pages finds the first
// pages among the best chunks, each with all of its chunks among them.
func TestSearchPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emb := embed.Hash{Dim: 64}
	dir := t.TempDir()
	// A long page about lanterns, cut into several chunks, and two short
	// ones.
	var long strings.Builder
	long.WriteString("# Lanterns\n\n")
	for i := range 60 {
		fmt.Fprintf(&long, "Paper lantern number %d glows over the river festival at dusk, and its candle burns for an hour.\n\n", i)
	}
	files := map[string]string{"long.md": long.String(), "short.md": "# Boats\n\nA lantern hangs at the bow of every boat on the river.\n", "other.md": "# Kites\n\nKites fly over the river on windy days, never at dusk.\n"}
	var paths []string
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	svc := kbtest.New(t, "docs", emb, paths...)
	src := kbsource.New(svc, "docs", emb)
	q := "paper lantern candle over the river at dusk"
	one, err := src.Search(ctx, q, 1)
	if err != nil || len(one) != 1 || !strings.HasSuffix(one[0].URL, "long.md") {
		t.Fatalf("Search: %+v %v", one, err)
	}
	pages, err := src.SearchPages(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 2 {
		t.Fatalf("one page, %d passages: want its chunks among the best %d", len(pages), kbsource.PageDepth)
	}
	for _, r := range pages {
		if r.URL != one[0].URL || r.Kind != "kb" {
			t.Errorf("a passage of another page: %+v", r)
		}
	}
	two, err := src.SearchPages(ctx, q, 2)
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]bool{}
	for _, r := range two {
		urls[r.URL] = true
	}
	if len(urls) != 2 || !urls[one[0].URL] {
		t.Errorf("two pages: %v", urls)
	}
}
