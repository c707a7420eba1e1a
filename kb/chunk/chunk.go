// Package chunk splits text into pieces of at most MaxTokens cl100k tokens
// with Overlap tokens carried between neighbours. Cuts prefer a paragraph
// break, then a sentence end (Latin, Korean and CJK punctuation), then a word
// break, and fall back to a token boundary only when a piece has none. Each
// streams the pieces of a text of any length in memory proportional to
// MaxTokens; Split collects them.
package chunk

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/quarryhq/quarry/internal/memo"
)

// Defaults: chunks of at most 512 tokens; an overlap of 50 for callers
// that want one (Options.Overlap is 0 unless set: ingest sets none).
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

// segmentBytes is how much text is tokenized at a time.
const segmentBytes = 64 << 10

// Split chunks text. Invalid UTF-8 is replaced, not rejected.
func Split(text string, opt Options) ([]Chunk, error) {
	var out []Chunk
	if err := Each(text, opt, func(c Chunk) error {
		out = append(out, c)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// Each calls fn with the chunks Split returns, in order, as it cuts them.
// It tokenizes the text a segment at a time and keeps only the tokens of the
// chunk being cut, so besides the text itself it holds memory in proportion
// to MaxTokens, however long the text. An error from fn stops it and is
// returned as is.
func Each(text string, opt Options, fn func(Chunk) error) error {
	return each(text, opt, segmentBytes, fn)
}

func each(text string, opt Options, segment int, fn func(Chunk) error) error {
	if opt.MaxTokens <= 0 {
		opt.MaxTokens = DefaultMaxTokens
	}
	if opt.Overlap < 0 || opt.Overlap >= opt.MaxTokens/2 {
		return fmt.Errorf("chunk: overlap %d must be between 0 and half of max tokens %d", opt.Overlap, opt.MaxTokens)
	}
	text = Sanitize(text)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	c, err := cl100k()
	if err != nil {
		return fmt.Errorf("chunk: %w", err)
	}
	t := &tokens{text: text, c: c, segment: max(1, segment), levels: levelScan{prev: -1}}
	n, err := pack(t, opt, c, fn)
	if errors.Is(err, errUncovered) && n == 0 {
		// Token strings did not cover the text; fall back to rune pieces.
		chunks, err := splitRunes(text, opt)
		if err != nil {
			return err
		}
		for _, ch := range chunks {
			if err := fn(ch); err != nil {
				return err
			}
		}
		return nil
	}
	return err
}

// errUncovered means the token strings of a segment did not add up to it.
// cl100k's pre-tokenizer matches every character of valid UTF-8, so it
// does not happen to sanitised text; when it did before the first chunk,
// Each falls back to rune windows for the whole text.
var errUncovered = errors.New("chunk: token strings do not cover the text")

// tokens streams the cl100k tokens of text a segment at a time and keeps a
// window of them: token i (counted from the start of the text) starts at
// byte off[i-base], where the boundary level is lv[i-base]. When the text is
// all read the window ends with token n = the end of the text, a paragraph
// boundary, as if the text ended with one.
type tokens struct {
	text    string
	c       tokenizer.Codec
	segment int
	next    int // where the next segment starts
	done    bool
	base    int
	off     []int
	lv      []int8
	levels  levelScan
}

// fill reads segments until token i is in the window or the text is read.
func (t *tokens) fill(i int) error {
	for !t.done && t.base+len(t.off) <= i {
		if err := t.read(); err != nil {
			return err
		}
	}
	return nil
}

// n is the number of tokens once the text is read; before that it is more
// than any token in the window.
func (t *tokens) n() int {
	if t.done {
		return t.base + len(t.off) - 1
	}
	return math.MaxInt
}

func (t *tokens) at(i int) int     { return t.off[i-t.base] }
func (t *tokens) level(i int) int8 { return t.lv[i-t.base] }

// drop forgets the tokens before i, now and then, so the window stays small.
func (t *tokens) drop(i int) {
	k := i - t.base
	if k < 4096 || k < len(t.off)/2 {
		return
	}
	t.off = t.off[:copy(t.off, t.off[k:])]
	t.lv = t.lv[:copy(t.lv, t.lv[k:])]
	t.base = i
}

// read tokenizes the next segment. Segments end where segmentEnd says
// tokenizing each side alone gives the tokens of the whole text.
func (t *tokens) read() error {
	a := t.next
	b := segmentEnd(t.text, a+t.segment)
	lv := t.levels.scan(t.text, a, b)
	p := a
	err := pieces(t.c, t.text[:b], a, func(n int) bool {
		if p >= b {
			return false
		}
		t.off = append(t.off, p)
		t.lv = append(t.lv, lv[p-a])
		p += n
		return true
	})
	if err != nil {
		return err
	}
	if p != b {
		return errUncovered
	}
	t.next = b
	if b == len(t.text) {
		t.done = true
		t.off = append(t.off, b)
		t.lv = append(t.lv, paragraph)
	}
	return nil
}

// pieces calls fn with the byte length of each token of text[from:], in
// order, until fn returns false (then it returns errUncovered). It
// tokenizes the text between two places segmentEnd finds, mostly a word
// and what precedes it, one at a time, and remembers the tokens of the
// short ones: a text repeats its words, and the pre-tokenizer's pattern
// and BPE's merges cost far more than a lookup.
func pieces(c tokenizer.Codec, text string, from int, fn func(int) bool) error {
	for p := from; p < len(text); {
		q := segmentEnd(text, p+1)
		lens, err := pieceTokens(c, text[p:q])
		if err != nil {
			return err
		}
		for _, n := range lens {
			if !fn(int(n)) {
				return errUncovered
			}
		}
		p = q
	}
	return nil
}

// countTokens is the number of cl100k tokens of text (c.Count), read
// through pieces.
func countTokens(c tokenizer.Codec, text string) (int, error) {
	n := 0
	err := pieces(c, text, 0, func(int) bool { n++; return true })
	return n, err
}

// pieceMemo holds the tokens of short pieces of text.
var pieceMemo = memo.New[[]uint16](1 << 16)

// maxPieceBytes is the longest piece remembered.
const maxPieceBytes = 48

// pieceTokens returns the byte lengths of the tokens of piece.
func pieceTokens(c tokenizer.Codec, piece string) ([]uint16, error) {
	short := len(piece) <= maxPieceBytes
	if short {
		if lens, ok := pieceMemo.Get(piece); ok {
			return lens, nil
		}
	}
	_, toks, err := c.Encode(piece)
	if err != nil {
		return nil, fmt.Errorf("chunk: tokenize: %w", err)
	}
	lens := make([]uint16, len(toks))
	for i, tok := range toks {
		if len(tok) > math.MaxUint16 || len(tok) == 0 {
			return nil, errUncovered // no cl100k token is this long
		}
		lens[i] = uint16(len(tok))
	}
	if short {
		pieceMemo.Put(strings.Clone(piece), lens)
	}
	return lens, nil
}

// segmentEnd returns the first place at or after from where the text can
// be cut without changing its tokens, or len(text) if there is none: after a
// letter that a non-letter follows, or after a line break that a letter or
// digit follows. cl100k's pre-tokenizer (see tokenizer/codec/cl100k_base.go)
// never puts the characters on either side of such a place in one piece
// and never looks past it to decide a piece before it, and BPE merges only
// inside pieces; so the tokens of the two sides are the tokens of the whole.
func segmentEnd(text string, from int) int {
	for x := max(from, 1); x < len(text); x++ {
		if !utf8.RuneStart(text[x]) {
			continue
		}
		prev, _ := utf8.DecodeLastRuneInString(text[:x])
		r, _ := utf8.DecodeRuneInString(text[x:])
		if unicode.IsLetter(prev) && !unicode.IsLetter(r) || prev == '\n' && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return x
		}
	}
	return len(text)
}

// pack cuts chunks from the token stream and hands each to fn; it returns
// how many it handed over.
func pack(t *tokens, opt Options, c tokenizer.Codec, fn func(Chunk) error) (int, error) {
	text := t.text
	count := 0
	for s := 0; ; {
		// The chunk's tokens, and the few a cut may move forward to align
		// with a rune.
		if err := t.fill(s + opt.MaxTokens + utf8.UTFMax); err != nil {
			return count, err
		}
		n := t.n()
		if s >= n {
			break
		}
		t.drop(s)
		e := min(n, s+opt.MaxTokens)
		cut := e
		if e < n {
			cut = t.bestCut(s+opt.MaxTokens/2, e)
			cut = t.runeAligned(cut, s+1)
		}
		ch, ok := makeChunk(text, t.at(s), t.at(cut))
		if ok {
			var cnt int
			var err error
			if s == 0 && cut == n && ch.Start == 0 && ch.End == len(text) {
				// The whole text: its tokens are the stream's (read
				// cuts only where the two sides tokenize as the whole),
				// not counted again. A text of one chunk is the common
				// case, and counting it took a tenth of an ingest's CPU.
				cnt = n
			} else if cnt, err = countTokens(c, ch.Text); err != nil {
				return count, fmt.Errorf("chunk: count: %w", err)
			}
			// Re-tokenising a slice can merge differently at its edges; shrink
			// until the stored count honours the limit.
			for cnt > opt.MaxTokens && cut > s+1 {
				cut = t.runeAligned(cut-1, s+1)
				ch, ok = makeChunk(text, t.at(s), t.at(cut))
				if !ok {
					break
				}
				if cnt, err = countTokens(c, ch.Text); err != nil {
					return count, fmt.Errorf("chunk: count: %w", err)
				}
			}
			if ok && cnt > 0 {
				ch.Tokens = cnt
				ch.Index = count
				if err := fn(ch); err != nil {
					return count, err
				}
				count++
			}
		}
		if cut >= n {
			break
		}
		next := t.overlapStart(max(s+1, cut-opt.Overlap), cut)
		s = t.runeAligned(next, s+1)
	}
	return count, nil
}

// runeAligned moves token index i back (not below lo) until it starts a
// rune: byte-level BPE tokens can split a multi-byte character.
func (t *tokens) runeAligned(i, lo int) int {
	text := t.text
	for i > lo && t.at(i) < len(text) && !utf8.RuneStart(text[t.at(i)]) {
		i--
	}
	for i < t.n() && t.at(i) < len(text) && !utf8.RuneStart(text[t.at(i)]) {
		i++
	}
	return i
}

// bestCut picks the token index in [lo, hi] at the strongest boundary,
// latest among equals; hi when there is none.
func (t *tokens) bestCut(lo, hi int) int {
	best, bestLevel := hi, none
	for i := hi; i >= lo; i-- {
		if l := t.level(i); l > bestLevel {
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
func (t *tokens) overlapStart(lo, cut int) int {
	if lo >= cut {
		return cut
	}
	firstWord := -1
	for i := lo; i < cut; i++ {
		switch l := t.level(i); {
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

// levelScan marks, for every byte offset, how good a place to cut it is,
// one segment at a time from the start of the text; the levels are those of
// the whole text, since it carries what it has seen across segments and
// reads past a segment's end when a sentence end needs it.
type levelScan struct {
	prev     rune // the last rune scanned, -1 before the first
	newlines int  // line breaks in the whitespace since the last non-space
	pos      int  // where the sentence-end scan resumes
	// pending are sentence boundaries already found past the last segment.
	pending []int
	buf     []int8
	// The line being scanned: its runes, the runes up to its last
	// non-space, that rune and whether it has a letter; titled is whether
	// the last line with text was a title.
	lineRunes   int
	lineContent int
	lineLast    rune
	lineLetter  bool
	titled      bool
}

// maxTitleRunes is the longest line read as a title.
const maxTitleRunes = 80

// endLine records whether the line just ended, when it holds text, reads
// as a title: short, with a letter, not ending as a sentence or a clause
// does ("gc.auto" over its definition, a section's heading).
func (s *levelScan) endLine() {
	if s.lineContent > 0 {
		s.titled = s.lineContent <= maxTitleRunes && s.lineLetter && !strings.ContainsRune(".!?。！？…,;:", s.lineLast)
	}
	s.lineRunes, s.lineContent, s.lineLetter = 0, 0, false
}

// scan returns the levels of the bytes in [a, b), which must follow the
// previous segment scanned; the slice is reused by the next call. One
// pass over the bytes with its state in locals, for speed (the chunker's
// hot loop): it stays one function.
func (s *levelScan) scan(text string, a, b int) []int8 {
	lv := slices.Grow(s.buf[:0], b-a)[:b-a]
	clear(lv)
	s.buf = lv
	for i, r := range text[a:b] {
		if unicode.IsSpace(r) {
			if r == '\n' {
				s.newlines++
				s.endLine()
			} else {
				s.lineRunes++
			}
			if lv[i] < word {
				lv[i] = word
			}
			s.prev = r
			continue
		}
		// i starts a non-space rune after whitespace.
		if s.prev >= 0 && unicode.IsSpace(s.prev) {
			switch {
			case s.newlines >= 2 && !s.titled:
				lv[i] = paragraph
			case lv[i] < word:
				// After a title the break is a word's: a cut there
				// would part a heading or a defined term from what it
				// titles.
				lv[i] = word
			}
		}
		s.newlines = 0
		s.prev = r
		s.lineRunes++
		s.lineContent, s.lineLast = s.lineRunes, r
		s.lineLetter = s.lineLetter || unicode.IsLetter(r)
	}
	kept := s.pending[:0]
	for _, p := range s.pending {
		if p < b {
			lv[p-a] = max(lv[p-a], sentence)
		} else {
			kept = append(kept, p)
		}
	}
	s.pending = kept
	mark := func(p int) {
		if p < b {
			lv[p-a] = max(lv[p-a], sentence)
		} else {
			s.pending = append(s.pending, p)
		}
	}
	// Sentence ends: after terminal punctuation (and closing quotes) that is
	// followed by space, or after a CJK full stop whatever follows.
	i := s.pos
	for i < b {
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
				mark(j)
				// the first non-space after it starts a sentence
				k := j
				for k < len(text) {
					r3, s3 := utf8.DecodeRuneInString(text[k:])
					if !unicode.IsSpace(r3) {
						break
					}
					k += s3
				}
				mark(k)
			}
		}
		i = j
	}
	s.pos = i
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
