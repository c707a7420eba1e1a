package passage

import (
	"strings"
	"testing"
)

// A word of the question that names the kind of the next ("connection"
// of "connection pool") is not held by a sentence that writes the next
// after another word ("memory pool"); the pair written as the question
// writes it, the next word alone, after a word of the question or in
// another form, keep it held.
func TestFindHoldsAKindOnlyAsTheQuestionPairsIt(t *testing.T) {
	q := "What is the size of the connection pool?"
	for _, c := range []struct {
		name, body string
		other      bool
	}{
		{"another kind", "The size of the lookaside memory pool is set connection by connection.", true},
		{"the pair as asked", "The memory pool and the connection pool have a size each.", false},
		{"the word alone", "Each connection takes a slot from the pool, whatever its size.", false},
		{"after a word of the question", "The size pool grows with each connection.", false},
		{"after a number", "A connection keeps 16 pools of one size.", false},
		{"after a mark", "The size of each connection's \"pool\" is fixed.", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs := []Doc{{Body: c.body}}
			found, _ := Find(q, docs, 1)
			ablated := answersAblated("kind", q, docs)
			if len(found) == 0 || len(ablated) == 0 {
				t.Fatalf("found %v, ablated %v: want the sentence", found, ablated)
			}
			if lower := found[0].Coverage < ablated[0].Coverage; lower != c.other {
				t.Errorf("coverage %.2f, %.2f with the rule off: lower = %v, want %v", found[0].Coverage, ablated[0].Coverage, lower, c.other)
			}
		})
	}
}

// A name is no kind: its words are not paired.
func TestFindPairsNoName(t *testing.T) {
	docs := []Doc{{Body: "The size of the lookaside Memory Pool is set connection by connection."}}
	q := "What is the size of the Connection Pool?"
	found, _ := Find(q, docs, 1)
	ablated := answersAblated("kind", q, docs)
	if len(found) == 0 || len(ablated) == 0 || found[0].Coverage != ablated[0].Coverage {
		t.Errorf("found %+v, ablated %+v: want one coverage", found, ablated)
	}
}

// precedes reads each word's occurrences with the word before it, as
// written; a stop word, a number or a mark stands between two words.
func TestPrecedes(t *testing.T) {
	got := precedes(`The lookaside memory pools, the "pool" and 16 pool sizes.`)
	var pools []string
	for _, w := range got["pool"] {
		pools = append(pools, w.before+"/"+w.form)
	}
	if want := "memori/pool /pool /pool"; strings.Join(pools, " ") != want {
		t.Errorf("pool's occurrences %q, want %q", strings.Join(pools, " "), want)
	}
	if w := got["size"]; len(w) != 1 || w[0].before != "pool" || w[0].form != "size" {
		t.Errorf("size's occurrences %+v, want one after pool", w)
	}
}

// A release's number in the question is held only where it is written as
// one: "Python 3.0 … December 3, 2008" holds "3" and "0" but not 3.11.0.
func TestFindHoldsAReleaseWrittenAsOne(t *testing.T) {
	q := "When was Python 3.11.0 released?"
	other := Doc{Body: "Python 3.0 was released on December 3, 2008."}
	found, _ := Find(q, []Doc{other}, 1)
	ablated := answersAblated("release", q, []Doc{other})
	if len(found) == 0 || len(ablated) == 0 || found[0].Coverage >= ablated[0].Coverage {
		t.Fatalf("found %+v, ablated %+v: want the other release held less", found, ablated)
	}
	docs := []Doc{other, {Body: "Some notes.\n\nPython 3.11.0 was released in October 2022, after 3.10."}}
	found, _ = Find(q, docs, 2)
	if len(found) == 0 || found[0].Doc != 1 {
		t.Errorf("found %+v, want the release asked about first", found)
	}
	under := Doc{Body: "Python 3.11.0\n\nIt was released on October 24, 2022, after 3.10."}
	if a := best(t, q, under); a.Coverage >= 1 || a.Coverage < 0.5 {
		t.Errorf("coverage %.2f under a heading that writes the release, want its share", a.Coverage)
	}
}

// A date given for another release is not the one asked for.
func TestValueMissingForAnotherRelease(t *testing.T) {
	q := "On what date was Python 3.11.0 first released?"
	other := []Doc{{Body: "Python 3.0 was released on December 3, 2008."}}
	found, _ := Find(q, other, MaxQuoted)
	if v := ValueMissing(q, found); v != DateValue {
		t.Errorf("another release's date: ValueMissing = %v, want a date missing", v)
	}
	Ablate["release"] = true
	found, _ = Find(q, other, MaxQuoted)
	v := ValueMissing(q, found)
	delete(Ablate, "release")
	if v != NoValue {
		t.Errorf("ablated: ValueMissing = %v, want the date given", v)
	}
	asked := []Doc{{Body: "Python 3.11.0 was released on October 24, 2022, after 3.10."}}
	found, _ = Find(q, asked, MaxQuoted)
	if v := ValueMissing(q, found); v != NoValue {
		t.Errorf("the release's own date: ValueMissing = %v, want none missing", v)
	}
}
