package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/quarryhq/quarry/extract"
)

// Page is a fetched document turned into readable text.
type Page struct {
	URL                string
	NotModified        bool
	ETag, LastModified string
	MediaType          string
	Doc                extract.Doc
}

// Page fetches a document (HTML, XHTML, PDF, plain text or Markdown) and
// extracts it. With cond's ETag or LastModified set the request is
// conditional and an unchanged page comes back with NotModified and no Doc.
func (f *Fetcher) Page(ctx context.Context, url string, cond Request) (*Page, error) {
	cond.URL = url
	cond.Accept = Documents
	resp, err := f.Get(ctx, cond)
	if err != nil {
		return nil, err
	}
	p := &Page{URL: resp.URL, NotModified: resp.NotModified, ETag: resp.ETag, LastModified: resp.LastModified, MediaType: resp.MediaType}
	if resp.NotModified {
		return p, nil
	}
	p.Doc, err = Extract(resp)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", redactString(resp.URL), err)
	}
	return p, nil
}

// Extract turns a fetched response into text by its media type.
func Extract(resp *Response) (extract.Doc, error) {
	name := path.Base(strings.TrimSuffix(resp.URL, "/"))
	switch resp.MediaType {
	case "text/html", "application/xhtml+xml":
		return extract.HTMLWithType(resp.Body, resp.URL, resp.ContentType)
	case "application/pdf":
		return extract.PDF(resp.Body)
	case "text/plain", "text/markdown":
		body := extract.ToUTF8(resp.Body, resp.ContentType)
		if resp.MediaType == "text/markdown" {
			return extract.Markdown(body, name)
		}
		return extract.PlainText(body, name)
	}
	return extract.Doc{}, errors.New("no extractor for " + resp.MediaType)
}

func redactString(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return Redact(u)
}
