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
