package research

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/kljensen/snowball/english"

	"github.com/quarryhq/quarry/research/internal/textseg"
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

// Check checks a rendered report's citations against the sources read. A
// cited passage is the sentence a group of [n] markers ends (or, within a
// sentence, the text since the previous citation).
func Check(rep *Report, sources []Source) Checks {
	ck := Checks{Unsupported: []Unsupported{}, Method: CheckMethod}
	if rep == nil {
		return ck
	}
	byID := map[string]*Source{}
	for i := range sources {
		byID[sources[i].ID] = &sources[i]
	}
	refs := map[int]string{}
	for _, r := range rep.References {
		refs[r.Number] = r.SourceID
	}
	texts := []string{rep.Summary}
	for _, s := range rep.Sections {
		texts = append(texts, s.Body)
	}
	for _, text := range texts {
		for _, para := range strings.Split(text, "\n") {
			prev := 0
			for _, loc := range citeGroup.FindAllStringIndex(para, -1) {
				passage := strings.TrimSpace(strings.TrimLeft(para[prev:loc[0]], ".,;: "))
				// A citation vouches for the sentence it ends, not for
				// uncited sentences before it.
				if sp := textseg.Spans(passage); len(sp) > 1 {
					passage = passage[sp[len(sp)-1].Start:sp[len(sp)-1].End]
				}
				group := para[loc[0]:loc[1]]
				prev = loc[1]
				if len([]rune(passage)) < 3 {
					continue
				}
				var nums []int
				var ids []string
				var corpus strings.Builder
				for _, m := range citeNum.FindAllStringSubmatch(group, -1) {
					n, _ := strconv.Atoi(m[1])
					nums = append(nums, n)
					if id, ok := refs[n]; ok {
						ids = append(ids, id)
						if s := byID[id]; s != nil {
							corpus.WriteString(s.Title)
							corpus.WriteString("\n")
							corpus.WriteString(s.Content)
							corpus.WriteString("\n")
						}
					}
				}
				ck.CitedPassages++
				reason := support(passage, corpus.String())
				if len(ids) == 0 {
					reason = "its citations resolve to no reference"
				}
				if reason == "" {
					ck.Supported++
					continue
				}
				ck.Unsupported = append(ck.Unsupported, Unsupported{Text: passage, Citations: nums, SourceIDs: ids, Reason: reason})
			}
		}
	}
	if ck.CitedPassages > 0 {
		ck.CitationSupportRate = float64(ck.Supported) / float64(ck.CitedPassages)
	}
	return ck
}

// support returns why source text does not back a passage, or "".
func support(passage, source string) string {
	if strings.TrimSpace(source) == "" {
		return "the cited sources have no text"
	}
	srcNums := map[string]bool{}
	for _, n := range numberRE.FindAllString(source, -1) {
		srcNums[normNum(n)] = true
	}
	for _, n := range numberRE.FindAllString(passage, -1) {
		if !srcNums[normNum(n)] {
			return "the number " + strings.TrimRight(n, ".,") + " is not in the cited sources"
		}
	}
	srcTerms := map[string]bool{}
	for _, w := range contentRE.FindAllString(strings.ToLower(source), -1) {
		srcTerms[english.Stem(w, false)] = true
	}
	var missing []string
	total := 0
	for _, w := range contentRE.FindAllString(strings.ToLower(passage), -1) {
		if len(w) < 3 || english.IsStopWord(w) || numberRE.MatchString(w) {
			continue
		}
		total++
		if !srcTerms[english.Stem(w, false)] {
			missing = append(missing, w)
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
