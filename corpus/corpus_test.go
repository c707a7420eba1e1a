package corpus

import (
	"errors"
	"strings"
	"testing"
)

func TestReadDocsKeepsGoodLines(t *testing.T) {
	t.Parallel()
	in := `{"_id": "a", "title": "A", "text": "alpha"}
{"_id": "b", "title": "B", "text": "beta"
{"_id": 7, "text": "numeric id", "url": "https://x.test/7"}

{"_id": "a", "text": "dup"}
{"title": "no id"}
{"_id": "c", "text": "gamma"}`
	var docs []Doc
	bad, err := ReadDocs(strings.NewReader(in), func(d Doc) error { docs = append(docs, d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 || docs[1].ID != "7" || docs[1].URL != "https://x.test/7" || docs[2].Line != 7 {
		t.Fatalf("docs: %+v", docs)
	}
	if len(bad) != 3 || bad[0].Line != 2 || bad[1].Line != 5 || !strings.Contains(bad[1].Error(), `duplicate _id "a" (first on line 1)`) || bad[2].Line != 6 {
		t.Fatalf("bad: %v", bad)
	}
}

func TestReadQrelsAndQueries(t *testing.T) {
	t.Parallel()
	q, err := ReadQrels(strings.NewReader("query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t2\n"))
	if err != nil || q["1"]["d2"] != 2 {
		t.Fatalf("%v %v", q, err)
	}
	if _, err := ReadQrels(strings.NewReader("query-id\tcorpus-id\tscore\n1\td1\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("short qrels line: %v", err)
	}
	qs, err := ReadQueries(strings.NewReader(`{"_id":"1","text":"hi"}` + "\n" + `{"_id":2,"text":"there"}`))
	if err != nil || len(qs) != 2 || qs[1].ID != "2" {
		t.Fatalf("%v %v", qs, err)
	}
}

func FuzzReadDocs(f *testing.F) {
	f.Add([]byte(`{"_id":"1","title":"t","text":"x"}` + "\n" + `{broken`))
	f.Add([]byte("\n\n{\"_id\": 3}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seen := map[string]bool{}
		_, err := ReadDocs(strings.NewReader(string(data)), func(d Doc) error {
			if seen[d.ID] {
				t.Fatalf("duplicate id %q delivered", d.ID)
			}
			seen[d.ID] = true
			if d.Line <= 0 {
				t.Fatalf("line %d", d.Line)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reader error on in-memory input: %v", err)
		}
	})
}

// FuzzReadQueriesAndQrels: a queries or qrels file from a request gives
// its rows or an error naming a line, never a panic, and no query id
// twice.
func FuzzReadQueriesAndQrels(f *testing.F) {
	f.Add([]byte(`{"_id":"1","text":"q"}`+"\n"+`{"_id":2,"text":"r"}`), []byte("query-id\tcorpus-id\tscore\n1\td1\t1\n"))
	f.Add([]byte(`{"_id":"1"}`+"\n"+`{"_id":"1"}`), []byte("1 d1 x\n"))
	f.Add([]byte("\n{broken"), []byte("a b\n"))
	f.Fuzz(func(t *testing.T, queries, qrels []byte) {
		qs, err := ReadQueries(strings.NewReader(string(queries)))
		if err != nil {
			var le LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("queries: error %v names no line", err)
			}
		}
		seen := map[string]bool{}
		for _, q := range qs {
			if seen[q.ID] {
				t.Fatalf("query id %q read twice", q.ID)
			}
			seen[q.ID] = true
		}
		if _, err := ReadQrels(strings.NewReader(string(qrels))); err != nil {
			var le LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("qrels: error %v names no line", err)
			}
		}
	})
}
