package research

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/microcosm-cc/bluemonday"

	"github.com/quarryhq/quarry/internal/textseg"
)

// htmlPolicy is the allow-list every rendered report passes through: the
// few elements the renderer writes, links only to http(s) and in-page
// anchors, no scripts, styles, event handlers or other URL schemes.
var htmlPolicy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("article", "header", "h1", "h2", "section", "p", "ol", "ul", "li", "blockquote", "aside", "footer", "strong", "em", "sup", "cite", "span")
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^[a-z0-9-]{1,40}$`)).Globally()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^[a-z -]{1,40}$`)).Globally()
	p.AllowAttrs("title").Globally()
	p.AllowAttrs("href").OnElements("a")
	p.AllowElements("a")
	p.AllowURLSchemes("http", "https")
	p.AllowRelativeURLs(true)
	p.RequireNoFollowOnFullyQualifiedLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
}()

// HTML renders a report as a self-contained, sanitised HTML fragment:
// numbered citations link to their reference (#ref-n) and show the quoted
// source passage on hover (the title attribute); references link out with
// rel="nofollow noopener". Everything from a model or a source is escaped,
// and the result is passed through an allow-list sanitiser as well.
func HTML(rep *Report, sources []Source) string {
	if rep == nil {
		return ""
	}
	q := &quoter{refs: map[int]string{}, byID: map[string]*Source{}, sentences: sentenceCache{}}
	for i := range sources {
		q.byID[sources[i].ID] = &sources[i]
	}
	for _, r := range rep.References {
		q.refs[r.Number] = r.SourceID
	}
	var b strings.Builder
	b.WriteString(`<article class="quarry-report">` + "\n")
	fmt.Fprintf(&b, "<header><h1>%s</h1>\n", esc(rep.Title))
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "<aside class=\"note\">%s</aside>\n", esc(n))
	}
	b.WriteString("</header>\n")
	if rep.Summary != "" {
		b.WriteString(`<section id="summary"><h2>Executive summary</h2>` + "\n")
		paragraphs(&b, rep.Summary, q)
		b.WriteString("</section>\n")
	}
	for i, s := range rep.Sections {
		fmt.Fprintf(&b, "<section id=\"section-%d\"><h2>%s</h2>\n", i+1, esc(s.Heading))
		paragraphs(&b, s.Body, q)
		b.WriteString("</section>\n")
	}
	if len(rep.Conflicts) > 0 {
		b.WriteString(`<section id="conflicts"><h2>Conflicting evidence</h2><ul>` + "\n")
		for _, c := range rep.Conflicts {
			fmt.Fprintf(&b, "<li><strong>%s</strong> — %s <em>(%s, confidence %.2f)</em></li>\n", esc(c.Topic), q.cited(c.Text), esc(c.Strategy), c.Confidence)
		}
		b.WriteString("</ul></section>\n")
	}
	b.WriteString(`<section id="references"><h2>References</h2><ol>` + "\n")
	for _, r := range rep.References {
		title := esc(authorList(r.Authors) + textseg.OneLine(r.Title))
		if safeURL(r.URL) {
			fmt.Fprintf(&b, "<li id=\"ref-%d\"><cite><a href=\"%s\">%s</a></cite> <span class=\"accessed\">accessed %s</span></li>\n", r.Number, esc(r.URL), title, r.AccessedAt.Format("2006-01-02"))
		} else {
			fmt.Fprintf(&b, "<li id=\"ref-%d\"><cite>%s</cite> <span class=\"url\">%s</span> <span class=\"accessed\">accessed %s</span></li>\n", r.Number, title, esc(r.URL), r.AccessedAt.Format("2006-01-02"))
		}
	}
	b.WriteString("</ol></section>\n")
	m := rep.Metadata
	fmt.Fprintf(&b, "<footer>%d words · %d sources read (%s) · %d references · %d facts, %d verified · %d discrepancies · quality %.2f</footer>\n",
		m.WordCount, m.Sources, esc(kinds(m.SourcesByKind)), m.References, m.Facts, m.VerifiedFacts, m.Discrepancies, rep.Quality)
	b.WriteString("</article>\n")
	return htmlPolicy.Sanitize(b.String())
}

// safeURL: only http(s) URLs become links (kb:// and file:// are shown).
func safeURL(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")
}

func esc(s string) string { return html.EscapeString(s) }

func paragraphs(b *strings.Builder, text string, q *quoter) {
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			fmt.Fprintf(b, "<p>%s</p>\n", q.cited(p))
		}
	}
}

// quoter finds, for a citation, the passage of the cited source that best
// matches what the report says; each source is split and analysed once.
type quoter struct {
	refs      map[int]string // reference number → source id
	byID      map[string]*Source
	sentences sentenceCache
}

// cited escapes text and turns each [n] that names a reference into a link
// to it whose title is the source passage best matching the passage the
// citation vouches for (eachCitation).
func (q *quoter) cited(text string) string {
	var b strings.Builder
	prev := 0
	eachCitation(text, q.refs, func(start, end int, claim string, _ []int) {
		b.WriteString(esc(text[prev:start]))
		prev = end
		group := text[start:end]
		last := 0
		for _, loc := range citeNum.FindAllStringSubmatchIndex(group, -1) {
			b.WriteString(esc(group[last:loc[0]]))
			last = loc[1]
			n, _ := strconv.Atoi(group[loc[2]:loc[3]])
			id, ok := q.refs[n]
			if !ok {
				b.WriteString(esc(group[loc[0]:loc[1]]))
				continue
			}
			fmt.Fprintf(&b, `<sup class="cite"><a href="#ref-%d" title="%s">[%d]</a></sup>`, n, esc(q.best(id, claim)), n)
		}
		b.WriteString(esc(group[last:]))
	})
	b.WriteString(esc(text[prev:]))
	return b.String()
}

// best is the sentence of source id sharing the most terms with claim,
// cut to 300 characters.
func (q *quoter) best(id, claim string) string {
	s := q.byID[id]
	if s == nil {
		return ""
	}
	want := termSet(claim)
	best, bestN := "", -1
	for _, p := range q.sentences.of(s) {
		if n := overlap(want, p.terms); n > bestN {
			best, bestN = p.text, n
		}
	}
	if r := []rune(best); len(r) > 300 {
		best = string(r[:299]) + "…"
	}
	return best
}
