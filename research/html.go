package research

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/kljensen/snowball/english"
	"github.com/microcosm-cc/bluemonday"

	"github.com/quarryhq/quarry/research/internal/textseg"
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

var citeRef = regexp.MustCompile(`\[(\d+)\]`)

// HTML renders a report as a self-contained, sanitised HTML fragment:
// numbered citations link to their reference (#ref-n) and show the quoted
// source passage on hover (the title attribute); references link out with
// rel="nofollow noopener". Everything from a model or a source is escaped,
// and the result is passed through an allow-list sanitiser as well.
func HTML(rep *Report, sources []Source) string {
	if rep == nil {
		return ""
	}
	byID := map[string]*Source{}
	for i := range sources {
		byID[sources[i].ID] = &sources[i]
	}
	refs := map[int]*Reference{}
	for i := range rep.References {
		refs[rep.References[i].Number] = &rep.References[i]
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
		paragraphs(&b, rep.Summary, refs, byID)
		b.WriteString("</section>\n")
	}
	for i, s := range rep.Sections {
		fmt.Fprintf(&b, "<section id=\"section-%d\"><h2>%s</h2>\n", i+1, esc(s.Heading))
		paragraphs(&b, s.Body, refs, byID)
		b.WriteString("</section>\n")
	}
	if len(rep.Conflicts) > 0 {
		b.WriteString(`<section id="conflicts"><h2>Conflicting evidence</h2><ul>` + "\n")
		for _, c := range rep.Conflicts {
			fmt.Fprintf(&b, "<li><strong>%s</strong> — %s <em>(%s, confidence %.2f)</em></li>\n", esc(c.Topic), cited(c.Text, refs, byID), esc(c.Strategy), c.Confidence)
		}
		b.WriteString("</ul></section>\n")
	}
	b.WriteString(`<section id="references"><h2>References</h2><ol>` + "\n")
	for _, r := range rep.References {
		title := esc(authorList(r.Authors) + oneLine(r.Title))
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

func paragraphs(b *strings.Builder, text string, refs map[int]*Reference, byID map[string]*Source) {
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			fmt.Fprintf(b, "<p>%s</p>\n", cited(p, refs, byID))
		}
	}
}

// cited escapes text and turns each [n] into a link to reference n whose
// title is the source passage that best matches the text before it.
func cited(text string, refs map[int]*Reference, byID map[string]*Source) string {
	var b strings.Builder
	prev := 0
	for _, loc := range citeRef.FindAllStringSubmatchIndex(text, -1) {
		before := text[prev:loc[0]]
		b.WriteString(esc(before))
		n, _ := strconv.Atoi(text[loc[2]:loc[3]])
		ref, ok := refs[n]
		if !ok {
			b.WriteString(esc(text[loc[0]:loc[1]]))
			prev = loc[1]
			continue
		}
		quote := ""
		if s := byID[ref.SourceID]; s != nil {
			quote = bestPassage(lastSentence(text[:loc[0]]), s.Content)
		}
		fmt.Fprintf(&b, `<sup class="cite"><a href="#ref-%d" title="%s">[%d]</a></sup>`, n, esc(quote), n)
		prev = loc[1]
	}
	b.WriteString(esc(text[prev:]))
	return b.String()
}

func lastSentence(s string) string {
	s = citeRef.ReplaceAllString(s, "")
	if i := strings.LastIndexAny(strings.TrimRight(s, " .;"), ".;"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// bestPassage is the source sentence sharing the most words with claim,
// cut to 300 characters.
func bestPassage(claim, content string) string {
	want := map[string]bool{}
	for _, w := range contentRE.FindAllString(strings.ToLower(claim), -1) {
		if len(w) > 2 && !english.IsStopWord(w) {
			want[english.Stem(w, false)] = true
		}
	}
	best, bestN := "", -1
	for _, sp := range textseg.Spans(content) {
		s := content[sp.Start:sp.End]
		n := 0
		for _, w := range contentRE.FindAllString(strings.ToLower(s), -1) {
			if want[english.Stem(w, false)] {
				n++
			}
		}
		if n > bestN {
			best, bestN = s, n
		}
	}
	best = oneLine(best)
	if r := []rune(best); len(r) > 300 {
		best = string(r[:299]) + "…"
	}
	return best
}
