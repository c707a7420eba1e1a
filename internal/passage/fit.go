package passage

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// keyNames are the keys a manual names by word, not by letter.
const keyNames = `(?:Enter|Return|Esc|Escape|Tab|Space(?:bar)?|Backspace|Delete|Insert|Home|End|Page ?Up|Page ?Down|PgUp|PgDn)`

var (
	numberRE = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	// codeWordRE is a word a how-to's answer has the user type that is
	// no option: a name in camelCase ("maxBuffer"), keywords in capitals
	// ("VACUUM INTO", "NULLS LAST"; one of five letters or more, as
	// acronyms are shorter: "HTTP API" is none), a file's extension
	// (".cjs"), a key and its value ("force=true"), code in backticks.
	codeWordRE = regexp.MustCompile("\\b[a-z]+[A-Z][A-Za-z0-9]+\\b|\\b[A-Z]{5,}(?: [A-Z]{2,})+\\b|\\b(?:[A-Z]{2,} )+[A-Z]{5,}(?: [A-Z]{2,})*\\b|(?:^|\\s)\\.[a-z][a-z0-9]{0,4}\\b|\\b\\w+=\\S+|`[^`]+`")
	optionRE   = regexp.MustCompile(`(?:^|\s)--?[a-zA-Z][\w-]*|\w+\.\w+\(?|→|⇒|\s>\s|\p{Hangul}+\s-\s\p{Hangul}+`)
	defaultRE  = regexp.MustCompile(`(?i)\bdefaults?\b|\bby default\b|기본`)
	dateRE     = regexp.MustCompile(`(?i)\b(?:1[5-9]|20)\d{2}\b|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.? \d{1,2}\b|\d{4}\s*년|\d{1,2}월\s*\d{1,2}일`)
	// unitAfter follows a number that is an amount, not a year ("2048
	// bytes", "2000 ms").
	unitAfter = regexp.MustCompile(`(?i)^\s*(?:bytes?|[kmg]i?b|ms|seconds?|px|%|개|바이트)`)
	yearRE    = regexp.MustCompile(`\b(?:1[5-9]|20)\d{2}\b|\b\d+\.\d+(?:\.\d+)?\b`)
	defineRE  = regexp.MustCompile(`(?i)\b(?:is|are|was|means|refers to|stands for|describes|specifies|controls|lets|allows)\b|입니다|이다|합니다|말합니다|뜻합니다`)
	polarRE   = regexp.MustCompile(`(?i)\b(?:not|no|never|cannot|can't|only|must|always|unless|instead|also)\b|않|없|수 있|안 됩니다|불가`)
	// countWordRE is an amount written in words: "once", "three", "세 개"
	// ("one", which says "one of the …" as often, and "두 번째", second,
	// are none).
	countWordRE = regexp.MustCompile(`(?i)\b(?:once|twice|thrice|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|hundred|thousand|million)\b|(?:^|\s)(?:한|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s?(?:개|번|가지|명|줄|칸|장)(?:[^째]|$)`)
	// keyRE is a key of the keyboard a sentence has the user press: a
	// function key ("F9"), a combination with a modifier ("Ctrl+Shift+V",
	// "Alt + Enter", "Ctrl-C", "⌘S"), a key of a closed list of names
	// pressed or named as a key ("press Enter", "the Esc key", "Enter
	// 키를", "Enter를 누릅니다"): not a capitalised word before "key"
	// ("the GPG key", "API 키").
	keyRE = regexp.MustCompile(`\bF(?:[1-9]|1[0-9]|2[0-4])\b` +
		`|\b(?:Ctrl|CTRL|Control|Shift|SHIFT|Alt|ALT|Option|Cmd|CMD|Command|Meta|Super)\s*\+\s*[\pL\pN]+(?:\s*\+\s*[\pL\pN]+)*` +
		`|\b(?:Ctrl|CTRL|Alt|ALT|Cmd|Shift)-(?:[A-Z0-9]|F\d{1,2})\b|[⌘⌥⇧⌃]\s*[\pL\pN]` +
		`|(?i:\b(?:press|hit)(?:es|ing)?\s+(?:the\s+)?)` + keyNames + `\b` +
		`|\b` + keyNames + `\s*(?:key\b|키)|\b` + keyNames + `(?:를|을)\s*(?:누르|눌러|누릅)`)
	// keyAsked matches a question that asks which key to press: "keyboard
	// shortcut", "which key do I press", "어떤 키를 누르면", "누를 키는",
	// "단축키"; not one about a table's primary key ("기본 키는 …"), a
	// signing key ("Which key does Git use …?") or a file's "edition key".
	keyAsked = regexp.MustCompile(`\b(?:keyboard shortcuts?|shortcut keys?|hotkeys?|key ?bindings?|key combinations?)\b` +
		`|\b(?:which|what) shortcut\b|\b(?:which|what) keys?\b[^?.]*\b(?:press|hit)\b` +
		`|단축키|(?:^|\s)키(?:를|는|가|로)?\s[^?]*(?:누르|눌러|누릅)|(?:누를|누르는|눌러야\s*(?:할|하는))\s+키`)
	personRE = regexp.MustCompile(`\p{Lu}\p{Ll}+\s+(?:\p{Lu}\.\s+)?\p{Lu}\p{Ll}+`)
	placeRE  = regexp.MustCompile(`\b(?:in|at|from|near)\s+(?:the\s+)?\p{Lu}`)
)

// holdsDate reports whether s holds a date that q (lower-cased) does
// not: a year (not an amount: "2048 bytes"), a month and day, 2025년 or
// 3월 16일.
func holdsDate(s, q string) bool {
	for _, m := range dateRE.FindAllStringIndex(s, -1) {
		d := s[m[0]:m[1]]
		if strings.Contains(q, strings.ToLower(d)) || unitAfter.MatchString(s[m[1]:]) {
			continue
		}
		return true
	}
	return false
}

// asked is what a question asks for, read once: its type, the question
// lower-cased (what a fitting sentence must add to) and whether it asks
// for a value: a date, a release, an amount.
type asked struct {
	kind Type
	q    string
	date bool
	// release: a question of time that asks for a release or a year
	// ("which version"), not only when.
	release bool
	// amount: a question of number that asks for one, not whether
	// ("Is there a limit on how long …?" asks whether).
	amount bool
	// key: it asks which key of the keyboard to press, as a how-to's, a
	// definition's ("누를 키는 무엇인가요?") or another question of no
	// type does; not one that asks for an amount, a time, a default or
	// whether.
	key bool
}

func askedOf(question string) asked {
	a := asked{kind: TypeOf(question), q: strings.ToLower(question)}
	a.date = a.kind == Time && asksDate(a.q)
	a.release = a.kind == Time && !a.date && releaseAsked.MatchString(a.q)
	last := strings.ToLower(strings.TrimSpace(lastSentence(question)))
	a.amount = a.kind == Number && !yesNoRE.MatchString(last)
	a.key = (a.kind == HowTo || a.kind == Definition || a.kind == Other) && keyAsked.MatchString(last)
	return a
}

// countWord reports whether s holds an amount written in words that the
// question does not.
func (a asked) countWord(s string) bool { return a.newIn(countWordRE, s) }

// newIn reports whether s holds a match of re that the question does not
// say: not as a word of its own ("ten" is not in "often"), backticks
// aside.
func (a asked) newIn(re *regexp.Regexp, s string) bool {
	for _, m := range re.FindAllString(s, -1) {
		if m = strings.ToLower(strings.Trim(m, " \t`")); m != "" && !saysWord(a.q, m) {
			return true
		}
	}
	return false
}

// saysWord reports whether q holds w with no letter or digit joined to
// either side of it.
func saysWord(q, w string) bool {
	first, _ := utf8.DecodeRuneInString(w)
	last, _ := utf8.DecodeLastRuneInString(w)
	if !wordRune(first) && !wordRune(last) {
		return strings.Contains(q, w) // a mark ("→") is no word
	}
	for i := 0; ; {
		j := strings.Index(q[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(q[:start])
		after, _ := utf8.DecodeRuneInString(q[end:])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		i = start + 1
	}
}

// wordRune is a rune of a word or a number.
func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// fit reports whether a unit holds the kind of answer the question asks
// for, beyond what the question itself says.
func (a asked) fit(u Unit) bool {
	if u.Kind == Heading {
		return false
	}
	s, q := u.Text, a.q
	newMatch := func(re *regexp.Regexp) bool { return a.newIn(re, s) }
	if a.key && !Ablate["key"] && newMatch(keyRE) {
		return true
	}
	switch a.kind {
	case Default:
		return defaultRE.MatchString(s) && (numberRE.MatchString(s) || newMatch(optionRE) || strings.ContainsAny(s, `"'“`) || strings.Contains(strings.ToLower(s), " is ") || strings.Contains(s, "입니다"))
	case Number:
		return newMatch(numberRE)
	case HowTo:
		return u.Kind == Code || newMatch(optionRE) || !Ablate["codeword"] && newMatch(codeWordRE)
	case Definition:
		return defineRE.MatchString(s)
	case YesNo:
		return polarRE.MatchString(s)
	case Time:
		if a.date {
			return holdsDate(s, q)
		}
		return newMatch(yearRE)
	case Person:
		return newMatch(personRE)
	case Place:
		return newMatch(placeRE)
	}
	return false
}
