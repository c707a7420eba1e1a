package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// Run is a stored answer evaluation: what eval research or eval ask
// printed with --json (or wrote with --out), read back to compare.
type Run struct {
	KB        string                       `json:"kb"`
	Dataset   string                       `json:"dataset"`
	Engine    string                       `json:"engine,omitempty"`
	Level     string                       `json:"level,omitempty"`
	Ablated   []string                     `json:"ablated"`
	Scores    map[string]float64           `json:"scores"`
	Questions []map[string]json.RawMessage `json:"questions"`
}

// ReadRun decodes a stored run.
func ReadRun(r io.Reader) (*Run, error) {
	var run Run
	if err := json.NewDecoder(r).Decode(&run); err != nil {
		return nil, fmt.Errorf("not an eval research or eval ask run (--json): %w", err)
	}
	if len(run.Scores) == 0 {
		return nil, fmt.Errorf("not an eval research or eval ask run: no scores")
	}
	// Compare pairs the questions by id: each must have one of its own.
	seen := map[string]bool{}
	for i, q := range run.Questions {
		var id string
		if json.Unmarshal(q["id"], &id) != nil || strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("question %d: id: must be a string that is not empty", i+1)
		}
		if seen[id] {
			return nil, fmt.Errorf("question %q: id: must be unique", id)
		}
		seen[id] = true
	}
	return &run, nil
}

// Row is one figure of two runs side by side.
type Row struct {
	Name string
	A, B float64
}

// Flip is a question whose outcome differs between two runs.
type Flip struct {
	ID   string
	What string // the outcome that changed, e.g. "in_summary"
	A, B bool
}

// outcomes are the per-question outcomes compared, in the order shown.
var outcomes = []string{"right", "refused", "in_summary", "in_opening"}

// Compare puts the figures both runs have side by side, in a fixed
// order, and lists the questions whose outcomes differ.
func Compare(a, b *Run) ([]Row, []Flip, error) {
	if filepath.Base(a.Dataset) != filepath.Base(b.Dataset) {
		return nil, nil, fmt.Errorf("the runs are over different datasets: %s and %s", a.Dataset, b.Dataset)
	}
	var names []string
	for k := range a.Scores {
		if _, ok := b.Scores[k]; ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	rows := make([]Row, 0, len(names))
	for _, k := range names {
		rows = append(rows, Row{Name: k, A: a.Scores[k], B: b.Scores[k]})
	}
	byID := map[string]map[string]json.RawMessage{}
	for _, q := range b.Questions {
		var id string
		_ = json.Unmarshal(q["id"], &id)
		byID[id] = q
	}
	var flips []Flip
	for _, qa := range a.Questions {
		var id string
		_ = json.Unmarshal(qa["id"], &id)
		qb, ok := byID[id]
		if !ok {
			continue
		}
		for _, k := range outcomes {
			var va, vb bool
			if json.Unmarshal(qa[k], &va) != nil || json.Unmarshal(qb[k], &vb) != nil || va == vb {
				continue
			}
			flips = append(flips, Flip{ID: id, What: k, A: va, B: vb})
		}
	}
	return rows, flips, nil
}
