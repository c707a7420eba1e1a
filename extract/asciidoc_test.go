package extract

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// gitManual is the shape of Git's manuals, which Debian ships as .txt
// AsciiDoc beside their HTML.
const gitManual = `git-commit(1)
=============

NAME
----
git-commit - Record changes to the repository

SYNOPSIS
--------
[verse]
'git commit' [-a | --interactive | --patch] [-s] [-v] [-u<mode>]

OPTIONS
-------
--fixup::
--squash=<commit>::
	Create a new commit which "fixes up" <commit> when applied with
	` + "`git rebase --autosquash`" + `.
+
` + "`--fixup=reword:<commit>`" + ` replaces the log message of <commit>
without making any other changes.
+
Neither "fixup!" nor "amend!" commits change authorship of
<commit> when applied by ` + "`git rebase --autosquash`" + `.
See linkgit:git-rebase[1] for details, or the
link:https://git-scm.com/book[Pro Git book,window=_blank] and https://git-scm.com/docs[].

include::config/commit.txt[]

EXAMPLES
--------
------------
$ git add hello.c
+
$ git commit
------------
`

func TestAsciiDoc(t *testing.T) {
	doc, err := File(writeTemp(t, "git-commit.adoc", gitManual))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != "asciidoc" || doc.Title != "git-commit(1)" {
		t.Fatalf("read as %q, titled %q", doc.Format, doc.Title)
	}
	paragraphs := strings.Split(doc.Text, "\n\n")
	for _, want := range []string{
		"NAME",
		"--fixup, --squash=<commit>",
		"Create a new commit which \"fixes up\" <commit> when applied with\n`git rebase --autosquash`.\n" +
			"`--fixup=reword:<commit>` replaces the log message of <commit>\nwithout making any other changes.\n" +
			"Neither \"fixup!\" nor \"amend!\" commits change authorship of\n<commit> when applied by `git rebase --autosquash`.\n" +
			"See git-rebase(1) for details, or the\nPro Git book and https://git-scm.com/docs.",
		"```text\n$ git add hello.c\n+\n$ git commit\n```", // a listing keeps its lines, fenced
	} {
		if !slices.Contains(paragraphs, want) {
			t.Errorf("no paragraph %q in:\n%s", want, doc.Text)
		}
	}
	for _, markup := range []string{"[verse]", "linkgit", "include::", "----", "::\n", "window="} {
		if strings.Contains(doc.Text, markup) {
			t.Errorf("%q reached the text:\n%s", markup, doc.Text)
		}
	}
	// A Markdown-style fence opens a listing only alone on its line.
	if doc, err := File(writeTemp(t, "fence.adoc", "```ruby``` is how a block opens.\n\n````\nputs 1\n```\nputs 2\n````\n\nProse after it.\n")); err != nil ||
		!strings.HasPrefix(doc.Text, "```ruby``` is how a block opens.") || !strings.Contains(doc.Text, "puts 1\n```\nputs 2\n") || !strings.HasSuffix(doc.Text, "\n\nProse after it.") {
		t.Errorf("fences: %q %v", doc.Text, err)
	}
	// A document that opens with a listing is titled by its name.
	if doc, err := File(writeTemp(t, "setup.adoc", "----\nmake install\n----\n\nThen run it.\n")); err != nil || doc.Title != "setup.adoc" {
		t.Errorf("titled %q: %v", doc.Title, err)
	}
	// An .adoc file is AsciiDoc by its name.
	if doc, err := File(writeTemp(t, "guide.adoc", "= Guide\n\nSee xref:setup.adoc[the setup].\n")); err != nil || doc.Text != "Guide\n\nSee the setup." {
		t.Errorf(".adoc: %q %v", doc.Text, err)
	}
}

// A .txt written in AsciiDoc (Git's manuals) is read as AsciiDoc; a
// plain text with a rule, a "+" or a bracket, and reStructuredText's
// .rst.txt copies, stay text.
func TestTextInAsciiDoc(t *testing.T) {
	doc, err := File(writeTemp(t, "git-commit.txt", gitManual))
	if err != nil || doc.Format != "asciidoc" || strings.Contains(doc.Text, "linkgit:") {
		t.Errorf("read as %s: %q %v", doc.Format, doc.Text, err)
	}
	for name, text := range map[string]string{
		"notes.txt":   "Notes\n=====\n\nA list [1] and a sum:\n\n+\n\n----\n\nSee [2], then [3].\n\nx = 1 + 2\n",
		"about.txt":   "About\n=====\n\n.. note::\n\n   See <<URLS,GIT URLS>> and linkgit:git-add[1].\n+\n[verse]\n",
		"config.txt":  "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n[branch \"main\"]\n\tremote = origin\n",
		"CHANGES.txt": "Changes\n\n[Added]\n- a\n\n[Changed]\n- b\n\n[Removed]\n- c\n",
		"app.log":     "+\n[ OK ] started\n+\n[ OK ] linkgit:x[1] ready\n",
	} {
		doc, err := File(writeTemp(t, name, text))
		if err != nil || doc.Format != "text" || doc.Text != strings.TrimSpace(text) {
			t.Errorf("%s read as %s: %v", name, doc.Format, err)
		}
	}
}

func TestAsciiDocXref(t *testing.T) {
	doc, err := AsciiDoc([]byte("See the section <<URLS,GIT URLS>> below, and <<REMOTES>>.\n\n----\nx <<a,b>> y\n----\n"), "x.adoc")
	if err != nil {
		t.Fatal(err)
	}
	if want := "See the section GIT URLS below, and REMOTES."; !strings.HasPrefix(doc.Text, want) || !strings.Contains(doc.Text, "x <<a,b>> y") {
		t.Errorf("got %q, want it to open with %q and keep the listing's line", doc.Text, want)
	}
}

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func FuzzAsciiDoc(f *testing.F) {
	f.Add([]byte(gitManual))
	f.Add([]byte("= T\n\nlink:[]\n----\nunclosed"))
	f.Add([]byte("T\n=\n\n::\n;;\n[[\n]]\n+\n"))
	f.Add([]byte("<<a,<<b>>>> <<>> <<x,>>\n+\n[x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		writtenInAsciiDoc(data)
		doc, err := AsciiDoc(data, "f.adoc")
		if err != nil {
			return
		}
		checkExtracted(t, doc, len(data)+len(data)/2+2)
	})
}

// checkExtracted fails unless a document extracted from outside input
// is valid UTF-8, has no run of blank lines, closes every fenced block
// and, fences aside, is at most most bytes long.
func checkExtracted(t *testing.T, doc Doc, most int) {
	t.Helper()
	if !utf8.ValidString(doc.Text) || !utf8.ValidString(doc.Title) {
		t.Fatal("invalid UTF-8 out")
	}
	if strings.Contains(doc.Text, "\n\n\n") {
		t.Fatalf("a run of blank lines in %q", doc.Text)
	}
	checkFences(t, doc.Text)
	var text int
	for line := range strings.SplitSeq(doc.Text, "\n") {
		if !strings.HasPrefix(line, "```") {
			text += len(line) + 1
		}
	}
	if text > most {
		t.Fatalf("text of %d bytes, over %d", text, most)
	}
}

// checkFences fails unless each opening fence of text (backticks and an
// info string) is closed by a bare run of as many backticks or more
// before the text ends, and no bare fence stands outside a block.
func checkFences(t *testing.T, text string) {
	t.Helper()
	open := 0
	for line := range strings.SplitSeq(text, "\n") {
		k := len(line) - len(strings.TrimLeft(line, "`"))
		rest := line[k:]
		if k < 3 || strings.Contains(rest, "`") {
			continue
		}
		switch {
		case open == 0 && rest == "":
			t.Fatalf("a fence closes nothing:\n%s", text)
		case open == 0:
			open = k
		case rest == "" && k >= open:
			open = 0
		}
	}
	if open != 0 {
		t.Fatalf("a fenced block is never closed:\n%s", text)
	}
}

func FuzzMarkdown(f *testing.F) {
	f.Add([]byte("# T\n\nSee [a](b) **c**.\n\n```go\nx := a_b_c\n```\n"))
	f.Add([]byte("~~~~\n```\n~~~\n~~~~~\ntail"))
	f.Add([]byte("---\nk: v\n---\n```\nunclosed"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Markdown(data, "f.md")
		if err != nil {
			return
		}
		checkExtracted(t, doc, len(data)+1)
	})
}
