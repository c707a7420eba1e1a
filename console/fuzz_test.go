package console

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/research"
)

// FuzzReadJSONL: any bytes give questions that keep the format's rules,
// or an invalid-input error naming a field; never a panic.
func FuzzReadJSONL(f *testing.F) {
	f.Add(`{"id": "a", "question": "q", "doc_ids": ["d1"]}`)
	f.Add(`{"question": "q", "chunks": [{"doc_id": "d", "chunk_index": 2}], "chunk_ids": [7], "answer": "x"}` + "\n\n" + `{"id": "a", "question": "r", "doc_ids": ["e"]}`)
	f.Add(`{"id": "a"} {"id": "b"}`)
	f.Add("[1]\n{\"question\": \"\\u0000\"}")
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := ReadJSONL(strings.NewReader(in))
		if err != nil {
			if errcode.Of(err) != errcode.Invalid || errcode.Field(err) == "" {
				t.Fatalf("not an invalid-input error naming a field: %v", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, q := range qs {
			if ids[q.ID] || q.ID == "" {
				t.Fatalf("id %q empty or repeated", q.ID)
			}
			ids[q.ID] = true
			if n := utf8.RuneCountInString(q.Question); n < 1 || n > 10000 {
				t.Fatalf("question of %d characters", n)
			}
			if len(q.DocIDs)+len(q.Chunks)+len(q.ChunkIDs) == 0 {
				t.Fatal("a question without golden chunks")
			}
			for _, c := range q.Chunks {
				if c.ChunkIndex < 0 || c.DocID == "" {
					t.Fatalf("chunk ref %+v", c)
				}
			}
		}
	})
}

// FuzzCheckCitations: whatever a model writes, the checked answer cites
// only retrieved passages, each once in cited, in range.
func FuzzCheckCitations(f *testing.F) {
	f.Add("Aspirin helps [S1]. Coffee [S9][S2, S3]. [cite:S1,F2] [S0]", 3)
	f.Add("[S1][S1][S2]", 1)
	f.Add("no markers", 0)
	f.Fuzz(func(t *testing.T, text string, n int) {
		n = n % 21
		if n < 0 {
			n = -n
		}
		out, cited, bad := checkCitations(text, n)
		if bad < 0 || len(cited) > n {
			t.Fatalf("cited %v bad %d of %d", cited, bad, n)
		}
		seen := map[int]bool{}
		for _, k := range cited {
			if k < 1 || k > n || seen[k] {
				t.Fatalf("cited %v of %d", cited, n)
			}
			seen[k] = true
		}
		for _, m := range research.ParseMarkers(out) {
			for _, id := range m.IDs {
				k, err := strconv.Atoi(strings.TrimPrefix(id, "S"))
				if err != nil || k < 1 || k > n || !seen[k] {
					t.Fatalf("the checked answer %q keeps marker %q (n=%d, cited %v)", out, id, n, cited)
				}
			}
		}
	})
}
