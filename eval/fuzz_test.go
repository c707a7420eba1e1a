package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadRun: whatever a stored run file holds, reading it, comparing
// it with itself and with a well-formed run and tabulating it never
// panics; a file it takes compares with itself without a flip.
func FuzzReadRun(f *testing.F) {
	good := `{"kb":"git","dataset":"git.jsonl","scores":{"right":0.5},"questions":[{"id":"q1","right":true,"refused":false}]}`
	for _, s := range []string{
		good,
		`{"dataset":"a/git.jsonl","scores":{"right":1e308,"x":-0},"questions":[{"id":7,"right":"yes"},{"refused":null},{}]}`,
		`{"scores":{}}`,
		`{"scores":{"right":0.1},"questions":[{"id":"q1","right":true},{"id":"q1","right":false}]}`,
		`[`,
		``,
	} {
		f.Add(s)
	}
	base, err := ReadRun(strings.NewReader(good))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		run, err := ReadRun(strings.NewReader(data))
		if err != nil {
			return
		}
		if _, flips, err := Compare(run, run); err == nil && len(flips) != 0 {
			t.Fatalf("%q: a run differs from itself: %v", data, flips)
		}
		_, _, _ = Compare(base, run)
		_, _, _ = Compare(run, base)
		// Tabulated beside a well-formed run, and written out, it never
		// panics either.
		if tables, err := Tabulate([]*Run{run, base}, []string{"fuzz.json", "base.json"}); err == nil {
			_ = Markdown(tables, tables)
		}
	})
}

// FuzzReadAnswerSet: whatever a dataset file holds, reading it never
// panics, and a dataset it takes has questions with ids of their own.
func FuzzReadAnswerSet(f *testing.F) {
	for _, s := range []string{
		`{"id":"q1","question":"What is X?","pages":["a.html"],"answers":["x"]}` + "\n" + `{"id":"q2","question":"Y?","unanswerable":true}`,
		`{"id":"q1","question":"What?","pages":[],"answers":["x"]}`,
		`{"id":"q1","question":""}`,
		"\n\n{\"id\":\"q\",\"question\":\"x\",\"unanswerable\":true}\n{",
		`{"id":1}`,
		"",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(dir, "set.jsonl")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		qs, err := ReadAnswerSet(path)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, q := range qs {
			if strings.TrimSpace(q.ID) == "" || seen[q.ID] {
				t.Fatalf("%q: taken with the id %q", data, q.ID)
			}
			seen[q.ID] = true
		}
	})
}
