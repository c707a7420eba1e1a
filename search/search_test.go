package search_test

import (
	"strings"
	"testing"

	"github.com/quarryhq/quarry/search"
)

func TestParseSpecs(t *testing.T) {
	t.Parallel()
	got, err := search.ParseSpecs(" kb:notes, google,web ,arxiv,kb:notes,wikipedia")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.String())
	}
	if strings.Join(names, ",") != "kb:notes,web,arxiv,wikipedia" {
		t.Fatalf("specs: %v", names)
	}
	for _, bad := range []string{"", " , ", "kb:", "bing", "kb"} {
		if _, err := search.ParseSpecs(bad); err == nil || !strings.HasPrefix(err.Error(), "source:") {
			t.Errorf("ParseSpecs(%q) = %v, want a source error", bad, err)
		}
	}
}

func TestDomain(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://www.Nature.com/articles/x?y=1": "nature.com",
		"http://user@host.test:8080/p":          "host.test",
		"kb://wiki/w00012":                      "kb:wiki",
		"file:///tmp/a.md":                      "file",
		"https://arxiv.org/abs/2401.00001":      "arxiv.org",
	} {
		if got := search.Domain(in); got != want {
			t.Errorf("Domain(%q) = %q, want %q", in, got, want)
		}
	}
}
