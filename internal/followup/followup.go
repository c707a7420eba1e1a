// Package followup reads a follow-up question against the conversation
// before it: the names a question asks about, and the subject a pronoun
// points back at ("When did he die?" after "Who was Giuseppe Verdi?").
// Q&A sessions and research threads both use it.
package followup

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// questionWords open questions and are capitalised for that alone.
var questionWords = map[string]bool{"who": true, "whom": true, "whose": true, "what": true, "which": true, "when": true, "where": true, "why": true, "how": true,
	"is": true, "are": true, "was": true, "were": true, "do": true, "does": true, "did": true, "in": true, "on": true, "at": true, "the": true, "a": true, "an": true,
	"can": true, "could": true, "has": true, "have": true, "had": true, "and": true, "of": true, "for": true, "to": true, "from": true, "by": true,
	// Requests open with a verb, capitalised for that alone.
	"describe": true, "tell": true, "explain": true, "list": true, "give": true, "show": true, "compare": true, "summarize": true,
	"summarise": true, "define": true, "name": true, "find": true}

// connectors may stand inside a name ("Bank of England", "Leonardo da
// Vinci").
var connectors = map[string]bool{"of": true, "the": true, "de": true, "da": true, "di": true, "von": true, "van": true, "la": true, "le": true, "del": true}

// Names are the runs of capitalised words (connectors allowed inside) and
// the numbers of a question, as written.
func Names(q string) []string {
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

// pronouns point back at what a conversation was about; possessives take
// the subject with "'s".
// "it" is left out: it is as often no one ("How long does it take?").
var pronouns = map[string]bool{"he": true, "she": true, "they": true, "him": true, "her": true, "them": true,
	"his": true, "their": true, "hers": true, "theirs": true}

var possessive = map[string]bool{"his": true, "their": true}

// Resolve rewrites a follow-up that names nothing and points back with a
// pronoun ("When did he die?") with the subject of the conversation: the
// longest name of the latest earlier question (earlier, oldest first) that named one ("Who was
// Giuseppe Verdi?"), so that search and answer are about it ("When did
// Giuseppe Verdi die?") and not about whatever else shares its words.
// Other questions are returned as they are.
func Resolve(q string, earlier []string) string {
	if len(Names(q)) > 0 {
		return q
	}
	subject := ""
	for i := len(earlier) - 1; i >= 0 && subject == ""; i-- {
		for _, n := range Names(earlier[i]) {
			if len(strings.Fields(n)) > len(strings.Fields(subject)) && !unicode.IsDigit(firstRune(n)) {
				subject = n
			}
		}
	}
	if subject == "" {
		return q
	}
	var b strings.Builder
	done := false
	word := func(w string) {
		if done {
			b.WriteString(w)
			return
		}
		done = replaceWord(&b, w, subject)
	}
	start := 0
	for i, r := range q {
		if unicode.IsLetter(r) || r == '\'' {
			continue
		}
		word(q[start:i])
		b.WriteRune(r)
		start = i + utf8.RuneLen(r)
	}
	word(q[start:])
	if !done {
		return q
	}
	return b.String()
}

// replaceWord writes w, or subject when w is a pronoun, and reports
// whether it replaced it.
func replaceWord(b *strings.Builder, w, subject string) bool {
	lower := strings.ToLower(w)
	if !pronouns[lower] {
		b.WriteString(w)
		return false
	}
	b.WriteString(subject)
	if possessive[lower] {
		b.WriteString("'s")
	}
	return true
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
