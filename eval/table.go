package eval

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Kinds of stored run, told apart by their scores.
const (
	KindResearch = "research"
	KindAsk      = "ask"
)

// KindOf is the kind of evaluation a run is: research (it scores the
// answer in the summary) or ask (it scores right answers); "" for
// neither.
func KindOf(r *Run) string {
	switch {
	case hasScore(r, "answer_in_summary"):
		return KindResearch
	case hasScore(r, "right"):
		return KindAsk
	}
	return ""
}

func hasScore(r *Run, name string) bool {
	_, ok := r.Scores[name]
	return ok
}

// TableFigures are the figures a table shows for each kind, in order:
// those the targets name (SPEC §1, §2) and where an answer is lost.
var TableFigures = map[string][]string{
	KindResearch: {"page_among_references", "page_in_first_3", "answer_in_summary", "answer_in_first_two_sentences", "unanswerable_refused", "false_refusals", "answer_in_model_context"},
	KindAsk:      {"right", "unanswerable_refused", "false_refusals", "confident_and_wrong", "confidence_auc", "answer_in_chunks_read", "right_of_read"},
}

// Table is stored runs of one kind averaged per dataset: each dataset's
// mean of each figure over its runs (one per chunk size, say), and the
// mean of those over the datasets, each dataset counting once however
// many runs it has. A figure no run has is left out; one only some
// runs of a dataset have is averaged over those.
type Table struct {
	Kind     string                        `json:"kind"`
	Figures  []string                      `json:"figures"`
	Datasets []string                      `json:"datasets"`
	Runs     map[string]int                `json:"runs"`
	Means    map[string]map[string]float64 `json:"means"` // dataset → figure → mean
	Mean     map[string]float64            `json:"mean"`  // figure → mean over the datasets that have it
}

// Tabulate averages runs per kind and dataset (the dataset file's name
// without its extension), research first; names[i] names runs[i] in an
// error (its file). The runs of one dataset must share their
// configuration (engine, level, rules ablated): a directory is one
// configuration, and two are set side by side by Markdown.
func Tabulate(runs []*Run, names []string) ([]Table, error) {
	if len(names) != len(runs) {
		return nil, fmt.Errorf("tabulate: %d names for %d runs", len(names), len(runs))
	}
	type group struct {
		runs   []*Run
		config string
		from   string
	}
	groups := map[string]map[string]*group{} // kind → dataset → runs
	for i, r := range runs {
		kind := KindOf(r)
		if kind == "" {
			return nil, fmt.Errorf("%s: scores: neither a research run's (answer_in_summary) nor an ask run's (right)", names[i])
		}
		ds := strings.TrimSuffix(filepath.Base(r.Dataset), filepath.Ext(r.Dataset))
		if ds == "" || ds == "." {
			return nil, fmt.Errorf("%s: dataset: must name the dataset file", names[i])
		}
		config := fmt.Sprintf("engine %q, level %q, ablated %q", r.Engine, r.Level, strings.Join(r.Ablated, ","))
		if groups[kind] == nil {
			groups[kind] = map[string]*group{}
		}
		g := groups[kind][ds]
		if g == nil {
			g = &group{config: config, from: names[i]}
			groups[kind][ds] = g
		}
		if g.config != config {
			return nil, fmt.Errorf("%s: %s runs of %s differ from %s's (%s, not %s): keep one configuration per directory", names[i], kind, ds, g.from, config, g.config)
		}
		g.runs = append(g.runs, r)
	}
	var out []Table
	for _, kind := range []string{KindResearch, KindAsk} {
		byDS := groups[kind]
		if len(byDS) == 0 {
			continue
		}
		t := Table{Kind: kind, Runs: map[string]int{}, Means: map[string]map[string]float64{}, Mean: map[string]float64{}}
		for ds, g := range byDS {
			t.Datasets = append(t.Datasets, ds)
			t.Runs[ds] = len(g.runs)
			t.Means[ds] = map[string]float64{}
			for _, f := range TableFigures[kind] {
				if m, ok := meanOf(g.runs, func(r *Run) map[string]float64 { return r.Scores }, f); ok {
					t.Means[ds][f] = m
				}
			}
		}
		slices.Sort(t.Datasets)
		for _, f := range TableFigures[kind] {
			if m, ok := meanOf(t.Datasets, func(ds string) map[string]float64 { return t.Means[ds] }, f); ok {
				t.Figures = append(t.Figures, f)
				t.Mean[f] = m
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// meanOf is the mean of figure f over the items whose figures (of)
// have it, and false when none has.
func meanOf[T any](items []T, of func(T) map[string]float64, f string) (float64, bool) {
	var sum float64
	n := 0
	for _, it := range items {
		if v, ok := of(it)[f]; ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// value is figure f of dataset ds, or of the mean over the datasets for
// ds "", and whether the table has it (a nil table has none).
func (t *Table) value(ds, f string) (float64, bool) {
	if t == nil {
		return 0, false
	}
	if ds == "" {
		v, ok := t.Mean[f]
		return v, ok
	}
	v, ok := t.Means[ds][f]
	return v, ok
}

// Markdown writes tables as Markdown, one per kind: a row per dataset
// (two decimals) and the mean over them (three). With befores (tables
// from another directory), each cell of a kind both have reads "before
// → now" where the two differ at that precision; a kind only befores
// has is not shown.
func Markdown(tables, befores []Table) string {
	var b strings.Builder
	for _, t := range tables {
		var before *Table
		for i := range befores {
			if befores[i].Kind == t.Kind {
				before = &befores[i]
			}
		}
		runs := 0
		for _, n := range t.Runs {
			runs += n
		}
		fmt.Fprintf(&b, "%s: %d datasets, %d runs", t.Kind, len(t.Datasets), runs)
		if before != nil && !slices.Equal(before.Datasets, t.Datasets) {
			// The means are over different datasets: say so.
			fmt.Fprintf(&b, " (before: %s)", strings.Join(before.Datasets, ", "))
		}
		b.WriteString("\n\n| dataset | runs |")
		for _, f := range t.Figures {
			b.WriteString(" " + strings.ReplaceAll(f, "_", " ") + " |")
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(t.Figures)) + "\n")
		// A cell: the figure, or "before → now" where they differ.
		cell := func(ds, f, format string) string {
			v, ok := t.value(ds, f)
			if !ok {
				return "–"
			}
			s := fmt.Sprintf(format, v)
			if was, had := before.value(ds, f); had && fmt.Sprintf(format, was) != s {
				return fmt.Sprintf(format, was) + " → " + s
			}
			return s
		}
		for _, ds := range t.Datasets {
			fmt.Fprintf(&b, "| %s | %d |", ds, t.Runs[ds])
			for _, f := range t.Figures {
				b.WriteString(" " + cell(ds, f, "%.2f") + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("| mean | |")
		for _, f := range t.Figures {
			b.WriteString(" " + cell("", f, "%.3f") + " |")
		}
		b.WriteString("\n\n")
	}
	return b.String()
}
