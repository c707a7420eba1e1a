package crawl

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
)

// Sitemap is a parsed sitemap.xml: page URLs (a <urlset>) and nested
// sitemap URLs (a <sitemapindex>).
type Sitemap struct {
	Pages    []string
	Sitemaps []string
}

// maxSitemapEntries caps what one sitemap file contributes (the protocol's
// own limit is 50,000).
const maxSitemapEntries = 50000

// ParseSitemap reads the sitemaps.org XML format. Entries without a <loc>
// are skipped; anything that is not a sitemap is an error.
func ParseSitemap(data []byte) (Sitemap, error) {
	type entry struct {
		Loc string `xml:"loc"`
	}
	var doc struct {
		XMLName  xml.Name
		URLs     []entry `xml:"url"`
		Sitemaps []entry `xml:"sitemap"`
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	if err := dec.Decode(&doc); err != nil {
		return Sitemap{}, err
	}
	var sm Sitemap
	switch doc.XMLName.Local {
	case "urlset", "sitemapindex":
	default:
		return Sitemap{}, errNotSitemap(doc.XMLName.Local)
	}
	for _, u := range doc.URLs {
		if loc := strings.TrimSpace(u.Loc); loc != "" && len(sm.Pages) < maxSitemapEntries {
			sm.Pages = append(sm.Pages, loc)
		}
	}
	for _, s := range doc.Sitemaps {
		if loc := strings.TrimSpace(s.Loc); loc != "" && len(sm.Sitemaps) < maxSitemapEntries {
			sm.Sitemaps = append(sm.Sitemaps, loc)
		}
	}
	return sm, nil
}

type errNotSitemap string

func (e errNotSitemap) Error() string {
	return "not a sitemap: root element is <" + string(e) + ">, want <urlset> or <sitemapindex>"
}
