package passage

import (
	"fmt"
	"strings"
	"testing"
)

// A settings reference as an HTML page's readable text renders it: each
// term closes the block before its definition.
const settings = `Setting this to 0 disables not only automatic packing, but any other heuristic git gc --auto will otherwise use to determine if there's work to do, such as gc.autoPackLimit.
gc.auto

When there are approximately more than this many loose objects in the repository, git gc --auto will pack them. The default value is 6700.
gc.autoPackLimit

When there are more than this many packs that are not marked with *.keep file in the repository, git gc --auto consolidates them into one larger pack. The default value is 50.

git gc --auto --quiet
`

func TestUnitsKnowTheirHeading(t *testing.T) {
	us := Units(settings)
	find := func(s string) Unit {
		for _, u := range us {
			if strings.Contains(u.Text, s) {
				return u
			}
		}
		t.Fatalf("no unit holds %q in %+v", s, us)
		return Unit{}
	}
	if u := find("6700"); u.Heading < 0 || us[u.Heading].Text != "gc.auto" {
		t.Errorf("the 6700 sentence sits under %d, want the gc.auto heading", u.Heading)
	}
	if u := find("The default value is 50."); u.Heading < 0 || us[u.Heading].Text != "gc.autoPackLimit" {
		t.Errorf("the 50 sentence sits under %d, want gc.autoPackLimit", u.Heading)
	}
	if u := find("such as gc.autoPackLimit."); strings.HasSuffix(u.Text, "gc.auto") || u.Kind != Sentence {
		t.Errorf("a heading ran into the sentence before it: %+v", u)
	}
	if u := find("--quiet"); u.Kind != Code {
		t.Errorf("a command line is %v, want Code", u.Kind)
	}
}

// A wrapped line that ends a paragraph without a period is the
// paragraph's, not a heading.
func TestWrappedLineIsNotAHeading(t *testing.T) {
	us := Units("Verdi was an Italian composer who wrote many operas, among them\nRigoletto and La traviata\n\nHe died in Milan in 1901.")
	for _, u := range us {
		if u.Kind == Heading {
			t.Fatalf("a wrapped line became a heading: %+v", us)
		}
	}
}

func TestSelectChoosesTheAnsweringWindow(t *testing.T) {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "core.setting%d\n\nThis setting controls behaviour number %d of the repository and its working tree. It is rarely changed.\n", i, i)
	}
	b.WriteString(settings)
	for i := range 60 {
		fmt.Fprintf(&b, "pack.option%d\n\nThis option tunes packing step %d for large repositories on slow disks. See git-pack-objects.\n", i, i)
	}
	text := b.String()
	got := Select(text, NewQuery("How many loose objects pile up before git gc --auto packs them by default?"), 600)
	if len(got) > 600 {
		t.Fatalf("Select returned %d bytes, over the budget of 600", len(got))
	}
	for _, want := range []string{"gc.auto", "The default value is 6700."} {
		if !strings.Contains(got, want) {
			t.Errorf("the passage lacks %q:\n%s", want, got)
		}
	}
	if strings.HasPrefix(got, "core.setting0") {
		t.Errorf("the passage starts at the text's start, not at what bears on the question:\n%s", got)
	}
}

// buried is answer between 40 entries of before and 40 of after, each a
// format taking the entry's number twice.
func buried(before, answer, after string) string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, before, i, i)
	}
	b.WriteString(answer)
	for i := range 40 {
		fmt.Fprintf(&b, after, i, i)
	}
	return b.String()
}

// TestSelectFencesCode: lines of code a passage keeps reach the model
// fenced, as the text had them, apart from the sentences around them.
func TestSelectFencesCode(t *testing.T) {
	text := buried("Section %d\n\nThis section describes behaviour number %d of the build and is rarely read.\n\n",
		"To pack the loose objects of a repository by hand, run the garbage collector:\n\n```text\ngit gc --aggressive --prune=now\ngit count-objects -v\n```\n\nThe collector also runs by itself after some commands.\n\n",
		"Appendix %d\n\nThis appendix lists option number %d of the build for slow disks.\n\n")
	got := Select(text, NewQuery("How do I pack the loose objects of a repository by hand?"), 400)
	want := "run the garbage collector:\n```\ngit gc --aggressive --prune=now\ngit count-objects -v\n```"
	if len(got) > 400 || !strings.Contains(got, want) {
		t.Fatalf("the listing is not fenced in the passage (%d bytes):\n%s", len(got), got)
	}
}

// TestSelectKeepsATermsLead: whichever sentence of a term's text
// matches best, the sentence the term opens with, which says what it is,
// comes with it.
func TestSelectKeepsATermsLead(t *testing.T) {
	text := buried("Section %d\n\nThis section describes behaviour number %d of the build and is rarely read.\n\n",
		"-x\n\nWhen recording the commit, append a line that says where it came from to the original message. "+
			"This is done only for picks without conflicts. Do not use this option for cherry-pick from a private branch. "+
			"Between public branches the line can be useful.\n\n",
		"Appendix %d\n\nThis appendix lists option number %d of the build for slow disks.\n\n")
	got := Select(text, NewQuery("What does the -x option of cherry-pick do?"), 220)
	if !strings.Contains(got, "When recording the commit, append a line") || !strings.Contains(got, "Do not use this option") {
		t.Fatalf("the term's lead sentence is not in the passage (%d bytes):\n%s", len(got), got)
	}
}

func TestSelectKeepsShortTextWhole(t *testing.T) {
	if got := Select("Verdi died in Milan.", NewQuery("Where did Verdi die?"), 1500); got != "Verdi died in Milan." {
		t.Errorf("a text under the budget changed: %q", got)
	}
}

func TestSelectKorean(t *testing.T) {
	text := buried("서식 %d\n\n이 메뉴는 문서의 서식 %d번을 바꿉니다. 자세한 내용은 도움말을 참고하십시오.\n",
		"실행 취소\n\n편집 → 실행 취소를 선택하면 마지막 작업이 취소됩니다. 단축키는 Ctrl+Z입니다.\n",
		"표 %d\n\n표 %d번의 열 너비를 조정합니다.\n")
	got := Select(text, NewQuery("마지막 작업을 취소하는 단축키는 무엇인가요?"), 400)
	if !strings.Contains(got, "Ctrl+Z") || !strings.Contains(got, "편집 → 실행 취소") {
		t.Errorf("the passage lacks the answer or its menu path:\n%s", got)
	}
}

// Inputs the issue names: a page of only code, only a table, only
// navigation, no headings, one sentence, nothing.
func TestSelectOddPages(t *testing.T) {
	q := NewQuery("How do I configure the cache size?")
	for name, text := range map[string]string{
		"code":       strings.Repeat("for (int i = 0; i < n; i++) { cache[i] = 0; }\n", 200),
		"table":      strings.Repeat("| size | 128 | 256 | 512 |\n", 300),
		"navigation": strings.Repeat("Home\nDocs\nCache\nAbout\n\n", 300),
		"one":        "The cache size is set with --cache-size.",
		"empty":      "",
		"nohead":     strings.Repeat("The cache keeps pages in memory so that reads are fast. ", 200),
	} {
		got := Select(text, q, 500)
		if len(got) > 500 {
			t.Errorf("%s: %d bytes, over the budget", name, len(got))
		}
		if text != "" && got == "" {
			t.Errorf("%s: nothing chosen from a non-empty text", name)
		}
	}
}

func BenchmarkSelect10kSentences(b *testing.B) {
	var sb strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&sb, "Sentence %d says something about topic %d and nothing more. ", i, i%97)
		if i%10 == 9 {
			sb.WriteString("\n\n")
		}
	}
	text := sb.String()
	q := NewQuery("What does the text say about topic 42?")
	b.ReportAllocs()
	for b.Loop() {
		Select(text, q, 1500)
	}
}

func FuzzSelect(f *testing.F) {
	f.Add(settings, "default gc.auto", 300)
	f.Add("편집 → 실행 취소\n\n취소합니다.", "취소", 10)
	f.Fuzz(func(t *testing.T, text, question string, n int) {
		n %= 4096
		got := Select(text, NewQuery(question), n)
		if n >= 0 && len(got) > max(n, 0) {
			t.Fatalf("Select returned %d bytes for a budget of %d", len(got), n)
		}
	})
}

// A reference's type or placeholder in angle brackets is prose, not code;
// markup is still code.
func TestPlaceholdersAreProse(t *testing.T) {
	for line, want := range map[string]bool{
		"<number> Default: 300000":                    false,
		"git commit [--amend] <file> records changes": false,
		`<div class="note">`:                          true,
		"<p>Hello</p>":                                true,
		"if (a < b && c > d) { return; }":             true,
		"List<String> names":                          true,
		"Option<T>":                                   true,
		"<div>":                                       true,
		".. note:: It is strongly advised that you do not log to the root logger.": true,
		".. module:: logging.config":                true,
		"... and so on, as before, for every file.": false,
		// Prose that quotes code between backticks is prose however
		// dense the code it quotes; the code alone is code.
		"`--fixup=reword:<commit>` replaces the log message of <commit>":    false,
		"The commit created by `--fixup=amend:<commit>` is similar but its": false,
		"`git rebase -i HEAD~3`": true,
		"`x = f(a, b);` or `y;`": true,
	} {
		if got := CodeLine(line); got != want {
			t.Errorf("CodeLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestFencedLinesAreCode: the lines of a fenced block are code however
// they read — an import list, a docstring, a program's output — and
// never a sentence or a heading; a text cut from inside a block (its
// first fence a bare one closing it) reads what comes before as code too.
func TestFencedLinesAreCode(t *testing.T) {
	kinds := func(text string) map[string]Kind {
		out := map[string]Kind{}
		for _, u := range Units(text) {
			out[u.Text] = u.Kind
		}
		return out
	}
	listing := "The following script shows how to extend EnvBuilder by implementing a subclass:\n\n```text\nimport os.path, sys\nfrom subprocess import Popen, PIPE\n\nThis builder installs setuptools and pip so that you can pip or\n1000000 loops, best of 5: 0.342 usec per loop\n```\n\nIn the output, there are three fields."
	got := kinds(listing)
	for _, l := range []string{"import os.path, sys", "from subprocess import Popen, PIPE", "This builder installs setuptools and pip so that you can pip or", "1000000 loops, best of 5: 0.342 usec per loop"} {
		if k, ok := got[l]; !ok || k != Code {
			t.Errorf("%q: kind %v (found %v), want code; units %v", l, k, ok, got)
		}
	}
	if got["In the output, there are three fields."] != Sentence || got["The following script shows how to extend EnvBuilder by implementing a subclass:"] != Sentence {
		t.Errorf("prose around the listing is not prose: %v", got)
	}
	for l := range got {
		if strings.Contains(l, "```") {
			t.Errorf("a fence is a unit: %q", l)
		}
	}
	cut := "This builder installs setuptools and pip so that you can pip or\neasy_install other packages into the created virtual environment.\n```\n\nThe script then prints what it did."
	got = kinds(cut)
	if got["The script then prints what it did."] != Sentence {
		t.Errorf("prose after the closing fence: %v", got)
	}
	for l, k := range got {
		if strings.Contains(l, "builder") && k != Code {
			t.Errorf("%q before the closing fence: kind %v, want code", l, k)
		}
	}
	// Markdown written by hand opens with a bare fence: pairs, in order.
	md := "Run it so:\n\n```\nmake install\n```\n\nThen restart the server and check the log."
	if got = kinds(md); got["make install"] != Code || got["Then restart the server and check the log."] != Sentence {
		t.Errorf("bare fences: %v", got)
	}
	// A block fenced with four backticks holds a line of three.
	nested := "Write it so:\n\n````text\n```\nshown as code, like this line here\n```\n````\n\nThe fences stay in the listing, not in the prose."
	if got = kinds(nested); got["shown as code, like this line here"] != Code || got["The fences stay in the listing, not in the prose."] != Sentence {
		t.Errorf("nested fences: %v", got)
	}
	// A chunk that starts and ends inside listings: the prose between is
	// prose.
	both := "f(x)\nreturn x\n```\n\nThe function returns the value it was given.\n\n```text\nmore(code) and more of it"
	if got = kinds(both); got["The function returns the value it was given."] != Sentence || got["more(code) and more of it"] != Code {
		t.Errorf("cut at both ends: %v", got)
	}
	// An info string after a space is still one.
	if got = kinds("Install it:\n\n``` python\nimport quarry_module\n```\n\nThen it is ready to be used."); got["import quarry_module"] != Code || got["Then it is ready to be used."] != Sentence {
		t.Errorf("an info string after a space: %v", got)
	}
	// Backticks that open inline code are not a fence.
	if _, _, ok := fence("```go run .``` builds it"); ok {
		t.Error("inline code read as a fence")
	}
}

// TestBalance: a piece cut from inside a listing, or ending inside one,
// is given the fence it lacks, so that pieces joined read as each did
// alone; a piece whole or without fences is left as it is.
func TestBalance(t *testing.T) {
	for in, want := range map[string]string{
		"f(x)\nreturn x\n```\n\nThe function returns its argument.": "```text\nf(x)\nreturn x\n```\n\nThe function returns its argument.",
		"Run it:\n\n```text\nmake install":                          "Run it:\n\n```text\nmake install\n```",
		"Run it:\n\n````text\nmake\n```\n":                          "Run it:\n\n````text\nmake\n```\n\n````",
		"Run it:\n\n```text\nmake\n```\n\nDone.":                    "Run it:\n\n```text\nmake\n```\n\nDone.",
		"No code at all here.":                                      "No code at all here.",
	} {
		if got := Balance(in); got != want {
			t.Errorf("Balance(%q) = %q, want %q", in, got, want)
		}
	}
	// Two pieces of one page joined: the second's prose stays prose.
	joined := Balance("Each column is assigned one of these type affinities:\n\n```text\nTEXT NUMERIC\n```\n\nThe affinity decides how values are stored.") + "\n\n" +
		Balance("INTEGER_AFFINITY REAL_AFFINITY\n```\n\nA column with TEXT affinity stores all data as text.")
	for _, u := range Units(joined) {
		if strings.Contains(u.Text, "affinit") && u.Kind != Sentence {
			t.Errorf("%q read as %v in %q", u.Text, u.Kind, joined)
		}
		if u.Text == "INTEGER_AFFINITY REAL_AFFINITY" && u.Kind != Code {
			t.Errorf("%q, a line of the second piece's listing, read as %v", u.Text, u.Kind)
		}
	}
}

// TestUnheldWordsWeighLess: in a long question, words no source holds
// ("clobbering", "colleague", "meanwhile": the page says "refuses to
// update the branch when the remote has moved") weigh less, so the
// window that answers is not refused for them; a short question's word
// no source holds is what it asks about, and weighs whole.
func TestUnheldWordsWeighLess(t *testing.T) {
	docs := []Doc{{Title: "git-push(1)", Body: "To force-push a rebased branch safely, use git push --force-with-lease, which refuses to update the branch when the remote has moved since you last fetched it."},
		{Title: "git-fetch(1)", Body: "Fetch downloads objects and refs from another repository. The remote branches are updated."}}
	confidence := func(q string, ablate bool) float64 {
		defer func() { Ablate["unheld"] = false }()
		Ablate["unheld"] = ablate
		found, missing := Find(q, docs, 3)
		return Confidence(q, Answers(found), missing)
	}
	long := "I rebased a branch I had already pushed. How can I force-push it without clobbering commits a colleague may have pushed meanwhile?"
	if with, without := confidence(long, false), confidence(long, true); with < Weights.AskAnswered || without >= with {
		t.Errorf("long question: confidence %v, %v with every word whole", with, without)
	}
	if c := confidence("What is the museum fee for a branch?", false); c >= Weights.AskAnswered {
		t.Errorf("short question about a museum: confidence %v", c)
	}
	// A name the question marks weighs whole, wherever it stands.
	named := "How can I force-push a rebased Git branch safely when the remote has moved in Mercurial?"
	if with, without := confidence(named, false), confidence(named, true); with != without {
		t.Errorf("a marked name at the question's end weighs less: confidence %v, %v with every word whole", with, without)
	}
}
