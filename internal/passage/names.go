package passage

import (
	"regexp"
	"slices"
	"strings"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// missingMarked lists the marked names of a question (Marked) whose
// words no one document holds together, in its title or its text. A
// name's words count apart: "Thread Pool" is missing from a document
// that writes only "threadpool" (the finder's joined terms are not
// sought here). But a release's number ("3.11.0", "v7.4") is held only
// where it is written as one (releaseRE): "Python 3.11.0" is not held by a
// page on Python 3.0 that says "11" and "0" elsewhere. (Any word of dots
// or marks held so, "Cargo.toml" as "!build/keep.txt", lost answers to
// questions whose file names were the user's own.)
func (f *finder) missingMarked(question string) []string {
	names := Marked(question)
	if len(names) == 0 {
		return nil
	}
	docs := f.held()
	var out []string
	for _, w := range names {
		ts := analyze.Terms(w)
		var numbers []*regexp.Regexp
		for _, field := range strings.Fields(w) {
			field = strings.TrimRight(strings.TrimLeft(field, "vV"), ".")
			if textseg.Number(field) && strings.Contains(field, ".") {
				numbers = append(numbers, releaseRE(field))
			}
		}
		found := false
		for d, held := range docs {
			all := true
			for _, t := range ts {
				all = all && holds(held, t)
			}
			for _, n := range numbers {
				all = all && (n.MatchString(f.docs[d].Title) || n.MatchString(f.docs[d].Body))
			}
			if found = all; found {
				break
			}
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

// AllWrite reports whether every doc writes a name (Marked): its words in
// a row, in the doc's title or its text ("Spirited Away", not a paragraph
// with "spirited" in one sentence and "away" in another). It stops at the
// first doc that does not.
func AllWrite(name string, docs []Doc) bool {
	ts := analyze.Terms(name)
	for _, d := range docs {
		if !inRow(analyze.Terms(d.Title), ts) && !inRow(analyze.Terms(d.Body), ts) {
			return false
		}
	}
	return true
}

// inRow reports whether seq holds run, one term after another (sameTerm:
// a number also as a version, "18" as "v18").
func inRow(seq, run []string) bool {
	if len(run) == 0 {
		return false
	}
	for i := 0; i+len(run) <= len(seq); i++ {
		match := true
		for j, t := range run {
			if !sameTerm(seq[i+j], t) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// holds reports whether a document's terms hold t, a number also as a
// version ("18" in "v18", as "Node 18" is written "Node.js v18.20.4"),
// and a version also as a number ("v18" in "18").
func holds(terms map[string]bool, t string) bool {
	return terms[t] || textseg.Number(t) && terms["v"+t] || strings.HasPrefix(t, "v") && textseg.Number(t[1:]) && terms[t[1:]]
}

// sameTerm reports a document's term s the question's t: the same, or a
// number written as a version ("18" as "v18"; holds also reads a
// question's "v18" as a document's "18", sameTerm does not).
func sameTerm(s, t string) bool {
	return s == t || textseg.Number(t) && s == "v"+t
}

// releaseRE matches a release's number written as one: "3.11" in "3.11"
// or "v3.11.0", not in "13.11" or "3.110", nor in "3 of the 11".
func releaseRE(number string) *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^\p{L}\p{N}.])[vV]?` + regexp.QuoteMeta(number) + `(?:[^\p{N}]|$)`)
}

// releaseNumber is a number written with dots: numbers joined by dots.
var releaseNumber = regexp.MustCompile(`\d+(?:\.\d+)+`)

// releaseIn is releaseRE of the number written with dots that a word of
// the question writes, or nil when it writes none (or ablated:
// "release").
func releaseIn(field string) *regexp.Regexp {
	n := releaseNumber.FindString(field)
	if n == "" || Ablate["release"] {
		return nil
	}
	return releaseRE(n)
}

// otherRelease reports a sentence that writes a number with dots (a
// release's) other than the one release matches, and not that one: a
// date it gives is another release's ("Python 3.0 was released on
// December 3, 2008." for Python 3.11.0).
func otherRelease(s string, release *regexp.Regexp) bool {
	return releaseNumber.MatchString(s) && !release.MatchString(s)
}

// releaseShare is the share of a number written with dots
// (qword.release: a release's, a value's) unit i of document d holds,
// with the units of its window: whole where one of them writes it as
// one, else at the share of what stands near it (nearShare). "Python
// 3.0 was released on December 3, 2008." holds "3" and "0" but no word
// of "Python 3.11.0"; "round(0.5) is 0 and round(1.5) is 2" does not
// hold "2.5".
func (f *finder) releaseShare(d, i int, win []int, re *regexp.Regexp) float64 {
	us := f.units[d]
	in := func(j int) bool { return re.MatchString(us[j].Text) }
	if in(i) || slices.ContainsFunc(win, in) {
		return 1
	}
	return f.nearShare(d, i, in, re.MatchString(f.docs[d].Title))
}
