package analyze

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"The crawlers were handling stale pages.", []string{"crawler", "handl", "stale", "page"}},
		{"COVID-19 vaccines", []string{"covid", "19", "vaccin"}},
		{"한글을 배운다", []string{"한글", "글을", "배운", "운다"}},
		{"한", []string{"한"}},
		{"", nil},
		// A stop word's contraction is a stop word; a name's possessive
		// is the name.
		{"I've switched, and I don’t know why it doesn't work, can't start or won't open; it's Django's.", []string{"switch", "know", "work", "start", "open", "django"}},
		{"you're right, we'll see, I'd say I'm sure that's it, let's go", []string{"right", "see", "say", "sure", "go"}},
		{"o'clock rock'n'roll", []string{"o'clock", "rock'n'rol"}},
	}
	for _, tt := range tests {
		if got := Terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestKoreanParticlesShareBigrams(t *testing.T) {
	t.Parallel()
	q, p := Terms("한글의 역사"), Terms("세종대왕이 한글을 창제했다")
	if !slices.ContainsFunc(q, func(s string) bool { return slices.Contains(p, s) }) {
		t.Fatalf("no shared term between %q and %q", q, p)
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"The knowledge base crawls a website and answers questions about it.": "en",
		"인터넷 서비스는 언제 개통되었나요? 설치 기사가 방문합니다.":                                   "ko",
		"!!":  "und",
		"123": "und",
		// Too short for trigram statistics, English by its function words.
		"Verdi died in Milan on 27 January 1901.": "en",
		"La casa es grande.":                      "und",
		// English prose of many function words needs no trigram statistics;
		// other languages' prose, long enough for them, is not taken for it.
		"It does this by searching the PATH for executable files matching the names of the arguments, and it does not follow symbolic links.":                  "en",
		"Die Datenbank speichert jede Seite, die der Crawler findet, und beantwortet Fragen zu ihrem Inhalt mit Zitaten aus den gelesenen Texten.":             "de",
		"La base de connaissances enregistre chaque page que le robot trouve et répond aux questions sur son contenu avec des citations des textes lus.":       "fr",
		"La base de conocimiento guarda cada página que encuentra el rastreador y responde preguntas sobre su contenido con citas de los textos que ha leído.": "es",
		// English thick with names and code (under 28% function words,
		// with "the") is English; another language's text of the same
		// names is not.
		"Listing 13-18: Passing the return value of env::args to Config::build\n\nThe env::args function returns an iterator! Rather than collecting the iterator values into a vector and then passing a slice to Config::build, now we’re passing ownership of the iterator returned from env::args to Config::build directly.\n\npub struct Config {\npub query: String,\npub file_path: String,\npub ignore_case: bool,\n}\n\nimpl Config {\npub fn build(\nmut args: impl Iterator<Item = String>,\n) -> Result<Config, &'static str> {\nif args.len() < 3 {\nreturn Err(\"not enough arguments\");\n}\nlet query = args[1].clone();\nlet file_path = args[2].clone();\nlet ignore_case = env::var(\"IGNORE_CASE\").is_ok();": "en",
		"La funzione PyImport_ImportModuleLevelObject importa il modulo indicato, come PyImport_ImportModuleEx; globals, locals, fromlist e level definiscono il contesto del pacchetto; restituisce un riferimento PyObject nuovo, oppure NULL con ImportError.": "it",
	}
	for in, want := range tests {
		if got := Language(in); got != want {
			t.Errorf("Language(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKoreanEndings: a question's verb ending no longer matches another
// verb's ending by chance; nouns and stems still match.
func TestKoreanEndings(t *testing.T) {
	q := Terms("요금은 언제 납부하나요")
	for _, want := range []string{"요금", "언제", "납부"} {
		if !slices.Contains(q, want) {
			t.Errorf("%q lacks %q: %v", "요금은 언제 납부하나요", want, q)
		}
	}
	if slices.Contains(q, "부하") || slices.Contains(Terms("납부하면 됩니다"), "부하") {
		t.Errorf("the ending bigram 부하 is still a term: %v", q)
	}
	if got := Terms("개통했나요"); !slices.Equal(got, Terms("개통되었다")) {
		t.Errorf("개통했나요 %v and 개통되었다 %v differ", got, Terms("개통되었다"))
	}
	if got := Terms("국가는"); !slices.Contains(got, "국가") {
		t.Errorf("a two-syllable noun keeps its bigram: %v", got)
	}
}

// TestKoreanOneSyllableNouns: a one-syllable noun with its particle is
// the noun ("키는", "키를": the key), and "how many is it" (개인가요) is
// the counter, not "개인" (a person).
func TestKoreanOneSyllableNouns(t *testing.T) {
	t.Parallel()
	q, p := Terms("누를 키는 무엇인가요"), Terms("F9 키를 누릅니다")
	if !slices.Contains(q, "키") || !slices.Contains(p, "키") {
		t.Errorf("키는 %v and 키를 %v share no term", q, p)
	}
	if got := Terms("독은 몇 개인가요"); !slices.Contains(got, "개") || slices.Contains(got, "개인") {
		t.Errorf("몇 개인가요: %v", got)
	}
	if got := Terms("국가는 사이에"); slices.Contains(got, "국") || slices.Contains(got, "사") {
		t.Errorf("a two-syllable noun is not cut: %v", got)
	}
	// 은 and 을 follow a consonant, 는 and 를 a vowel: a noun that ends
	// otherwise is a noun, and so is cider.
	for _, w := range []string{"가을", "마을", "수은", "사이다"} {
		if got := Terms(w); len(got) == 0 || slices.ContainsFunc(got, func(t string) bool { return len([]rune(t)) == 1 }) {
			t.Errorf("%s: %v", w, got)
		}
	}
	if got := Terms("셀은 책을"); !slices.Contains(got, "셀") || !slices.Contains(got, "책") {
		t.Errorf("셀은 책을: %v", got)
	}
}

// BenchmarkLanguage: a source's language, detected once per source at
// ingest, on a 1 KB English paragraph and a French one.
func BenchmarkLanguage(b *testing.B) {
	en := strings.Repeat("The crawler handles stale pages by re-crawling them every five minutes, and a page that fails three times is marked stale and kept. ", 8)
	fr := strings.Repeat("La base de connaissances enregistre chaque page que le robot trouve et répond aux questions sur son contenu avec des citations. ", 8)
	for _, tc := range []struct{ name, text string }{{"en", en}, {"fr", fr}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				Language(tc.text)
			}
		})
	}
}

// referenceTerms is TermsFunc as first written, each word built as a
// string and stemmed through no cache: the terms stored in knowledge
// bases were made by it, so the cached one must agree.
func referenceTerms(text string) []string {
	var out []string
	var word strings.Builder
	var cjk []rune
	flushWord := func() {
		if word.Len() == 0 {
			return
		}
		w := word.String()
		word.Reset()
		if len(w) > 64 || english.IsStopWord(w) || contraction(w) {
			return
		}
		if s := english.Stem(w, false); s != "" {
			out = append(out, s)
		}
	}
	flushCJK := func() {
		cjk = trimEnding(cjk)
		switch len(cjk) {
		case 0:
			return
		case 1:
			out = append(out, string(cjk))
		case 2:
			out = append(out, string(cjk))
			if nounParticle(cjk) {
				out = append(out, string(cjk[:1]))
			}
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’':
			if word.Len() > 0 {
				word.WriteRune('\'')
			}
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"", "Running running runner RUNS: stems, stop words (the, a) and 3.5", "don't can’t 'quoted'", "한글을 한글의 납부하나요", "글을 키를 가을", "ÀÉÎ straße İstanbul", "\xff\xfeab\xc3cd", strings.Repeat("a", 65) + " " + strings.Repeat("b", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		// Twice: the second reads the words the first left in the cache.
		for range 2 {
			if got, want := Terms(text), referenceTerms(text); !slices.Equal(got, want) {
				t.Fatalf("Terms(%q) = %q, want %q", text, got, want)
			}
		}
	})
}

func BenchmarkTerms(b *testing.B) {
	text := strings.Repeat("The crawler re-crawls stale pages every five minutes, and the index keeps up. ", 12)
	for b.Loop() {
		Terms(text)
	}
}

// TestKoreanStem: a word's particle or ending is cut where two syllables
// stay, the longest first; a word of two syllables, or not all Hangul,
// has no stem.
func TestKoreanStem(t *testing.T) {
	for word, want := range map[string]string{
		"이미지를":   "이미지",
		"공유하려면":  "공유",
		"편집할":    "편집",
		"연결된":    "연결",
		"사용자가":   "사용자",
		"선택하나요?": "선택",
		"메뉴에서":   "메뉴",
		"가을":     "",
		"셀을":     "",
		"Calc에서": "",
		"스프레드시트": "",
		"":       "",
		// Two syllables stay: "으려면" is no ending of "먹으려면".
		"먹으려면": "먹으",
		"개인가요": "",
		// A particle in the form its syllable calls for only; a noun
		// whose end reads as one is cut all the same.
		"디스플레이": "",
		"고양이":   "고양",
		"해상도":   "해상",
		// Hangul syllables only, punctuation after them aside.
		"ㅋㅋ를":     "",
		"이미지를PNG": "",
		"이미지를?!":  "이미지",
	} {
		if got := KoreanStem(word); got != want {
			t.Errorf("KoreanStem(%q) = %q, want %q", word, got, want)
		}
	}
}

func FuzzKoreanStem(f *testing.F) {
	for _, s := range []string{"", "이미지를", "공유하려면?", "가을", "Calc에서", "\xff\xfe를를를"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, word string) {
		stem := KoreanStem(word)
		if stem == "" {
			return
		}
		if !strings.HasPrefix(word, stem) || utf8.RuneCountInString(stem) < 2 || len(stem) >= len(word) {
			t.Fatalf("KoreanStem(%q) = %q: not a shorter prefix of two syllables or more", word, stem)
		}
	})
}
