package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/quarryhq/quarry/store/postgres"
)

// TestRedactErr: a connection error names its URL without the password,
// also one that holds an "@" unescaped (URL parsers split at the last).
func TestRedactErr(t *testing.T) {
	for in, want := range map[string]string{
		"dial postgres://app:s3cret@db:5432/q: refused":                     "dial postgres://***@db:5432/q: refused",
		"cannot parse `postgres://app:p@ss@db/q`: bad":                      "cannot parse `postgres://***@db/q`: bad",
		"a postgres://u:one@h/a and postgres://v:two@k/b":                   "a postgres://***@h/a and postgres://***@k/b",
		"no url here: refused":                                              "no url here: refused",
		"dial postgres://app:it's@db/q: refused":                            "dial postgres://***@db/q: refused",
		"postgres://db/q without a user, then user@example.com in the text": "postgres://db/q without a user, then user@example.com in the text",
	} {
		got := postgres.RedactErr(errors.New(in)).Error()
		if got != want {
			t.Errorf("redactErr(%q) = %q, want %q", in, got, want)
		}
		for _, secret := range []string{"s3cret", "p@ss", "ss@db", "one", "two"} {
			if strings.Contains(in, secret) && strings.Contains(got, secret) {
				t.Errorf("redactErr(%q) = %q keeps %q", in, got, secret)
			}
		}
	}
}

// TestRedactErrKeepsTheChain: an error with nothing to redact is returned
// as it was, so errors.Is still reads it.
func TestRedactErrKeepsTheChain(t *testing.T) {
	err := fmt.Errorf("listen on postgres://db/q: %w", context.Canceled)
	if got := postgres.RedactErr(err); !errors.Is(got, context.Canceled) {
		t.Fatalf("redactErr(%v) = %v, lost its chain", err, got)
	}
}

func FuzzRedactErr(f *testing.F) {
	for _, s := range []string{"postgres://a:b@c/d", "x://@", "://", "postgres://u:p@ss@h/d x", "cannot parse `postgres://u:p@h`"} {
		f.Add(s, "pw")
	}
	f.Fuzz(func(t *testing.T, prefix, password string) {
		// A URL's password holds no space or quote unescaped: the URL ends
		// there.
		if password == "" || strings.ContainsAny(password, "`\"<>") || strings.IndexFunc(password, unicode.IsSpace) >= 0 || strings.Contains(prefix, password) {
			return
		}
		msg := prefix + " postgres://user:" + password + "@host/db: refused"
		if got := postgres.RedactErr(errors.New(msg)).Error(); strings.Contains(got, ":"+password+"@") {
			t.Fatalf("redactErr(%q) = %q keeps the password", msg, got)
		}
	})
}
