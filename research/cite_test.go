package research_test

import (
	"strings"
	"testing"

	"github.com/quarryhq/quarry/research"
)

func TestParseMarkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want [][]string
	}{
		{"A [cite:S1].", [][]string{{"S1"}}},
		{"A [cite:S1,S4] b [cite: S2; S3]", [][]string{{"S1", "S4"}, {"S2", "S3"}}},
		{"bare [S7] and [S8, S9]", [][]string{{"S7"}, {"S8", "S9"}}},
		{"not a cite [1] or [see S1] or [cite:S1", nil},
		{"empty [cite:]", [][]string{nil}},
		{"facts [cite:F3] and [F4, S1]", [][]string{{"F3"}, {"F4", "S1"}}},
	}
	for _, tt := range tests {
		got := research.ParseMarkers(tt.in)
		if len(got) != len(tt.want) {
			t.Fatalf("ParseMarkers(%q) = %+v, want %v", tt.in, got, tt.want)
		}
		for i, m := range got {
			if strings.Join(m.IDs, "|") != strings.Join(tt.want[i], "|") {
				t.Errorf("ParseMarkers(%q)[%d] = %v, want %v", tt.in, i, m.IDs, tt.want[i])
			}
			if tt.in[m.Start] != '[' || tt.in[m.End-1] != ']' {
				t.Errorf("offsets %d..%d do not frame a marker in %q", m.Start, m.End, tt.in)
			}
		}
	}
}

func FuzzParseMarkers(f *testing.F) {
	for _, s := range []string{"A [cite:S1].", "[S1, S2]", "[cite:[S1]]", "[[cite:S1]", "[cite:S1;;S2 ,]", "x[cite:\x00]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for _, m := range research.ParseMarkers(s) {
			if m.Start < prev || m.End <= m.Start || m.End > len(s) || s[m.Start] != '[' || s[m.End-1] != ']' {
				t.Fatalf("bad marker %+v in %q", m, s)
			}
			prev = m.End
			for _, id := range m.IDs {
				if id == "" || strings.ContainsAny(id, ",; \t\n[]") {
					t.Fatalf("bad id %q in %q", id, s)
				}
			}
		}
	})
}

// TestBareNumbersDropped: a number in brackets a model wrote itself is
// dropped as an unread source's marker is; one after a word is code and
// stays, and an extractive engine's quotes are left as they are.
func TestBareNumbersDropped(t *testing.T) {
	got, dropped := research.RenderCitations(true, "Found in 1999 [7]. See [cite:S1] [2], arr[0] and x[1][2].")
	if want := "Found in 1999. See [1], arr[0] and x[1][2]."; got != want || dropped != 2 {
		t.Errorf("render = %q (%d dropped), want %q (2)", got, dropped, want)
	}
	if got, _ := research.RenderCitations(false, "a = [1] [cite:S1]"); got != "a = [1] [1]" {
		t.Errorf("a quote rendered %q, want it as the source has it", got)
	}
}
