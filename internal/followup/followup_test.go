package followup

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	t.Parallel()
	got := Names("When did Giuseppe Verdi meet the Bank of England in 1850?")
	if want := []string{"Giuseppe Verdi", "Bank of England", "1850"}; !slices.Equal(got, want) {
		t.Fatalf("Names = %q, want %q", got, want)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	earlier := []string{"Who was Antonín Dvořák?", "Who was Giuseppe Verdi?"}
	if got := Resolve("When did he die?", earlier); got != "When did Giuseppe Verdi die?" {
		t.Fatalf("the latest subject: %q", got)
	}
	if got := Resolve("When did he die?", nil); got != "When did he die?" {
		t.Fatalf("nothing earlier: %q", got)
	}
	for q, want := range map[string]string{
		"How long does it take to build?": "How long does it take to build?", // "it" is no one
		"Tell me when he died":            "Tell me when Giuseppe Verdi died",
	} {
		if got := Resolve(q, []string{"Describe Giuseppe Verdi"}); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", q, got, want)
		}
	}
}
