package verify

import (
	"strings"
	"testing"
	"time"
)

func date(y int) *time.Time {
	t := time.Date(y, 6, 1, 0, 0, 0, 0, time.UTC)
	return &t
}

func only(t *testing.T, r Result) Discrepancy {
	t.Helper()
	if len(r.Discrepancies) != 1 {
		t.Fatalf("%d discrepancies, want 1: %+v\nfacts: %+v", len(r.Discrepancies), r.Discrepancies, r.Facts)
	}
	return r.Discrepancies[0]
}

func fact(r Result, id string) Fact {
	for _, f := range r.Facts {
		if f.ID == id {
			return f
		}
	}
	return Fact{}
}

func TestConsensus(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "a.org", Credibility: 0.5, Content: "The Eiffel Tower is 330 metres tall. It was finished in 1889."},
		{ID: "S2", Domain: "b.com", Credibility: 0.5, Content: "Paris has many sights. The Eiffel Tower is 330 metres tall today."},
		{ID: "S3", Domain: "c.net", Credibility: 0.5, Content: "At 330 metres, the Eiffel Tower is tall; the Eiffel Tower stands 330 metres tall."},
		{ID: "S4", Domain: "d.io", Credibility: 0.9, Content: "The Eiffel Tower is 300 metres tall."},
	})
	d := only(t, r)
	if d.Strategy != Consensus || !strings.HasPrefix(d.Resolution, "330 metres") || d.Confidence < 0.7 {
		t.Fatalf("consensus: %+v", d)
	}
	w := fact(r, d.Winner)
	if !strings.Contains(w.Text, "330") || !w.Verified {
		t.Fatalf("winner %+v", w)
	}
	for _, f := range r.Facts {
		if strings.Contains(f.Text, "300 metres") && (f.Verified || f.Confidence >= 0.9) {
			t.Errorf("the lone dissent is neither verified nor at full confidence: %+v", f)
		}
	}
}

func TestRecency(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "old.example", Credibility: 0.7, Published: date(2010), Content: "The population of Springfield was 30,000 people according to the census."},
		{ID: "S2", Domain: "new.example", Credibility: 0.7, Published: date(2020), Content: "The population of Springfield was 35,000 people according to the census."},
	})
	d := only(t, r)
	if d.Strategy != Recency || !strings.HasPrefix(d.Resolution, "35,000 people") || fact(r, d.Winner).SourceID != "S2" {
		t.Fatalf("recency: %+v", d)
	}
	if len(d.FactIDs) != 2 || d.Topic == "" {
		t.Fatalf("discrepancy fields: %+v", d)
	}
}

func TestCredibility(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "myblog.example", Credibility: 0.45, Content: "Giuseppe Verdi was born in 1814 in Le Roncole."},
		{ID: "S2", Domain: "britannica.com", Credibility: 0.75, Content: "Giuseppe Verdi was born in 1813 in Le Roncole, Duchy of Parma."},
	})
	d := only(t, r)
	if d.Strategy != Credibility || !strings.HasPrefix(d.Resolution, "1813") || fact(r, d.Winner).SourceID != "S2" {
		t.Fatalf("credibility: %+v", d)
	}
}

func TestUncertainty(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "one.example", Credibility: 0.5, Content: "Mount Foo rises to 2,100 metres above the sea."},
		{ID: "S2", Domain: "two.example", Credibility: 0.5, Content: "Mount Foo rises to 2,400 metres above the sea."},
	})
	d := only(t, r)
	if d.Strategy != Uncertainty || d.Winner != "" || !strings.Contains(d.Resolution, "2,100 metres") || !strings.Contains(d.Resolution, "2,400 metres") {
		t.Fatalf("uncertainty: %+v", d)
	}
}

func TestVerifiedAndNoFalseConflicts(t *testing.T) {
	t.Parallel()
	content := "Antonín Dvořák was born on 8 September 1841 in Nelahozeves. He wrote nine symphonies."
	r := Run([]Source{
		{ID: "S1", Domain: "en.wikipedia.org", Credibility: 0.75, Content: content},
		{ID: "S2", Domain: "britannica.com", Credibility: 0.75, Content: "Antonín Dvořák was born on 8 September 1841, in Nelahozeves, Bohemia."},
		{ID: "S3", Domain: "en.wikipedia.org", Credibility: 0.75, Content: "Giuseppe Verdi was born in 1813. Verdi wrote 28 operas."},
	})
	if len(r.Discrepancies) != 0 {
		t.Fatalf("false discrepancies: %+v", r.Discrepancies)
	}
	f := r.Facts[0]
	if !f.Verified || f.SourceID != "S1" || content[f.Start:f.End] != "Antonín Dvořák was born on 8 September 1841 in Nelahozeves." || f.Section != "Antonín Dvořák" {
		t.Fatalf("first fact: %+v", f)
	}
	for _, f := range r.Facts {
		if f.SourceID == "S3" && f.Verified {
			t.Errorf("single-source fact verified: %+v", f)
		}
		if n := len([]rune(f.Text)); n < MinFactChars || n > MaxFactChars {
			t.Errorf("fact length %d: %q", n, f.Text)
		}
	}
}

// TestPeopleCounts: "N people" is a population only where a place holds
// them; the dead of an attack and a town's inhabitants are not compared.
func TestPeopleCounts(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "a.example", Credibility: 0.7, Content: "Springfield is a town in Ohio with 30,000 people and a river port."},
		{ID: "S2", Domain: "b.example", Credibility: 0.7, Content: "A storm in Springfield killed 12 people in the spring of 1998."},
		{ID: "S3", Domain: "c.example", Credibility: 0.7, Content: "Springfield is home to 30,000 people along the river in Ohio."},
	})
	if len(r.Discrepancies) != 0 {
		t.Fatalf("false discrepancies: %+v", r.Discrepancies)
	}
	for _, f := range r.Facts {
		if f.SourceID != "S2" && !f.Verified {
			t.Errorf("the population two sources give is not verified: %+v", f)
		}
	}
}

func FuzzRun(f *testing.F) {
	f.Add("The Eiffel Tower is 330 metres tall.", "The Eiffel Tower is 300 metres tall.")
	f.Add("Born 8 September 1841.\n\nX", "9,999,999.5 % of 12 May")
	f.Add("We’ll see it in Chapter 13.\n\n<number> Default: 300000\n\nNew in version 3.6.", "'’ It's 3.\n10-22 22:19 root INFO 59 x.\nINFO:root:19 y")
	f.Fuzz(func(t *testing.T, a, b string) {
		srcs := []Source{{ID: "S1", Domain: "a", Content: a}, {ID: "S2", Domain: "b", Content: b, Published: date(2020)}}
		r := Run(srcs)
		for _, f := range r.Facts {
			c := srcs[0].Content
			if f.SourceID == "S2" {
				c = srcs[1].Content
			}
			if f.Start < 0 || f.End > len(c) || f.Start >= f.End {
				t.Fatalf("offsets %d-%d of %d", f.Start, f.End, len(c))
			}
		}
	})
}

// TestOpeningWordNoSubject: documentation annotates each function with the
// release that added or changed it ("New in version 3.6.", "Changed in
// version 3.7: …"); the opening word is an ordinary word the pages also
// write in lower case, so those sentences name no subject and two pages'
// annotations are no conflict. A one-word name stays a subject: two pages
// disagreeing on Verdi's birth year still are.
func TestOpeningWordNoSubject(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "docs.python.org", Credibility: 0.7, Content: "Return a new timer. New in version 3.6. Changed in version 3.7: The default value of repeat changed from 3 to 5."},
		{ID: "S2", Domain: "docs.python.org", Credibility: 0.7, Content: "Run the coroutine in a new event loop. New in version 3.7. Changed in version 3.10: The default value of debug changed from False to None."},
	})
	if len(r.Discrepancies) != 0 {
		t.Fatalf("false discrepancies: %+v", r.Discrepancies)
	}
	for _, f := range r.Facts {
		if strings.Contains(f.Text, " in version ") && f.Section != "General" {
			t.Errorf("fact %q has subject %q", f.Text, f.Section)
		}
	}
	// A label opens a reference's line ("Default: 0"); a pronoun with a
	// verb run into it names nothing ("We’ll"); a program's output shown
	// in a manual is no claim.
	r = Run([]Source{
		{ID: "S1", Domain: "nodejs.org", Credibility: 0.7, Content: "timeout <number> Default: 300000\n\nWe’ll discuss iterators in Chapter 13.\n\nINFO:root:Started at 19 seconds\n\n2010-10-22 22:19:59,773 root INFO Jackdaws love my 19 big sphinxes.\n"},
		{ID: "S2", Domain: "nodejs.org", Credibility: 0.7, Content: "maxBuffer <number> Default: 0\n\nWe’ll discuss iterators in Chapter 6.\n\nINFO:root:Started at 59 seconds\n\n2010-10-22 22:19:12,773 root INFO Jackdaws love my 59 big sphinxes.\n"},
	})
	if len(r.Discrepancies) != 0 {
		t.Fatalf("false discrepancies: %+v", r.Discrepancies)
	}
	for _, f := range r.Facts {
		if strings.Contains(f.Text, "INFO") || strings.Contains(f.Text, "Jackdaws") {
			t.Errorf("a log line is a fact: %q", f.Text)
		}
	}
	d := only(t, Run([]Source{
		{ID: "S1", Domain: "a.org", Credibility: 0.7, Content: "Verdi was born in 1813 in Le Roncole. The new opera house seats 300."},
		{ID: "S2", Domain: "b.org", Credibility: 0.7, Content: "Verdi was born in 1816 in Le Roncole."},
	}))
	if d.Topic == "" || !strings.Contains(d.Topic, "Verdi") {
		t.Fatalf("discrepancy: %+v", d)
	}
}
