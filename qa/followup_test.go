package qa

import (
	"testing"

	"github.com/quarryhq/quarry/session"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	sess := &session.Session{Messages: []session.Message{
		{Role: session.RoleUser, Content: "Who was Giuseppe Verdi?"},
		{Role: session.RoleAssistant, Content: "Giuseppe Verdi was an Italian opera composer. [1]"},
	}}
	for q, want := range map[string]string{
		"When did he die?":                     "When did Giuseppe Verdi die?",
		"Where was his first opera staged?":    "Where was Giuseppe Verdi's first opera staged?",
		"When did Antonín Dvořák die?":         "When did Antonín Dvořák die?", // names its own subject
		"and for businesses?":                  "and for businesses?",          // no pronoun
		"Did he meet her?":                     "Did Giuseppe Verdi meet her?", // the first pronoun only
		"What is the theatre named after him?": "What is the theatre named after Giuseppe Verdi?",
	} {
		if got := resolve(q, sess); got != want {
			t.Errorf("resolve(%q) = %q, want %q", q, got, want)
		}
	}
	if got := resolve("When did he die?", nil); got != "When did he die?" {
		t.Errorf("without a session: %q", got)
	}
}
