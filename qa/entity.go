package qa

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/kb/analyze"
)

// questionWords open questions and are capitalised for that alone.
var questionWords = map[string]bool{"who": true, "whom": true, "whose": true, "what": true, "which": true, "when": true, "where": true, "why": true, "how": true,
	"is": true, "are": true, "was": true, "were": true, "do": true, "does": true, "did": true, "in": true, "on": true, "at": true, "the": true, "a": true, "an": true,
	"can": true, "could": true, "has": true, "have": true, "had": true, "and": true, "of": true, "for": true, "to": true, "from": true, "by": true}

// connectors may stand inside a name ("Bank of England", "Leonardo da
// Vinci").
var connectors = map[string]bool{"of": true, "the": true, "de": true, "da": true, "di": true, "von": true, "van": true, "la": true, "le": true, "del": true}

// entities are the names a question asks about: runs of capitalised words
// (connectors allowed inside) and numbers, each as its search terms. A
// knowledge base that holds none of them cannot answer, whatever else
// matches ("Who designed the Sydney Opera House?" over a corpus about
// operas and houses).
func entities(q string) [][]string {
	var out [][]string
	for _, n := range names(q) {
		if ts := analyze.Terms(n); len(ts) > 0 {
			out = append(out, ts)
		}
	}
	return out
}

// names are the runs of capitalised words (connectors allowed inside) and
// the numbers of a question, as written.
func names(q string) []string {
	words := strings.FieldsFunc(q, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",?!;:\"()“”", r)
	})
	var out []string
	var run []string
	flush := func() {
		for len(run) > 0 && connectors[strings.ToLower(run[len(run)-1])] {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			out = append(out, strings.Join(run, " "))
		}
		run = nil
	}
	for i, w := range words {
		w = strings.Trim(w, ".'’")
		r, _ := utf8.DecodeRuneInString(w)
		lower := strings.ToLower(w)
		switch {
		case w == "":
		case unicode.IsDigit(r):
			flush()
			run = []string{w}
			flush()
		case unicode.IsUpper(r) && !(i == 0 && questionWords[lower]) && !pronouns[lower]:
			run = append(run, w)
		case len(run) > 0 && connectors[lower]:
			run = append(run, w)
		default:
			flush()
		}
	}
	flush()
	return out
}

// entityCover is the share of the entities whose terms all appear in one
// candidate sentence (with its source's title).
func entityCover(ents [][]string, cands []candidate) float64 {
	if len(ents) == 0 {
		return -1
	}
	found := 0
	for _, e := range ents {
		for _, c := range cands {
			all := true
			for _, t := range e {
				if !c.terms[t] {
					all = false
					break
				}
			}
			if all {
				found++
				break
			}
		}
	}
	return float64(found) / float64(len(ents))
}
