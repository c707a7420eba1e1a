package textseg

import (
	"strings"
	"testing"
)

func TestSpans(t *testing.T) {
	t.Parallel()
	text := "Dr. Smith met John F. Kennedy. It rained!  \"Really?\" she said.\n\n한국어 문장입니다. 中文句子。Next. The Piano Concerto in G minor, Op. 33, B. 63, is his only one. See Vol. 2 and pp. 3-4.\n\n7. Simple statements. There are 7. Then 3.1. Scope."
	var got []string
	for _, sp := range Spans(text) {
		got = append(got, text[sp.Start:sp.End])
	}
	want := []string{"Dr. Smith met John F. Kennedy.", "It rained!", `"Really?" she said.`, "한국어 문장입니다. 中文句子。", "Next.", "The Piano Concerto in G minor, Op. 33, B. 63, is his only one.", "See Vol. 2 and pp. 3-4.", "7. Simple statements.", "There are 7.", "Then 3.1.", "Scope."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func FuzzSpans(f *testing.F) {
	f.Add("One. Two! \xff\xfe Three? 四。")
	f.Add("\xc3(. A")
	f.Fuzz(func(t *testing.T, text string) {
		last := 0
		for _, sp := range Spans(text) {
			if sp.Start < last || sp.End > len(text) || sp.Start >= sp.End {
				t.Fatalf("span %+v after %d in %d bytes", sp, last, len(text))
			}
			last = sp.End
		}
	})
}

// TestSentenceKey: two renderings of one sentence share a key; sentences
// that differ in a word, a symbol, a sign or a vowel sign do not.
func TestSentenceKey(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{"The root logger's name is printed as 'root'.", "The root logger’s name is printed as ‘root’."},
		{"shutil --- High-level file operations", "shutil — High-level file operations"},
		{"You can write code like this::", "You can write code like this:"},
		{"It is set to ``True``.", "It is set to True."},
		{"r\u00e9sum\u00e9 of the run", "re\u0301sume\u0301 of the run"}, // composed and decomposed
		{"Ctrl+Z 를 누릅니다.", "Ctrl+Z 를  누릅니다"},
	}
	for _, p := range same {
		if a, b := SentenceKey(p[0]), SentenceKey(p[1]); a != b {
			t.Errorf("%q and %q: keys %q and %q, want one", p[0], p[1], a, b)
		}
	}
	differ := [][2]string{
		{"If x > 0, f returns -1.", "If x < 0, f returns 1."},
		{"f returns -1.", "f returns 1."},
		{"C++ is compiled.", "C# is compiled."},
		{"It costs $5.", "It costs €5."},
		{"a == b", "a != b"},
		{"की", "कि"},
		{"...", "?!"},
	}
	for _, p := range differ {
		if a, b := SentenceKey(p[0]), SentenceKey(p[1]); a == b {
			t.Errorf("%q and %q: one key %q, want two", p[0], p[1], a)
		}
	}
}
