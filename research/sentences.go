package research

import (
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// sentence is a sentence of a source, white space collapsed, with its
// analysed terms.
type sentence struct {
	text  string
	terms map[string]bool
}

// sentenceCache splits each source into sentences once, for the renderers
// and checks that look for the sentence best matching a claim.
type sentenceCache map[string][]sentence

func (c sentenceCache) of(s *Source) []sentence {
	if ss, ok := c[s.ID]; ok {
		return ss
	}
	var ss []sentence
	for _, sp := range textseg.Spans(s.Content) {
		text := textseg.OneLine(s.Content[sp.Start:sp.End])
		ss = append(ss, sentence{text: text, terms: termSet(text)})
	}
	c[s.ID] = ss
	return ss
}

// termSet is the set of analysed terms of text.
func termSet(text string) map[string]bool {
	m := map[string]bool{}
	analyze.TermsFunc(text, func(t string) { m[t] = true })
	return m
}

// overlap counts the terms of want that terms has.
func overlap(want, terms map[string]bool) int {
	n := 0
	for t := range want {
		if terms[t] {
			n++
		}
	}
	return n
}
