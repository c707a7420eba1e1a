// Package verify extracts facts from the sources a research read and checks
// them against each other: a fact is verified when sources
// from at least two domains state it; facts on the same topic that give
// different numbers or dates form a discrepancy, resolved by consensus
// (three or more sources against one), recency (the newer source), or
// credibility (the more credible source), and otherwise left as
// uncertainty with both values stated.
//
// Facts come from one of two places. A language model's claims (Source.Claims,
// from structured output) are kept only when their quote is found in the
// source text; their topic and value are the model's, so facts on the same
// model topic are compared on their values, names included. A source
// without claims is read extractively and deterministically: a fact is a
// sentence that carries a claim (a number, a date, a comparison or a named
// entity); its topic is the entity it is about plus the words that say what
// is claimed, without the value, and two such facts are on the same topic
// when their entities match and those words mostly agree. Every fact keeps
// the byte offsets of its passage in the source text and says which way it
// was found (Method).
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

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// Source is what verification needs to know about a source read.
type Source struct {
	ID          string
	Domain      string
	Credibility float64
	Published   *time.Time
	Content     string
	// Claims are the facts a language model took from this source; when
	// there are any, they replace extractive reading of it.
	Claims []Claim
}

// Claim is a fact as a language model reported it: a quote from the source
// (found there, or the claim is rejected), the topic it is about ("Eiffel
// Tower height") and the value it gives for that topic ("330 metres",
// "Gustave Eiffel").
type Claim struct {
	Text  string `json:"text"`
	Topic string `json:"topic,omitempty"`
	Value string `json:"value,omitempty"`
}

// Rejected is a claim that could not become a fact, and why.
type Rejected struct {
	SourceID string `json:"source_id"`
	Text     string `json:"text"`
	Reason   string `json:"reason"`
}

// Fact methods.
const (
	MethodExtractive = "extractive"
	MethodModel      = "model"
)

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
	// Method is how the fact was found: "model" (a language model's claim,
	// located in the source) or "extractive".
	Method string `json:"method"`
	// Value is the value a model's claim gives for its topic.
	Value string `json:"value,omitempty"`

	entity string
	// topic is the model's topic, normalised ("" for extractive facts).
	topic  string
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

// Limits on a fact's text.
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
	// Rejected lists model claims that did not become facts.
	Rejected []Rejected `json:"rejected,omitempty"`
}

// Run takes the facts of every source (its model claims, or extractively
// when it has none) and verifies them.
func Run(sources []Source) Result {
	var facts []Fact
	var rejected []Rejected
	for _, s := range sources {
		if len(s.Claims) == 0 {
			facts = append(facts, extract(s)...)
			continue
		}
		fs, rej := fromClaims(s)
		if len(fs) == 0 {
			// Every claim was thrown out: read the source as if the model
			// had given none (the facts say "extractive").
			fs = extract(s)
		}
		facts = append(facts, fs...)
		rejected = append(rejected, rej...)
	}
	for i := range facts {
		facts[i].ID = "F" + strconv.Itoa(i+1)
	}
	bySource := map[string]Source{}
	for _, s := range sources {
		bySource[s.ID] = s
	}
	disc := check(facts, bySource)
	return Result{Facts: facts, Discrepancies: disc, Rejected: rejected}
}

// fromClaims turns a source's model claims into facts: each quote must be
// found in the source text (so a fact never says what its source does not)
// and be 10–500 characters long.
func fromClaims(s Source) ([]Fact, []Rejected) {
	var out []Fact
	var rej []Rejected
	var idx *index
	seen := map[[2]int]bool{}
	for _, c := range s.Claims {
		reject := func(reason string) { rej = append(rej, Rejected{SourceID: s.ID, Text: c.Text, Reason: reason}) }
		if len(out) == MaxFactsPerSource {
			reject(fmt.Sprintf("the source already gave %d facts", MaxFactsPerSource))
			continue
		}
		if idx == nil {
			idx = newIndex(s.Content)
		}
		start, end, ok := idx.locate(c.Text)
		if !ok {
			reject("the quote is not in the source text")
			continue
		}
		text := textseg.OneLine(s.Content[start:end])
		if n := utf8.RuneCountInString(text); n < MinFactChars || n > MaxFactChars {
			reject(fmt.Sprintf("a fact is %d to %d characters; this one is %d", MinFactChars, MaxFactChars, n))
			continue
		}
		if seen[[2]int{start, end}] {
			continue // the same passage reported again (a later round): one fact
		}
		seen[[2]int{start, end}] = true
		ent, section := entity(text)
		f := Fact{Text: text, SourceID: s.ID, Start: start, End: end, Confidence: s.Credibility, Method: MethodModel, entity: ent, Section: section}
		if topic := textseg.OneLine(c.Topic); topic != "" {
			f.Section, f.topic = topic, strings.ToLower(topic)
		}
		f.Value = textseg.OneLine(c.Value)
		if f.Value != "" {
			f.values = modelValue(f.Value)
		} else {
			f.values = withoutEntity(values(text), section)
		}
		f.terms = terms(text, f.entity, f.values)
		out = append(out, f)
	}
	return out, rej
}

// modelValue reads a model's value: a number or date as extraction would
// read it, otherwise a name compared case- and punctuation-insensitively.
func modelValue(v string) []value {
	if vs := values(v); len(vs) == 1 && strings.TrimSpace(strings.Trim(v, ".,;")) != "" && len(wordRE.FindAllString(v, -1)) <= 3 {
		vs[0].role = "" // the model's topic says what the value is of
		return vs
	}
	words := wordRE.FindAllString(strings.ToLower(v), -1)
	for len(words) > 1 && leadingArticle[words[0]] {
		words = words[1:]
	}
	return []value{{kind: kindName, text: v, name: strings.Join(words, " ")}}
}

// kindName is the kind of a value that is a name, not a number.
const kindName = "name"

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
		f := Fact{Text: textseg.OneLine(text), SourceID: s.ID, Start: sp.Start, End: sp.End, Confidence: s.Credibility, Method: MethodExtractive, entity: ent, Section: section}
		f.values = withoutEntity(values(text), section)
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
// words within its first words, skipping a sentence-initial article or
// preposition, pronouns, month names and an opening word set off by a
// comma ("Historically, the Pillsbury Company …"). A numeral right before the run is part of the name ("the
// 1904 Tour de France", "the 188th Ohio Volunteer Infantry"). A name that
// first appears late in the sentence is not its subject ("The team posted
// a record … in the Conference"), so such a sentence has none. It returns
// the key (lower case) and the display form.
func entity(s string) (string, string) {
	var runs [][]string
	var run []string
	starts := []int{}
	flush := func() {
		for len(run) > 0 && nameJoiner[run[len(run)-1]] {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			runs = append(runs, run)
		} else if len(starts) > len(runs) {
			starts = starts[:len(runs)]
		}
		run = nil
	}
	ws := strings.Fields(s)
	prev, prevRaw := "", ""
	introWord := false
	base := 0 // where the main clause starts
	for i, raw := range ws {
		w := strings.Trim(raw, `.,;:!?"'()[]“”‘’`)
		if w == "" {
			flush()
			prev, prevRaw = "", ""
			continue
		}
		r, _ := utf8.DecodeRuneInString(w)
		switch lw := strings.ToLower(w); {
		case i == 0 && pronoun[lw]:
			// "It was Alabama's 13th season": the subject is whatever
			// "it" stands for, which this sentence does not say.
			return "", "General"
		case i == 0 && leadingArticle[lw]:
		case notEntity[lw]:
			flush()
		case len(run) > 0 && numeral.MatchString(w) && !strings.ContainsAny(prevRaw, ",;:") && !strings.HasPrefix(raw, "("):
			// "State Road 997", "Series 16": a number that ends a name.
			run = append(run, w)
		case unicode.IsUpper(r) && !isNumeric(w):
			if len(run) == 0 {
				start := i
				if numeral.MatchString(prev) && !strings.ContainsAny(prevRaw, ",;:") {
					run = append(run, prev)
					start--
				}
				starts = append(starts, start)
			}
			run = append(run, w)
		case len(run) > 0 && nameJoiner[w]:
			run = append(run, w)
		default:
			flush()
		}
		if strings.HasSuffix(raw, ",") && !strings.ContainsAny(raw, `"“”'`) && i >= base+2 && len(starts) > 0 && starts[0] == base && firstRunLen(runs, run) == 1 && opening(ws[base:]) {
			// "Standing 330 metres tall, the Eiffel Tower …", "Born in
			// 1813, Giuseppe Verdi …": a participle phrase opens the
			// sentence; its subject comes after the comma.
			runs, starts, run = nil, nil, nil
			base = i + 1
			prev, prevRaw = w, raw
			continue
		}
		if strings.ContainsAny(raw, ",;:") {
			// "Historically, the Pillsbury Company …": one word and a
			// comma open the sentence without being its subject.
			introWord = introWord || i == 0 && len(run) == 1
			if len(runs) == 0 && len(run) == 0 {
				base = i + 1 // "According to the records, the …"
			}
			flush()
		}
		prev, prevRaw = w, raw
	}
	flush()
	if len(runs) == 0 {
		return "", "General"
	}
	best, at := runs[0], starts[0]
	if at == 0 && len(runs[0]) == 1 && len(runs) > 1 && introWord {
		best, at = runs[1], starts[1]
	}
	if at-base >= maxEntityStart {
		return "", "General"
	}
	display := strings.Join(best, " ")
	return strings.ToLower(display), display
}

// firstRunLen is the length of the sentence's first capitalised run: a
// participle opening one is one word ("Standing", numbers aside), a name
// is more ("United States Steel Corporation").
func firstRunLen(runs [][]string, run []string) int {
	if len(runs) > 0 {
		run = runs[0]
	}
	n := 0
	for _, w := range run {
		if !numeral.MatchString(w) {
			n++ // "Rising 726": the number is not part of a name here
		}
	}
	return n
}

// opening reports a sentence that opens with a participle ("Standing",
// "Measured", "Born") rather than its subject: the first word is one and
// the second is not a verb of which it would be the subject ("Beijing has").
func opening(ws []string) bool {
	if len(ws) < 2 {
		return false
	}
	first := strings.ToLower(strings.Trim(ws[0], `"'“‘`))
	second := strings.ToLower(strings.Trim(ws[1], `,;:`))
	if finiteVerb[second] {
		return false
	}
	return first == "born" || first == "built" || first == "known" || len(first) > 4 && (strings.HasSuffix(first, "ing") || strings.HasSuffix(first, "ed"))
}

var finiteVerb = map[string]bool{"is": true, "was": true, "are": true, "were": true, "has": true, "had": true, "have": true, "will": true, "would": true, "can": true, "could": true, "does": true, "did": true, "may": true, "might": true, "shall": true, "should": true, "must": true}

// nameJoiner are lower-case words inside names ("University of Kansas",
// "Chien Français Blanc et Noir").
var nameJoiner = map[string]bool{"of": true, "de": true, "von": true, "van": true, "et": true, "di": true, "du": true, "del": true, "da": true, "des": true, "la": true, "le": true}

// pronoun are the words that, starting a sentence, leave its subject unnamed.
var pronoun = map[string]bool{"it": true, "he": true, "she": true, "they": true, "we": true, "i": true, "you": true, "there": true, "this": true, "these": true, "those": true, "such": true}

// maxEntityStart bounds where a sentence's subject may start: within the
// first five words of its main clause (after an opening phrase set off by a
// comma).
const maxEntityStart = 5

// numeral is a number that can begin a name: "1904", "188th", "1952-53".
var numeral = regexp.MustCompile(`^\d[\d,.–-]*(st|nd|rd|th|s)?$`)

// notEntity are capitalised words that start sentences without naming
// what they are about: pronouns and months.
var notEntity = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("it he she they we you i its his her their our there these those this that such both each some many most all one another other as after before during since while when where although however according from for with between among under over through later then today about around along nearly almost approximately roughly only just once now currently") {
		m[w] = true
	}
	for mo := range months {
		m[mo] = true
	}
	return m
}()

func isNumeric(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) && r != ',' && r != '.' }) < 0
}

// value is a number in a fact with its kind: "year", or the unit word that
// follows it ("metres", "%", "people"), or "" for a bare number.
type value struct {
	kind string
	num  float64
	text string
	// name is a name value's comparison form (kind "name").
	name string
	// role is the word that says what a date, count or rank is of.
	role string
	// digits is the number as written ("1,083").
	digits string
}

// class is what makes two values comparable: their kind and role.
func (v value) class() string {
	if v.role == "" {
		return v.kind
	}
	return v.kind + "@" + v.role
}

// key is what values are compared on.
func (v value) key() string {
	if v.kind == kindName {
		return v.name
	}
	return strconv.FormatFloat(v.num, 'f', -1, 64)
}

var number = regexp.MustCompile(`(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(%|[A-Za-z]+)?`)

var months = map[string]bool{"january": true, "february": true, "march": true, "april": true, "may": true, "june": true, "july": true, "august": true, "september": true, "october": true, "november": true, "december": true}

func values(s string) []value {
	var out []value
	for _, m := range number.FindAllStringSubmatchIndex(s, -1) {
		if r, _ := utf8.DecodeLastRuneInString(s[:m[0]]); m[0] > 0 && unicode.IsLetter(r) {
			continue // "A400M", "H2O": part of a name
		}
		digits := s[m[2]:m[3]]
		n, err := strconv.ParseFloat(strings.ReplaceAll(digits, ",", ""), 64)
		if err != nil {
			continue
		}
		unit := ""
		if m[4] >= 0 {
			unit = strings.ToLower(s[m[4]:m[5]])
		}
		kind := unit
		monthBefore := monthBefore(s[:m[0]])
		switch {
		case monthBefore > 0 && n >= 1 && n <= 31 && !strings.Contains(digits, "."):
			// "May 19, 1928": the day of a month named before it.
			kind = "day"
			n = n*100 + float64(monthBefore)
		case months[unit]:
			kind = "day"
			n = n*100 + float64(monthIndex(unit))
		case ordinalSuffix[unit]:
			kind = "ordinal"
		case !strings.Contains(digits, ",") && !strings.Contains(digits, ".") && n >= 1000 && n <= 2100 && (unit == "" || !unitWord(unit) || yearFollower(unit)):
			kind = "year"
		case !unitWord(unit):
			kind = ""
		}
		v := value{kind: kind, num: n, text: strings.TrimSpace(s[m[0]:m[1]]), digits: digits}
		if u, ok := units[unit]; ok && kind != "year" && kind != "day" && plainMeasure(s, m) {
			// A measure: compared in its dimension's base unit, on the
			// quantity the words around it name ("tall", "depth").
			v.kind, v.num, v.role = u.dim, n*u.factor, quantityNear(s[:m[0]], s[m[1]:])
			out = append(out, v)
			continue
		}
		if kind == "" || peopleUnit[unit] {
			// A count of people: a population however it is worded ("a
			// population of 30,000", "home to 30,000 people").
			if q := quantityNear(s[:m[0]], s[m[1]:]); q == "population" || peopleUnit[unit] && housesPeople(s[:m[0]]) {
				v.kind, v.role = "count", "population"
				out = append(out, v)
				continue
			}
			if peopleUnit[unit] {
				// Any other count of people is of what the word before it
				// says: "killed 5 people" is not a town's 5 people.
				v.kind, v.role = "count", role(s[:m[0]])
				out = append(out, v)
				continue
			}
		}
		switch kind {
		case "year", "", "ordinal", "day":
			// A date, a count or a rank says nothing of what it measures:
			// the word before it does ("born in 1813", "released on").
			v.role = role(s[:m[0]])
			switch {
			case monthBefore > 0 && kind == "day":
				v.text = strings.TrimRight(lastWord(s[:m[0]])+" "+digits, ",")
			case kind != "day" && kind != "ordinal":
				v.text = digits
			}
		}
		out = append(out, v)
	}
	return out
}

// unit is a unit of measure: its dimension and its size in the
// dimension's base unit (metres, kilograms, square metres, seconds).
type unit struct {
	dim    string
	factor float64
}

var units = func() map[string]unit {
	m := map[string]unit{}
	add := func(dim string, factor float64, names string) {
		for _, n := range strings.Fields(names) {
			m[n] = unit{dim, factor}
		}
	}
	add("length", 1, "m metre metres meter meters")
	add("length", 1000, "km kilometre kilometres kilometer kilometers")
	add("length", 0.01, "cm centimetre centimetres centimeter centimeters")
	add("length", 0.001, "mm millimetre millimetres millimeter millimeters")
	add("length", 0.3048, "ft foot feet")
	add("length", 0.9144, "yd yard yards")
	add("length", 0.0254, "in inch inches")
	add("length", 1609.344, "mi mile miles")
	add("mass", 1, "kg kilogram kilograms kilogramme kilogrammes")
	add("mass", 0.001, "g gram grams gramme grammes")
	add("mass", 1000, "t tonne tonnes")
	add("mass", 907.18474, "ton tons")
	add("mass", 0.45359237, "lb lbs pound pounds")
	add("area", 10000, "ha hectare hectares")
	add("area", 4046.8564224, "acre acres")
	delete(m, "in") // "in 1813": a preposition far more often than inches
	return m
}()

// plainMeasure reports a number and unit that read as a measure: not
// money ("$1.5m") and, for one-letter units, set apart by a space ("828
// m", not "5G").
func plainMeasure(s string, m []int) bool {
	if r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s[:m[0]], " ")); strings.ContainsRune("$£€¥₩", r) {
		return false
	}
	return m[5]-m[4] > 1 || m[4] > m[3]
}

// housesPeople reports a count of people that a place holds: "has",
// "had", "with" or "home to" just before it.
func housesPeople(before string) bool {
	ws := wordRE.FindAllString(strings.ToLower(before), -1)
	if len(ws) == 0 {
		return false
	}
	switch ws[len(ws)-1] {
	case "has", "had", "have", "with", "houses", "housed":
		return true
	case "to":
		return len(ws) > 1 && ws[len(ws)-2] == "home"
	}
	return false
}

// peopleUnit are the words that make a number a count of people.
var peopleUnit = map[string]bool{"people": true, "inhabitants": true, "residents": true, "persons": true}

// quantities maps the words that say which quantity a measure is of to
// that quantity: "330 metres tall" and "a height of 330 metres" are both
// the height.
var quantities = func() map[string]string {
	m := map[string]string{}
	add := func(q, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = q
		}
	}
	add("height", "tall taller tallest height high higher highest rise rises rising rose stands standing elevation altitude summit")
	add("length", "long longer longest length stretches stretch stretching runs flowing flows")
	add("depth", "deep deeper deepest depth plunges")
	add("width", "wide wider widest width breadth")
	add("span", "span")
	add("mass", "weighs weigh weighing weight mass heavy")
	add("area", "area covers covering")
	add("population", "population inhabitants residents people populace")
	return m
}()

// quantityNear is the quantity named by the nearest quantity word within
// three words before or after a measure ("" when none).
func quantityNear(before, after string) string {
	bw := wordRE.FindAllString(before, -1)
	aw := wordRE.FindAllString(after, -1)
	for d := 0; d < 3; d++ {
		if d < len(aw) {
			if q, ok := quantities[strings.ToLower(aw[d])]; ok {
				return q
			}
		}
		if d < len(bw) {
			if q, ok := quantities[strings.ToLower(bw[len(bw)-1-d])]; ok {
				return q
			}
		}
	}
	return ""
}

// measure reports a value kind compared across units and wordings.
func measure(kind string) bool {
	switch kind {
	case "length", "mass", "area", "count":
		return true
	}
	return false
}

// monthBefore is the month (1–12) named right before a number, or 0.
func monthBefore(before string) int {
	return monthIndex(strings.ToLower(strings.Trim(lastWord(before), ".,")))
}

func lastWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

var ordinalSuffix = map[string]bool{"st": true, "nd": true, "rd": true, "th": true}

// role is the nearest content word (analysed) among the three words
// before a value, not counting the numbers and month names of a date.
func role(before string) string {
	ws := wordRE.FindAllString(before, -1)
	seen := 0
	for i := len(ws) - 1; i >= 0 && seen < 3; i-- {
		if isNumeric(ws[i]) || months[strings.ToLower(ws[i])] {
			continue // part of the date: "born on 19 May 1928"
		}
		seen++
		if ts := analyze.Terms(ws[i]); len(ts) > 0 {
			return ts[0]
		}
	}
	return ""
}

// withoutEntity drops the values that are part of the entity's name ("the
// 1904 Tour de France" is not a claim about 1904).
func withoutEntity(vals []value, display string) []value {
	out := vals[:0]
	for _, v := range vals {
		if !numeralIn(display, v.digits) {
			out = append(out, v)
		}
	}
	return out
}

// numeralIn reports a word of the name that is the number, bare or as an
// ordinal, plural or range ("1904", "188th", "1950s", "1952-53").
func numeralIn(display, digits string) bool {
	if digits == "" {
		return false
	}
	for _, w := range strings.Fields(display) {
		w, _, _ = strings.Cut(w, "-")
		w, _, _ = strings.Cut(w, "–")
		w = strings.TrimRightFunc(w, unicode.IsLetter)
		if w == digits {
			return true
		}
	}
	return false
}

func monthIndex(m string) int {
	for i, name := range []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"} {
		if name == m {
			return i + 1
		}
	}
	return 0
}

// yearFollower reports a preposition after a four-digit number that
// leaves it a year ("born in 1814 near Busseto") though Snowball does not
// list it as a stop word.
func yearFollower(w string) bool { return yearPrepositions[w] }

var yearPrepositions = map[string]bool{"near": true, "beside": true, "outside": true, "inside": true, "toward": true, "towards": true, "amid": true, "despite": true, "upon": true, "via": true, "across": true, "along": true, "around": true, "behind": true, "beyond": true, "within": true, "without": true, "until": true}

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

// sameTopic: the same model topic for two model facts; otherwise the same
// entity and mostly the same claim words.
func sameTopic(a, b *Fact) bool {
	if a.topic != "" && b.topic != "" {
		return a.topic == b.topic
	}
	if a.entity == "" || a.entity != b.entity {
		return false
	}
	if sharesFunctional(a, b) {
		return true
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

// functionalRoles are the roles of dates a subject has only one of: a
// person is born once, a company founded once.
var functionalRoles = map[string]bool{"born": true, "birth": true, "die": true, "death": true, "found": true, "establish": true, "incorpor": true}

// sharesFunctional reports two facts about one entity that both give a
// value of a quantity it has only one of — a measure of the same kind and
// quantity (one may leave the quantity unnamed: "measured at 330 metres"),
// or a birth or founding date — so they are about the same thing however
// differently they are worded.
func sharesFunctional(a, b *Fact) bool {
	if a.entity == "" || a.entity[0] >= '0' && a.entity[0] <= '9' {
		return false // "2010 U.S": a census, not a subject
	}
	oneWord := !strings.Contains(a.entity, " ")
	for _, va := range a.values {
		for _, vb := range b.values {
			if va.kind != vb.kind {
				continue
			}
			switch {
			// A one-word name ("Ryan", "Nile") may name several things:
			// only a measure of a quantity both name joins them.
			case measure(va.kind) && va.role == vb.role && va.role != "":
				return true
			case measure(va.kind) && !oneWord && (va.role == "" || vb.role == "") && (va.role != "" || vb.role != ""):
				return true
			case (va.kind == "year" || va.kind == "day") && !oneWord && va.role == vb.role && functionalRoles[va.role]:
				return true
			}
		}
	}
	return false
}

// nameQuantities gives a measure whose words name no quantity ("measured
// at 330 metres") the quantity its group's other measures of that kind
// agree on, so they compare.
func nameQuantities(facts []Fact, idx []int) {
	roles := map[string]map[string]bool{}
	for _, i := range idx {
		for _, v := range facts[i].values {
			if measure(v.kind) && v.role != "" {
				if roles[v.kind] == nil {
					roles[v.kind] = map[string]bool{}
				}
				roles[v.kind][v.role] = true
			}
		}
	}
	for _, i := range idx {
		for k, v := range facts[i].values {
			if measure(v.kind) && v.role == "" && len(roles[v.kind]) == 1 {
				for r := range roles[v.kind] {
					facts[i].values[k].role = r
				}
			}
		}
	}
}

// approxMeasures maps each measure value of a group to the smallest value
// within 1% of it, chained: sources round ("4,000 miles", "6,400 km").
func approxMeasures(facts []Fact, idx []int, kind string) map[string]string {
	if k, _, _ := strings.Cut(kind, "@"); !measure(k) {
		return nil
	}
	var nums []float64
	for _, i := range idx {
		if v, ok := keyValue(&facts[i], kind); ok {
			nums = append(nums, v.num)
		}
	}
	sort.Float64s(nums)
	canon := map[string]string{}
	var rep float64
	for j, n := range nums {
		if j == 0 || n > rep*1.01 {
			rep = n
		}
		canon[strconv.FormatFloat(n, 'f', -1, 64)] = strconv.FormatFloat(rep, 'f', -1, 64)
	}
	return canon
}

// keyValue is the value a topic's facts are compared on: the first value
// of the kind they share.
func keyValue(f *Fact, kind string) (value, bool) {
	for _, v := range f.values {
		if v.class() == kind {
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
	// Only facts about the same model topic, or else the same entity, can
	// share a topic: compare within those buckets, not all pairs.
	byEntity := map[string][]int{}
	for i := range facts {
		switch f := &facts[i]; {
		case f.topic != "":
			byEntity["t\x00"+f.topic] = append(byEntity["t\x00"+f.topic], i)
		case f.entity != "":
			byEntity["e\x00"+f.entity] = append(byEntity["e\x00"+f.entity], i)
		}
	}
	union := func(i, j int) { parent[find(i)] = find(j) }
	for _, b := range byEntity {
		// Facts of the same wording (one sentence many pages repeat) are
		// compared once: what topic a fact is on follows from its text
		// and value, not from where it was read.
		var keys []string
		same := map[string][]int{}
		for _, i := range b {
			k := facts[i].Text + "\x00" + facts[i].Value
			if _, ok := same[k]; !ok {
				keys = append(keys, k)
			}
			same[k] = append(same[k], i)
		}
		// link joins each fact of xs to one of ys read from another source.
		link := func(xs, ys []int) {
			for _, i := range xs {
				for _, j := range ys {
					if facts[i].SourceID != facts[j].SourceID {
						union(i, j)
						break
					}
				}
			}
		}
		for x, ka := range keys {
			a := same[ka]
			if len(a) > 1 && sameTopic(&facts[a[0]], &facts[a[0]]) {
				link(a, a)
			}
			for _, kb := range keys[x+1:] {
				bs := same[kb]
				if sameTopic(&facts[a[0]], &facts[bs[0]]) {
					link(a, bs)
					link(bs, a)
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
		nameQuantities(facts, idx)
		kinds := sharedKinds(facts, idx)
		if len(kinds) == 0 {
			// No comparable value: facts of several domains saying the
			// same thing support each other.
			// Facts with values of different kinds ("330 m", "300
			// metres") do not: their value lists must match.
			support(facts, idx, sources, func(i int) string { return signature(facts[i].values) })
			continue
		}
		// Compare on the first shared kind of value the facts disagree
		// on ("born in 1813" vs "born in 1814", though both died in 1901);
		// support is judged on the first kind when they agree on all.
		var kind string
		var val func(int) string
		var byValue map[string][]int
		var order []string
		for n, k := range kinds {
			canon := names(facts, idx, k)
			if canon == nil {
				canon = approxMeasures(facts, idx, k)
			}
			kv := func(i int) string {
				v, _ := keyValue(&facts[i], k)
				if c, ok := canon[v.key()]; ok {
					return c
				}
				return v.key()
			}
			bv := map[string][]int{}
			var ord []string
			for _, i := range idx {
				if _, has := keyValue(&facts[i], k); !has {
					continue
				}
				key := kv(i)
				if _, seen := bv[key]; !seen {
					ord = append(ord, key)
				}
				bv[key] = append(bv[key], i)
			}
			if n == 0 || len(ord) >= 2 {
				kind, val, byValue, order = k, kv, bv, ord
			}
			if len(ord) >= 2 {
				break
			}
		}
		support(facts, idx, sources, val)
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

// names maps each name value of a group to the longest name in the group
// whose words include all of its words, so "Eiffel" and "Gustave Eiffel"
// are one value, not a conflict.
func names(facts []Fact, idx []int, kind string) map[string]string {
	if kind != kindName {
		return nil
	}
	var keys []string
	for _, i := range idx {
		if v, ok := keyValue(&facts[i], kind); ok {
			keys = appendUnique(keys, v.key())
		}
	}
	canon := map[string]string{}
	for _, a := range keys {
		best := a
		for _, b := range keys {
			if len(b) > len(best) && subset(strings.Fields(a), strings.Fields(b)) {
				best = b
			}
		}
		canon[a] = best
	}
	return canon
}

func subset(a, b []string) bool {
	in := map[string]bool{}
	for _, w := range b {
		in[w] = true
	}
	for _, w := range a {
		if !in[w] {
			return false
		}
	}
	return true
}

// signature is a fact's values as one comparable string.
func signature(vals []value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = v.class() + "=" + v.key()
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

// sharedKinds are the value classes (kind and role) that at least two
// facts of the group have, most shared first, then years and dates before
// names, units, ranks and bare numbers.
func sharedKinds(facts []Fact, idx []int) []string {
	count := map[string]int{}
	for _, i := range idx {
		seen := map[string]bool{}
		for _, v := range facts[i].values {
			if c := v.class(); !seen[c] {
				seen[c] = true
				count[c]++
			}
		}
	}
	var out []string
	for k, n := range count {
		if n >= 2 {
			out = append(out, k)
		}
	}
	rank := func(class string) int {
		switch k, _, _ := strings.Cut(class, "@"); k {
		case "year", "day":
			return 0
		case kindName:
			return 1
		case "ordinal":
			return 3
		case "":
			return 4
		}
		return 2 // a unit
	}
	sort.Slice(out, func(a, b int) bool {
		ka, kb := out[a], out[b]
		if count[ka] != count[kb] {
			return count[ka] > count[kb]
		}
		if rank(ka) != rank(kb) {
			return rank(ka) < rank(kb)
		}
		return ka < kb
	})
	return out
}

// support marks facts whose value (or, with no value, whose topic) is
// stated by sources of at least two domains; SupportedBy lists the other
// sources that state it.
func support(facts []Fact, idx []int, sources map[string]Source, val func(int) string) {
	type stated struct {
		domains map[string]bool
		by      []string // sources, in fact order, each once
	}
	byVal := map[string]*stated{}
	vals := make([]string, len(idx))
	for k, i := range idx {
		v := val(i)
		vals[k] = v
		st := byVal[v]
		if st == nil {
			st = &stated{domains: map[string]bool{}}
			byVal[v] = st
		}
		st.domains[sources[facts[i].SourceID].Domain] = true
		st.by = appendUnique(st.by, facts[i].SourceID)
	}
	for k, i := range idx {
		st := byVal[vals[k]]
		var by []string
		for _, id := range st.by {
			if id != facts[i].SourceID {
				by = append(by, id)
			}
		}
		facts[i].SupportedBy = by
		facts[i].Verified = len(st.domains) >= 2
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
	if k, _, _ := strings.Cut(kind, "@"); k != "" {
		label += " (" + k + ")"
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
