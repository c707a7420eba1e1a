package textseg

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// backPronouns open a sentence that is about what the one before it
// named; subjectPronouns are those that stand as its subject after an
// opening phrase.
var (
	backPronouns    = map[string]bool{"he": true, "she": true, "they": true, "his": true, "her": true, "their": true, "its": true, "it": true, "this": true, "these": true, "those": true}
	subjectPronouns = map[string]bool{"he": true, "she": true, "it": true, "they": true}
)

// dummyIt opens a sentence whose "it" stands for what follows ("It is
// possible to …", "It is recommended that …"), not for anything before.
var dummyIt = regexp.MustCompile(`^It (?:is|was|may be|can be|will be|would be|should be|might be)(?: not)? \w+ (?:to|that|whether|for)\b`)

// PointsBack reports a sentence whose subject is a pronoun pointing
// back: its first word, or the first after an opening phrase ("Written
// in 1876, it was the first of three concertos").
func PointsBack(text string) bool { return pointsBack(text) != notBack }

// PointsBackAtSentence reports a sentence whose subject is a
// demonstrative standing for what the sentence before it says ("This is
// not the fastest …"), not a pronoun for a person or thing it named
// ("He …", "It …"), which a title can stand for.
func PointsBackAtSentence(text string) bool { return pointsBack(text) == demonstrative }

// How a sentence points back.
const (
	notBack = iota
	pronoun
	demonstrative
)

func pointsBack(text string) int {
	if opener, rest, ok := strings.Cut(text, ", "); ok && len(strings.Fields(opener)) <= maxOpenerWords {
		if w, _, _ := strings.Cut(rest, " "); subjectPronouns[w] {
			return pointsBack(strings.ToUpper(rest[:1]) + rest[1:])
		}
	}
	i := strings.IndexFunc(text, func(r rune) bool { return !unicode.IsLetter(r) })
	if i < 0 {
		i = len(text)
	}
	first := text[:i]
	if !backPronouns[strings.ToLower(first)] || !Capitalised(first) {
		return notBack
	}
	if first == "This" || first == "These" || first == "Those" {
		// "This option …" names its own subject; "This is …" does not.
		if rest := strings.Fields(text[i:]); len(rest) > 0 && backVerbs[strings.ToLower(rest[0])] {
			return demonstrative
		}
		return notBack
	}
	if first == "It" && dummyIt.MatchString(text) {
		return notBack
	}
	return pronoun
}

// maxOpenerWords bounds an opening phrase before a sentence's subject.
const maxOpenerWords = 6

// backVerbs follow a demonstrative that stands alone as a subject.
var backVerbs = map[string]bool{"is": true, "was": true, "are": true, "were": true, "means": true, "makes": true, "allows": true, "lets": true, "can": true, "will": true, "has": true, "have": true}

// continuers are the words a sentence's tail opens with when a line of
// code, a list or a page break cut it from its head: conjunctions,
// prepositions and relative words ("so that if the threshold is …",
// "without making any other changes.", "because there is another
// reference …").
var continuers = wordSet(`so because and or but nor yet which that whose whom where when while whereas since unless until
although though than then thus hence without with within to of for in on at by as if into onto from after before`)

// Continues reports text that opens in lower case with a word that
// continues a sentence (continuers): the tail of a sentence begun
// before it, which quoted alone says half of what its writer said. A
// keyword of a programming language that opens a sentence about it ("for
// loops repeat …", "with statements close …": codeNouns) is not one.
func Continues(text string) bool {
	i := strings.IndexFunc(text, func(r rune) bool { return !unicode.IsLetter(r) })
	if i <= 0 || !continuers[text[:i]] {
		return false
	}
	// A word that is code ("to_json", "if(") is not a continuer.
	if r, _ := utf8.DecodeRuneInString(text[i:]); !unicode.IsSpace(r) && r != ',' {
		return false
	}
	next := strings.Fields(text[i:])
	return len(next) == 0 || !codeNouns[strings.Trim(next[0], ",.;:")]
}

// codeNouns follow a language's keyword that a sentence is about.
var codeNouns = wordSet("loop loops statement statements clause clauses block blocks keyword keywords expression expressions construct constructs")
