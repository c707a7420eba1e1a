package chunk

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// pieces of text that stress the pre-tokenizer and the boundary scan at a
// segment's edge: contractions, runs of spaces and line breaks, \r\n,
// closers after sentence ends, digits, CJK, Hangul, combining marks,
// Unicode spaces, case-folding letters, emoji.
var atoms = []string{"a", "B", "z", "word", " ", "  ", "\n", "\n\n", "\r\n", "\t", ".", "!", "?", "...", `"`, "'", ")", "’",
	"”", "。", "！", "字", "東京", "한", "국어", "1", "23", "4567", ",", "-", "\u00a0", "\u2028", "\u0085", "e\u0301", "ſ", "\u212a",
	"😀", "'s", "'ll", "'RE", " '", "。」", "\v", "\f"}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(atoms[r.IntN(len(atoms))])
	}
	return b.String()
}

// streamed reads all of text through tokens, segment bytes at a time.
func streamed(t *testing.T, text string, segment int) ([]int, []int8) {
	t.Helper()
	tk := &tokens{text: text, segment: segment, levels: levelScan{prev: -1}}
	var err error
	if tk.c, err = cl100k(); err != nil {
		t.Fatal(err)
	}
	if err := tk.fill(math.MaxInt - 1); err != nil {
		t.Fatalf("segment %d: %v", segment, err)
	}
	return tk.off, tk.lv
}

// checkStream compares tokens and levels read in segments, and the chunks
// cut from them, with the whole-text chunker.
func checkStream(t *testing.T, text string, segment int, opt Options) {
	t.Helper()
	clean := Sanitize(text)
	if strings.TrimSpace(clean) == "" {
		return
	}
	c, err := cl100k()
	if err != nil {
		t.Fatal(err)
	}
	_, toks, err := c.Encode(clean)
	if err != nil {
		t.Fatal(err)
	}
	levels := refBoundaryLevels(clean)
	wantOff := make([]int, len(toks)+1)
	wantLv := make([]int8, len(toks)+1)
	for i, tok := range toks {
		wantOff[i+1] = wantOff[i] + len(tok)
		wantLv[i] = levels[wantOff[i]]
	}
	wantLv[len(toks)] = levels[len(clean)]
	off, lv := streamed(t, clean, segment)
	if !reflect.DeepEqual(off, wantOff) {
		t.Fatalf("segment %d: token offsets differ from the whole text's\n%q", segment, clean)
	}
	if !reflect.DeepEqual(lv, wantLv) {
		t.Fatalf("segment %d: boundary levels differ from the whole text's\n%q", segment, clean)
	}
	want, wantErr := refSplit(text, opt)
	var got []Chunk
	err = each(text, opt, segment, func(c Chunk) error {
		got = append(got, c)
		return nil
	})
	if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("segment %d, %+v: streamed chunks differ (%v, %v)\ngot  %+v\nwant %+v", segment, opt, err, wantErr, got, want)
	}
}

func TestEachMatchesWholeText(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	texts := map[string]string{
		"sentences":  sentences(400, "alpha"),
		"paragraphs": strings.Repeat(sentences(6, "beta")+"\n\n", 20),
		"korean":     strings.Repeat("인터넷 서비스는 어제 개통되었다. 설치 기사가 방문했나요? ", 60),
		"cjk":        strings.Repeat("東京は日本の首都である。人口は多い！", 80),
		"no breaks":  strings.Repeat("x7", 3000),
		"digits":     strings.Repeat("12345678,90\n", 400),
		"spaces":     strings.Repeat("end.   \n \n\n   Next line  \r\n", 200),
		"invalid":    strings.Repeat("caf\xe9 au lait. \x00\x01 ", 100),
	}
	for i := range 8 {
		texts["random"+string(rune('0'+i))] = randomText(r, 1500)
	}
	opts := []Options{{MaxTokens: 512, Overlap: 50}, {MaxTokens: 64, Overlap: 8}, {MaxTokens: 16, Overlap: 3}, {MaxTokens: 9, Overlap: 0}}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, seg := range []int{1, 3, 17, 256, 4096, segmentBytes} {
				for _, opt := range opts {
					checkStream(t, text, seg, opt)
				}
			}
		})
	}
}

func TestEachStopsOnError(t *testing.T) {
	t.Parallel()
	stop := errors.New("enough")
	n := 0
	err := Each(sentences(400, "gamma"), Options{MaxTokens: 64, Overlap: 8}, func(Chunk) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("got %v after %d chunks, want the callback's error after 3", err, n)
	}
}

// TestEachWindow: the tokens kept stay a window, not the whole text.
func TestEachWindow(t *testing.T) {
	t.Parallel()
	text := strings.Repeat(sentences(50, "delta")+"\n\n", 100)
	c, err := cl100k()
	if err != nil {
		t.Fatal(err)
	}
	tk := &tokens{text: text, c: c, segment: 4096, levels: levelScan{prev: -1}}
	opt := Options{MaxTokens: 64, Overlap: 8}
	widest := 0
	n, err := pack(tk, opt, c, func(Chunk) error {
		widest = max(widest, cap(tk.off))
		return nil
	})
	total, _ := CountTokens(text)
	if err != nil || n < 100 {
		t.Fatalf("%d chunks, %v", n, err)
	}
	if widest > total/10 {
		t.Fatalf("kept up to %d token offsets for a text of %d tokens", widest, total)
	}
}

func FuzzEach(f *testing.F) {
	f.Add("Hello world. This is a test.\n\nNew paragraph!", 16, 3, 5)
	f.Add("한글을 배운다. 東京。\xff\xfe", 8, 1, 2)
	f.Add("it's   \r\n\n'll 123456 e\u0301x.)\" Next", 10, 2, 1)
	f.Fuzz(func(t *testing.T, text string, max, overlap, segment int) {
		if max < 4 || max > 600 || overlap < 0 || overlap >= max/2 || len(text) > 20000 || segment < 1 || segment > 1<<20 {
			return
		}
		checkStream(t, text, segment, Options{MaxTokens: max, Overlap: overlap})
	})
}

// FuzzCountTokens checks that counting through remembered pieces counts
// what the tokenizer does over the whole text, a piece read twice too.
func FuzzCountTokens(f *testing.F) {
	f.Add("Hello world. This is a test.\n\nNew paragraph!")
	f.Add("한글을 배운다. 東京。 it's   \r\n\n'll 123456 e\u0301x.)\"")
	f.Fuzz(func(t *testing.T, text string) {
		text = Sanitize(text)
		c, err := cl100k()
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.Count(text)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got, err := countTokens(c, text); err != nil || got != want {
				t.Fatalf("countTokens(%q) = %d, %v; want %d", text, got, err, want)
			}
		}
	})
}
