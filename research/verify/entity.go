package verify

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/textseg"
)

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
// the key (lower case) and the display form. One pass over the words,
// each rule a case of it: it stays one function.
func entity(s string) (string, string) {
	var runs [][]string
	var run []string
	starts := []int{}
	flush := func() {
		for len(run) > 0 && textseg.Connector(run[len(run)-1]) {
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
		case i == 0 && pronoun[strings.FieldsFunc(lw, apostrophe)[0]]:
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
		case len(run) > 0 && textseg.Connector(w):
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

// apostrophe splits a pronoun from the verb run into it ("We’ll", "It's").
func apostrophe(r rune) bool { return r == '\'' || r == '’' }

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
