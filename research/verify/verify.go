// Package verify extracts facts from the sources a research read and checks
// them against each other (seed 001 §5–6): a fact is verified when sources
// from at least two domains state it; facts on the same topic that give
// different numbers or dates form a discrepancy, resolved by consensus
// (three or more sources against one), recency (the newer source), or
// credibility (the more credible source), and otherwise left as
// uncertainty with both values stated.
//
// Extraction is extractive and deterministic: a fact is a sentence of a
// source that carries a claim (a number, a date, a comparison or a named
// entity), with its byte offsets in the source text. Its topic is the
// entity it is about plus the words that say what is claimed, without the
// value; two facts are on the same topic when their entities match and
// those words mostly agree.
package verify

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/research/internal/textseg"
)

// Source is what verification needs to know about a source read.
type Source struct {
	ID          string
	Domain      string
	Credibility float64
	Published   *time.Time
	Content     string
}

// Fact is a claim taken from a source.
type Fact struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	SourceID string `json:"source_id"`
	// Start and End are byte offsets of Text in the source's content.
	Start      int     `json:"start"`
	End        int     `json:"end"`
	Confidence float64 `json:"confidence"`
	Verified   bool    `json:"verified"`
	// Section is the topic's entity, used to group facts in the report.
	Section string `json:"section"`
	// SupportedBy lists the other sources that state the same thing.
	SupportedBy []string `json:"supported_by,omitempty"`

	entity string
	terms  map[string]bool
	values []value
}

// Discrepancy is a set of facts on one topic that disagree.
type Discrepancy struct {
	ID      string   `json:"id"`
	Topic   string   `json:"topic"`
	FactIDs []string `json:"fact_ids"`
	// Strategy is consensus, recency, credibility or uncertainty.
	Strategy string `json:"strategy"`
	// Resolution says which value stands and why, or both with context.
	Resolution string `json:"resolution"`
	// Winner is the fact whose value stands ("" for uncertainty).
	Winner     string  `json:"winner,omitempty"`
	Confidence float64 `json:"confidence"`
}

// Strategies.
const (
	Consensus   = "consensus"
	Recency     = "recency"
	Credibility = "credibility"
	Uncertainty = "uncertainty"
)

// Limits on a fact's text (seed 001 §5).
const (
	MinFactChars = 10
	MaxFactChars = 500
)

// MaxFactsPerSource keeps long pages from flooding the fact list.
const MaxFactsPerSource = 40

// Result is verification's output.
type Result struct {
	Facts         []Fact        `json:"facts"`
	Discrepancies []Discrepancy `json:"discrepancies"`
}

// Run extracts facts from the sources and verifies them.
func Run(sources []Source) Result {
	var facts []Fact
	for _, s := range sources {
		facts = append(facts, extract(s)...)
	}
	for i := range facts {
		facts[i].ID = "F" + strconv.Itoa(i+1)
	}
	bySource := map[string]Source{}
	for _, s := range sources {
		bySource[s.ID] = s
	}
	disc := check(facts, bySource)
	return Result{Facts: facts, Discrepancies: disc}
}

// extract takes the claim-bearing sentences of a source.
func extract(s Source) []Fact {
	var out []Fact
	for _, sp := range textseg.Spans(s.Content) {
		text := s.Content[sp.Start:sp.End]
		n := utf8.RuneCountInString(text)
		if n < MinFactChars || n > MaxFactChars {
			continue
		}
		ent, section := entity(text)
		if !claim(text, ent) {
			continue
		}
		f := Fact{Text: strings.Join(strings.Fields(text), " "), SourceID: s.ID, Start: sp.Start, End: sp.End, Confidence: s.Credibility, entity: ent, Section: section}
		f.values = values(text)
		f.terms = terms(text, f.entity, f.values)
		out = append(out, f)
		if len(out) == MaxFactsPerSource {
			break
		}
	}
	return out
}

var comparison = regexp.MustCompile(`(?i)\b(more|less|fewer|larger|smaller|higher|lower|greater|first|last|before|after|than|most|least|largest|smallest|highest|lowest|oldest|newest|earliest|latest|increase[ds]?|decrease[ds]?)\b`)

// claim reports a sentence that asserts something checkable: a number, a
// comparison, or an entity (ent, from entity).
func claim(s, ent string) bool {
	return ent != "" || strings.IndexFunc(s, unicode.IsDigit) >= 0 || comparison.MatchString(s)
}

var leadingArticle = map[string]bool{"the": true, "a": true, "an": true, "this": true, "that": true, "in": true, "on": true, "at": true, "by": true, "its": true, "his": true, "her": true, "their": true}

// entity finds what a sentence is about: the first run of capitalised
// words, skipping a sentence-initial article or preposition and preferring
// a run that is more than the sentence's first word ("Today the Eiffel
// Tower …" is about the Eiffel Tower). It returns the key (lower case) and
// the display form.
func entity(s string) (string, string) {
	var runs [][]string
	var run []string
	starts := []int{}
	flush := func() {
		for len(run) > 0 && strings.ToLower(run[len(run)-1]) == run[len(run)-1] {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			runs = append(runs, run)
		}
		run = nil
	}
	ws := strings.Fields(s)
	for i, raw := range ws {
		w := strings.Trim(raw, `.,;:!?"'()[]“”‘’`)
		if w == "" {
			flush()
			continue
		}
		r, _ := utf8.DecodeRuneInString(w)
		switch {
		case i == 0 && leadingArticle[strings.ToLower(w)]:
		case unicode.IsUpper(r) && !isNumeric(w):
			if len(run) == 0 {
				starts = append(starts, i)
			}
			run = append(run, w)
		case len(run) > 0 && (w == "of" || w == "de" || w == "von" || w == "van"):
			run = append(run, w)
		default:
			flush()
		}
		if strings.ContainsAny(raw, ",;:") {
			flush()
		}
	}
	flush()
	if len(runs) == 0 {
		return "", "General"
	}
	best := runs[0]
	if len(starts) > 0 && starts[0] == 0 && len(runs[0]) == 1 && len(runs) > 1 {
		best = runs[1]
	}
	display := strings.Join(best, " ")
	return strings.ToLower(display), display
}

func isNumeric(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) && r != ',' && r != '.' }) < 0
}

// value is a number in a fact with its kind: "year", or the unit word that
// follows it ("metres", "%", "people"), or "" for a bare number.
type value struct {
	kind string
	num  float64
	text string
}

var number = regexp.MustCompile(`(\d[\d,]*(?:\.\d+)?)\s*(%|[A-Za-z]+)?`)

var months = map[string]bool{"january": true, "february": true, "march": true, "april": true, "may": true, "june": true, "july": true, "august": true, "september": true, "october": true, "november": true, "december": true}

func values(s string) []value {
	var out []value
	for _, m := range number.FindAllStringSubmatch(s, -1) {
		n, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err != nil {
			continue
		}
		unit := strings.ToLower(m[2])
		kind := unit
		switch {
		case months[unit]:
			kind = "day"
			n = n*100 + float64(monthIndex(unit))
		case !strings.Contains(m[1], ",") && !strings.Contains(m[1], ".") && n >= 1000 && n <= 2100 && (unit == "" || !unitWord(unit)):
			kind = "year"
		case !unitWord(unit):
			kind = ""
		}
		text := strings.TrimSpace(m[0])
		if kind == "year" || kind == "" {
			text = m[1]
		}
		out = append(out, value{kind: kind, num: n, text: text})
	}
	return out
}

func monthIndex(m string) int {
	for i, name := range []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"} {
		if name == m {
			return i + 1
		}
	}
	return 0
}

// unitWord reports a word that measures the number before it rather than
// starting the next phrase.
func unitWord(w string) bool {
	if w == "%" {
		return true
	}
	if w == "" || english.IsStopWord(w) {
		return false
	}
	return len(w) <= 12
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// monthTerms are the analysed month names: dates are values, not claim
// words.
var monthTerms = func() map[string]bool {
	m := map[string]bool{}
	for name := range months {
		analyze.TermsFunc(name, func(t string) { m[t] = true })
	}
	return m
}()

// terms are the analysed content words (kb/analyze: stemmed, no stop
// words, CJK bigrams) that say what is claimed: not the entity, not the
// values and their units.
func terms(s, ent string, vals []value) map[string]bool {
	skip := map[string]bool{}
	analyze.TermsFunc(ent, func(t string) { skip[t] = true })
	for _, v := range vals {
		analyze.TermsFunc(v.text, func(t string) { skip[t] = true })
	}
	out := map[string]bool{}
	analyze.TermsFunc(s, func(t string) {
		if !skip[t] && !monthTerms[t] && !isNumeric(t) && len(t) >= 3 {
			out[t] = true
		}
	})
	return out
}

// sameTopic: same entity and mostly the same claim words.
func sameTopic(a, b *Fact) bool {
	if a.entity == "" || a.entity != b.entity {
		return false
	}
	inter := 0
	for t := range a.terms {
		if b.terms[t] {
			inter++
		}
	}
	small := min(len(a.terms), len(b.terms))
	return small > 0 && inter >= 1 && float64(inter) >= 0.5*float64(small)
}

// keyValue is the value a topic's facts are compared on: the first value
// of the kind they share.
func keyValue(f *Fact, kind string) (value, bool) {
	for _, v := range f.values {
		if v.kind == kind {
			return v, true
		}
	}
	return value{}, false
}

// check groups facts by topic, marks the ones several domains state, and
// turns disagreeing values into discrepancies.
func check(facts []Fact, sources map[string]Source) []Discrepancy {
	// Union facts on the same topic from different sources.
	parent := make([]int, len(facts))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	// Only facts about the same entity can share a topic: compare within
	// those buckets, not all pairs.
	byEntity := map[string][]int{}
	for i := range facts {
		if e := facts[i].entity; e != "" {
			byEntity[e] = append(byEntity[e], i)
		}
	}
	for _, b := range byEntity {
		for x, i := range b {
			for _, j := range b[x+1:] {
				if facts[i].SourceID != facts[j].SourceID && sameTopic(&facts[i], &facts[j]) {
					parent[find(i)] = find(j)
				}
			}
		}
	}
	groups := map[int][]int{}
	var roots []int
	for i := range facts {
		r := find(i)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}

	var out []Discrepancy
	lost := map[int]bool{} // facts a resolved discrepancy went against
	for _, r := range roots {
		idx := groups[r]
		if len(idx) < 2 {
			continue
		}
		kind, ok := sharedKind(facts, idx)
		if !ok {
			// No comparable value: facts of several domains saying the
			// same thing support each other.
			support(facts, idx, sources, func(int) string { return "" })
			continue
		}
		val := func(i int) string {
			v, _ := keyValue(&facts[i], kind)
			return strconv.FormatFloat(v.num, 'f', -1, 64)
		}
		support(facts, idx, sources, val)
		byValue := map[string][]int{}
		var order []string
		for _, i := range idx {
			if _, has := keyValue(&facts[i], kind); !has {
				continue
			}
			k := val(i)
			if _, seen := byValue[k]; !seen {
				order = append(order, k)
			}
			byValue[k] = append(byValue[k], i)
		}
		if len(order) < 2 {
			continue
		}
		d, winKey := resolve(facts, byValue, order, kind, sources)
		d.ID = "D" + strconv.Itoa(len(out)+1)
		out = append(out, d)
		if winKey != "" {
			for k, idx := range byValue {
				for _, i := range idx {
					lost[i] = lost[i] || k != winKey
				}
			}
		}
	}
	// Confidence: credibility, raised when verified, lowered when a
	// discrepancy went against the fact.
	for i := range facts {
		c := facts[i].Confidence
		if facts[i].Verified {
			c = min(1, c+0.15)
		}
		if lost[i] {
			c = max(0, c-0.3)
		}
		facts[i].Confidence = round2(c)
	}
	return out
}

// sharedKind is the value kind every fact in the group that has one
// agrees on, preferring years, then units, then bare numbers.
func sharedKind(facts []Fact, idx []int) (string, bool) {
	count := map[string]int{}
	for _, i := range idx {
		seen := map[string]bool{}
		for _, v := range facts[i].values {
			if !seen[v.kind] {
				seen[v.kind] = true
				count[v.kind]++
			}
		}
	}
	best, bestN := "", 0
	for k, n := range count {
		if n > bestN || n == bestN && k < best {
			best, bestN = k, n
		}
	}
	return best, bestN >= 2
}

// support marks facts whose value (or, with no value, whose topic) is
// stated by sources of at least two domains.
func support(facts []Fact, idx []int, sources map[string]Source, val func(int) string) {
	for _, i := range idx {
		domains := map[string]bool{sources[facts[i].SourceID].Domain: true}
		var by []string
		for _, j := range idx {
			if i == j || facts[j].SourceID == facts[i].SourceID || val(i) != val(j) {
				continue
			}
			domains[sources[facts[j].SourceID].Domain] = true
			by = appendUnique(by, facts[j].SourceID)
		}
		facts[i].SupportedBy = by
		facts[i].Verified = len(domains) >= 2
	}
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// resolve decides which value stands; it returns the discrepancy and the
// winning value's key ("" when unresolved).
func resolve(facts []Fact, byValue map[string][]int, order []string, kind string, sources map[string]Source) (Discrepancy, string) {
	type side struct {
		key     string
		idx     []int
		sources map[string]bool
		newest  *time.Time
		cred    float64
		text    string
	}
	var sides []*side
	for _, k := range order {
		s := &side{key: k, idx: byValue[k], sources: map[string]bool{}}
		for _, i := range s.idx {
			src := sources[facts[i].SourceID]
			s.sources[src.ID] = true
			if src.Published != nil && (s.newest == nil || src.Published.After(*s.newest)) {
				t := *src.Published
				s.newest = &t
			}
			s.cred = max(s.cred, src.Credibility)
		}
		v, _ := keyValue(&facts[s.idx[0]], kind)
		s.text = v.text
		sides = append(sides, s)
	}
	d := Discrepancy{Topic: topicLabel(&facts[sides[0].idx[0]], kind)}
	for _, s := range sides {
		for _, i := range s.idx {
			d.FactIDs = append(d.FactIDs, facts[i].ID)
		}
	}
	sort.SliceStable(sides, func(a, b int) bool { return len(sides[a].sources) > len(sides[b].sources) })
	stated := func() string {
		var parts []string
		for _, s := range sides {
			parts = append(parts, fmt.Sprintf("%s (%s)", s.text, plural(len(s.sources), "source")))
		}
		return strings.Join(parts, " vs ")
	}()
	win := func(s *side, strategy, why string, conf float64) (Discrepancy, string) {
		d.Strategy, d.Winner, d.Confidence = strategy, facts[s.idx[0]].ID, round2(conf)
		d.Resolution = fmt.Sprintf("%s: %s; %s", s.text, why, stated)
		return d, s.key
	}
	// Consensus: three or more sources against one.
	if len(sides) == 2 && len(sides[0].sources) >= 3 && len(sides[1].sources) == 1 {
		n := len(sides[0].sources)
		return win(sides[0], Consensus, fmt.Sprintf("%d sources agree against 1", n), float64(n)/float64(n+1))
	}
	// Recency: every side dated, one strictly newest.
	dated := true
	for _, s := range sides {
		dated = dated && s.newest != nil
	}
	if dated {
		byDate := append([]*side(nil), sides...)
		sort.SliceStable(byDate, func(a, b int) bool { return byDate[a].newest.After(*byDate[b].newest) })
		if byDate[0].newest.After(*byDate[1].newest) {
			return win(byDate[0], Recency, fmt.Sprintf("the newer source (%s) wins over %s", byDate[0].newest.Format("2006-01-02"), byDate[1].newest.Format("2006-01-02")), 0.7)
		}
	}
	// Credibility: one side's best source clearly more credible.
	byCred := append([]*side(nil), sides...)
	sort.SliceStable(byCred, func(a, b int) bool { return byCred[a].cred > byCred[b].cred })
	if diff := byCred[0].cred - byCred[1].cred; diff >= 0.1 {
		return win(byCred[0], Credibility, fmt.Sprintf("the more credible source (%.2f vs %.2f) wins", byCred[0].cred, byCred[1].cred), min(0.9, 0.55+diff))
	}
	d.Strategy, d.Confidence = Uncertainty, 0.3
	d.Resolution = "unresolved: the sources disagree and none is newer, more credible or backed by a consensus; " + stated
	return d, ""
}

// topicLabel names a topic: the entity, the kind of value, and the first
// few words that say what is claimed ("Giuseppe Verdi (year): born, Roncole").
func topicLabel(f *Fact, kind string) string {
	label := f.Section
	if kind != "" {
		label += " (" + kind + ")"
	}
	var words []string
	seen := map[string]bool{}
	for _, w := range wordRE.FindAllString(f.Text, -1) {
		ts := analyze.Terms(w)
		if len(ts) == 0 || !f.terms[ts[0]] || seen[ts[0]] {
			continue
		}
		seen[ts[0]] = true
		words = append(words, w)
		if len(words) == 3 {
			break
		}
	}
	if len(words) > 0 {
		label += ": " + strings.Join(words, ", ")
	}
	return label
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return strconv.Itoa(n) + " " + w + "s"
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }
