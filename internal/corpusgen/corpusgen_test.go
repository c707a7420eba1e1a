package corpusgen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(src, []byte(`{"_id":"1","title":"Alpha","text":"The first sentence is here. The second one follows it. Short."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := Generate(&a, 50, 7, []string{src}); err != nil {
		t.Fatal(err)
	}
	if err := Generate(&b, 50, 7, []string{src}); err != nil || a.String() != b.String() {
		t.Fatalf("not the same for one seed: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(a.String()), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d documents", len(lines))
	}
	var d doc
	if err := json.Unmarshal([]byte(lines[3]), &d); err != nil || d.ID != "g0000003" || d.Title != "Alpha" || strings.Contains(d.Text, "Short.") || !strings.HasPrefix(d.Text, "The ") {
		t.Fatalf("document %+v %v", d, err)
	}
	if err := Generate(&a, 0, 1, []string{src}); err == nil {
		t.Fatal("n = 0 accepted")
	}
}
