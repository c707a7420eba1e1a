package chunk

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func checkInvariants(t *testing.T, text string, chunks []Chunk, opt Options) {
	t.Helper()
	clean := Sanitize(text)
	for i, c := range chunks {
		if c.Index != i {
			t.Fatalf("chunk %d has index %d", i, c.Index)
		}
		if c.Tokens > opt.MaxTokens || c.Tokens <= 0 {
			t.Fatalf("chunk %d has %d tokens (max %d)", i, c.Tokens, opt.MaxTokens)
		}
		n, err := CountTokens(c.Text)
		if err != nil || n != c.Tokens {
			t.Fatalf("chunk %d: stored %d tokens, recount %d (%v)", i, c.Tokens, n, err)
		}
		if clean[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d offsets do not match its text", i)
		}
		if !utf8.ValidString(c.Text) {
			t.Fatalf("chunk %d is not valid UTF-8", i)
		}
	}
}

func sentences(n int, word string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("Sentence number ")
		b.WriteString(strings.Repeat(word+" ", i%7+3))
		b.WriteString("ends here. ")
	}
	return b.String()
}

func TestSplitLimitsAndOverlap(t *testing.T) {
	t.Parallel()
	opt := Options{MaxTokens: 512, Overlap: 50}
	text := sentences(400, "alpha")
	chunks, err := Split(text, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 4 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	checkInvariants(t, text, chunks, opt)
	for i := 1; i < len(chunks); i++ {
		if chunks[i].Start >= chunks[i-1].End {
			t.Fatalf("chunks %d and %d do not overlap", i-1, i)
		}
		ov, _ := CountTokens(text[chunks[i].Start:chunks[i-1].End])
		if ov > 60 || ov < 20 {
			t.Fatalf("overlap between %d and %d is %d tokens, want about 50", i-1, i, ov)
		}
		// cuts land on sentence ends, and chunks start at sentence starts
		if !strings.HasSuffix(chunks[i-1].Text, ".") {
			t.Fatalf("chunk %d does not end a sentence: %q", i-1, chunks[i-1].Text[len(chunks[i-1].Text)-20:])
		}
		if !strings.HasPrefix(chunks[i].Text, "Sentence") {
			t.Fatalf("chunk %d does not start a sentence: %q", i, chunks[i].Text[:20])
		}
	}
}

func TestSplitPrefersParagraphs(t *testing.T) {
	t.Parallel()
	opt := Options{MaxTokens: 100, Overlap: 10}
	para := sentences(6, "beta")
	text := para + "\n\n" + para + "\n\n" + para
	chunks, err := Split(text, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, text, chunks, opt)
	// The first cut is at the first paragraph break when it is past half.
	first := strings.TrimSpace(para)
	if n, _ := CountTokens(first); n <= 100 && n >= 50 && chunks[0].Text != first {
		t.Fatalf("first chunk did not stop at the paragraph: %q", chunks[0].Text)
	}
}

func TestSplitKoreanAndCJK(t *testing.T) {
	t.Parallel()
	opt := Options{MaxTokens: 64, Overlap: 8}
	ko := strings.Repeat("인터넷 서비스는 어제 개통되었다. 설치 기사가 방문했나요? ", 30)
	cjk := strings.Repeat("東京は日本の首都である。人口は多い！", 40) // no spaces at all
	for _, text := range []string{ko, cjk} {
		chunks, err := Split(text, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(chunks) < 3 {
			t.Fatalf("%d chunks", len(chunks))
		}
		checkInvariants(t, text, chunks, opt)
		for _, c := range chunks[:len(chunks)-1] {
			last, _ := utf8.DecodeLastRuneInString(c.Text)
			if !strings.ContainsRune(".?!。！", last) {
				t.Fatalf("chunk ends mid-sentence: %q", c.Text)
			}
		}
	}
}

func TestSplitEdgeCases(t *testing.T) {
	t.Parallel()
	opt := Options{MaxTokens: 512, Overlap: 50}
	for _, text := range []string{"", "   \n\n\t ", "one"} {
		chunks, err := Split(text, opt)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(text) == "" && len(chunks) != 0 || text == "one" && (len(chunks) != 1 || chunks[0].Tokens != 1) {
			t.Fatalf("Split(%q) = %+v", text, chunks)
		}
	}
	// One enormous word with no break at all still splits under the limit.
	long := strings.Repeat("x7", 5000)
	chunks, err := Split(long, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, long, chunks, opt)
	// Invalid UTF-8 is replaced, not rejected.
	chunks, err = Split("caf\xe9 au lait", opt)
	if err != nil || len(chunks) != 1 || !utf8.ValidString(chunks[0].Text) {
		t.Fatalf("invalid utf-8: %+v %v", chunks, err)
	}
	if _, err := Split("x", Options{MaxTokens: 10, Overlap: 9}); err == nil {
		t.Fatal("overlap >= max/2 accepted")
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Hello world. This is a test.\n\nNew paragraph!", 16, 3)
	f.Add("한글을 배운다. 東京。\xff\xfe", 8, 1)
	f.Add(strings.Repeat("a ", 100), 10, 2)
	f.Fuzz(func(t *testing.T, text string, max, overlap int) {
		if max < 4 || max > 600 || overlap < 0 || overlap >= max/2 || len(text) > 20000 {
			return
		}
		opt := Options{MaxTokens: max, Overlap: overlap}
		chunks, err := Split(text, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, text, chunks, opt)
	})
}

// TestTitleStaysWithWhatItTitles: a settings reference's terms (and a
// section's heading) open the chunk of their definition; no chunk ends
// with one.
func TestTitleStaysWithWhatItTitles(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		// As an HTML page's readable text renders a <dl>: the term on
		// the line after the previous definition, a blank line after it.
		fmt.Fprintf(&b, "gc.option%d\n\nWhen there are more than this many packs in the repository, git gc --auto consolidates them into one larger pack. The default value is %d. Setting this to 0 disables it.\n", i, 50+i)
	}
	chunks, err := Split(b.String(), Options{MaxTokens: 60, Overlap: 0})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range chunks[:len(chunks)-1] {
		lines := strings.Split(strings.TrimSpace(c.Text), "\n")
		if last := lines[len(lines)-1]; strings.HasPrefix(last, "gc.option") {
			t.Fatalf("chunk %d ends with the term %q, parted from its definition:\n%s", i, last, c.Text)
		}
	}
}
