package research

import (
	"regexp"
	"strconv"
	"strings"
)

// Marker is one citation marker found in a text: [cite:S1], [cite:S1,S4],
// [cite:F7] (a fact), or the bare [S2] some models write.
type Marker struct {
	Start, End int // byte offsets of the marker in the text
	IDs        []string
}

var markerRE = regexp.MustCompile(`\[(?:cite:[^\[\]]{0,200}|[SF][0-9]{1,6}(?:\s*[,;]\s*[SF][0-9]{1,6})*)\]`)

// ParseMarkers finds the citation markers in text. IDs inside a marker are
// split on commas, semicolons and spaces; "cite:" prefixes are dropped.
func ParseMarkers(text string) []Marker {
	var out []Marker
	for _, loc := range markerRE.FindAllStringIndex(text, -1) {
		inner := strings.TrimPrefix(text[loc[0]+1:loc[1]-1], "cite:")
		var ids []string
		for _, f := range strings.FieldsFunc(inner, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' }) {
			f = strings.TrimPrefix(strings.TrimSpace(f), "cite:")
			if f != "" {
				ids = append(ids, f)
			}
		}
		out = append(out, Marker{Start: loc[0], End: loc[1], IDs: ids})
	}
	return out
}

// citer numbers sources in order of first citation. A marker may name a
// source (S3) or a fact (F12); a fact cites the source it was taken from.
type citer struct {
	// written: the text was written by a model, not quoted from sources
	// (the offline engine's), so a bare "[7]" in it is the model's.
	written bool
	known   map[string]*Source
	facts   map[string]string // fact id → source id
	numbers map[string]int
	order   []string
	dropped int
}

func newCiter(known map[string]*Source) *citer {
	return &citer{known: known, numbers: map[string]int{}}
}

// bareNumber is a number in brackets a model wrote itself ("… in 1999
// [7]."), not after a word or a bracket ("arr[0]", "x[1][2]"): it reads
// as a citation of reference 7 that nothing put there.
var bareNumber = regexp.MustCompile(`(^|[^\p{L}\p{N}_\]\[])\[[0-9]{1,6}\]`)

// plain is text between markers with the citations a model wrote as bare
// numbers dropped, each counted as a dropped citation; text quoted from
// the sources is left as it is.
func (c *citer) plain(text string) string {
	if !c.written {
		return text // quoted as the source has it ("a = [1]")
	}
	return bareNumber.ReplaceAllStringFunc(text, func(m string) string {
		c.dropped++
		before := m[:strings.IndexByte(m, '[')]
		if strings.TrimSpace(before) == "" {
			return "" // the space before it goes with it
		}
		return before
	})
}

// render replaces markers with numbered citations [n]. An id that names no
// source read in this research is dropped, never rendered, and so is a
// number in brackets the model wrote itself: citations cannot point at
// anything the research did not read.
func (c *citer) render(text string) string {
	ms := ParseMarkers(text)
	if len(ms) == 0 {
		return c.plain(text)
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(c.plain(text[last:m.Start]))
		last = m.End
		for _, id := range m.IDs {
			if src, ok := c.facts[id]; ok {
				id = src
			}
			if _, ok := c.known[id]; !ok {
				c.dropped++
				continue
			}
			n, ok := c.numbers[id]
			if !ok {
				c.order = append(c.order, id)
				n = len(c.order)
				c.numbers[id] = n
			}
			b.WriteString("[" + strconv.Itoa(n) + "]")
		}
	}
	b.WriteString(c.plain(text[last:]))
	return b.String()
}
