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
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textseg"
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
	// changes: the fact says a value changed (changed), to changedTo,
	// from one of wasFrom (with the other numbers before its "to").
	changes   bool
	wasFrom   []float64
	changedTo float64
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
	unnameOpeners(facts, sources)
	anchor(facts)
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
		f.wasFrom, f.changedTo, f.changes = changed(f.Text)
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
		if n < MinFactChars || n > MaxFactChars || !textseg.EndsSentence(text) || mostlyNumbers(text) {
			// A title, a heading or a listing's line ("Python 3.11.0
			// release candidate 2", "SQLite Changes From Version 3.5.9 To
			// 3.6.0", "1234567... M fileY :000000 100644 0000000...")
			// states no claim: a sentence ends as one does, in words.
			continue
		}
		lineStart := strings.LastIndexByte(s.Content[:sp.Start], '\n') + 1
		lineEnd := len(s.Content)
		if i := strings.IndexByte(s.Content[sp.End:], '\n'); i >= 0 {
			lineEnd = sp.End + i
		}
		if codeSpan(s.Content[lineStart:lineEnd]) {
			continue // a listing's line or a log's: no claim of the source's
		}
		ent, section := entity(text)
		if !claim(text, ent) {
			continue
		}
		f := Fact{Text: textseg.OneLine(text), SourceID: s.ID, Start: sp.Start, End: sp.End, Confidence: s.Credibility, Method: MethodExtractive, entity: ent, Section: section}
		f.values = withoutEntity(values(text), section)
		f.terms = terms(text, f.entity, f.values)
		f.wasFrom, f.changedTo, f.changes = changed(f.Text)
		out = append(out, f)
		if len(out) == MaxFactsPerSource {
			break
		}
	}
	return out
}

// mostlyNumbers reports text whose words are more than half numbers or
// hashes (words holding a digit): a listing's or a table's line. A
// sentence of figures ("In 2019 it had 1,234,567 people, up from
// 1,100,000 in 2010.") is mostly words.
func mostlyNumbers(text string) bool {
	fields := strings.Fields(text)
	digits := 0
	for _, f := range fields {
		if strings.ContainsFunc(f, unicode.IsDigit) {
			digits++
		}
	}
	return digits*2 > len(fields)
}

// timestamp opens a log's line: "2010-10-22 22:19:59,773 root INFO …",
// "10-22 22:19 root INFO …".
var timestamp = regexp.MustCompile(`^(?:\d{2,4}[-/])?\d{1,2}[-/]\d{1,2}[ T]\d{1,2}:\d{2}`)

// codeSpan reports lines of text with a line of code, markup or a
// terminal session among them (passage.CodeLine), or of a log, whose
// first word joins fields with colons ("INFO:root:Jackdaws love my big
// sphinx of quartz.") or which opens with a date and a time: a program's
// text or output shown in a manual, and two manuals' listings disagree on
// nothing.
func codeSpan(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		l := strings.TrimSpace(line)
		if l == "" {
			continue
		}
		if first, _, _ := strings.Cut(l, " "); passage.CodeLine(l) || strings.Count(first, ":") >= 2 && !strings.Contains(first, "://") || timestamp.MatchString(l) {
			return true
		}
	}
	return false
}

// unnameOpeners takes the subject from a fact whose subject is one word
// that is a label ("Default: 300000") or an ordinary word capitalised
// for opening its sentence — one the sources also write in lower case,
// or followed at once by a preposition ("New in version 3.6.", "Changed
// in version 3.7: …") — not a name: a documentation's annotations of
// different functions agree on nothing. A name is written capitalised
// wherever it stands ("Verdi", "Paris"); a subject of several words
// ("New York") is kept.
func unnameOpeners(facts []Fact, sources []Source) {
	var lower map[string]bool // read from the sources when first needed
	for i := range facts {
		f := &facts[i]
		if f.entity == "" || f.topic != "" || strings.Contains(f.entity, " ") {
			continue
		}
		ws := strings.Fields(f.Text)
		switch {
		case strings.Contains(f.Text, f.Section+":"):
			// "Default: 0", "<number> Default: 300000", "Note: …": a
			// label, not a subject.
		case strings.ToLower(strings.Trim(ws[0], `.,;:!?"'()[]“”‘’`)) != f.entity:
			continue // the subject does not open the sentence
		case len(ws) > 1 && afterOpener[ws[1]]:
			// "Changed in version 3.7", "Contributed by …", "Deprecated
			// since …": a participle or adjective opens a note; a name
			// opening a claim is followed by what it does or is.
		default:
			if lower == nil {
				lower = lowerWords(sources)
			}
			if !lower[f.entity] {
				continue
			}
		}
		f.entity, f.Section = "", "General"
		f.terms = terms(f.Text, "", f.values)
	}
}

// lowerWords are the words the sources write in lower case, addresses
// aside ("www.london.gov.uk" writes a name so).
func lowerWords(sources []Source) map[string]bool {
	lower := map[string]bool{}
	for _, s := range sources {
		for _, field := range strings.Fields(s.Content) {
			if strings.Contains(field, "://") || strings.HasPrefix(field, "www.") || strings.Contains(field, "@") {
				continue
			}
			for _, w := range wordRE.FindAllString(field, -1) {
				if r, _ := utf8.DecodeRuneInString(w); unicode.IsLower(r) {
					lower[w] = true
				}
			}
		}
	}
	return lower
}

// afterOpener are the prepositions that, right after a sentence's one
// capitalised opening word, show it to be a participle or an adjective.
var afterOpener = map[string]bool{"in": true, "by": true, "since": true, "for": true, "with": true, "from": true, "to": true, "on": true, "at": true}

// anchor gives a measurement whose sentence's subject is not what it
// measures — whoever measured, estimated or reported it ("Surveyors
// measured the Statue of Liberty at 93 metres", "A 2007 expedition put
// the length of the Amazon at 6,400 km", "A leaflet claims the Statue of
// Liberty is 46 metres tall") — the entity it names that other sources'
// measurements of the same kind are about: the subject of a measurement
// is what is measured, whoever measured it. A fact keeps its own entity
// when another source measures it too, and is left alone when it names
// none or several of the others'; dates and ranks keep their subjects
// ("Smith joined the Yankees in 1990" is about Smith).
func anchor(facts []Fact) {
	type key struct{ ent, kind string }
	about := map[key]map[string]bool{} // the sources measuring an entity
	display := map[string]string{}
	for _, f := range facts {
		if f.entity == "" || f.topic != "" {
			continue
		}
		for _, k := range measureKinds(f) {
			kk := key{f.entity, k}
			if about[kk] == nil {
				about[kk] = map[string]bool{}
			}
			about[kk][f.SourceID] = true
			display[f.entity] = f.Section
		}
	}
	elsewhere := func(k key, source string) bool {
		for id := range about[k] {
			if id != source {
				return true
			}
		}
		return false
	}
	for i := range facts {
		f := &facts[i]
		kinds := measureKinds(*f)
		if len(kinds) != 1 || f.topic != "" || f.entity != "" && elsewhere(key{f.entity, kinds[0]}, f.SourceID) {
			continue
		}
		lower, vals := " "+strings.ToLower(f.Text)+" ", measureTexts(*f)
		var named []string
		for k := range about {
			if k.kind == kinds[0] && k.ent != f.entity && elsewhere(k, f.SourceID) && namesPhrase(lower, k.ent, vals) {
				named = append(named, k.ent)
			}
		}
		if len(named) != 1 {
			continue
		}
		f.entity, f.Section = named[0], display[named[0]]
		f.terms = terms(f.Text, f.entity, f.values)
	}
}

// measureTexts are the texts of a fact's measurements, lower case.
func measureTexts(f Fact) []string {
	var out []string
	for _, v := range f.values {
		if measure(v.kind) {
			out = append(out, strings.ToLower(v.text))
		}
	}
	return out
}

// measureKinds are the kinds of the measurements a fact gives (a length,
// a mass, an area, a count), each once.
func measureKinds(f Fact) []string {
	var out []string
	for _, v := range f.values {
		if measure(v.kind) && !slices.Contains(out, v.kind) {
			out = append(out, v.kind)
		}
	}
	return out
}

// namesPhrase reports text (lower case, padded with spaces) naming the
// entity ent as what one of its measurements (vals) is of: as whole
// words, a few words before the measurement with nothing set off between
// ("measured the Statue of Liberty at 93 metres", "claims the Statue of
// Liberty is 46 metres"; not "a 648-ft tower in New York City"), and not
// as the owner of a part that is measured ("the iron frame of the Eiffel
// Tower has a mass", "the tower's frame") unless the part is the
// quantity itself ("the length of the Amazon", "the tower's height").
func namesPhrase(text, ent string, vals []string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], ent)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(ent)
		from = i + 1
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if wordRune(before) || wordRune(after) {
			continue
		}
		ws := wordRE.FindAllString(text[:i], -1)
		if n := len(ws); n > 0 && ws[n-1] == "the" {
			ws = ws[:n-1]
		}
		if n := len(ws); n > 0 && ws[n-1] == "of" && (n < 2 || quantities[ws[n-2]] == "") {
			continue // the owner of a part
		}
		rest := text[end:]
		if strings.HasPrefix(rest, "'s ") || strings.HasPrefix(rest, "’s ") {
			if next := wordRE.FindString(rest[strings.IndexByte(rest, ' '):]); quantities[next] == "" {
				continue
			}
		}
		for _, v := range vals {
			if j := strings.Index(rest, v); j >= 0 && !strings.ContainsAny(rest[:j], ",;:()") && len(strings.Fields(rest[:j])) <= maxMeasureGap {
				return true
			}
		}
	}
}

// maxMeasureGap is the most words between an entity and its measurement
// ("… put the length of the Amazon River at 6,400 km").
const maxMeasureGap = 4
