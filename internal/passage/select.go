package passage

import (
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry/kb/analyze"
)

// Query is what passages are chosen for: analysed terms with weights.
type Query struct{ weight map[string]float64 }

// questionWeight is a question's term's weight (a further text's are
// Weights.Further); minWords is the fewest words of a unit that is not a
// fragment (Weights.FragmentShare).
const (
	questionWeight = 1.0
	minWords       = 4
)

// NewQuery is a query for question, with the terms of further texts that
// the question lacks at half weight.
func NewQuery(question string, further ...string) Query {
	q := Query{weight: map[string]float64{}}
	analyze.TermsFunc(question, func(t string) { q.weight[t] = questionWeight })
	for _, f := range further {
		analyze.TermsFunc(f, func(t string) {
			if _, ok := q.weight[t]; !ok {
				q.weight[t] = Weights.Further
			}
		})
	}
	return q
}

// Gap marks text left out between two chosen windows.
const Gap = "\n…\n"

// Select returns at most n bytes of text: all of it when it fits, else
// the sentence windows that bear most on q, in document order, Gap
// between windows that are not adjacent. A window is a sentence with
// the heading it sits under, the sentence that heading opens with, and
// its neighbours in the same block as the budget allows; sentences are
// ranked by the weight of the query's terms they hold, each weighed by
// its rarity in this text (a term on every line tells nothing apart),
// damped for long sentences. When no sentence holds a query term, it
// returns the text's beginning.
func Select(text string, q Query, n int) string {
	if len(text) <= n {
		return text
	}
	if n <= 0 {
		return ""
	}
	us := Units(text)
	scores := score(us, q)
	order := make([]int, 0, len(us))
	for i, s := range scores {
		if s > 0 {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return clip(text, n)
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	chosen := map[int]bool{}
	used := 0
	take := func(i int) bool {
		if i < 0 || i >= len(us) || chosen[i] {
			return false
		}
		cost := len(us[i].Text) + len(Gap)
		if us[i].Kind == Code {
			cost += len("```\n") * 2 // its run's fences, at most
		}
		if used+cost > n {
			return false
		}
		chosen[i] = true
		used += cost
		return true
	}
	for _, i := range order {
		if !take(i) {
			if len(chosen) == 0 {
				// The best sentence alone is over the budget: its start.
				return clip(us[i].Text, n)
			}
			continue
		}
		if strings.HasSuffix(us[i].Text, ":") {
			take(i + 1) // what it introduces: "… is equivalent to:" and the line after
		}
		if h := us[i].Heading; h >= 0 {
			take(h)
			if h+1 < i && us[h+1].Heading == h && us[h+1].Kind == Sentence {
				// The sentence a heading or a term opens with says what
				// it is ("-x: When recording the commit, append a line
				// …"), whichever of its sentences matched.
				take(h + 1)
			}
		}
		for _, j := range []int{i + 1, i - 1} {
			if j >= 0 && j < len(us) && us[j].Block == us[i].Block && us[j].Kind != Heading {
				take(j)
			}
		}
	}
	return clip(render(us, chosen), n)
}

// score weighs each unit against q.
func score(us []Unit, q Query) []float64 {
	own := make([]map[string]bool, len(us))
	df := map[string]int{}
	for i, u := range us {
		own[i] = map[string]bool{}
		analyze.TermsFunc(u.Text, func(t string) { own[i][t] = true })
	}
	for i, u := range us {
		seen := map[string]bool{}
		for t := range own[i] {
			seen[t] = true
		}
		if u.Heading >= 0 {
			for t := range own[u.Heading] {
				seen[t] = true
			}
		}
		for t := range seen {
			df[t]++
		}
	}
	n := float64(len(us))
	out := make([]float64, len(us))
	for i, u := range us {
		var v float64
		for t, w := range q.weight {
			idf := math.Log(1 + n/float64(max(1, df[t])))
			switch {
			case own[i][t]:
				v += w * idf
			case u.Heading >= 0 && own[u.Heading][t]:
				v += Weights.HeadingShare * w * idf
			}
		}
		if u.Kind != Sentence || len(strings.Fields(u.Text)) < minWords {
			// A heading, a line of code or a table row alone answers
			// little; it comes with the sentence it belongs to.
			v *= Weights.FragmentShare
		}
		out[i] = v / (1 + math.Log1p(float64(len(strings.Fields(u.Text)))/Weights.LongSentence))
	}
	return out
}

// render joins the chosen units in document order: sentences of one block
// on one line, a heading or a code line on a line of its own, a run of
// code lines fenced ("```" before and after: a model reads them as code,
// as the text had them), Gap where units were left out.
func render(us []Unit, chosen map[int]bool) string {
	var idx []int
	for i := range chosen {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var b strings.Builder
	code := false // in a fenced run of code lines
	for k, i := range idx {
		if k > 0 {
			prev := idx[k-1]
			if code && (us[i].Kind != Code || i != prev+1) {
				b.WriteString("\n```")
				code = false
			}
			switch {
			case i != prev+1:
				b.WriteString(Gap)
			case us[i].Kind == Sentence && us[prev].Kind == Sentence && us[i].Block == us[prev].Block:
				b.WriteByte(' ')
			default:
				b.WriteByte('\n')
			}
		} else if i > 0 {
			b.WriteString(strings.TrimPrefix(Gap, "\n"))
		}
		if us[i].Kind == Code && !code {
			b.WriteString("```\n")
			code = true
		}
		b.WriteString(us[i].Text)
	}
	if code {
		b.WriteString("\n```")
	}
	return b.String()
}

// clip cuts s to at most n bytes, at a space when there is one in its
// last fifth, else at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > n*4/5 {
		cut = sp
	}
	return strings.TrimSpace(s[:cut])
}
