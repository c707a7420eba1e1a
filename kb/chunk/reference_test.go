package chunk

// The chunker as it was before it streamed, kept as the oracle the
// streaming one must agree with chunk for chunk.

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// refSplit is Split as it was before Each: it tokenizes the whole text at
// once. Invalid UTF-8 is replaced, not rejected.
func refSplit(text string, opt Options) ([]Chunk, error) {
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
	levels := refBoundaryLevels(text)
	return refPack(text, off, levels, opt, c)
}

func refPack(text string, off []int, levels []int8, opt Options, c tokenizer.Codec) ([]Chunk, error) {
	n := len(off) - 1
	var out []Chunk
	for s := 0; s < n; {
		e := min(n, s+opt.MaxTokens)
		cut := e
		if e < n {
			cut = refBestCut(off, levels, s+opt.MaxTokens/2, e)
			cut = refRuneAligned(text, off, cut, s+1)
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
				cut = refRuneAligned(text, off, cut-1, s+1)
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
		next := refOverlapStart(off, levels, max(s+1, cut-opt.Overlap), cut)
		s = refRuneAligned(text, off, next, s+1)
	}
	return out, nil
}

// refRuneAligned moves token index i back (not below lo) until it starts a
// rune: byte-level BPE tokens can split a multi-byte character.
func refRuneAligned(text string, off []int, i, lo int) int {
	for i > lo && off[i] < len(text) && !utf8.RuneStart(text[off[i]]) {
		i--
	}
	for i < len(off)-1 && off[i] < len(text) && !utf8.RuneStart(text[off[i]]) {
		i++
	}
	return i
}

// refBestCut picks the token index in [lo, hi] at the strongest boundary,
// latest among equals; hi when there is none.
func refBestCut(off []int, levels []int8, lo, hi int) int {
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

// refOverlapStart picks where the next chunk begins within [lo, cut): the
// earliest sentence start, else the earliest word start, else lo.
func refOverlapStart(off []int, levels []int8, lo, cut int) int {
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

// refBoundaryLevels marks, for every byte offset, how good a cut there is.
// refTitle reports whether the last line of before, ignoring the blank
// lines after it, is a title: at most 80 runes (none of them a line
// break), one a letter, the last not ending a sentence or a clause.
func refTitle(before string) bool {
	before = strings.TrimRightFunc(before, unicode.IsSpace)
	line := before[strings.LastIndexByte(before, '\n')+1:]
	if line == "" || utf8.RuneCountInString(line) > 80 || strings.IndexFunc(line, unicode.IsLetter) < 0 {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	return !strings.ContainsRune(".!?。！？…,;:", last)
}

func refBoundaryLevels(text string) []int8 {
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
			if newlines >= 2 && !refTitle(text[:i]) {
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
