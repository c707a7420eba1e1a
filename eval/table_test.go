package eval

import (
	"math"
	"strings"
	"testing"
)

func run(dataset string, scores map[string]float64) *Run {
	return &Run{KB: "kb", Dataset: "testdata/" + dataset + ".jsonl", Engine: "offline-extractive", Scores: scores}
}

func TestTabulateAveragesPerDatasetThenOverDatasets(t *testing.T) {
	runs := []*Run{
		run("git", map[string]float64{"right": 0.6, "unanswerable_refused": 1}),
		run("git", map[string]float64{"right": 0.8, "unanswerable_refused": 1, "answer_in_chunks_read": 0.9}),
		run("sqlite", map[string]float64{"right": 0.4, "unanswerable_refused": 0.5}),
		run("sqlite", map[string]float64{"answer_in_summary": 0.7, "answer_in_first_two_sentences": 0.5}),
	}
	tables, err := Tabulate(runs, []string{"a", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || tables[0].Kind != KindResearch || tables[1].Kind != KindAsk {
		t.Fatalf("tables %+v: research first, then ask", tables)
	}
	ask := tables[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	// git's two runs average to 0.7; the mean over datasets counts each
	// dataset once: (0.7 + 0.4) / 2, not (0.6 + 0.8 + 0.4) / 3.
	if !near(ask.Means["git"]["right"], 0.7) || !near(ask.Mean["right"], 0.55) || ask.Runs["git"] != 2 || ask.Runs["sqlite"] != 1 {
		t.Errorf("means %v, mean %v, runs %v", ask.Means, ask.Mean, ask.Runs)
	}
	// A figure only one run has is that run's, and the mean over the
	// datasets that have it.
	if !near(ask.Means["git"]["answer_in_chunks_read"], 0.9) || !near(ask.Mean["answer_in_chunks_read"], 0.9) {
		t.Errorf("answer in chunks read: %v, mean %v", ask.Means, ask.Mean["answer_in_chunks_read"])
	}
	if _, ok := ask.Means["sqlite"]["answer_in_chunks_read"]; ok {
		t.Errorf("sqlite has no run with answer_in_chunks_read: %v", ask.Means["sqlite"])
	}
	// Figures no run has are left out.
	for _, f := range ask.Figures {
		if f == "confidence_auc" {
			t.Errorf("figures %v: none of the runs has confidence_auc", ask.Figures)
		}
	}
	if got := strings.Join(tables[0].Figures, ","); got != "answer_in_summary,answer_in_first_two_sentences" {
		t.Errorf("research figures %s", got)
	}
}

func TestTabulateRefusesMixedConfigurationsAndUnknownRuns(t *testing.T) {
	a := run("git", map[string]float64{"right": 0.6})
	b := run("git", map[string]float64{"right": 0.7})
	b.Ablated = []string{"window"}
	if _, err := Tabulate([]*Run{a, b}, []string{"a.json", "b.json"}); err == nil || !strings.Contains(err.Error(), "b.json") || !strings.Contains(err.Error(), "one configuration per directory") {
		t.Errorf("two configurations of one dataset: %v", err)
	}
	if _, err := Tabulate([]*Run{run("git", map[string]float64{"ndcg": 0.5})}, []string{"x.json"}); err == nil || !strings.Contains(err.Error(), "x.json: scores") {
		t.Errorf("a retrieval run: %v", err)
	}
	if _, err := Tabulate([]*Run{{Scores: map[string]float64{"right": 1}}}, []string{"y.json"}); err == nil || !strings.Contains(err.Error(), "y.json: dataset") {
		t.Errorf("a run without a dataset: %v", err)
	}
}

func TestMarkdownShowsBeforeAndNow(t *testing.T) {
	before, err := Tabulate([]*Run{run("git", map[string]float64{"right": 0.5, "false_refusals": 0.1})}, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	now, err := Tabulate([]*Run{run("git", map[string]float64{"right": 0.75, "false_refusals": 0.1}), run("rust", map[string]float64{"right": 1, "false_refusals": 0})}, []string{"b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(now, before)
	for _, want := range []string{
		"ask: 2 datasets, 2 runs (before: git)",
		"| dataset | runs | right | false refusals |",
		"| git | 1 | 0.50 → 0.75 | 0.10 |",
		"| rust | 1 | 1.00 | 0.00 |", // no before: as it is
		"| mean | | 0.500 → 0.875 | 0.100 → 0.050 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
