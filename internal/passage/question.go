package passage

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/followup"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// Type is the kind of answer a question asks for, read from its wording
// in English or Korean. It decides which sentence of a matching window
// answers: "The default value is 6700." for a default, the command line
// for a how-to.
type Type int

// Question types.
const (
	Other      Type = iota
	Default         // a setting's default value
	Number          // how many, how much, how long
	HowTo           // how to do something; which option, command or menu
	Definition      // what X is, does or means
	Difference      // the difference between A and B
	YesNo           // can I, does it, is it
	Time            // when, which year
	Person          // who
	Place           // where
)

// String names a type.
func (t Type) String() string {
	return [...]string{"other", "default", "number", "how-to", "definition", "difference", "yes/no", "time", "person", "place"}[t]
}

// The question grammar: patterns over the lower-cased question, in the
// order they are tried (a default asked with "how many" is a default).
var typeRules = []struct {
	t  Type
	re *regexp.Regexp
}{
	{Difference, regexp.MustCompile(`\bdifference between\b|\bdiffer(?:s|ence)?\b|\bvs\.?\s|\bversus\b|차이`)},
	{Default, regexp.MustCompile(`\bby default\b|\bdefault (?:value|setting|mode|is)\b|\bdefaults? to\b|\bwhat(?:'s|’s| is| are) the default\b|기본값|기본으로|기본 설정`)},
	{Number, regexp.MustCompile(`\bhow (?:many|much|long|old|large|big|often)\b|\bwhat (?:number|percentage|size)\b|\bwhat(?:'s|’s| is| are) the (?:largest|smallest|biggest|highest|lowest|maximum|minimum|longest|shortest)(?: [\w-]+){0,2} (?:size|number|length|width|height|value|count|amount|limit|depth|age|timeout|duration|speed)\b|\bwhich exit code\b|몇\s*(?:개|번|일|시간|분|초|명|가지)?|얼마`)},
	{HowTo, howToRE},
	{Definition, regexp.MustCompile(`^what (?:is|are|does|do)\b|\bwhat does .* (?:do|mean)\b|\bmean\b|무엇인가요|뭔가요|무엇을 하|의미`)},
	{Time, regexp.MustCompile(`^when\b|\bwhat date\b|` + releasePattern + `|언제`)},
	{Person, regexp.MustCompile(`^who\b|\bwho (?:made|wrote|created|developed)\b|누가|누구`)},
	{Place, regexp.MustCompile(`^where\b|어디`)},
	{YesNo, yesNoRE},
}

// dateAsked matches a question that asks for a date, not a release: "on
// what date", "what day", "출시일은 언제", "날짜".
var dateAsked = regexp.MustCompile(`\b(?:what|which) (?:date|day)\b|\bon what\b.*\bdate\b|날짜|며칠|(?:출시|발표|배포|발매|공개|마감|시작|종료|생|기념|릴리스|릴리즈)일(?:은|는|이)?\s*언제`)

// releasePattern matches a question that asks for a release or a year,
// not only when: "which release", "since which version", "what year".
const releasePattern = `\bwhat year\b|\bwhich (?:[\w.-]+ ){0,2}(?:year|release|version)\b|\bin which (?:release|version)\b|\bsince which\b`

var releaseAsked = regexp.MustCompile(releasePattern)

// yesNoRE opens a question that asks whether: its answer is yes or no,
// whatever amount it names ("Is there a limit on how long …?").
var yesNoRE = regexp.MustCompile(`^(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|may)\b`)

// asksDate reports a question (lower-cased) that asks on what day
// something happens: its answer is a date (a year, a month and day), not a
// version number.
func asksDate(q string) bool { return dateAsked.MatchString(q) }

// TypeOf reads a question's type; Other when none applies.
func TypeOf(question string) Type {
	q := strings.ToLower(strings.TrimSpace(lastSentence(question)))
	for _, r := range typeRules {
		if r.t == Number && unchosen.MatchString(q) && !howToRE.MatchString(q) && !whyRE.MatchString(q) {
			// What happens when nothing is chosen is the default ("how
			// many times … if I don't tell it how many loops to run"),
			// unless the question asks how to do something or why.
			return Default
		}
		if r.re.MatchString(q) {
			return r.t
		}
	}
	return Other
}

// unchosen matches a question that asks what happens when a setting is
// not given: "if I don't pass an encoding", "if I never configure
// logging", "함수를 따로 고르지 않으면", "아무 설정도 바꾸지 않았을 때".
var unchosen = regexp.MustCompile(`\b(?:if|when) (?:i|you|we) (?:don't|do not|never) (?:pass|tell|give|set|specify|choose|configure|provide)\b|\bnever configured\b|(?:^|\s)(?:고르|지정하|설정하|바꾸|선택하|입력하|정하)지 않(?:으면|았을 때|을 때)`)

// whyRE matches a question that asks for a reason.
var whyRE = regexp.MustCompile(`^why\b|\bwhy (?:does|do|is|are|did|can't|won't)\b|왜`)

// howToRE matches a question that asks how to do something, or which
// option, command or menu does it.
var howToRE = regexp.MustCompile(`^how (?:do|can|could|should|would) (?:i|you|we|one)\b|\bhow to\b|\bwhat(?:'s|’s| is| are) the (?:[\w.-]+ )?(?:syntax|equivalent|command|way) (?:for|of|to)\b|\bwhich (?:[\w.-]+ ){0,2}(?:option|command|flag|setting|configuration|menu|function|method|key|shortcut|statement|pragma|module)s?\b|\bwhat (?:option|command|flag|setting|configuration|menu|function|method|shortcut|statement|pragma)\b|어떻게|방법|어떤 (?:메뉴|명령|옵션|도구|기능|단축키|키)|어느 (?:메뉴|명령|옵션|도구|기능)`)

// lastSentence is the sentence that asks, when a question sets the scene
// first ("I rebased a branch I had already pushed. How can I …?").
func lastSentence(q string) string {
	sp := textseg.Spans(q)
	for i := len(sp) - 1; i >= 0; i-- {
		s := q[sp[i].Start:sp[i].End]
		if strings.HasSuffix(strings.TrimSpace(s), "?") {
			return s
		}
	}
	return q
}

// koreanQuestionWords open the words that ask rather than name: an
// interrogative is never what a question is about.
var koreanQuestionWords = []string{"어느", "어떤", "어떻게", "무엇", "무슨", "뭔", "뭐", "언제", "어디", "누가", "누구", "몇", "얼마", "왜"}

// koreanQuestionEndings close a question's predicate.
var koreanQuestionEndings = []string{"습니까", "ㅂ니까", "나요", "까요", "가요", "니까", "는지", "을까", "ㄹ까", "죠", "요"}

// Content is a question without the words that only ask: Korean
// interrogatives ("어느", "무엇을") and a predicate closing a clause that
// asks (the question's last word, or one a comma or question mark ends:
// "켜져 있나요, 꺼져 있나요?") that, its question ending cut, is under two
// syllables ("좋나요", "되나요", "있나요"). English question words are stop
// words to the analyser already; the "many", "much", "long" or "often"
// of "how many" and the like is left out here.
func Content(question string) string {
	fields := strings.Fields(question)
	out := fields[:0:0]
	for i, f := range fields {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if asks(w) || i > 0 && howMuch(fields[i-1], w) {
			continue
		}
		last := i == len(fields)-1
		if (last || strings.HasSuffix(f, ",") || strings.HasSuffix(f, "?")) && hangulWord(w) {
			stem, asked := w, last
			for _, e := range koreanQuestionEndings {
				if strings.HasSuffix(stem, e) {
					// Inside a question a bare "요" may end a noun
					// ("필요,"), so it alone does not mark a word as
					// asking.
					stem, asked = strings.TrimSuffix(stem, e), last || e != "요"
					break
				}
			}
			if asked && utf8.RuneCountInString(stem) < 2 {
				continue
			}
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

// howMuch reports the second word of "how many", "how much", "how long"
// or "how often": the interrogative asks for an amount and names nothing
// (a sentence saying "many" or "long" holds no more of the question).
func howMuch(prev, w string) bool {
	prev = strings.TrimFunc(prev, func(r rune) bool { return !unicode.IsLetter(r) })
	if !strings.EqualFold(prev, "how") {
		return false
	}
	switch strings.ToLower(w) {
	case "many", "much", "long", "often":
		return true
	}
	return false
}

func asks(w string) bool {
	if !hangulWord(w) {
		return false
	}
	for _, q := range koreanQuestionWords {
		if strings.HasPrefix(w, q) {
			return true
		}
	}
	return false
}

func hangulWord(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return textseg.IsHangul(r)
}

// Marked are the names a question gives of particular things: runs of
// capitalised words and numbers (followup.Names: "Sydney Opera House"),
// acronyms ("LFS"), code and file names ("gc.auto", ".psd",
// "--reset-author"). A knowledge base that holds none of a name's words
// together does not speak of that thing.
func Marked(question string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		// A Korean particle after a Latin name is not part of it
		// ("Writer에서", "2.4에").
		if i := strings.IndexFunc(w, textseg.IsHangul); i > 0 {
			w = strings.TrimRightFunc(w, textseg.IsHangul)
		}
		if w != "" && !seen[w] && len(analyze.Terms(w)) > 0 {
			seen[w] = true
			out = append(out, w)
		}
	}
	// A Korean particle after a Latin word ends the name there ("GBR과
	// GIH" is two names).
	var names []string
	for _, n := range followup.Names(question) {
		var run []string
		for _, w := range strings.Fields(n) {
			run = append(run, w)
			if i := strings.IndexFunc(w, textseg.IsHangul); i > 0 {
				names = append(names, strings.Join(run, " "))
				run = nil
			}
		}
		if len(run) > 0 {
			names = append(names, strings.Join(run, " "))
		}
	}
	for _, n := range names {
		add(AsWritten(question, n))
	}
	inName := map[string]bool{}
	for _, n := range names {
		for _, w := range strings.Fields(n) {
			inName[w] = true
		}
	}
	for _, f := range strings.Fields(question) {
		w := strings.TrimSuffix(strings.Trim(f, `"'“”‘’()[]{},;:?!`), ".")
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i] // a call names its function ("fs.watch(dir,")
		}
		if !inName[w] && codeName(w) {
			add(w)
		}
	}
	return out
}

// AsWritten is a name of several words as the question writes it, the
// marks between its words kept ("ECONNREFUSED ::1", not "ECONNREFUSED
// 1"), when its words follow one another there with only spaces and
// marks between them; else the name.
func AsWritten(question, name string) string {
	ws := strings.Fields(name)
	if len(ws) < 2 {
		return name
	}
	start := strings.Index(question, ws[0])
	if start < 0 {
		return name
	}
	end := start + len(ws[0])
	for _, w := range ws[1:] {
		i := strings.Index(question[end:], w)
		if i < 0 || strings.IndexFunc(question[end:end+i], wordRune) >= 0 {
			return name
		}
		end += i + len(w)
	}
	return question[start:end]
}

// codeName is an acronym or a code or file name: mostly capitals, or a
// dot, slash or underscore inside, or an option's leading dash.
func codeName(w string) bool {
	var upper, letters int
	for _, r := range w {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	switch {
	case letters == 0:
		return false
	case upper >= 2 && upper*2 >= letters:
		return true
	case strings.HasPrefix(w, "-"):
		return true
	}
	return strings.ContainsAny(strings.Trim(w, "._/"), "._/") || strings.HasPrefix(w, ".")
}
