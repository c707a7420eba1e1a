package textclean

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain title":                    "plain title",
		"evil \x1b[2J\x1b]0;pwned\x07 t": "evil [2J ]0;pwned t",
		"a\r\nb\tc":                      "a b c",
		"bad \xff\xfe bytes":             "bad \ufffd\ufffd bytes",
		"rtl \u202egnp.exe":              "rtl gnp.exe",
		"nul\x00byte":                    "nul byte",
		"c1 \u0085 \u009b31m":            "c1 31m",
		"한국어 제목":                         "한국어 제목",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Text("line one\r\nline two\rthree\n\ttab\x1b[31m"); got != "line one\nline two\nthree\n\ttab [31m" {
		t.Errorf("Text = %q", got)
	}
}

func TestDebris(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Antonín Leopold Dvořák ( ; ] ; 8 September 1841 – 1 May 1904) was a Czech composer.": "Antonín Leopold Dvořák (8 September 1841 – 1 May 1904) was a Czech composer.",
		"Giuseppe Fortunino Francesco Verdi (] ; 9 or 10 October 1813 – 27 January 1901)":     "Giuseppe Fortunino Francesco Verdi (9 or 10 October 1813 – 27 January 1901)",
		"Paris ( ) is the capital.":                         "Paris is the capital.",
		"f(x; y) and (a, b) stay":                           "f(x; y) and (a, b) stay",
		"a list: (1) one; (2) two.":                         "a list: (1) one; (2) two.",
		"no brackets; nothing to do, ok":                    "no brackets; nothing to do, ok",
		"Paris is the capital of France. data)\nNext line.": "Paris is the capital of France.\nNext line.",
		"(see note 3. foo)":                                 "(see note 3. foo)",
		"It costs 5 (about. 4 euros)":                       "It costs 5 (about. 4 euros)",
		"Dvořák () was born":                                "Dvořák was born",
		"( ; ] 1841) and\n( )\nnext":                        "(1841) and\n\nnext",
		// Code keeps its brackets.
		"fn main() {\n    let f = File::open(path)?;": "fn main() {\n    let f = File::open(path)?;",
		"Call print() or str.split().":                "Call print() or str.split().",
		"fn main() -> Result<(), Box<dyn Error>> {":   "fn main() -> Result<(), Box<dyn Error>> {",
		"for (;;) { x(); }":                           "for (;;) { x(); }",
		"f(;, x)":                                     "f(;, x)",
		// An empty pair after a name is a stripped gloss; after the
		// words about it, the unit value of a programming manual.
		"Dafeng () is a district; City of Dreams (), a resort.":          "Dafeng is a district; City of Dreams, a resort.",
		"this main function has the return type of (), not Result":       "this main function has the return type of (), not Result",
		"The function returns () and the tuple type, (), has no values.": "The function returns () and the tuple type, (), has no values.",
	} {
		if got := Debris(in); got != want {
			t.Errorf("Debris(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\x1b[0m", "\xff", "\u202e", "x\r\ny", "한국어"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Text(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out of %q", s)
			}
			for _, r := range out {
				if unsafe(r) && r != '\n' && r != '\t' {
					t.Fatalf("control %U left in %q", r, out)
				}
			}
		}
		if d := Debris(s); Debris(d) != d || utf8.ValidString(s) && !utf8.ValidString(d) {
			t.Fatalf("Debris is not idempotent or broke UTF-8: %q -> %q", s, d)
		}
		if strings.ContainsAny(Line(s), "\n\t") {
			t.Fatalf("Line kept a line break: %q", Line(s))
		}
		if Text(Text(s)) != Text(s) || Line(Line(s)) != Line(s) {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}

// FuzzDebrisChecks: the checks Debris makes before its patterns never
// change what it returns; debrisPatterns runs the patterns always.
func FuzzDebrisChecks(f *testing.F) {
	for _, s := range []string{"", "a ( ; ] b", "( \f;x", "x. y)\t\nz", "x. y] ", "((\n)", "Paris ( ) is", "f() (\r)", "a. b)\r\n", "x(( ) ]", "\t( ;]y", "os.getcwd()\nf( )", "end.\tdata)", "end. éé)\n", "a.  (b)", "x.y)", "end! " + strings.Repeat("é", 40) + ")", "end! " + strings.Repeat("é", 41) + ")"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Debris(s), debrisPatterns(s); got != want {
			t.Fatalf("Debris(%q) = %q, the patterns alone %q", s, got, want)
		}
	})
}

func debrisPatterns(s string) string {
	return removeBracketDebris(removeStrayTails(s))
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"Dvořák", 10, "Dvořák"},
		{"Dvořák", 6, "Dvořák"},
		{"Dvořák", 4, "Dvo…"},
		{"Dvořák", 1, "…"},
		{"Dvořák", 0, ""},
		{"Dvořák", -3, ""},
	} {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
