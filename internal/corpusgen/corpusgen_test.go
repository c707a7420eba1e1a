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
	if err := Generate(&a, 50, 7, []string{src}, Mixed); err != nil {
		t.Fatal(err)
	}
	if err := Generate(&b, 50, 7, []string{src}, Mixed); err != nil || a.String() != b.String() {
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
	if err := Generate(&a, 0, 1, []string{src}, Mixed); err == nil {
		t.Fatal("n = 0 accepted")
	}
}

func TestGenerateTopical(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "c.jsonl")
	// Glaciers and moraines share their rare words; the ferry shares none.
	docs := []doc{
		{ID: "1", Title: "Glaciers", Text: "Glaciers carve moraines from granite bedrock. Moraines mark where glaciers halted their advance. Meltwater from glaciers feeds braided rivers."},
		{ID: "2", Title: "Moraines", Text: "A moraine holds granite boulders that glaciers dropped. Terminal moraines record the farthest advance of glaciers."},
		{ID: "3", Title: "Ferries", Text: "The ferry crosses the strait twice a day in summer. Its timetable changes when winter storms close the harbour."},
	}
	var in strings.Builder
	for _, d := range docs {
		b, _ := json.Marshal(d)
		in.Write(append(b, '\n'))
	}
	if err := os.WriteFile(src, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Generate(&out, 300, 3, []string{src}, Topical); err != nil {
		t.Fatal(err)
	}
	lent := 0
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var d doc
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		ferry := strings.Contains(d.Text, "ferry") || strings.Contains(d.Text, "timetable")
		ice := strings.Contains(d.Text, "laciers") || strings.Contains(d.Text, "oraine")
		if ferry && ice {
			t.Fatalf("a document mixes subjects: %+v", d)
		}
		if d.Title == "Ferries" && !ferry || d.Title != "Ferries" && !ice {
			t.Fatalf("a document strays from its title's subject: %+v", d)
		}
		if d.Title == "Glaciers" && strings.Contains(d.Text, "Terminal moraines") {
			lent++
		}
	}
	if lent == 0 {
		t.Fatal("no glacier document borrowed a sentence from its neighbour")
	}
	if _, err := ParseShape("random"); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Fatalf("unknown shape: %v", err)
	}
}
