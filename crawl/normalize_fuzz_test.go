package crawl

import (
	"net/url"
	"strings"
	"testing"
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

// FuzzStoredURL: a page's address is stored without the start URL's
// secret values (wherever in its path or query they are written, however
// escaped), and restored to the address it was found at.
func FuzzStoredURL(f *testing.F) {
	f.Add("https://h/a?access_token=S3CRET&lang=en", "https://h/?access_token=S3CRET&x=1")
	f.Add("http://h/p?key=kkkkkk&key=k2k2k2k2&sig=%zz", "http://h/?key=kkkkkk&key=k2k2k2k2")
	f.Add("http://h/?Token=a+b+c+d&t=&author=xxxxxx&x=REDACTED01REDACTED", "http://h/?Token=a+b+c+d&author=xxxxxx")
	f.Add("http://h/login?next=%2Fb%3Faccess_token%3DS3CRET;x=1", "http://h/?access_token=S3CRET")
	f.Add("http://h/a/DACTED?x=ab%2fcdef", "http://h/?token=DACTED&key=ab%2fcdef")
	f.Fuzz(func(t *testing.T, raw, seedRaw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		seed, err := url.Parse(seedRaw)
		if err != nil {
			return
		}
		p := &pass{}
		p.secretsOf(seed)
		page := normalize(u)
		stored := p.stored(page)
		// Outside its placeholders (REDACTED07 holds "DACTED").
		rest := placeholderRE.ReplaceAllString(strings.TrimPrefix(stored, u.Scheme+"://"+u.Host), "\x00")
		for _, f := range p.forms {
			if strings.Contains(rest, f) {
				t.Fatalf("page %q stored as %q keeps the start URL's secret %q", page, stored, f)
			}
		}
		back, ok := p.restore(stored)
		if !ok {
			t.Fatalf("page %q stored as %q cannot be restored", page, stored)
		}
		if back != page {
			t.Fatalf("page %q stored as %q restored as %q", page, stored, back)
		}
	})
}
