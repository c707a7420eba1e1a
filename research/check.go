package research

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// Checks is the citation check of a report: for every cited passage of the
// summary and sections, whether the sources it cites support it.
type Checks struct {
	CitedPassages       int     `json:"cited_passages"`
	Supported           int     `json:"supported"`
	CitationSupportRate float64 `json:"citation_support_rate"`
	// Unsupported lists the passages whose sources do not support them.
	Unsupported []Unsupported `json:"unsupported"`
	// Method says how support was decided.
	Method string `json:"method"`
	// Judge names the language model that read the passages the lexical
	// check passed, and Judged counts those it gave a verdict on.
	Judge  string `json:"judge,omitempty"`
	Judged int    `json:"judged,omitempty"`
}

// Unsupported is a cited passage its sources do not back.
type Unsupported struct {
	Text      string   `json:"text"`
	Citations []int    `json:"citations"`
	SourceIDs []string `json:"source_ids"`
	Reason    string   `json:"reason"`
}

// MinCoverage is the share of a passage's content words that must appear in
// its cited sources.
const MinCoverage = 0.6

// CheckMethod describes the lexical and numeric check.
const CheckMethod = "lexical and numeric: every number in the passage appears in a cited source, and at least 60% of its content words (stemmed) do"

var (
	citeGroup = regexp.MustCompile(`(?:\s*\[\d+\])+`)
	citeNum   = regexp.MustCompile(`\[(\d+)\]`)
	numberRE  = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)
	contentRE = regexp.MustCompile(`[\p{L}\p{N}]+`)
)

// eachCitation calls fn for every group of rendered [n] citations in text
// whose numbers include a reference (a bracketed number quoted from a
// source, "[1977]", is not a citation), with the group's byte range, its
// reference numbers, and the passage it vouches for: the sentence it ends,
// or within a sentence the text since the previous citation.
func eachCitation(text string, refs map[int]string, fn func(start, end int, passage string, nums []int)) {
	prev := 0
	for _, loc := range citeGroup.FindAllStringIndex(text, -1) {
		from := prev
		if nl := strings.LastIndexByte(text[prev:loc[0]], '\n'); nl >= 0 {
			from = prev + nl + 1
		}
		prev = loc[1]
		var nums []int
		cites := false
		for _, m := range citeNum.FindAllStringSubmatch(text[loc[0]:loc[1]], -1) {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
			_, ok := refs[n]
			cites = cites || ok
		}
		if !cites {
			continue
		}
		passage := strings.TrimSpace(strings.TrimLeft(text[from:loc[0]], ".,;: "))
		// A citation vouches for the sentence it ends, not for uncited
		// sentences before it.
		if sp := textseg.Spans(passage); len(sp) > 1 {
			passage = passage[sp[len(sp)-1].Start:sp[len(sp)-1].End]
		}
		fn(loc[0], loc[1], passage, nums)
	}
}

// evidence is a source's analysed terms and numbers, computed once per
// source however many passages cite it.
type evidence struct {
	terms, numbers map[string]bool
}

func newEvidence(s *Source) *evidence {
	e := &evidence{terms: map[string]bool{}, numbers: map[string]bool{}}
	for _, text := range []string{s.Title, s.Content} {
		analyze.TermsFunc(text, func(t string) { e.terms[t] = true })
		for _, n := range numberRE.FindAllString(text, -1) {
			e.numbers[normNum(n)] = true
		}
	}
	return e
}

// Check checks a rendered report's citations against the sources read,
// lexically and numerically.
func Check(rep *Report, sources []Source) Checks {
	ck, _ := check(rep, sources)
	return ck
}

// cited is a passage the lexical check passed, with its cited sources, for
// a judge to read.
type cited struct {
	passage string
	nums    []int
	ids     []string
	sources []*Source
}

func check(rep *Report, sources []Source) (Checks, []cited) {
	ck := Checks{Unsupported: []Unsupported{}, Method: CheckMethod}
	if rep == nil {
		return ck, nil
	}
	byID := map[string]*Source{}
	for i := range sources {
		byID[sources[i].ID] = &sources[i]
	}
	refs := map[int]string{}
	for _, r := range rep.References {
		refs[r.Number] = r.SourceID
	}
	cache := map[string]*evidence{}
	texts := []string{rep.Summary}
	for _, s := range rep.Sections {
		texts = append(texts, s.Body)
	}
	var passed []cited
	for _, text := range texts {
		eachCitation(text, refs, func(_, _ int, passage string, nums []int) {
			if len([]rune(passage)) < 3 {
				return
			}
			var ids []string
			var ev []*evidence
			var srcs []*Source
			for _, n := range nums {
				id, ok := refs[n]
				if !ok {
					continue
				}
				ids = append(ids, id)
				if s := byID[id]; s != nil {
					if cache[id] == nil {
						cache[id] = newEvidence(s)
					}
					ev = append(ev, cache[id])
					srcs = append(srcs, s)
				}
			}
			ck.CitedPassages++
			if reason := support(passage, ev); reason != "" {
				ck.Unsupported = append(ck.Unsupported, Unsupported{Text: passage, Citations: nums, SourceIDs: ids, Reason: reason})
				return
			}
			ck.Supported++
			passed = append(passed, cited{passage: passage, nums: nums, ids: ids, sources: srcs})
		})
	}
	ck.rate()
	return ck, passed
}

func (ck *Checks) rate() {
	ck.CitationSupportRate = 0
	if ck.CitedPassages > 0 {
		ck.CitationSupportRate = float64(ck.Supported) / float64(ck.CitedPassages)
	}
}

// derivedVerb is the verb phrase of a derived comparison ("was born
// before"): the question's words, not the sources'.
var derivedVerb = regexp.MustCompile(`\)\s+(?:was\s+)?\p{L}+\s+before\s+`)

// support returns why the cited sources do not back a passage, or "".
// A derived comparison is held to its values and subjects: each year must
// be in the cited sources, and the names it compares.
func support(passage string, ev []*evidence) string {
	if rest, ok := strings.CutPrefix(passage, DerivedMark); ok {
		passage = derivedVerb.ReplaceAllString(rest, ") ")
	}
	if len(ev) == 0 {
		return "the cited sources have no text"
	}
	has := func(pick func(*evidence) map[string]bool, k string) bool {
		for _, e := range ev {
			if pick(e)[k] {
				return true
			}
		}
		return false
	}
	numbers := func(e *evidence) map[string]bool { return e.numbers }
	terms := func(e *evidence) map[string]bool { return e.terms }
	for _, n := range numberRE.FindAllString(passage, -1) {
		if !has(numbers, normNum(n)) {
			return "the number " + strings.TrimRight(n, ".,") + " is not in the cited sources"
		}
	}
	var missing []string
	total := 0
	for _, w := range contentRE.FindAllString(strings.ToLower(passage), -1) {
		if len(w) < 3 || numberRE.MatchString(w) {
			continue
		}
		ts := analyze.Terms(w) // empty for a stop word
		if len(ts) == 0 {
			continue
		}
		total++
		for _, t := range ts {
			if !has(terms, t) {
				missing = append(missing, w)
				break
			}
		}
	}
	if total > 0 && float64(total-len(missing)) < MinCoverage*float64(total) {
		return "words not in the cited sources: " + strings.Join(missing, ", ")
	}
	return ""
}

func normNum(n string) string {
	n = strings.TrimRight(strings.ReplaceAll(n, ",", ""), ".")
	if strings.Contains(n, ".") {
		n = strings.TrimRight(strings.TrimRight(n, "0"), ".")
	}
	return n
}
