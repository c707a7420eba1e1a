package offline

import (
	"regexp"
	"slices"
	"strings"

	"github.com/kljensen/snowball/english"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// Expected answer types, from the question's wh-phrase.
const (
	anyAnswer = iota
	dateAnswer
	numberAnswer
	placeAnswer
	personAnswer
)

var (
	yearRE   = regexp.MustCompile(`\b(1\d{3}|20\d{2})\b`)
	numRE    = regexp.MustCompile(`\b\d[\d,.]*\b`)
	placeRE  = regexp.MustCompile(`\b(?:in|at|from|near|of)\s+(?:the\s+)?\p{Lu}`)
	personRE = regexp.MustCompile(`\p{Lu}\p{Ll}+\s+(?:\p{Lu}\.\s+)?\p{Lu}\p{Ll}+`)
)

// answerType is what kind of answer a question asks for.
func answerType(question string) int {
	q := phraseOf(question)
	has := func(ps ...string) bool {
		for _, p := range ps {
			if strings.Contains(q, " "+p+" ") {
				return true
			}
		}
		return false
	}
	switch {
	case has("when", "what year", "which year", "what date", "what decade", "what century"):
		return dateAnswer
	case has("how many", "how much", "how long", "how old", "how tall", "what number", "what percentage"):
		return numberAnswer
	case has("where", "what city", "which city", "what country", "which country", "what continent", "which continent", "what state", "which state", "what town", "which town", "what county", "what region"):
		return placeAnswer
	case has("who", "whom", "whose", "which person", "what person"):
		return personAnswer
	}
	return anyAnswer
}

var (
	compareWords = regexp.MustCompile(`(?i)\b(?:or|both|than|either|neither|same|compare|compared|common|differ|different)\b`)
	// auxOpening opens a yes/no question, which may compare ("Are A and
	// B …?").
	auxOpening = regexp.MustCompile(`^(?i:are|is|was|were|do|does|did|have|has|had|can|could)\b`)
)

// comparative reports a question that compares what it names ("Which
// composer was born first, A or B?", "Are A and B both …?"), not one that
// names two things on the way to its answer ("the book written by A
// published by the publisher owned by B").
func comparative(question string) bool {
	q := strings.TrimSpace(question)
	return compareWords.MatchString(q) || auxOpening.MatchString(q)
}

// maxSideWords bounds a side of a comparison.
const maxSideWords = 6

// orRE finds the "or" between the two things a question compares.
var orRE = regexp.MustCompile(`(?i)\sor\s`)

// sides are the two things a question compares, "A or B", as lower-case
// phrases without articles: the words after the last "or" up to the
// question's end or a comma, and those before it back to a comma, at most
// maxSideWords ("Which earthquake was stronger, the 1952 San Juan
// earthquake or the Caucete earthquake?"). A side must hold a name (a
// capitalised word or a number); nil when the question compares nothing
// named.
func sides(question string) []string {
	locs := orRE.FindAllStringIndex(question, -1)
	if len(locs) == 0 {
		return nil
	}
	at := locs[len(locs)-1]
	left, right := question[:at[0]], question[at[1]:]
	if i := strings.IndexAny(right, ",;?"); i >= 0 {
		right = right[:i]
	}
	if i := strings.LastIndexAny(left, ",;:"); i >= 0 {
		left = left[i+1:]
	}
	rw := trimArticles(textseg.Words(right))
	lw := trimArticles(textseg.Words(left))
	if len(lw) > maxSideWords {
		lw = trimArticles(lw[len(lw)-maxSideWords:])
	}
	var out []string
	for _, ws := range [][]string{lw, rw} {
		if !slices.ContainsFunc(ws, nameWord) {
			return nil
		}
		out = append(out, strings.ToLower(strings.Join(ws, " ")))
	}
	return out
}

// trimArticles drops the articles a phrase opens with.
func trimArticles(ws []string) []string {
	for len(ws) > 0 && (strings.EqualFold(ws[0], "the") || strings.EqualFold(ws[0], "a") || strings.EqualFold(ws[0], "an")) {
		ws = ws[1:]
	}
	return ws
}

// subject is the words of a text's first sentence before its first verb
// of being or happening: what the sentence, and so the text, is about.
func subject(text string) []string {
	ss := sentences(text)
	if len(ss) == 0 {
		return nil
	}
	ws := textseg.Words(ss[0])
	for i, w := range ws {
		switch strings.ToLower(w) {
		case "is", "was", "are", "were", "took", "has", "had", "became", "refers":
			return ws[:i]
		}
	}
	return ws
}

// askedWindow is how many content words on each side of the wh-word make
// the relation a question asks about.
const askedWindow = 4

var (
	clauseRE = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'’.\-]*|[,;:()]`)
	whWords  = map[string]bool{"what": true, "which": true, "who": true, "whom": true, "whose": true, "when": true, "where": true, "how": true, "why": true}
	// clauseEnds bound the clause of the wh-word: punctuation and the
	// relative words that open another clause ("a comarca whose
	// administrative centre is which town").
	clauseEnds = map[string]bool{",": true, ";": true, ":": true, "(": true, ")": true, "that": true, "which": true, "who": true, "whom": true, "whose": true, "where": true, "when": true}
)

// asked is the terms of the relation a question asks about: the content
// words of the wh-word's own clause nearest to it ("took place on which
// road" → took, place, road; "What is the name of the book written by
// John Edmunds" → name, book, written; names are left out). The
// interrogative is the wh-word that opens the question ("In which year
// …"), else its last one ("… coached by whom?"); an earlier one is a
// relative pronoun.
func asked(question string) map[string]bool {
	written := clauseRE.FindAllString(question, -1)
	toks := make([]string, len(written))
	for i, t := range written {
		toks[i] = strings.ToLower(t)
	}
	at := -1
	for i := 0; i < min(3, len(toks)); i++ {
		if whWords[toks[i]] {
			at = i
			break
		}
	}
	if at < 0 {
		for i := len(toks) - 1; i >= 0; i-- {
			if whWords[toks[i]] {
				at = i
				break
			}
		}
	}
	out := map[string]bool{}
	if at < 0 {
		return out
	}
	take := func(from, step int) {
		for i, n := from, 0; i >= 0 && i < len(toks) && n < askedWindow && !clauseEnds[toks[i]]; i += step {
			if english.IsStopWord(toks[i]) || i > 0 && textseg.Capitalised(written[i]) {
				continue // a name says which thing, not what is asked of it
			}
			n++
			analyze.TermsFunc(toks[i], func(t string) { out[t] = true })
		}
	}
	take(at+1, 1)
	if at >= 3 {
		take(at-1, -1)
	}
	return out
}

// hasAnswerType reports whether a sentence holds an answer of the kind,
// beyond what the question itself says.
func hasAnswerType(kind int, sentence, question string) bool {
	var re *regexp.Regexp
	switch kind {
	case dateAnswer:
		re = yearRE
	case numberAnswer:
		re = numRE
	case placeAnswer:
		re = placeRE
	case personAnswer:
		re = personRE
	default:
		return false
	}
	for _, m := range re.FindAllString(sentence, -1) {
		if kind == placeAnswer || !strings.Contains(question, m) {
			return true
		}
	}
	return false
}
