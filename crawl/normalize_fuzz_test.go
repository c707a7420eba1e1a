package crawl

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/fetch"
)

// FuzzNormalize: a page's address normalised once is normalised for good:
// read back and normalised again it is the same, so a page is queued and
// stored under one address however its links write it.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"HTTP://Docs.Example.com:80/a/b?x=1#frag", "https://u:p@h:443", "http://h/%7Euser/", "http://[::1]:8080/p?q", "https://h/a b", "http://h?", "http://h/#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		once := normalize(u)
		v, err := url.Parse(once)
		if err != nil {
			t.Fatalf("normalize(%q) = %q does not parse: %v", raw, once, err)
		}
		if twice := normalize(v); twice != once {
			t.Fatalf("normalize(%q) = %q, normalised again %q", raw, once, twice)
		}
	})
}

// FuzzStoredURL: a page's address holding the start URL's secrets (any
// query values the start URL's secret parameters share with it) is stored
// without them, and restored it is the page again: the same key, and
// redacted again, nothing changes.
func FuzzStoredURL(f *testing.F) {
	f.Add("https://h/a?access_token=S3CRET&lang=en", "https://h/?access_token=S3CRET&x=1")
	f.Add("http://h/p?key=k&key=k2&sig=%zz", "http://h/?key=k")
	f.Add("http://h/?Token=a+b&t=&author=x", "http://h/?Token=a+b&author=x")
	f.Fuzz(func(t *testing.T, raw, seedRaw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		seed, err := url.Parse(seedRaw)
		if err != nil {
			return
		}
		p := &pass{secrets: secretsOf(seed)}
		page := normalize(u)
		stored := p.stored(page)
		if again := p.stored(stored); again != stored {
			t.Fatalf("page %q stored as %q, stored again as %q", page, stored, again)
		}
		for k, vs := range p.secrets {
			sq, _ := url.Parse(stored)
			for _, v := range sq.Query()[k] {
				if slices.Contains(vs, v) && v != fetch.Redacted {
					t.Fatalf("page %q stored as %q keeps the start URL's %s", page, stored, k)
				}
			}
		}
		back, ok := p.restore(stored)
		if !ok {
			if !strings.Contains(page, fetch.Redacted) {
				t.Fatalf("page %q stored as %q cannot be restored", page, stored)
			}
			return
		}
		bu, err := url.Parse(back)
		if err != nil {
			t.Fatalf("restore(%q) = %q does not parse: %v", stored, back, err)
		}
		if key := p.stored(normalize(bu)); key != stored && !strings.Contains(page, fetch.Redacted) {
			t.Fatalf("page %q stored as %q, restored %q, stored again as %q", page, stored, back, key)
		}
	})
}
