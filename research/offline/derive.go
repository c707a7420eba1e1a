package offline

import (
	"regexp"
	"strings"

	"github.com/quarryhq/quarry/research"
)

// A question that asks which of two things came first ("Which composer
// was born first, A or B?") is answered by a sentence computed from the
// two quoted, cited values, marked as derived: "Derived from the quotes
// below: Giuseppe Verdi (1813) was born before Antonín Dvořák (1841)."
// Only the years the quotes hold are compared, for the relation the
// question names; nothing else is generated.

// orderWords ask for an order in time. The derived sentence states the
// order whichever end the question asked about.
var orderWords = map[string]bool{"first": true, "earlier": true, "older": true, "oldest": true, "before": true, "sooner": true, "later": true, "last": true, "younger": true, "youngest": true, "newer": true, "newest": true, "after": true}

// roles are the events a year dates, as a question names them; a
// birth-death range ("(8 September 1841 – 1 May 1904)") dates "born" by
// its first year and "died" by its second.
var roles = []string{"born", "died", "founded", "established", "formed", "released", "published", "built", "opened", "created", "written", "composed", "introduced", "launched", "discovered", "invented", "elected", "started", "begun", "completed", "premiered", "recorded"}

// rangeRE is a birth-death range ("(8 September 1841 – 1 May 1904)");
// a single year is evidence.go's yearRE.
var (
	rangeRE = regexp.MustCompile(`\([^()]*?\b(1[0-9]{3}|20[0-9]{2})\b[^()]*?[–—-][^()]*?\b(1[0-9]{3}|20[0-9]{2})\b[^()]*\)`)
)

// askedOrder is the role a question asks the order of ("born"), or "".
func askedOrder(question string) string {
	words := strings.Fields(strings.ToLower(strings.NewReplacer("?", " ", ",", " ", ".", " ").Replace(question)))
	order := false
	for _, w := range words {
		order = order || orderWords[w]
	}
	if !order {
		return ""
	}
	for _, w := range words {
		for _, r := range roles {
			if w == r {
				return r
			}
		}
	}
	return ""
}

// roleWordRE finds any role word, whole.
var roleWordRE = regexp.MustCompile(`(?i)\b(?:` + strings.Join(roles, "|") + `)\b`)

// yearOf is the year a sentence gives for role: the first year after the
// role's word (whole, any case) and before the clause ends or another
// role begins ("born in Le Roncole and died in Milan in 1901" gives no
// birth year), or a birth-death range's first (born) or second (died)
// year; "" when it gives none.
func yearOf(sentence, role string) string {
	for _, loc := range roleWordRE.FindAllStringIndex(sentence, -1) {
		if !strings.EqualFold(sentence[loc[0]:loc[1]], role) {
			continue
		}
		rest := sentence[loc[1]:]
		if next := roleWordRE.FindStringIndex(rest); next != nil {
			rest = rest[:next[0]]
		}
		if i := strings.IndexAny(rest, ";.!?"); i >= 0 && !yearRE.MatchString(rest[:i]) {
			rest = rest[:i]
		}
		if m := yearRE.FindString(rest); m != "" {
			return m
		}
	}
	if role == "born" || role == "died" {
		if m := rangeRE.FindStringSubmatch(sentence); m != nil {
			if role == "born" {
				return m[1]
			}
			return m[2]
		}
	}
	return ""
}

// derivedOrder is the derived sentence for two labelled sides' quoted
// sentences, or "" when the question asks no order or a side's quote
// gives no year for it (or both the same).
func derivedOrder(question string, labels, sentences [2]string) string {
	role := askedOrder(question)
	if role == "" {
		return ""
	}
	ya, yb := yearOf(sentences[0], role), yearOf(sentences[1], role)
	if ya == "" || yb == "" || ya == yb {
		return ""
	}
	a, b := 0, 1
	if yb < ya { // four-digit years compare as strings
		a, b = 1, 0
	}
	years := [2]string{ya, yb}
	verb := "was " + role
	if role == "died" {
		verb = role
	}
	return research.DerivedMark + " " + labels[a] + " (" + years[a] + ") " + verb + " before " + labels[b] + " (" + years[b] + ")."
}
