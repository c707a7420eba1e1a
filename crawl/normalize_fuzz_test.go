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
	f.Add("https://h/a?access_token=S3CRET0TOKEN1&lang=en", "https://h/?access_token=S3CRET0TOKEN1&x=1")
	f.Add("http://h/p?key=kkkkkk&key=k2k2k2k2&sig=%zz", "http://h/?key=kkkkkk&key=k2k2k2k2")
	f.Add("http://h/?Token=a+b+c+d&t=&author=xxxxxx&x=REDACTED01REDACTED", "http://h/?Token=a+b+c+d&author=xxxxxx")
	f.Add("http://h/login?next=%2Fb%3Faccess_token%3DS3CRET0TOKEN1;x=1", "http://h/?access_token=S3CRET0TOKEN1")
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
		p := secretsOf(seed)
		page := normalize(u)
		stored := p.stored(page)
		// Outside its placeholders (REDACTED07 holds "DACTED").
		host := page
		if i := strings.Index(page, "://"); i >= 0 {
			if j := strings.IndexByte(page[i+3:], '/'); j >= 0 {
				host = page[:i+3+j]
			}
		}
		rest := placeholderRE.ReplaceAllString(strings.TrimPrefix(stored, host), "\x00")
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

// TestSecretPlaceholdersStable: a placeholder stands for its parameter's
// value whatever else the start URL carries: a URL stored by one crawl is
// fetched by a later one with the same parameter's value, after the
// start URL gains a secret parameter, writes its pairs with ';' or
// changes its token.
func TestSecretPlaceholdersStable(t *testing.T) {
	of := func(seed string) *secrets {
		u, err := url.Parse(seed)
		if err != nil {
			t.Fatal(err)
		}
		return secretsOf(u)
	}
	first := of("https://h/docs/?access_token=S3CRETS3CRET")
	key := first.stored("https://h/docs/a?access_token=S3CRETS3CRET&lang=en")
	if strings.Contains(key, "S3CRET") {
		t.Fatalf("stored %s", key)
	}
	for seed, want := range map[string]string{
		"https://h/docs/?key=OTHERKEY1&access_token=S3CRETS3CRET":  "https://h/docs/a?access_token=S3CRETS3CRET&lang=en",
		"https://h/docs/?lang=en;access_token=S3CRETS3CRET;sig=zz": "https://h/docs/a?access_token=S3CRETS3CRET&lang=en",
		"https://h/docs/?access_token=N3WTOKEN0000":                "https://h/docs/a?access_token=N3WTOKEN0000&lang=en",
	} {
		got, ok := of(seed).restore(key)
		if !ok || got != want {
			t.Errorf("stored %s, restored from %s: %q %v, want %s", key, seed, got, ok, want)
		}
	}
	// Without a secret in the start URL nothing is read as a placeholder:
	// a crawl without one stores and fetches URLs as they are.
	if got, ok := of("https://h/docs/").restore(key); !ok || got != key {
		t.Errorf("restored without a token: %q %v, want it as stored", got, ok)
	}
	if p := of("https://h/docs/?author=jsmith1"); len(p.forms) != 0 {
		t.Errorf("author=jsmith1 taken for a secret: %v", p.forms)
	}
}
