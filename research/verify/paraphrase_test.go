package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// paraphraseCase is a set of independently worded sentences, one per
// source, about one quantity of one subject (or, as a trap, different
// quantities of it), and what verification must conclude: the value a
// discrepancy resolves to (Conflict) by Strategy, "uncertainty" for an
// unresolved split, or no discrepancy at all with at least Verified facts
// verified.
type paraphraseCase struct {
	Name     string   `json:"name"`
	Sources  []string `json:"sources"`
	Conflict string   `json:"conflict"`
	Strategy string   `json:"strategy"`
	Verified int      `json:"verified"`
}

// TestParaphrase runs testdata/paraphrase.jsonl: claims about the same
// quantity grouped however they are worded, values in different units
// compared after conversion, different quantities of one subject kept
// apart.
func TestParaphrase(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("testdata", "paraphrase.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var tc paraphraseCase
		if err := json.Unmarshal(sc.Bytes(), &tc); err != nil {
			t.Fatal(err)
		}
		t.Run(tc.Name, func(t *testing.T) {
			var srcs []Source
			for i, s := range tc.Sources {
				srcs = append(srcs, Source{ID: fmt.Sprintf("S%d", i+1), Domain: fmt.Sprintf("site%d.example", i+1), Credibility: 0.5, Content: s})
			}
			r := Run(srcs)
			switch {
			case tc.Strategy != "":
				d := only(t, r)
				if d.Strategy != tc.Strategy || tc.Conflict != "" && !strings.HasPrefix(d.Resolution, tc.Conflict+":") {
					t.Fatalf("discrepancy %+v, want %s for %q", d, tc.Strategy, tc.Conflict)
				}
			default:
				if len(r.Discrepancies) > 0 {
					t.Fatalf("false discrepancy: %+v\nfacts: %+v", r.Discrepancies, r.Facts)
				}
				n := 0
				for _, f := range r.Facts {
					if f.Verified {
						n++
					}
				}
				if n < tc.Verified {
					t.Fatalf("%d facts verified, want %d: %+v", n, tc.Verified, r.Facts)
				}
			}
		})
	}
}
