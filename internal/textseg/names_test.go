package textseg

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"The University of Kansas hosts it. In 1938 Giuseppe Verdi appeared. Antonín Dvořák wrote it.", []string{"University of Kansas", "Giuseppe Verdi", "Antonín Dvořák"}},
		{"Leonardo da Vinci met Ludwig van Beethoven and the Bank of England.", []string{"Leonardo da Vinci", "Ludwig van Beethoven", "Bank of England"}},
		// Openers are capitalised for where they stand, in any sentence.
		{"I rebased a branch. How can I push it? My colleague asked. Which one?", nil},
		// So are they with a verb or "not" run into them; a name's
		// possessive stays a name.
		{"I'm stuck. We’ll see. Don't. Isn't it? Node's docs", []string{"Node's"}},
		{"Apollo 11 landed; Series 16 aired.", []string{"Apollo 11", "Series 16"}},
		// An option is not a name, nor its letter.
		{"What is the difference between git log -S and git log -G?", nil},
		// A connector joins only before another capitalised word.
		{"Verdi of the time and Dvořák", []string{"Verdi", "Dvořák"}},
	} {
		if got := Names(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Names(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestNamesAndNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"When did Giuseppe Verdi meet the Bank of England in 1850?", []string{"Giuseppe Verdi", "Bank of England", "1850"}},
		// A number with a Korean particle or a unit run into it.
		{"김프 2.2에서 512MB 이상", []string{"2.2에서", "512MB"}},
		{"Since moving to Node 18, I get a 408.", []string{"Node 18", "408"}},
	} {
		if got := NamesAndNumbers(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("NamesAndNumbers(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	got := Words(`F.C. Jolie-Pitt's "O'Neil" -- 3.5, done.`)
	if want := []string{"F.C", "Jolie-Pitt's", "O'Neil", "3.5", "done"}; !slices.Equal(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}

func FuzzNames(f *testing.F) {
	f.Add("When did Giuseppe Verdi meet the Bank of England in 1850?")
	f.Add("김프 2.2에서 -S --x - of of Of")
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range NamesAndNumbers(s) {
			if n == "" {
				t.Fatalf("empty name from %q", s)
			}
		}
		Names(s)
	})
}
