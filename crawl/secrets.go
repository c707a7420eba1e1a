package crawl

import (
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/quarryhq/quarry/fetch"
)

// minSecret is the shortest secret value taken out of a page's URL.
const minSecret = 12

// looksSecret reports whether a value under a secret-looking name is a
// secret to take out of a page's URL: 12 characters or more, letters and
// digits, as tokens and keys are. The names are broad (author= and
// passage= look like auth and pass), and a short or plain value
// ("jsmith", "en", "1") would be replaced wherever its characters appear.
func looksSecret(v string) bool {
	return len(v) >= minSecret && strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, unicode.IsLetter) >= 0
}

// placeholderRE is a placeholder as stored: REDACTED and two digits.
var placeholderRE = regexp.MustCompile(fetch.Redacted + `([0-9]{2})`)

// secrets hides a crawl's start URL's secret query values in the URLs
// pages are stored under, and puts them back to fetch the pages.
type secrets struct {
	// hide and unhide replace the values' forms by placeholders and
	// back; mask replaces them by REDACTED alone, in errors and logs.
	hide, unhide, mask *strings.Replacer
	// forms are the written forms of the values hide replaces; used the
	// numbers of their placeholders.
	forms []string
	used  map[int]bool
}

// secretsOf is the secrets of u's secret query values (those
// fetch.SecretValues lists: a token, a key, a signature, …) in a page's
// URL: each value in every form a URL may write it — as the start URL
// writes it, as it is, query- or path-escaped (upper- or lower-case hex),
// escaped twice as in a return address "?next=%2Fa%3Ftoken%3D…" — by a
// placeholder REDACTEDnn, and back. A form's number comes from its
// parameter's name, its place among that name's values and its kind of
// form, not from the value or the other parameters: a stored URL is
// restored with the same parameter's value after the start URL gains a
// parameter or its token changes. A page's URL that already says
// REDACTED has it written REDACTED00, so that hiding is undone exactly,
// and a placeholder no value stands for is told apart.
func secretsOf(u *url.URL) *secrets {
	type form struct {
		text string
		n    int
	}
	var forms []form
	used := map[int]bool{}
	seen := map[string]bool{}
	occ := map[string]int{}
	for _, sv := range fetch.SecretValues(u.RawQuery) {
		name, raw := sv.Name, sv.Raw
		v := raw
		if d, err := url.QueryUnescape(raw); err == nil {
			v = d
		}
		if !looksSecret(v) {
			continue
		}
		occ[name]++
		kinds := []string{raw, v, url.QueryEscape(v), url.PathEscape(v), url.QueryEscape(url.QueryEscape(v))}
		for kind := range 2 * len(kinds) {
			f := kinds[kind%len(kinds)]
			if kind >= len(kinds) {
				f = lowerHex(f)
			}
			if strings.Contains(f, fetch.Redacted[:4]) || seen[f] {
				continue
			}
			h := fnv.New32a()
			fmt.Fprintf(h, "%s\x00%d\x00%d", name, occ[name], kind)
			n := 1 + int(h.Sum32()%99)
			for i := 0; used[n] && i < 99; i++ {
				n = n%99 + 1
			}
			if used[n] {
				break // 99 forms: the rest are not hidden
			}
			used[n], seen[f] = true, true
			forms = append(forms, form{f, n})
		}
	}
	// Longest first: a form holding another is replaced whole.
	slices.SortFunc(forms, func(a, b form) int {
		if len(a.text) != len(b.text) {
			return len(b.text) - len(a.text)
		}
		return strings.Compare(a.text, b.text)
	})
	sec := &secrets{used: used}
	var hide, unhide, mask []string
	for _, f := range forms {
		ph := fmt.Sprintf("%s%02d", fetch.Redacted, f.n)
		hide = append(hide, f.text, ph)
		unhide = append(unhide, ph, f.text)
		mask = append(mask, f.text, fetch.Redacted)
		sec.forms = append(sec.forms, f.text)
	}
	// After the forms, a REDACTED already there (a form may end in RED).
	hide = append(hide, fetch.Redacted, fetch.Redacted+"00")
	unhide = append(unhide, fetch.Redacted+"00", fetch.Redacted)
	sec.hide, sec.unhide, sec.mask = strings.NewReplacer(hide...), strings.NewReplacer(unhide...), strings.NewReplacer(mask...)
	return sec
}

// lowerHex is s with its %XX escapes in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerByte(b[i+1]), lowerByte(b[i+2])
		}
	}
	return string(b)
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// holds reports whether a URL from the store holds one of the secret
// values: an earlier version stored it so.
func (s *secrets) holds(u string) bool {
	for _, f := range s.forms {
		if strings.Contains(u, f) {
			return true
		}
	}
	return false
}

// stored is the URL a page is stored under — in the store, and in what
// searches and reports cite: u (normalised) with the start URL's secret
// values replaced wherever its path or query writes them
// (/a?access_token=REDACTED01&lang=en). The secrets a user gives a crawl
// never reach stored data. A value that only looks secret (author=,
// page_token=) or is a page's own (a signature only its link carries) is
// part of the page's address, and is stored with it.
func (s *secrets) stored(u string) string {
	if len(s.forms) == 0 {
		return u // a crawl without secrets stores URLs as they are
	}
	i := strings.Index(u, "://")
	if i < 0 {
		return s.hide.Replace(u)
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return s.hide.Replace(u)
	}
	j += i + 3
	return u[:j] + s.hide.Replace(u[j:])
}

// hideErr is err with the start URL's secret values replaced in its
// message (a fetch error names the URL it fetched), its chain kept.
func (s *secrets) hideErr(err error) error {
	if err == nil || len(s.forms) == 0 {
		return err
	}
	if msg := s.mask.Replace(err.Error()); msg != err.Error() {
		return &hiddenError{msg: msg, err: err}
	}
	return err
}

type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }

// restore is a stored URL to fetch: its placeholders the start URL's
// secret values again; false when it holds a placeholder the start URL
// gives no value for (never sent to the site). A crawl whose start URL
// has no secret fetches every URL as it is stored.
func (s *secrets) restore(key string) (string, bool) {
	if len(s.forms) == 0 || !strings.Contains(key, fetch.Redacted) {
		return key, true
	}
	for _, m := range placeholderRE.FindAllStringSubmatch(key, -1) {
		if n, _ := strconv.Atoi(m[1]); n != 0 && !s.used[n] {
			return "", false
		}
	}
	return s.unhide.Replace(key), true
}

// show is a page's URL as the log shows it: the values masked however
// written, and what fetch.Redact hides.
func (s *secrets) show(u string) string { return redacted(s.mask.Replace(u)) }
