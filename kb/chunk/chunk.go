// Package chunk splits text into pieces of at most MaxTokens cl100k tokens
// with Overlap tokens carried between neighbours. Cuts prefer a paragraph
// break, then a sentence end (Latin, Korean and CJK punctuation), then a word
// break, and fall back to a token boundary only when a piece has none.
package chunk

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Defaults from seed 003 §4.
const (
	DefaultMaxTokens = 512
	DefaultOverlap   = 50
)

// Chunk is one piece of the input.
type Chunk struct {
	Index  int
	Text   string
	Tokens int
	// Start and End are byte offsets of Text in the (UTF-8 sanitised) input.
	Start, End int
}

// Options configure Split.
type Options struct {
	MaxTokens int
	Overlap   int
}

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
	codecErr  error
)

func cl100k() (tokenizer.Codec, error) {
	codecOnce.Do(func() { codec, codecErr = tokenizer.Get(tokenizer.Cl100kBase) })
	return codec, codecErr
}

// CountTokens counts cl100k tokens, offline.
func CountTokens(s string) (int, error) {
	c, err := cl100k()
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	return c.Count(strings.ToValidUTF8(s, "\uFFFD"))
}

// Sanitize replaces invalid UTF-8 with U+FFFD and control characters other
// than tab and newlines with spaces; offsets returned by Split refer to the
// sanitised text.
func Sanitize(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || !unicode.IsControl(r) {
			return r
		}
		return ' '
	}, text)
}

// boundary levels, higher is a better place to cut.
const (
	none int8 = iota
	word
	sentence
	paragraph
)

// Split chunks text. Invalid UTF-8 is replaced, not rejected.
func Split(text string, opt Options) ([]Chunk, error) {
	if opt.MaxTokens <= 0 {
		opt.MaxTokens = DefaultMaxTokens
	}
	if opt.Overlap < 0 || opt.Overlap >= opt.MaxTokens/2 {
		return nil, fmt.Errorf("chunk: overlap %d must be between 0 and half of max tokens %d", opt.Overlap, opt.MaxTokens)
	}
	text = Sanitize(text)
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	c, err := cl100k()
	if err != nil {
		return nil, fmt.Errorf("chunk: %w", err)
	}
	_, toks, err := c.Encode(text)
	if err != nil {
		return nil, fmt.Errorf("chunk: tokenize: %w", err)
	}
	// off[i] is the byte offset where token i starts; off[n] = len(text).
	off := make([]int, len(toks)+1)
	for i, t := range toks {
		off[i+1] = off[i] + len(t)
	}
	if off[len(toks)] != len(text) {
		// Token strings did not cover the text; fall back to rune pieces.
		return splitRunes(text, opt)
	}
	levels := boundaryLevels(text)
	return pack(text, off, levels, opt, c)
}

func pack(text string, off []int, levels []int8, opt Options, c tokenizer.Codec) ([]Chunk, error) {
	n := len(off) - 1
	var out []Chunk
	for s := 0; s < n; {
		e := min(n, s+opt.MaxTokens)
		cut := e
		if e < n {
			cut = bestCut(off, levels, s+opt.MaxTokens/2, e)
			cut = runeAligned(text, off, cut, s+1)
		}
		ch, ok := makeChunk(text, off[s], off[cut])
		if ok {
			cnt, err := c.Count(ch.Text)
			if err != nil {
				return nil, fmt.Errorf("chunk: count: %w", err)
			}
			// Re-tokenising a slice can merge differently at its edges; shrink
			// until the stored count honours the limit.
			for cnt > opt.MaxTokens && cut > s+1 {
				cut = runeAligned(text, off, cut-1, s+1)
				ch, ok = makeChunk(text, off[s], off[cut])
				if !ok {
					break
				}
				if cnt, err = c.Count(ch.Text); err != nil {
					return nil, fmt.Errorf("chunk: count: %w", err)
				}
			}
			if ok && cnt > 0 {
				ch.Tokens = cnt
				ch.Index = len(out)
				out = append(out, ch)
			}
		}
		if cut >= n {
			break
		}
		next := overlapStart(off, levels, max(s+1, cut-opt.Overlap), cut)
		s = runeAligned(text, off, next, s+1)
	}
	return out, nil
}

// runeAligned moves token index i back (not below lo) until it starts a
// rune: byte-level BPE tokens can split a multi-byte character.
func runeAligned(text string, off []int, i, lo int) int {
	for i > lo && off[i] < len(text) && !utf8.RuneStart(text[off[i]]) {
		i--
	}
	for i < len(off)-1 && off[i] < len(text) && !utf8.RuneStart(text[off[i]]) {
		i++
	}
	return i
}

// bestCut picks the token index in [lo, hi] at the strongest boundary,
// latest among equals; hi when there is none.
func bestCut(off []int, levels []int8, lo, hi int) int {
	best, bestLevel := hi, none
	for i := hi; i >= lo; i-- {
		if l := levels[off[i]]; l > bestLevel {
			best, bestLevel = i, l
			if l == paragraph {
				break
			}
		}
	}
	return best
}

// overlapStart picks where the next chunk begins within [lo, cut): the
// earliest sentence start, else the earliest word start, else lo.
func overlapStart(off []int, levels []int8, lo, cut int) int {
	if lo >= cut {
		return cut
	}
	firstWord := -1
	for i := lo; i < cut; i++ {
		switch l := levels[off[i]]; {
		case l >= sentence:
			return i
		case l == word && firstWord < 0:
			firstWord = i
		}
	}
	if firstWord >= 0 {
		return firstWord
	}
	return lo
}

func makeChunk(text string, start, end int) (Chunk, bool) {
	seg := text[start:end]
	trimmedLeft := strings.TrimLeftFunc(seg, unicode.IsSpace)
	start += len(seg) - len(trimmedLeft)
	body := strings.TrimRightFunc(trimmedLeft, unicode.IsSpace)
	if body == "" {
		return Chunk{}, false
	}
	return Chunk{Text: body, Start: start, End: start + len(body)}, true
}

func isSentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？', '…', '．':
		return true
	}
	return false
}

func isCJKStop(r rune) bool {
	switch r {
	case '。', '！', '？', '．':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '”', '’', '」', '』', '）':
		return true
	}
	return false
}

// boundaryLevels marks, for every byte offset, how good a cut there is.
func boundaryLevels(text string) []int8 {
	lv := make([]int8, len(text)+1)
	lv[len(text)] = paragraph
	prev := rune(-1)
	newlines := 0
	for i, r := range text {
		if unicode.IsSpace(r) {
			if r == '\n' {
				newlines++
			}
			if lv[i] < word {
				lv[i] = word
			}
			prev = r
			continue
		}
		// i starts a non-space rune after whitespace.
		if prev >= 0 && unicode.IsSpace(prev) {
			if newlines >= 2 {
				lv[i] = paragraph
			} else if lv[i] < word {
				lv[i] = word
			}
		}
		newlines = 0
		prev = r
	}
	// Sentence ends: after terminal punctuation (and closing quotes) that is
	// followed by space, or after a CJK full stop whatever follows.
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		j := i + size
		if isSentenceEnd(r) {
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isCloser(r2) && !isSentenceEnd(r2) {
					break
				}
				j += s2
			}
			nextSpace := j == len(text)
			if !nextSpace {
				r2, _ := utf8.DecodeRuneInString(text[j:])
				nextSpace = unicode.IsSpace(r2)
			}
			if nextSpace || isCJKStop(r) {
				if lv[j] < sentence {
					lv[j] = sentence
				}
				// the first non-space after it starts a sentence
				k := j
				for k < len(text) {
					r3, s3 := utf8.DecodeRuneInString(text[k:])
					if !unicode.IsSpace(r3) {
						break
					}
					k += s3
				}
				if lv[k] < sentence {
					lv[k] = sentence
				}
			}
		}
		i = j
	}
	return lv
}

// splitRunes is the fallback when token strings do not line up with the
// text: fixed windows of runes sized from the average token length.
func splitRunes(text string, opt Options) ([]Chunk, error) {
	runes := []rune(text)
	// A rune is at most a few tokens; a quarter of the budget per window
	// keeps every window under the limit.
	step := max(2, opt.MaxTokens/4)
	var out []Chunk
	for s := 0; s < len(runes); s += max(1, step-opt.Overlap/4) {
		e := min(len(runes), s+step)
		start := len(string(runes[:s]))
		ch, ok := makeChunk(text, start, start+len(string(runes[s:e])))
		if ok {
			n, err := CountTokens(ch.Text)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				continue
			}
			ch.Tokens, ch.Index = n, len(out)
			out = append(out, ch)
		}
		if e == len(runes) {
			break
		}
	}
	return out, nil
}
