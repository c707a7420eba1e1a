// Package analyze turns text into search terms and detects its language.
//
// Latin-script words are lower-cased, stop words dropped and the rest
// Snowball-stemmed (English). Hangul, Han and Kana runs, which whitespace does
// not split into words, become overlapping character bigrams: a Korean query
// and passage rarely share a whole word (한글을 / 한글의) but do share bigrams
// (한글), so BM25 over bigrams finds them.
package analyze

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
	"github.com/kljensen/snowball/english"

	"github.com/quarryhq/quarry/internal/memo"
)

// termMemo holds each word's term: corpora repeat words far more than
// they add new ones (internal/memo keeps it its size however many new
// words — names, typos, hashes — a long-lived process reads).
var termMemo = memo.New[string](1 << 17)

// maxWordBytes is the longest word that is a term.
const maxWordBytes = 64

// term is a lower-cased word's term: "" for a stop word, a word longer
// than maxWordBytes, or one stemmed to nothing.
func term(w []byte) string {
	if len(w) > maxWordBytes {
		return ""
	}
	if t, ok := termMemo.GetBytes(w); ok {
		return t
	}
	word, t := string(w), ""
	if !english.IsStopWord(word) && !contraction(word) {
		t = english.Stem(word, false)
	}
	termMemo.Put(word, t)
	return t
}

// contraction reports a stop word contracted with its clitic: "I've",
// "it's", "you're", "don't", "isn't", "won't". The stop list is one for
// words split at the apostrophe ("don" and "t" are both on it); Terms
// keeps a contraction whole for the stemmer, so it is matched here. A
// name's possessive ("Django's") is no contraction.
func contraction(word string) bool {
	i := strings.IndexByte(word, '\'')
	if i <= 0 {
		return false
	}
	base, clitic := word[:i], word[i+1:]
	switch clitic {
	case "t":
		aux, ok := strings.CutSuffix(base, "n")
		return ok && (english.IsStopWord(aux) || auxiliaries[aux])
	case "s", "ve", "ll", "re", "d", "m":
		return english.IsStopWord(base) || pronouns[base]
	}
	return false
}

// auxiliaries are the verbs a "n't" contracts that the stop list lacks,
// as they stand before it ("can't" is "ca" and "n't", "won't" "wo").
var auxiliaries = map[string]bool{"ca": true, "wo": true, "sha": true, "ai": true, "could": true, "would": true, "must": true, "need": true, "might": true, "dare": true}

// pronouns are the words before a "'s", "'ll", "'re", "'ve", "'d" or "'m"
// that the stop list lacks: "let's", "who's", "one's" ("there's" and
// "that's" contract words on it).
var pronouns = map[string]bool{"let": true, "who": true, "everyone": true, "everything": true, "something": true, "nothing": true, "one": true}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Han, r) ||
		unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// Terms returns the search terms of text in order, duplicates kept.
func Terms(text string) []string {
	var out []string
	TermsFunc(text, func(t string) { out = append(out, t) })
	return out
}

// TermsFunc calls fn for each search term of text.
func TermsFunc(text string, fn func(string)) {
	var word []byte
	var cjk []rune
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		t := term(word)
		word = word[:0]
		if t != "" {
			fn(t)
		}
	}
	flushCJK := func() {
		cjk = trimEnding(cjk)
		switch len(cjk) {
		case 0:
			return
		case 1:
			fn(string(cjk))
		case 2:
			fn(string(cjk))
			if nounParticle(cjk) {
				// A one-syllable noun and its particle ("키를", "셀은")
				// is the noun too: "키는" and "키를" are one key.
				fn(string(cjk[:1]))
			}
		default:
			for i := 0; i+1 < len(cjk); i++ {
				fn(string(cjk[i : i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		if r < utf8.RuneSelf { // ASCII, most of most texts: as below, faster
			switch {
			case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
				word = append(word, byte(r))
			case 'A' <= r && r <= 'Z':
				word = append(word, byte(r-'A'+'a'))
			case r == '\'':
				if len(word) > 0 {
					word = append(word, '\'')
				}
				continue
			default:
				flushWord()
			}
			if len(cjk) > 0 {
				flushCJK()
			}
			continue
		}
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = utf8.AppendRune(word, unicode.ToLower(r))
		case r == '\'' || r == '’':
			// keep contractions together for the stemmer ("don't")
			if len(word) > 0 {
				word = append(word, '\'')
			}
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
}

// koreanEndings are verb endings and particles of two or more syllables.
// Cut from a word's end, they no longer give bigrams that match other
// words' endings by chance ("납부하나요" and "납부하면" share "부하"), so a
// question matches on its nouns and stems. One-syllable particles stay:
// cutting them would break nouns that end in the same syllable.
var koreanEndings = func() [][]rune {
	var out [][]rune
	for _, e := range strings.Fields(`했습니까 하였습니다 했습니다 되었습니다 됐습니다 합니까 입니까 습니까 인가요 했나요 하나요 하세요 하였다 되었다 합니다 됩니다 입니다 이에요 나요 까요 세요 해요 했다 됐다 한다 된다 이다 하면 해야 해서 하여 하는 하고 하게 에서 으로 까지 부터 에게 께서 에는 에도 으로는 에서는 는요 은요`) {
		out = append(out, []rune(e))
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}()

// trimEnding cuts the longest Korean ending off a run of Hangul that
// keeps two syllables after it, or one before a copula ("개인가요", "how
// many is it", is "개").
func trimEnding(run []rune) []rune {
	if len(run) < 3 || !unicode.Is(unicode.Hangul, run[0]) {
		return run
	}
	if cut, ok := cutEnding(run, koreanEndings, nil); ok {
		return cut
	}
	for _, e := range copulas {
		if len(run)-len(e) == 1 && slices.Equal(run[1:], e) {
			return run[:1]
		}
	}
	return run
}

// stemEndings are what KoreanStem cuts: the endings Terms cuts
// (koreanEndings), the verb endings a question puts on a noun made a verb
// ("공유하려면", "편집할", "연결된") and the one-syllable particles
// ("이미지를", "사용자가", "항목의"), longest first.
var stemEndings = func() [][]rune {
	out := slices.Clone(koreanEndings)
	for _, e := range strings.Fields(`하려면 으려면 려면 되는 할 한 된 을 를 이 가 은 는 의 에 로 와 과 도 만`) {
		out = append(out, []rune(e))
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}()

// KoreanStem returns a word written in Hangul syllables (punctuation
// after it aside) without its ending, the longest of stemEndings that
// leaves two syllables and, for a particle that has two forms, is the
// form that follows the syllable before it: 이, 을, 은 and 과 after a
// final consonant, 가, 를, 는 and 와 after a vowel ("이미지를" →
// "이미지", "공유하려면" → "공유", but "디스플레이" is no "디스플레" with
// 이); "" when it has none or is not such a word. Terms keeps the
// one-syllable particles, as cutting them would break the nouns that
// end in the same syllable ("가을"); a reader matching a question's word
// against a text may take the word as held where its stem is. A noun
// whose last syllable reads as a particle after the one before it is
// cut all the same ("해상도" → "해상").
func KoreanStem(word string) string {
	run := []rune(strings.TrimRightFunc(word, unicode.IsPunct))
	if len(run) < 3 || slices.ContainsFunc(run, func(r rune) bool { return !syllable(r) }) {
		return ""
	}
	if cut, ok := cutEnding(run, stemEndings, agrees); ok {
		return string(cut)
	}
	return ""
}

// cutEnding cuts the first of endings (longest first) that run ends in
// with two syllables before it and that fits the syllable before it
// (fits nil: any ending fits).
func cutEnding(run []rune, endings [][]rune, fits func(before rune, e []rune) bool) ([]rune, bool) {
	for _, e := range endings {
		if n := len(run) - len(e); n >= 2 && slices.Equal(run[n:], e) && (fits == nil || fits(run[n-1], e)) {
			return run[:n], true
		}
	}
	return run, false
}

// agrees reports whether ending e may follow syllable r: a particle
// with a form after a final consonant and one after a vowel must be the
// form r calls for; any other ending may follow any syllable.
func agrees(r rune, e []rune) bool {
	if len(e) != 1 {
		return true
	}
	switch e[0] {
	case '이', '을', '은', '과':
		return closed(r)
	case '가', '를', '는', '와':
		return !closed(r)
	}
	return true
}

// syllable reports a Hangul syllable (not a jamo).
func syllable(r rune) bool { return 0xAC00 <= r && r <= 0xD7A3 }

// closed reports a Hangul syllable that ends in a consonant.
func closed(r rune) bool { return (r-0xAC00)%28 != 0 }

// copulas are the endings of "is N" questions and statements ("이다"
// is not one: "사이다" is cider).
var copulas = [][]rune{[]rune("인가요"), []rune("입니까"), []rune("입니다"), []rune("이에요")}

// nounParticle reports two syllables that read as a one-syllable noun
// and its topic or object particle: 는 or 를 after a syllable that ends
// in a vowel ("키는", "키를"), 은 or 을 after one that ends in a consonant
// ("셀은", "책을"), as Korean writes them. A noun that ends in such a
// syllable ends otherwise: "가을" (autumn) and "수은" (mercury) have 을
// and 은 after a vowel.
func nounParticle(run []rune) bool {
	if len(run) != 2 || !syllable(run[0]) {
		return false // not two syllables of Hangul
	}
	switch run[1] {
	case '는', '를', '은', '을':
		return agrees(run[0], run[1:])
	}
	return false
}

// Language returns an ISO 639-1 code for text ("ko", "en", …) or "und" when
// it cannot tell.
func Language(text string) string {
	var letters, hangul, kana, han int
	sample := text
	if len(sample) > 4000 {
		cut := 4000
		for cut > 0 && !utf8.RuneStart(sample[cut]) {
			cut--
		}
		sample = sample[:cut]
	}
	for _, r := range sample {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
				letters++
			}
			continue
		}
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		switch {
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Han, r):
			han++
		}
	}
	if letters < 3 {
		return "und"
	}
	switch {
	case float64(hangul)/float64(letters) > 0.3:
		return "ko"
	case float64(kana)/float64(letters) > 0.1:
		return "ja"
	case float64(han)/float64(letters) > 0.3:
		return "zh"
	}
	words, stop, the := 0, 0, 0
	for w := range strings.FieldsFuncSeq(strings.ToLower(sample), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words++
		if english.IsStopWord(w) {
			stop++
			if w == "the" {
				the++
			}
		}
	}
	// English prose is 28% or more English function words (of 10,000
	// generated SciFact texts, 95% are; of 490 Debian manual pages in 17
	// other languages, none is but two that are English under a Spanish
	// title): it needs no trigram statistics, the most costly step of an
	// ingest. English thick with names, numbers or code has fewer (15% or
	// more), and then "the", its commonest word and no other language's,
	// is 2% or more of its words: of the seven documentation sets'
	// 6,200 chunks that came to the trigrams, the 3,677 this reads as
	// English were read so there too, and no other language's was.
	if words >= 20 && (stop*100 >= 28*words || stop*100 >= 15*words && the*100 >= 2*words) {
		return "en"
	}
	info := whatlanggo.Detect(sample)
	if info.Lang == whatlanggo.Eng && info.Confidence > 0.05 || info.IsReliable() {
		if code := info.Lang.Iso6391(); code != "" {
			return code
		}
	}
	// A text too short for the trigram detector ("Verdi died in Milan on
	// 27 January 1901.") is English when a fifth of its words are English
	// function words; a short text is not dropped from English searches
	// for want of statistics.
	if words > 0 && stop*5 >= words {
		return "en"
	}
	return "und"
}
