package eval

import (
	"slices"
	"testing"
)

func TestNonProse(t *testing.T) {
	t.Parallel()
	summary := `The default page size is 4096 bytes. [1] Next topic [2] >>> import json [2] ` +
		`"git config --global rebase.autoSquash true" [3] SQLITE_MAX_ATTACHED [1] ` +
		`기본값은 10입니다. [4] ` + "```\ngit gc --auto\n```" + ` for (i = 0; i < n; i++) { x[i] = {}; } [5] Returns the number of loose objects. [2] ` +
		`.. module:: logging.config :synopsis: Configuration of the logging module. [6]`
	got := NonProse(summary)
	want := []string{"Next topic", ">>> import json", `"git config --global rebase.autoSquash true"`, "SQLITE_MAX_ATTACHED", "for (i = 0; i < n; i++) { x[i] = {}; }", ".. module:: logging.config :synopsis: Configuration of the logging module."}
	if !slices.Equal(got, want) {
		t.Fatalf("non-prose %q, want %q", got, want)
	}
	if n := NonProse("One sentence here. [1] Another one follows it. [2]"); len(n) != 0 {
		t.Fatalf("prose counted: %q", n)
	}
}
