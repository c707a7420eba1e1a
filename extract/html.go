package extract

import (
	"bytes"
	"errors"
	"fmt"
	"golang.org/x/text/unicode/norm"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

var spaces = regexp.MustCompile(`[ \t\f\v\x{a0}]+`)

// HTML extracts the readable text of a page with its title, description,
// keywords, language, published date and links. Non-UTF-8 pages are decoded
// by their declared or sniffed charset.
func HTML(data []byte, pageURL string) (Doc, error) {
	return HTMLWithType(data, pageURL, "text/html")
}

// HTMLWithType is HTML for a page served with a Content-Type header, whose
// charset parameter (if any) takes precedence over the page's own meta tag.
// Links are resolved against pageURL (or the page's <base href>) and kept
// only when they are http or https.
// One pass over the page — metadata, links, readability's text, the
// body when readability gives up — so it stays one function.
func HTMLWithType(data []byte, pageURL, contentType string) (Doc, error) {
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return Doc{}, errors.New("content is binary (NUL bytes), not HTML")
	}
	data = ToUTF8(data, contentType)
	// Scripting off: a <noscript> holds elements, not text, so the
	// links of a no-JavaScript fallback (mdBook's sidebar <iframe>) count.
	root, err := html.ParseWithOptions(bytes.NewReader(data), html.ParseOptionEnableScripting(false))
	if err != nil {
		return Doc{}, fmt.Errorf("html parse: %w", err)
	}
	gq := goquery.NewDocumentFromNode(root)
	doc := Doc{Format: "html"}
	doc.Title = clean(gq.Find("title").First().Text())
	meta := func(sel string) string {
		v, _ := gq.Find(sel).First().Attr("content")
		return clean(v)
	}
	doc.Description = firstNonEmpty(meta(`meta[name="description" i]`), meta(`meta[property="og:description"]`))
	doc.Keywords = meta(`meta[name="keywords" i]`)
	doc.Published = firstNonEmpty(meta(`meta[property="article:published_time"]`), meta(`meta[name="date" i]`))
	doc.Language, _ = gq.Find("html").First().Attr("lang")
	if doc.Title == "" {
		doc.Title = firstNonEmpty(meta(`meta[property="og:title"]`), clean(gq.Find("h1").First().Text()))
	}

	robots := strings.ToLower(meta(`meta[name="robots" i]`))
	doc.NoIndex = strings.Contains(robots, "noindex") || strings.Contains(robots, "none")
	doc.NoFollow = strings.Contains(robots, "nofollow") || strings.Contains(robots, "none")

	var u *url.URL
	if pageURL != "" {
		var err error
		if u, err = url.Parse(pageURL); err != nil {
			return Doc{}, fmt.Errorf("html: page URL %q: %w", pageURL, err)
		}
		doc.Links = links(gq, u)
		if href, ok := gq.Find(`link[rel~="canonical" i][href]`).First().Attr("href"); ok {
			if c, err := u.Parse(strings.TrimSpace(href)); err == nil && (c.Scheme == "http" || c.Scheme == "https") && c.Host != "" {
				c.Fragment, c.RawFragment = "", ""
				doc.Canonical = c.String()
			}
		}
	}
	// Readability mutates the tree; give it its own, parsed from the
	// bytes already decoded to UTF-8 (its own Parse would sniff the
	// charset again, the costliest step of reading a page).
	text := ""
	parser := readability.NewParser()
	// NFC first, as readability's own parser did: "é" is one rune.
	own, err := html.Parse(bytes.NewReader(norm.NFC.Bytes(data)))
	if err != nil {
		return Doc{}, fmt.Errorf("html parse: %w", err)
	}
	keepInline(own)
	fencePre(own)
	pipeTables(own)
	if art, err := parser.ParseAndMutate(own, u); err == nil && art.Node != nil {
		itemBlocks(art.Node)
		var b strings.Builder
		if art.RenderText(&b) == nil {
			text = normalize(b.String())
		}
		if doc.Title == "" {
			doc.Title = clean(art.Title())
		}
		if doc.Published == "" {
			if t, err := art.PublishedTime(); err == nil {
				doc.Published = t.UTC().Format("2006-01-02T15:04:05Z")
			}
		}
	}
	// Readability gives up on short or list-like pages; fall back to the body.
	if len(text) < 200 {
		gq.Find("script, style, noscript, template, svg, nav, header, footer").Remove()
		gq.Find("a[href^='#']").FilterFunction(func(_ int, s *goquery.Selection) bool { return permalink(s.Nodes[0]) }).Remove()
		fencePre(root)
		pipeTables(root)
		body := blockText(gq.Find("body"))
		if len(body) > len(text) {
			text = body
		}
	}
	doc.Text = text
	if strings.TrimSpace(doc.Text) == "" && doc.Title == "" {
		return doc, errors.New("html has no readable text")
	}
	return doc, nil
}

// Fences mark a block of code in extracted text, as Markdown does: the
// opening fence with an info string, the closing one bare, so a reader of
// part of the text (a chunk) can tell the one from the other. A block
// whose own lines open with three backticks or more is fenced with one
// more than its longest such run (Fence).
const (
	FenceOpen  = "```text"
	FenceClose = "```"
)

// Fence returns the opening and closing fence of a block of code: three
// backticks, or one more than the longest run that opens a line of it.
func Fence(code string) (opening, closing string) {
	n := 3
	for line := range strings.SplitSeq(code, "\n") {
		t := strings.TrimSpace(line)
		if k := len(t) - len(strings.TrimLeft(t, "`")); k >= n {
			n = k + 1
		}
	}
	closing = strings.Repeat("`", n)
	return closing + "text", closing
}

// fencePre fences each preformatted block of a tree: a listing, a
// terminal session, a program's output. Its lines are code, however they
// read ("import os", a docstring's "This builder installs setuptools and
// pip so that you can pip or"), and the text keeps them apart from the
// sentences around them.
func fencePre(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			// Prose that would read as a fence is not one.
			c.Data = loneFence.ReplaceAllString(c.Data, "$1")
		}
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data != "pre" {
			fencePre(c)
			continue
		}
		opening, closing := Fence(nodeText(c))
		c.InsertBefore(&html.Node{Type: html.TextNode, Data: "\n" + opening + "\n"}, c.FirstChild)
		c.AppendChild(&html.Node{Type: html.TextNode, Data: "\n" + closing + "\n"})
	}
}

// loneFence is a line that reads as a code fence: backticks, then the
// rest ($1) with none.
var loneFence = regexp.MustCompile("(?m)^[ \t]*`{3,}([^`\n]*)$")

// Unfenced is text without its code fences' lines (the code between
// them kept): what a chunk says, for its terms and its embedding, since
// "```text" says nothing of it.
func Unfenced(text string) string {
	if !strings.Contains(text, "```") {
		return text
	}
	return loneFence.ReplaceAllString(text, "")
}

// nodeText is the text of n and its descendants, a line break where a
// <br> is.
func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		if c.Type == html.ElementNode && c.Data == "br" {
			b.WriteByte('\n')
		}
		for gc := c.FirstChild; gc != nil; gc = gc.NextSibling {
			walk(gc)
		}
	}
	walk(n)
	return b.String()
}

// inlineTags are elements that mark up words inside a sentence.
var inlineTags = map[string]bool{"span": true, "em": true, "strong": true, "b": true, "i": true, "u": true, "code": true, "kbd": true, "samp": true, "var": true, "abbr": true, "small": true, "mark": true, "cite": true, "dfn": true, "tt": true, "q": true, "font": true}

// keepInline readies a tree for readability. Readability drops elements
// whose class or id reads as page furniture ("menu", "share", "extra"),
// which is right for a sidebar and wrong for the words of a sentence: a
// manual marks its menu paths and labels up as <span class="menuitem">
// or <span class="guimenu">, and "편집 → 실행 취소를 선택" became "→ 를
// 선택". Inline elements are replaced by their children, so their text
// stays in its sentence. Elements marked hidden (another platform's
// variant of a menu path) are removed, but for the default of a switch
// between hidden alternatives (switchDefault).
func keepInline(n *html.Node) {
	keep := switchDefault(n)
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode {
			if c != keep && hidden(c) || permalink(c) {
				n.RemoveChild(c)
				c = next
				continue
			}
			keepInline(c)
			if inlineTags[c.Data] {
				for gc := c.FirstChild; gc != nil; {
					gnext := gc.NextSibling
					c.RemoveChild(gc)
					n.InsertBefore(gc, c)
					gc = gnext
				}
				n.RemoveChild(c)
			}
		}
		c = next
	}
}

// permalinkMarks are the texts documentation generators give the link a
// heading or entry carries to itself (Sphinx's ¶, Node.js's #).
var permalinkMarks = map[string]bool{"#": true, "¶": true, "§": true, "🔗": true}

// permalink reports a link to a place in its own page whose text is
// only a permalink mark: "server.requestTimeout#" is a heading, and "#"
// is not a word of it.
func permalink(n *html.Node) bool {
	if n.Data != "a" {
		return false
	}
	href := ""
	for _, a := range n.Attr {
		if a.Key == "href" {
			href = strings.TrimSpace(a.Val)
		}
	}
	if !strings.HasPrefix(href, "#") {
		return false
	}
	return permalinkMarks[strings.TrimSpace(nodeText(n))]
}

// itemBlocks makes each list item, term and definition of a tree a
// paragraph of its own: readability renders them a line each, and the
// lines of one paragraph join as a wrapped sentence does, so an option
// list ("timeout <number> Default: 0" then "maxBuffer <number> Largest
// amount …") ran into one sentence. The inline content of an <li>, <dt>
// or <dd> — each run of it between block children — is wrapped in a
// <p>.
func itemBlocks(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			itemBlocks(c)
		}
	}
	if n.Type != html.ElementNode || n.Data != "li" && n.Data != "dt" && n.Data != "dd" {
		return
	}
	var run *html.Node
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && (isBlock(c.Data) || itemBreaks[c.Data]) || c.Type == html.CommentNode {
			run = nil
			c = next
			continue
		}
		if run == nil {
			if c.Type == html.TextNode && strings.TrimSpace(c.Data) == "" {
				c = next
				continue
			}
			run = &html.Node{Type: html.ElementNode, Data: "p"}
			n.InsertBefore(run, c)
		}
		n.RemoveChild(c)
		run.AppendChild(c)
		c = next
	}
}

// itemBreaks are the elements, besides isBlock's, that end the run of an
// item's inline content before them: a definition list or a figure
// inside a list item is not a word of its sentence.
var itemBreaks = map[string]bool{"dl": true, "figure": true, "figcaption": true, "details": true, "summary": true, "nav": true, "aside": true, "header": true, "footer": true, "form": true, "fieldset": true, "hr": true}

// switchDefault returns, when every element in n has the hidden
// attribute and there are two or more, the last: the alternatives a
// page's script chooses between (LibreOffice's help shows "Command" on a
// Mac and "Ctrl" elsewhere, both hidden until the script runs), of which
// a switch keeps its default last. Without it the sentence lost the
// key: "표의 안을 클릭하고, + A 를 두번 눌러". A lone hidden element (a
// part shown in one application only) stays hidden.
func switchDefault(n *html.Node) *html.Node {
	var last *html.Node
	count := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.ElementNode:
			if !slices.ContainsFunc(c.Attr, func(a html.Attribute) bool { return a.Key == "hidden" }) {
				return nil // shown, or hidden from screen readers only
			}
			last = c
			count++
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
			return nil
		}
	}
	if count < 2 {
		return nil
	}
	return last
}

func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "hidden" || a.Key == "aria-hidden" && a.Val == "true" {
			return true
		}
	}
	return false
}

// ToUTF8 decodes data by the charset in contentType, an HTML page's meta
// tag or sniffing, in that order; invalid sequences are dropped.
func ToUTF8(data []byte, contentType string) []byte {
	r, err := charset.NewReader(bytes.NewReader(data), contentType)
	if err != nil {
		return bytes.ToValidUTF8(data, nil)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		return bytes.ToValidUTF8(data, nil)
	}
	return bytes.ToValidUTF8(b.Bytes(), nil)
}

// maxLinks caps the links kept from one page.
const maxLinks = 2000

// links returns the page's distinct http(s) links (anchors, image-map
// areas and frames), resolved and without
// fragments, in document order.
func links(gq *goquery.Document, page *url.URL) []string {
	base := page
	if href, ok := gq.Find("base[href]").First().Attr("href"); ok {
		if b, err := page.Parse(strings.TrimSpace(href)); err == nil {
			base = b
		}
	}
	seen := map[string]bool{}
	var out []string
	// Frames are part of the page as a reader sees it: a site's table of
	// contents is often one.
	gq.Find("a[href], area[href], iframe[src], frame[src]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if rel, _ := s.Attr("rel"); strings.Contains(strings.ToLower(rel), "nofollow") {
			return true
		}
		href, link := s.Attr("href")
		if !link {
			href, _ = s.Attr("src")
		}
		l, err := base.Parse(strings.TrimSpace(href))
		if err != nil || (l.Scheme != "http" && l.Scheme != "https") || l.Host == "" {
			return true
		}
		if !link && !strings.EqualFold(l.Hostname(), page.Hostname()) {
			// A frame from another site is a widget or a tracker (a tag
			// manager's <noscript> frame), not part of this site.
			return true
		}
		l.Fragment, l.RawFragment = "", ""
		if v := l.String(); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
		return len(out) < maxLinks
	})
	return out
}

// blockText renders a selection's text with newlines between blocks.
func blockText(sel *goquery.Selection) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && n.Data == "br" && n.Parent != nil && slices.Contains(n.Parent.Attr, html.Attribute{Key: "data-quarry", Val: tableClass}) {
			b.WriteByte('\n') // a table's rows are one block
			return
		}
		block := n.Type == html.ElementNode && isBlock(n.Data)
		if block {
			b.WriteString("\n\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			b.WriteString("\n\n")
		}
	}
	for _, n := range sel.Nodes {
		walk(n)
	}
	return normalize(b.String())
}

func isBlock(tag string) bool {
	switch tag {
	case "p", "div", "section", "article", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "tr", "br", "main", "dd", "dt":
		return true
	}
	return false
}

// normalize collapses runs of spaces and tabs (no-break spaces too) to one
// space, trims every line and collapses blank lines to one, in a single
// pass (a page's text can be megabytes; regular expressions over it were
// the costliest step of reading it).
func normalize(s string) string {
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	b.Grow(len(s))
	blank, wrote := false, false
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		line = strings.TrimSpace(line)
		if line == "" {
			blank = true
			continue
		}
		if wrote {
			b.WriteByte('\n')
			if blank {
				b.WriteByte('\n')
			}
		}
		space := false
		for _, r := range line {
			switch r {
			case ' ', '\t', '\f', '\v', '\u00a0':
				space = true
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
		wrote, blank = true, false
	}
	return b.String()
}

func clean(s string) string {
	return strings.TrimSpace(spaces.ReplaceAllString(strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\n", " "), " "))
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// pipeTables writes each data table of a tree as Markdown writes a table,
// so its rows keep their header: a line of the header's cells, a line of
// dashes, then a line a row, its cells between pipes ("| SQLITE_MAX_ATTACHED
// | 10 | 125 |"). Rendered as text, a table ran its cells together and
// left its header a line read as any other. A data table has a header
// row (its first, of <th> cells), two columns or more and cells of a few
// words, not paragraphs, lists, listings or tables: a table that lays
// out a page (an icon beside its description) keeps its prose, and the
// data tables inside it are written so. The table becomes a paragraph
// (tableClass) with its class and id, so readability still drops a
// sidebar's; its caption, a paragraph before it.
func pipeTables(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode {
			var lines []string
			var caption string
			if c.Data == "table" {
				lines, caption = tableLines(c)
			}
			if lines == nil {
				pipeTables(c)
			} else {
				for _, p := range tableParagraphs(c, lines, caption) {
					n.InsertBefore(p, c)
				}
				n.RemoveChild(c)
			}
		}
		c = next
	}
}

// tableParagraphs are what a data table becomes: its caption, when it has
// one, and its lines (tableLines) a paragraph with the table's class and
// id, a line break between each.
func tableParagraphs(t *html.Node, lines []string, caption string) []*html.Node {
	var out []*html.Node
	if caption != "" {
		cp := &html.Node{Type: html.ElementNode, Data: "p"}
		cp.AppendChild(&html.Node{Type: html.TextNode, Data: caption})
		out = append(out, cp)
	}
	p := &html.Node{Type: html.ElementNode, Data: "p", Attr: []html.Attribute{{Key: "data-quarry", Val: tableClass}}}
	for _, a := range t.Attr {
		if a.Key == "class" || a.Key == "id" {
			p.Attr = append(p.Attr, a)
		}
	}
	for i, l := range lines {
		if i > 0 {
			p.AppendChild(&html.Node{Type: html.ElementNode, Data: "br"})
		}
		p.AppendChild(&html.Node{Type: html.TextNode, Data: l})
	}
	return append(out, p)
}

// tableClass marks (data-quarry) the paragraph a data table became: its
// line breaks are a table's rows, one block (blockText).
const tableClass = "table"

// maxCellRunes is the longest cell of a data table: a longer one holds
// prose.
const maxCellRunes = 160

// maxSpan bounds a cell's rowspan and colspan: a page's "rowspan=1000000"
// would otherwise build that many rows.
const maxSpan = 64

// maxTableGrowth bounds what a table's lines may hold against its own
// text: a cell spanning rows and columns is written in each, and a page's
// spans may not multiply a small table into megabytes.
const maxTableGrowth = 8

// tableLines is a data table's lines (pipeTables) and its caption; nil
// for another table. Each row has the header's cells: a cell spanning
// rows or columns (rowspan, colspan) is written in each it spans, a row
// short of cells is filled with empty ones, and cells past the header's
// are left out.
func tableLines(t *html.Node) ([]string, string) {
	var rows [][]*html.Node
	caption := ""
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "thead", "tbody", "tfoot":
				walk(c)
			case "caption":
				caption = clean(cellText(c))
			case "tr":
				var cells []*html.Node
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.Type == html.ElementNode && (d.Data == "td" || d.Data == "th") {
						cells = append(cells, d)
					}
				}
				rows = append(rows, cells)
			}
		}
	}
	walk(t)
	if len(rows) < 2 || len(rows[0]) < 2 || slices.ContainsFunc(rows[0], func(c *html.Node) bool { return c.Data != "th" }) {
		return nil, ""
	}
	width := 0
	for _, c := range rows[0] {
		width += span(c, "colspan")
	}
	// below[col] is a cell spanning down into the rows after this one,
	// and how many more rows it spans (0: none).
	type spanning struct {
		text string
		rows int
	}
	below := make([]spanning, width)
	lines := make([]string, 0, len(rows)+1)
	size, own := 0, 0
	for i, r := range rows {
		cells := make([]string, 0, width)
		// spanned takes the cells spanning down into this row up to the
		// next free column.
		spanned := func() {
			for len(cells) < width && below[len(cells)].rows > 0 {
				sp := &below[len(cells)]
				sp.rows--
				cells = append(cells, sp.text)
			}
		}
		for _, c := range r {
			spanned()
			if cellHolds(c) {
				return nil, ""
			}
			text := clean(cellText(c))
			if utf8.RuneCountInString(text) > maxCellRunes {
				return nil, ""
			}
			own += len(text)
			text = strings.ReplaceAll(text, "|", `\|`)
			if strings.Trim(text, "-: ") == "" && text != "" {
				text = `\` + text // a cell of dashes is no rule under a header
			}
			down := span(c, "rowspan") - 1
			for range span(c, "colspan") {
				if len(cells) == width {
					break
				}
				below[len(cells)] = spanning{text: text, rows: down}
				cells = append(cells, text)
			}
		}
		for len(cells) < width {
			if spanned(); len(cells) < width {
				cells = append(cells, "")
			}
		}
		line := "| " + strings.Join(cells, " | ") + " |"
		if size += len(line); size > maxTableGrowth*(own+len(rows)) {
			return nil, ""
		}
		lines = append(lines, line)
		if i == 0 {
			lines = append(lines, "|"+strings.Repeat(" --- |", width))
		}
	}
	return lines, caption
}

// cellText is a cell's text: its words, a space where a block or a line
// break ends, no script's or style's.
func cellText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		switch {
		case c.Type == html.TextNode:
			b.WriteString(c.Data)
		case c.Type == html.ElementNode && (c.Data == "script" || c.Data == "style" || c.Data == "noscript" || c.Data == "template"):
			return
		}
		for gc := c.FirstChild; gc != nil; gc = gc.NextSibling {
			walk(gc)
		}
		if c.Type == html.ElementNode && (isBlock(c.Data) || c.Data == "br") {
			b.WriteByte(' ')
		}
	}
	walk(n)
	return b.String()
}

// span is a cell's rowspan or colspan: 1 to maxSpan.
func span(c *html.Node, attr string) int {
	for _, a := range c.Attr {
		if a.Key == attr {
			if n, err := strconv.Atoi(strings.TrimSpace(a.Val)); err == nil {
				return min(max(n, 1), maxSpan)
			}
		}
	}
	return 1
}

// cellHolds reports a cell that holds blocks a row cannot: a list, a
// listing, a table, a heading.
func cellHolds(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.Data {
		case "ul", "ol", "dl", "pre", "table", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote":
			return true
		}
		if cellHolds(c) {
			return true
		}
	}
	return false
}
