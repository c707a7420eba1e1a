package eval

import (
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	a, err := ReadRun(strings.NewReader(`{"kb":"git","dataset":"git.jsonl","scores":{"right":0.5,"confidence_auc":0.6},
		"questions":[{"id":"q1","right":true,"refused":false},{"id":"q2","right":false,"refused":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadRun(strings.NewReader(`{"kb":"git","dataset":"git.jsonl","scores":{"right":0.55,"confidence_auc":0.6,"only_b":1},
		"questions":[{"id":"q1","right":true,"refused":false},{"id":"q2","right":true,"refused":false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rows, flips, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Name != "right" || rows[1].A != 0.5 || rows[1].B != 0.55 {
		t.Fatalf("rows %+v", rows)
	}
	if len(flips) != 2 || flips[0] != (Flip{ID: "q2", What: "right", A: false, B: true}) || flips[1].What != "refused" {
		t.Fatalf("flips %+v", flips)
	}
	b.Dataset = "sqlite.jsonl"
	if _, _, err := Compare(a, b); err == nil {
		t.Fatal("runs over different datasets compared")
	}
	if _, err := ReadRun(strings.NewReader(`{"kb":"git"}`)); err == nil {
		t.Fatal("a run without scores read")
	}
}

// TestReadRunNeedsQuestionIDs: Compare pairs questions by id, so a run
// whose question has none, or shares one, is refused naming it.
func TestReadRunNeedsQuestionIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ run, want string }{
		{`{"scores":{"right":1},"questions":[{"id":"q1","right":true},{"id":"q1","right":false}]}`, `question "q1": id: must be unique`},
		{`{"scores":{"right":1},"questions":[{"id":"q1"},{"right":true}]}`, "question 2: id:"},
		{`{"scores":{"right":1},"questions":[{"id":7}]}`, "question 1: id:"},
	} {
		if _, err := ReadRun(strings.NewReader(tc.run)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.run, err, tc.want)
		}
	}
}
