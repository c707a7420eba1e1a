package eval

import (
	"math"
	"testing"
)

func TestScoreResearch(t *testing.T) {
	t.Parallel()
	q := AnswerQuestion{ID: "q", Pages: []string{"library/os.html"}, Answers: []string{"0o777"}}
	sum := "The mode defaults to 0o777. [2] It is masked by the umask. [1] The file is created."
	o := ScoreResearch(q, sum, []string{"file:///usr/share/doc/x/html/library/io.html", "file:///usr/share/doc/x/html/library/os.html#os.mkdir"})
	if o.PageRank != 2 || !o.InSummary || !o.InOpening || o.Refused {
		t.Fatalf("%+v", o)
	}
	late := ScoreResearch(q, "One. [1] Two. [1] The mode defaults to “0o777”. [1]", nil)
	if !late.InSummary || late.InOpening || late.PageRank != 0 {
		t.Fatalf("third sentence: %+v", late)
	}
	if r := ScoreResearch(AnswerQuestion{ID: "u", Unanswerable: true}, "None of the 4 sources read mentions Foo, so none of them answers the question; nothing is cited.", nil); !r.Refused {
		t.Fatalf("a summary citing nothing is a refusal: %+v", r)
	}
	s := SummarizeResearch([]ResearchOutcome{o, late, {ID: "u", Unanswerable: true, Refused: true}})
	if s.Answerable != 2 || s.PageAmongRefs != 0.5 || s.InSummary != 1 || s.InOpening != 0.5 || s.RefusedUnanswered != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestHoldsOnWordEdges(t *testing.T) {
	t.Parallel()
	q := AnswerQuestion{Answers: []string{"ort", "--force-with-lease", "사업자"}}
	for text, want := range map[string]bool{
		"The default strategy is short.":           false,
		"The default strategy is ort.":             true,
		"Use git push --force-with-lease instead.": true,
		"사업자 고객은 말일까지":                             true,
		"Nothing here":                             false,
	} {
		if got := q.Holds(text); got != want {
			t.Errorf("Holds(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestHoldsNumbers(t *testing.T) {
	t.Parallel()
	q := AnswerQuestion{Answers: []string{"3"}}
	for text, want := range map[string]bool{"version 3.5": false, "3,000 rows": false, "version 3.": true, "in 3, then": true} {
		if got := q.Holds(text); got != want {
			t.Errorf("Holds(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestSummarizeAsk(t *testing.T) {
	t.Parallel()
	s := SummarizeAsk([]AskOutcome{
		{Right: true, Confidence: 0.9}, {Right: true, Confidence: 0.7}, {Confidence: 0.8}, {Refused: true},
		{Unanswerable: true, Refused: true}, {Unanswerable: true, Confidence: 0.4},
	})
	if s.Answerable != 4 || s.Right != 0.5 || s.FalseRefusals != 0.25 || s.RefusedUnanswered != 0.5 {
		t.Fatalf("%+v", s)
	}
	// Answered: right 0.9, 0.7; wrong 0.8, 0.4 (an unanswerable one answered).
	if s.ConfidentWrong != 0.25 || math.Abs(s.AUC-0.75) > 1e-9 {
		t.Fatalf("confident-and-wrong %v, AUC %v", s.ConfidentWrong, s.AUC)
	}
	if s.InRead != 0 || s.RightOfRead != 0 {
		t.Fatalf("no chunks recorded, yet answer in chunks read %v, right of those %v", s.InRead, s.RightOfRead)
	}
	// Of four answerable questions the answer was read for three: one
	// answered right, one wrong, one refused; the fourth was not read.
	yes, no := true, false
	s = SummarizeAsk([]AskOutcome{
		{Right: true, InRead: &yes}, {InRead: &yes}, {Refused: true, InRead: &yes}, {InRead: &no},
		{Unanswerable: true},
	})
	if s.InRead != 0.75 || math.Abs(s.RightOfRead-1.0/3) > 1e-9 {
		t.Fatalf("answer in chunks read %v (want 0.75), right of those %v (want 1/3)", s.InRead, s.RightOfRead)
	}
	if AUC(nil, []float64{1}) != 0.5 || AUC([]float64{1}, []float64{1}) != 0.5 || AUC([]float64{2}, []float64{1}) != 1 {
		t.Fatal("AUC edge cases")
	}
}

// TestScoreAsk: an answer's quoted code and fragments are counted as not
// prose, a refusal's words are not.
func TestScoreAsk(t *testing.T) {
	t.Parallel()
	q := AnswerQuestion{ID: "q1", Answers: []string{"6700"}}
	o := ScoreAsk(q, `"The default value is 6700." [1] "Filename: Cargo.toml" [1] "$ git gc --auto" [2]`, false, 0.6)
	if !o.Right || len(o.NonProse) != 2 || o.NonProse[1] != `"$ git gc --auto"` {
		t.Fatalf("%+v", o)
	}
	refused := ScoreAsk(q, "I don't know: the knowledge base holds nothing that answers this question well enough, and I will not guess.", true, 0.1)
	if refused.Right || refused.NonProse != nil {
		t.Fatalf("refusal scored: %+v", refused)
	}
	s := SummarizeAsk([]AskOutcome{o, refused})
	if s.NonProse != 2 || s.Sentences != 3 {
		t.Fatalf("non-prose %d of %d, want 2 of 3", s.NonProse, s.Sentences)
	}
	// A command quoted as code is code presented as code.
	if o := ScoreAsk(q, "\"Run the collector by hand when the count passes 6700.\" [1] `$ git gc --auto` [2] `pip install -r requirements.txt. Then run it` [2]", false, 0.6); len(o.NonProse) != 0 {
		t.Fatalf("code in backticks counted: %q", o.NonProse)
	}
}

// TestHoldsNotBarePolar: "no" is in most texts; a yes/no question counts
// as answered by the words that say why.
func TestHoldsNotBarePolar(t *testing.T) {
	t.Parallel()
	q := AnswerQuestion{Answers: []string{"no", "index is updated"}}
	for text, want := range map[string]bool{
		"There is no need to run git add again.": false,
		"Yes.":                                   false,
		"The index is updated, but the change must still be committed.": true,
	} {
		if got := q.Holds(text); got != want {
			t.Errorf("Holds(%q) = %v, want %v", text, got, want)
		}
	}
}
