package crawl

import (
	"net/url"
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
