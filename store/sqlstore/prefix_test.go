package sqlstore_test

import (
	"testing"

	"github.com/quarryhq/quarry/store/sqlstore"
)

// TestPrefixUpper: the bound a source prefix's sources are read up to is
// above every string that starts with the prefix and below every other
// string above it, byte by byte.
func TestPrefixUpper(t *testing.T) {
	for _, c := range []struct {
		prefix, want string
		ok           bool
	}{
		{"https://a.test/", "https://a.test0", true},
		{"file:///장부", "file:///장\uBD81", true},
		{"x\U0010FFFF", "y", true},
		{"\U0010FFFF\U0010FFFF", "", false},
		{"a\uD7FF", "a\uE000", true},
		{"", "", false},
	} {
		got, ok := sqlstore.PrefixUpper(c.prefix)
		if got != c.want || ok != c.ok {
			t.Errorf("PrefixUpper(%q) = %q %v, want %q %v", c.prefix, got, ok, c.want, c.ok)
			continue
		}
		if !ok {
			continue
		}
		for _, s := range []string{c.prefix, c.prefix + "\U0010FFFF\U0010FFFF", c.prefix + "zz"} {
			if s >= got {
				t.Errorf("%q starts with %q and is not below %q", s, c.prefix, got)
			}
		}
	}
}
