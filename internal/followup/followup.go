// Package followup reads a follow-up question against the conversation
// before it: the names a question asks about, and the subject a pronoun
// points back at ("When did he die?" after "Who was Giuseppe Verdi?").
// Q&A sessions and research threads both use it.
package followup

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/textseg"
)

// Names are the names of a question and its numbers, as written
// (textseg.NamesAndNumbers).
func Names(q string) []string { return textseg.NamesAndNumbers(q) }

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
