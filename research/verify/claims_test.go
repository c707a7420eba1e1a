package verify

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClaimsLocatedOrRejected(t *testing.T) {
	t.Parallel()
	content := "The tower was designed by  Maurice Koechlin and Émile Nouguier.\nIt is 330 metres tall — the “tallest” in Paris."
	r := Run([]Source{{ID: "S1", Domain: "a.org", Credibility: 0.6, Content: content, Claims: []Claim{
		// White space, case, curly quotes, dashes and a trailing ellipsis
		// are forgiven.
		{Text: "the tower was designed by Maurice Koechlin and Émile Nouguier", Topic: "Eiffel Tower  designer", Value: "Maurice Koechlin"},
		{Text: `"It is 330 metres tall - the "tallest" in Paris…"`, Topic: "Eiffel Tower height", Value: "330 metres"},
		// A word the source does not have is not.
		{Text: "The tower was designed by Gustave Eiffel.", Topic: "Eiffel Tower designer", Value: "Gustave Eiffel"},
		{Text: "tall", Topic: "x"},
		{Text: "", Topic: "x"},
	}}})
	if len(r.Facts) != 2 {
		t.Fatalf("facts %+v", r.Facts)
	}
	f := r.Facts[0]
	if content[f.Start:f.End] != "The tower was designed by  Maurice Koechlin and Émile Nouguier." || f.Text != "The tower was designed by Maurice Koechlin and Émile Nouguier." {
		t.Fatalf("first fact %q from %q", f.Text, content[f.Start:f.End])
	}
	if f.Method != MethodModel || f.Section != "Eiffel Tower designer" || f.Value != "Maurice Koechlin" || f.Confidence != 0.6 {
		t.Fatalf("first fact %+v", f)
	}
	if g := r.Facts[1]; content[g.Start:g.End] != "It is 330 metres tall — the “tallest” in Paris." {
		t.Fatalf("second fact %q", content[g.Start:g.End])
	}
	if len(r.Rejected) != 3 || r.Rejected[0].Reason != "the quote is not in the source text" || !strings.Contains(r.Rejected[1].Reason, "10 to 500 characters") {
		t.Fatalf("rejected %+v", r.Rejected)
	}
}

func TestNameConflictOnModelTopic(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "old.example", Credibility: 0.6, Published: date(2001), Content: "The tower's designer was Gustave Eiffel, an engineer.",
			Claims: []Claim{{Text: "The tower's designer was Gustave Eiffel", Topic: "Eiffel Tower designer", Value: "Gustave Eiffel"}}},
		{ID: "S2", Domain: "new.example", Credibility: 0.6, Published: date(2019), Content: "Its design is credited to Maurice Koechlin.",
			Claims: []Claim{{Text: "Its design is credited to Maurice Koechlin.", Topic: "eiffel tower designer", Value: "Maurice Koechlin"}}},
		// "Eiffel" names the same person as "Gustave Eiffel": support, not conflict.
		{ID: "S3", Domain: "third.example", Credibility: 0.6, Published: date(2001), Content: "Eiffel designed the tower himself, some say.",
			Claims: []Claim{{Text: "Eiffel designed the tower himself", Topic: "Eiffel Tower designer", Value: "Eiffel"}}},
		// A source the model gave no claims for is read extractively.
		{ID: "S4", Domain: "fourth.example", Credibility: 0.6, Content: "The Eiffel Tower opened in 1889."},
	})
	d := only(t, r)
	if d.Strategy != Recency || fact(r, d.Winner).SourceID != "S2" || !strings.HasPrefix(d.Resolution, "Maurice Koechlin") || len(d.FactIDs) != 3 {
		t.Fatalf("discrepancy %+v", d)
	}
	if !strings.HasPrefix(d.Topic, "Eiffel Tower designer (name)") {
		t.Fatalf("topic %q", d.Topic)
	}
	for _, f := range r.Facts {
		switch f.SourceID {
		case "S1", "S3":
			if !f.Verified || f.Method != MethodModel {
				t.Errorf("Eiffel facts support each other across domains: %+v", f)
			}
		case "S4":
			if f.Method != MethodExtractive {
				t.Errorf("S4 read extractively: %+v", f)
			}
		}
	}
}

func TestModelNumbersCompareAsNumbers(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "a.example", Credibility: 0.9, Content: "Height: the structure measures 1,083 ft.",
			Claims: []Claim{{Text: "the structure measures 1,083 ft", Topic: "Eiffel Tower height (feet)", Value: "1,083 ft"}}},
		{ID: "S2", Domain: "b.example", Credibility: 0.5, Content: "It stands 1083 ft high.",
			Claims: []Claim{{Text: "It stands 1083 ft high.", Topic: "Eiffel Tower height (feet)", Value: "1083 ft"}}},
		{ID: "S3", Domain: "c.example", Credibility: 0.5, Content: "It stands 1,063 ft high.",
			Claims: []Claim{{Text: "It stands 1,063 ft high.", Topic: "Eiffel Tower height (feet)", Value: "1,063 ft"}}},
	})
	d := only(t, r)
	if d.Strategy != Credibility || fact(r, d.Winner).SourceID != "S1" {
		t.Fatalf("discrepancy %+v", d)
	}
	if !r.Facts[0].Verified || r.Facts[2].Verified {
		t.Fatalf("1,083 = 1083 across two domains: %+v", r.Facts)
	}
}

func FuzzLocate(f *testing.F) {
	f.Add("The tower is  330 metres tall.", 4, 20)
	f.Add("“Quoted” — text\xff here.", 0, 9)
	f.Add("It is 1330 metres tall.", 6, 16)
	f.Fuzz(func(t *testing.T, text string, from, to int) {
		if from < 0 || to > len(text) || from >= to {
			return
		}
		x := newIndex(text)
		start, end, ok := x.locate(text[from:to])
		if ok && (start < 0 || end > len(text) || start >= end) {
			t.Fatalf("range %d-%d of %d", start, end, len(text))
		}
		if !utf8.ValidString(text) || !utf8.RuneStart(text[from]) || (to < len(text) && !utf8.RuneStart(text[to])) {
			return
		}
		if ok && (!utf8.RuneStart(text[start]) || (end < len(text) && !utf8.RuneStart(text[end]))) {
			t.Fatalf("range %d-%d cuts a rune", start, end)
		}
		// A substring on word edges is always found.
		q := normQuote(text[from:to])
		wordy := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
		before, _ := utf8.DecodeLastRuneInString(text[:from])
		after, _ := utf8.DecodeRuneInString(text[to:])
		first, _ := utf8.DecodeRuneInString(text[from:])
		last, _ := utf8.DecodeLastRuneInString(text[:to])
		// (Only for quotes that begin and end with letters: a number's
		// edges also depend on the marks around it.)
		onEdges := unicode.IsLetter(first) && unicode.IsLetter(last) && !(from > 0 && wordy(before)) && !(to < len(text) && wordy(after))
		if len(q) > 0 && onEdges && strings.TrimFunc(text[from:to], unicode.IsSpace) == text[from:to] && !ok {
			t.Fatalf("substring %q not found in %q", text[from:to], text)
		}
		if ok && !strings.Contains(string(normQuote(text[start:end])), string(q)) {
			t.Fatalf("found %q for %q", text[start:end], text[from:to])
		}
	})
}

func TestLocateWordEdges(t *testing.T) {
	t.Parallel()
	text := "It is 1330 metres tall. It stands 330.5 m high."
	x := newIndex(text)
	if _, _, ok := x.locate("330 metres tall"); ok {
		t.Error("found inside 1330")
	}
	if s, e, ok := x.locate("It stands 330"); ok {
		t.Errorf("found %q inside 330.5", text[s:e])
	}
	if s, e, ok := x.locate("is 1330 metres tall"); !ok || text[s:e] != "is 1330 metres tall." {
		t.Errorf("whole words not found: %d-%d %v", s, e, ok)
	}
}

func TestReviewCases(t *testing.T) {
	t.Parallel()
	// A model value with a role word still compares with a bare one.
	r := Run([]Source{
		{ID: "S1", Domain: "a.example", Content: "Verdi was born in 1813.", Claims: []Claim{{Text: "Verdi was born in 1813.", Topic: "Verdi birth year", Value: "born in 1813"}}},
		{ID: "S2", Domain: "b.example", Content: "Verdi was born in 1814.", Claims: []Claim{{Text: "Verdi was born in 1814.", Topic: "Verdi birth year", Value: "1814"}}},
	})
	if len(r.Discrepancies) != 1 || r.Facts[0].Verified {
		t.Errorf("role on a model value: %+v %+v", r.Discrepancies, r.Facts)
	}
	// Values of different kinds on one topic do not verify each other.
	r = Run([]Source{
		{ID: "S1", Domain: "a.example", Content: "It is 330 m tall.", Claims: []Claim{{Text: "It is 330 m tall.", Topic: "Eiffel Tower height", Value: "330 m"}}},
		{ID: "S2", Domain: "b.example", Content: "It is 300 metres tall.", Claims: []Claim{{Text: "It is 300 metres tall.", Topic: "Eiffel Tower height", Value: "300 metres"}}},
	})
	if r.Facts[0].Verified || r.Facts[1].Verified {
		t.Errorf("different kinds verified each other: %+v", r.Facts)
	}
	// The year in a name is not a value the facts agree on.
	r = Run([]Source{
		{ID: "S1", Domain: "a.example", Content: "The 1904 Tour de France was won by Maurice Garin."},
		{ID: "S2", Domain: "b.example", Content: "The 1904 Tour de France was won by Henri Cornet."},
	})
	for _, f := range r.Facts {
		if f.Verified || len(f.values) != 0 || f.entity != "1904 tour de france" {
			t.Errorf("1904 Tour de France: %+v values %+v entity %q", f, f.values, f.entity)
		}
	}
	// A numeral before a comma is not part of the name after it.
	if e, _ := entity("In 1813, Verdi was born in Le Roncole."); e != "verdi" {
		t.Errorf("entity %q", e)
	}
	// A date's numbers do not use up the role window.
	if vs := values("Verdi was born on 10 October 1813, in Le Roncole."); len(vs) != 2 || vs[1].kind != "year" || vs[1].role != "born" {
		t.Errorf("values %+v", vs)
	}
	// A source whose claims were all rejected is read extractively.
	r = Run([]Source{{ID: "S1", Domain: "a.example", Content: "Verdi was born in 1813.", Claims: []Claim{{Text: "Verdi was born in 1999."}}}})
	if len(r.Facts) != 1 || r.Facts[0].Method != MethodExtractive || len(r.Rejected) != 1 {
		t.Errorf("fallback: %+v %+v", r.Facts, r.Rejected)
	}
}

// A source that says a value changed from one to another (written
// independently of the sources that give either) makes the newer one
// stand: the sides state what was and what is, not a disagreement. The
// sentence giving both counts for neither side.
func TestChangedValueResolves(t *testing.T) {
	t.Parallel()
	r := Run([]Source{
		{ID: "S1", Domain: "a.example", Credibility: 0.6, Content: "AcmeDB has used a default page size of 1024 bytes since its file format was designed in 2003."},
		{ID: "S2", Domain: "b.example", Credibility: 0.6, Content: "In AcmeDB, the default page size for new database files is now 4096 bytes."},
		{ID: "S3", Domain: "c.example", Credibility: 0.6, Content: "For many years AcmeDB used a default page size of 1024 bytes, but a later release increased the default page size to 4096."},
	})
	d := only(t, r)
	if d.Strategy != Recency || fact(r, d.Winner).SourceID != "S2" || !strings.HasPrefix(d.Resolution, "4096 bytes: the last quote says the value changed from 1024 bytes to it") {
		t.Fatalf("discrepancy %+v", d)
	}
	if n := len(d.FactIDs); n != 3 || fact(r, d.FactIDs[n-1]).SourceID != "S3" {
		t.Fatalf("facts quoted %v: want S1's, S2's and the change S3 states, last", d.FactIDs)
	}
	if !strings.Contains(d.Topic, "default, page, size") {
		t.Fatalf("topic %q: want the words every side says", d.Topic)
	}
}

// A range is no change, and a change to a number no side gives resolves
// nothing.
func TestChangedReadsChangesOnly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    string
		from []float64
		to   float64
		ok   bool
	}{
		{"The page size can be any power of two from 512 to 65536.", nil, 0, false},
		{"The limit was 10, but version 2 raised it to 20.", []float64{10, 2}, 20, true},
		{"In 2016 the default was changed from 1024 to 4096 bytes.", []float64{2016, 1024}, 4096, true},
		{"It grew to 5 and stayed at 5.", nil, 5, true},
		{"The cap was 5 and was raised to 5 again.", nil, 0, false},
		{"Nothing changed here.", nil, 0, false},
	} {
		from, to, ok := changed(c.s)
		if ok != c.ok || to != c.to || !slices.Equal(from, c.from) {
			t.Errorf("changed(%q) = %v, %v, %v; want %v, %v, %v", c.s, from, to, ok, c.from, c.to, c.ok)
		}
	}
}

// Values the same pages give each are a list, not a disagreement: a
// page and its copy elsewhere (a page's HTML and its source) both list
// the protocols a library may support.
func TestListedValuesAreNoConflict(t *testing.T) {
	t.Parallel()
	page := "HAS_TLSv1_2: Whether the AcmeSSL library is built with support for the TLS 1.2 protocol.\n\nHAS_TLSv1_3: Whether the AcmeSSL library is built with support for the TLS 1.3 protocol."
	r := Run([]Source{
		{ID: "S1", Domain: "docs.example", Credibility: 0.6, Content: page},
		{ID: "S2", Domain: "mirror.example", Credibility: 0.6, Content: page},
	})
	if len(r.Facts) != 4 {
		t.Fatalf("facts %+v: want each sentence of both copies", r.Facts)
	}
	if len(r.Discrepancies) != 0 {
		t.Fatalf("discrepancies %+v: the pages list values, they do not disagree", r.Discrepancies)
	}
	// Another page giving one of them alone does disagree with the
	// other value.
	r = Run([]Source{
		{ID: "S1", Domain: "docs.example", Credibility: 0.6, Content: "Whether the AcmeSSL library is built with support for the TLS 1.2 protocol."},
		{ID: "S2", Domain: "mirror.example", Credibility: 0.6, Content: "Whether the AcmeSSL library is built with support for the TLS 1.3 protocol."},
	})
	if len(r.Discrepancies) != 1 {
		t.Fatalf("discrepancies %+v: want one between two pages", r.Discrepancies)
	}
}

// A title, a heading and a listing's line are no facts: a claim is a
// sentence, in words.
func TestTitlesAndListingsAreNoFacts(t *testing.T) {
	t.Parallel()
	r := Run([]Source{{ID: "S1", Domain: "docs.example", Credibility: 0.6, Content: "AcmeDB 3.11.0 release candidate 2\n\n" +
		"AcmeDB Changes From Version 3.5.9 To 3.6.0\n\n" +
		"1234567... M fileY :000000 100644 0000000... bcd3456...\n\n" +
		"AcmeDB 3.11.0 was released in 2022, after two release candidates."}})
	if len(r.Facts) != 1 || !strings.HasPrefix(r.Facts[0].Text, "AcmeDB 3.11.0 was released") {
		t.Fatalf("facts %+v: want the one sentence", r.Facts)
	}
}
