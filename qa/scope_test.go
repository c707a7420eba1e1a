package qa

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/kb/kbtest"
)

// TestHoldsScope: a knowledge base is about a name it writes in 1% of
// its chunks or more (Writer, in 151 of 152), not one it writes once
// (Impress: 2 needed) or a number (150 chunks say "1"); a name no chunk
// holds a word of (Draw, "Draw Tool"; not "Draw Writer") it never
// mentions.
func TestHoldsScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emb := embed.Hash{Dim: 64}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	if err := enc.Encode(map[string]string{"_id": "impress", "title": "Slides", "text": "Impress shows the transitions of a slide in the sidebar."}); err != nil {
		t.Fatal(err)
	}
	for i := range 151 {
		if err := enc.Encode(map[string]string{"_id": fmt.Sprintf("p%d", i), "title": "Page styles", "text": fmt.Sprintf("Writer lays out page %d with 1 margin.", i)}); err != nil {
			t.Fatal(err)
		}
	}
	corpus := filepath.Join(t.TempDir(), "help.jsonl")
	if err := os.WriteFile(corpus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := kbtest.New(t, "help", emb, corpus)
	a := &Asker{Search: SearchFunc(func(ctx context.Context, q kb.Query) ([]kb.Result, error) { return svc.Search(ctx, "help", emb, q) }),
		Chunks: func(ctx context.Context) (int, error) { return svc.Chunks(ctx, "help") }}
	held := a.holds(ctx)
	for name, want := range map[string]scope{"Writer": scopeAbout, "Impress": scopeSome, "Draw": scopeNever, "Sidebar Writer": scopeSome, "Draw Writer": scopeSome, "Draw Tool": scopeNever, "1": scopeSome} {
		got, err := held(name)
		if err != nil || got != want {
			t.Errorf("holds(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	// Without a count, no name is what the knowledge base is about.
	a.Chunks = nil
	if got, err := a.holds(ctx)("Writer"); got != scopeSome || err != nil {
		t.Errorf("without Chunks: %v, %v", got, err)
	}
}

// TestNeverText: the names a knowledge base never mentions, in the
// question's language.
func TestNeverText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lang  string
		names []string
		want  string
	}{
		{"en", []string{"MSRV"}, " The knowledge base never mentions “MSRV”."},
		{"en", []string{"Tokio", "MSRV"}, " The knowledge base never mentions “Tokio” or “MSRV”."},
		{"ko", []string{"AVIF", "MP4"}, " 지식 베이스에는 “AVIF”, “MP4”에 관한 내용이 전혀 없습니다."},
	} {
		if got := neverText(tc.lang, tc.names); got != tc.want {
			t.Errorf("neverText(%s, %q) = %q, want %q", tc.lang, tc.names, got, tc.want)
		}
	}
	if got := scopeNever.String(); got != "never" {
		t.Errorf("scopeNever = %q", got)
	}
}
