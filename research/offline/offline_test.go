package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/research"
)

func TestSentences(t *testing.T) {
	t.Parallel()
	got := sentences("John F. Kennedy was born in 1917. He served as the U.S. president. Dr. Who? No!\n\n한국어 문장입니다. 또 다른 문장이다.")
	want := []string{"John F. Kennedy was born in 1917.", "He served as the U.S. president.", "한국어 문장입니다.", "또 다른 문장이다."}
	// "Dr. Who?" and "No!" are under 12 characters and dropped.
	if !slices.Equal(got, want) {
		t.Fatalf("sentences = %q", got)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	got := names(`The University of Kansas hosts the "Kansas Song". In 1938 Giuseppe Verdi appeared. Antonín Dvořák wrote it.`)
	for _, want := range []string{"Kansas Song", "University of Kansas", "Giuseppe Verdi", "Antonín Dvořák"} {
		if !slices.Contains(got, want) {
			t.Errorf("names lacks %q: %q", want, got)
		}
	}
	for _, n := range got {
		if strings.HasPrefix(n, "The ") || strings.HasPrefix(n, "In ") {
			t.Errorf("sentence opener kept in %q", n)
		}
	}
}

func TestPlanFacets(t *testing.T) {
	t.Parallel()
	out, _, err := Engine{}.Plan(context.Background(), research.PlanInput{
		Question: "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?", Sources: []string{"kb:wiki"},
		Effort: research.Effort{MinSub: 5, MaxSub: 7, Depth: 1, PerSearch: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, sq := range out.SubQuestions {
		texts = append(texts, sq.Text)
	}
	if len(texts) < 3 || len(texts) > 7 || !slices.Contains(texts, "Antonín Dvořák") || !slices.Contains(texts, "Giuseppe Verdi") {
		t.Fatalf("sub-questions: %q", texts)
	}
	if len(out.Plan.Steps) != len(texts) || out.Plan.Steps[0].Number != 1 || !strings.Contains(out.Plan.Strategy, "Offline") {
		t.Fatalf("plan: %+v", out.Plan)
	}
}

// TestComparisonReadNoHop: once both sides of a comparison are read, the
// names their sources mention (a theatre named after one side) are not
// followed; with one side unread they are.
func TestComparisonReadNoHop(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Giuseppe Verdi", Content: "Giuseppe Verdi (1813 – 1901) was an Italian opera composer. The Teatro Comunale of Busseto bears his name.", Credibility: 0.8},
		"S2": {ID: "S2", Title: "Antonín Dvořák", Content: "Antonín Dvořák (1841 – 1904) was a Czech composer born near Prague. He taught at the National Conservatory of Music of America.", Credibility: 0.8},
	}
	const q = "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?"
	for _, tc := range []struct {
		ids  []string
		hops bool
	}{{[]string{"S1", "S2"}, false}, {[]string{"S1"}, true}} {
		in := research.AnalyzeInput{Question: q, SubQuestions: []research.SubQuestion{{ID: "Q1", Text: q, SourceIDs: tc.ids}}, Sources: map[string]*research.Source{}, MaxDirections: 3}
		for _, id := range tc.ids {
			in.Sources[id] = srcs[id]
		}
		a, _, err := Engine{}.Analyze(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(a.Directions) > 0; got != tc.hops {
			t.Errorf("read %v: directions %+v, want any: %v", tc.ids, a.Directions, tc.hops)
		}
	}
}

// TestSecondHop: the first round reads a paragraph naming an entity the
// question does not; the analysis must open it as a direction, and the
// writer must quote only source sentences.
func TestSecondHop(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Leviathan (2014 film)", Content: "Leviathan is a 2014 Russian drama film directed by Andrey Zvyagintsev. It stars Aleksei Serebryakov as Kolya.", Credibility: 0.8},
	}
	a, _, err := Engine{}.Analyze(context.Background(), research.AnalyzeInput{
		Question:     "This drama film directed by Andrey Zvyagintsev starred a Russian actor known for which film?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "Andrey Zvyagintsev", SourceIDs: []string{"S1"}}},
		Sources:      srcs, MaxDirections: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Directions) == 0 || a.Directions[0].Text != "Aleksei Serebryakov" || a.Directions[0].ParentID != "Q1" {
		t.Fatalf("directions: %+v", a.Directions)
	}
	if a.IsComplete {
		t.Error("complete although the evidence names an unread entity")
	}
	if len(a.Learnings) != 1 || a.Learnings[0].SourceIDs[0] != "S1" {
		t.Fatalf("learnings: %+v", a.Learnings)
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{Question: "Who starred in Leviathan?", SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "Leviathan", SourceIDs: []string{"S1"}}}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{d.Summary}
	for _, s := range d.Sections {
		parts = append(parts, s.Body)
	}
	for _, part := range parts {
		for _, m := range research.ParseMarkers(part) {
			if m.IDs[0] != "S1" {
				t.Errorf("cites %v", m.IDs)
			}
		}
		for _, sent := range strings.Split(part, " [cite:S1]") {
			if s := strings.TrimSpace(sent); s != "" && !strings.Contains(srcs["S1"].Content, s) {
				t.Errorf("sentence %q is not quoted from the source", s)
			}
		}
	}
}

func TestWriteCitesFacts(t *testing.T) {
	t.Parallel()
	src := &research.Source{ID: "S1", URL: "kb://x/1", Title: "Verdi", Content: "Giuseppe Verdi was born in 1813 in Le Roncole. He wrote operas."}
	in := research.WriteInput{
		Question:     "When was Giuseppe Verdi born?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "Verdi birth", SourceIDs: []string{"S1"}}},
		Sources:      map[string]*research.Source{"S1": src},
		Facts:        []research.FactRef{{ID: "F7", SourceID: "S1", Text: "Giuseppe Verdi was born in 1813 in Le Roncole."}},
	}
	d, _, err := Engine{}.Write(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Summary, "Giuseppe Verdi was born in 1813 in Le Roncole. [cite:F7]") {
		t.Fatalf("a quoted fact should cite the fact: %q", d.Summary)
	}
}

// A name the question gives heads its section as the question writes it,
// the marks between its words kept.
func TestNameSectionAsTheQuestionWritesIt(t *testing.T) {
	t.Parallel()
	src := &research.Source{ID: "S1", URL: "kb://x/1", Title: "Errors", Content: "ECONNREFUSED means the connection was refused by ::1, the IPv6 loopback address. Node 18 tries ::1 first. " +
		"An ECONNREFUSED error is raised by net.connect when nothing listens on the port. " +
		"The http module reports ECONNREFUSED as the error's code. ECONNREFUSED is retried by some clients, never by net itself."}
	in := research.WriteInput{
		Question:     "Why do I get ECONNREFUSED ::1 since Node 18?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "ECONNREFUSED 1", SourceIDs: []string{"S1"}}},
		Sources:      map[string]*research.Source{"S1": src},
	}
	d, _, err := Engine{}.Write(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, s := range d.Sections {
		headings = append(headings, s.Heading)
	}
	if !slices.Contains(headings, "ECONNREFUSED ::1") {
		t.Errorf("headings %q, want the name as the question writes it", headings)
	}
}

func TestNameHeading(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ question, name, want string }{
		{"Why ECONNREFUSED ::1 now?", "ECONNREFUSED 1", "ECONNREFUSED ::1"},
		{"Why is Rc<Mutex<i32>> not Send?", "Rc Mutex", "Rc Mutex"},
		{"Does INSERT, UPDATE or DELETE return rows?", "INSERT UPDATE", "INSERT UPDATE"},
		{"Why MaxListenersExceededWarning: Possible EventEmitter leak?", "MaxListenersExceededWarning Possible EventEmitter", "MaxListenersExceededWarning Possible EventEmitter"},
		{"What is os.cpu_count?", "os.cpu count", "os.cpu_count"},
	} {
		if got := nameHeading(c.question, c.name); got != c.want {
			t.Errorf("nameHeading(%q, %q) = %q, want %q", c.question, c.name, got, c.want)
		}
	}
}

func TestProse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"Rust groups errors into two major categories: recoverable and unrecoverable errors.", true},
		{"Giuseppe Fortunino Francesco Verdi (9 or 10 October 1813 – 27 January 1901) was an Italian opera composer.", true},
		{"It stars Sean Penn, Billy Bob Thornton, Jennifer Lopez, Jon Voight and Nick Nolte.", true},
		{"Listing 21-23 shows the changes to ThreadPool to explicitly drop sender.", true},
		{"서울시립미술관은 매주 월요일에 휴관합니다.", true},
		{"이미지를 (PNG) 형식으로 저장합니다.", true},
		{":class:`asyncio.TaskGroup`.", false},                                         // a directive's markup, no field opening with a letter
		{"In 2019 the city had 1,234,567 residents, up from 1,100,000 in 2010.", true}, // figures are claims
		{"12 13 14 15 16 17 fn main println hello world.", false},                      // a line-numbered view
		{"Recoverable Errors with Result", false},                                      // a heading
		{"Press ← or → to navigate between chapters", false},                           // key help
		{"fn dangle() -> &String { // dangle returns a reference to a String", false},  // code
		{"let greeting_file = match greeting_file_result { Ok(file) => file, Err(error) => panic!(\"Problem\"), }; }", false},
		{"Listing 13-3: Attempting to call a closure whose types are inferred with two different types.", false}, // a caption
		{"error[E0596]: cannot borrow `x` as mutable, as it is not declared as mutable.", false},                 // compiler output
		{"For more information about this error, try `rustc --explain E0106`.", false},
		{"So, how do you decide when you should call panic! and when you should return Result?", false}, // a question
		{"운영 체제의 스왑이 김프의 스왑과 물리적으로 같은 디스크 내에 있습니까?", false},                                             // a question in a script without case
		{"그러면 얼마 정도의 타일 캐쉬 크기가 적당할까요？", false},
		{"Which one should I use?\u201d", false},
		{"1.1. Installation 1.2. Hello, World! 1.3. Hello, Cargo! 2. Guessing Game.", false}, // a table of contents
		{"Try out a different version of the Rust Book, featuring quizzes and more: https://rust-book.cs.brown.edu", false},
		{"Box<T>, for allocating values on the heap Rc<T>, a reference counting type that enables multiple ownership", false}, // a list
		{"So instead of Rc<T>, we’ll make the type of parent use Weak<T>, specifically a RefCell<Weak<Node>>.", true},         // generic types are words
		{"We changed the return type of main to be Result<(), Box<dyn Error>> and added a return value.", true},
		{"so that if the logger's threshold is set above DEBUG, the calls to expensive_func1 and expensive_func2 are never made.", false}, // a tail, its head before a listing
		{"without making any other changes to the commit.", false},
	} {
		if got := prose(tc.s); got != tc.want {
			t.Errorf("prose(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestProseWithCode: code written inline in backticks, as AsciiDoc and
// Markdown write it, is a word of a prose sentence; a role's markup, a
// lone backtick and a listing are not prose.
func TestProseWithCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"If the `--autosquash` option is enabled by default using the configuration variable `rebase.autoSquash`, this option can be used to override it.", true},
		{"Set ``PYTHONUTF8`` to 1 to enable the UTF-8 mode of the interpreter.", true},
		{"It returns the length as (`len`) of the string given to it.", true},
		{"The `--fixup` `--squash` and `--autosquash` options of git rebase work together.", true},    // spans side by side
		{"Knuth calls the one ``fast path'' and the other one the ``slow path'' of the code.", false}, // TeX's quotation marks
		{"The option ``--all` lists every branch of the repository.", false},                          // unequal marks
		{"The `--all`s are listed by the command before the others.", false},                          // a letter after the span
		{"Use :meth:`str.removeprefix` to remove a prefix from a string.", false},                     // a role's markup
		{"The value may be quoted with a ` sign before the option name.", false},                      // a lone backtick
		{"`let x = 5;`", false}, // code alone
		{"fn dangle() -> &String { // `dangle` returns a reference to a String.", false},
		{"Listing 13-3: Attempting to call `add_one` with two different types.", false}, // a caption
	} {
		if got := proseWithCode(tc.s); got != tc.want {
			t.Errorf("proseWithCode(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestOpeningQuotesInlineCode: an answer window whose sentences write code
// inline (an AsciiDoc page's) opens the summary.
func TestOpeningQuotesInlineCode(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "git-rebase(1)", Content: "Automatically squash commits with specially formatted messages into previous commits being rebased. If the `--autosquash` option is enabled by default using the configuration variable `rebase.autoSquash`, this option can be used to override and disable this setting.\n\nThe todo list is edited before the rebase starts."},
		"S2": {ID: "S2", Title: "git-commit(1)", Content: "Create a new commit which fixes up the given commit when applied with git rebase. The fixup commits are folded into their targets by rebase."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     "Which configuration setting makes git rebase fold fixup commits into their targets automatically?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "rebase fixup configuration setting", SourceIDs: []string{"S1", "S2"}}},
		Sources:      srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if at := paraAt(strings.Split(d.Summary, "\n\n"), "If the `--autosquash` option is enabled by default"); at < 0 || at > 1 {
		t.Fatalf("the window that writes code inline is not the summary's first two lines:\n%s", d.Summary)
	}
}

// TestOpeningQuotesASentenceEndingInACall: a window whose other
// sentence ends in a call, with no full stop, opens the summary whole:
// that sentence is prose, and here it gives the answer.
func TestOpeningQuotesASentenceEndingInACall(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "os — Miscellaneous operating system interfaces", Content: "cpu_count()\n\nReturn the number of CPUs in the system. Returns None if undetermined.\n\nThis number is not equivalent to the number of CPUs the current process can use. The number of usable CPUs can be obtained with len(os.sched_getaffinity(0))\n\nNew in version 3.4."},
		"S2": {ID: "S2", Title: "timeit — Measure execution time of small code snippets", Content: "The loop count, which tells you how many times the statement body was run per timing loop repetition. For each get used to fetch a task, a subsequent call to task_done tells the queue that the processing on the task is complete."},
	}
	d := writeOne(t, "Does os.cpu_count() tell me how many CPUs my current process is actually allowed to run on?", srcs, "S1", "S2")
	if !strings.HasPrefix(d.Summary, "`cpu_count()`: This number is not equivalent to the number of CPUs the current process can use. [cite:S1]\n\nThe number of usable CPUs can be obtained with len(os.sched_getaffinity(0)) [cite:S1]") {
		t.Fatalf("the window's two sentences do not open the summary:\n%s", d.Summary)
	}
}

// writeOne writes the offline report on question from srcs, found in the
// order of ids by one search for the question itself.
func writeOne(t *testing.T, question string, srcs map[string]*research.Source, ids ...string) *research.Draft {
	t.Helper()
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     question,
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: question, SourceIDs: ids}},
		Sources:      srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestOpeningNamesTheTermItsWindowDefines: a window under an option's
// name that its sentences do not say opens the summary with the name.
func TestOpeningNamesTheTermItsWindowDefines(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "git-commit(1)", Content: "OPTIONS\n\n--amend\n\nReplace the tip of the current branch by creating a new commit.\n\n--reset-author\n\nWhen used with --amend, declare that the authorship of the resulting commit now belongs to the committer. This also renews the author timestamp."},
	}
	d := writeOne(t, "After --amend, how do I make the authorship of the commit mine and renew its timestamp?", srcs, "S1")
	if !strings.HasPrefix(d.Summary, "`--reset-author`: When used with --amend, declare") {
		t.Fatalf("the summary does not open with the option its window defines:\n%s", d.Summary)
	}
}

// TestQuotable: a window's own sentences that are not prose are left
// out (one that ends in a call is prose); when none is prose, the
// neighbour quoted for context stands for it; a sentence of its own
// quoted already drops it.
func TestQuotable(t *testing.T) {
	t.Parallel()
	const (
		arrows = "RGB 모드는 각 픽셀이 R->Red, G->Green, B->Blue, 세 가지의 요소로 구성됩니다."
		values = "각 요소는 0-255의 농도값을 갖습니다."
		call   = "The number of usable CPUs can be obtained with len(os.sched_getaffinity(0))"
		says   = "This number is not equivalent to the number of CPUs the current process can use."
	)
	for _, tc := range []struct {
		name          string
		sentences     []string
		context       []bool
		used          string
		want, wantOwn []string
	}{
		{"code left out", []string{says, arrows}, []bool{false, false}, "", []string{says}, []string{says}},
		{"ending in a call kept", []string{says, call}, []bool{false, false}, "", []string{says, call}, []string{says, call}},
		{"neighbour stands in", []string{arrows, values}, []bool{false, true}, "", []string{values}, []string{values}},
		{"neighbour kept as context", []string{says, values}, []bool{false, true}, "", []string{says, values}, []string{says}},
		{"nothing to quote", []string{arrows, call}, []bool{false, true}, "", nil, nil},
		{"quoted already", []string{says, values}, []bool{false, true}, says, nil, nil},
	} {
		a := passage.Answer{Sentences: tc.sentences, Context: tc.context, Code: make([]bool, len(tc.sentences))}
		got, ok := quotable(a, quoted{textseg.SentenceKey(tc.used): tc.used != ""})
		if !ok {
			got.Sentences = nil
		}
		var own []string
		for i, s := range got.Sentences {
			if ok && !got.Context[i] {
				own = append(own, s)
			}
		}
		if !slices.Equal(got.Sentences, tc.want) || !slices.Equal(own, tc.wantOwn) {
			t.Errorf("%s: quoted %q (own %q), want %q (own %q)", tc.name, got.Sentences, own, tc.want, tc.wantOwn)
		}
	}
}

// TestAnswerWindowReadOrder: of two windows that hold as much of the
// question, the one in the source the question's own search found first
// opens the summary, whatever order the evidence cites them in (here the
// runner's choice, the other first).
func TestAnswerWindowReadOrder(t *testing.T) {
	t.Parallel()
	const question = "How many loose objects make git gc --auto pack them?"
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "git-gc(1)", Content: "Git gc --auto packs loose objects when more than 6700 of them are in the repository."},
		"S2": {ID: "S2", Title: "git-config(1)", Content: "Git gc --auto packs loose objects when more than 7000 of them are in the repository."},
	}
	for _, first := range []string{"S1", "S2"} {
		other := map[string]string{"S1": "S2", "S2": "S1"}[first]
		d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
			Question: question,
			SubQuestions: []research.SubQuestion{
				{ID: "Q1", Text: question, SourceIDs: []string{first}},
				{ID: "Q2", Text: "git gc", SourceIDs: []string{other}},
			},
			Sources:  srcs,
			Evidence: []string{other, first},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(d.Summary, srcs[first].Content+" [cite:"+first+"]") {
			t.Errorf("the question's own search found %s first; the summary opens:\n%s", first, d.Summary)
		}
	}
}

// TestSentencesSplitCode: a code listing's lines never run into the
// caption or prose after them (a caption, "Filename: …" or "Listing
// 13-3: …", is no sentence), while a sentence wrapped over lines (PDF)
// stays whole, even where a line ends in a clause's ";" or a "(".
func TestSentencesSplitCode(t *testing.T) {
	t.Parallel()
	got := sentences("We call the closure twice.\nFilename: src/main.rs\n\nfn main() {\nlet s = example(String::from(\"hello\"));\nbreak;\nprintln!(\n}\nListing 13-3: Attempting to call a closure\n\nThe compiler gives us this\nerror when the types differ.\nThe trial enrolled 40 patients;\nhalf received the drug (\nthe others a placebo).")
	want := []string{"We call the closure twice.", "let s = example(String::from(\"hello\"));", "The compiler gives us this error when the types differ.", "The trial enrolled 40 patients; half received the drug ( the others a placebo)."}
	if !slices.Equal(got, want) {
		t.Fatalf("sentences = %q", got)
	}
}

// FuzzSentences: any text splits without panic into sentences that are
// its own words in order.
func FuzzSentences(f *testing.F) {
	f.Add("We call the closure twice.\nfn main() {\n}\nListing 1: x\n\n한국어 문장입니다.")
	f.Add("$ cargo run\nerror[E0382]: borrow of moved value\n --> src/main.rs:5:28")
	f.Fuzz(func(t *testing.T, text string) {
		all := strings.Join(strings.Fields(text), " ")
		for _, s := range sentences(text) {
			if !strings.Contains(all, s) {
				t.Fatalf("sentence %q is not in the text", s)
			}
			prose(s)
		}
	})
}

// TestProseKeepsWikipediaResidue: a lead sentence with the residue of a
// stripped pronunciation ("( ; ] ;") is still prose.
func TestProseKeepsWikipediaResidue(t *testing.T) {
	t.Parallel()
	s := "Antonín Leopold Dvořák ( ; ] ; 8 September 1841 – 1 May 1904) was a Czech composer."
	if !prose(s) {
		t.Fatalf("prose(%q) = false", s)
	}
}

// TestUnansweredCitesNothing: a question about something no source
// mentions is said to be unanswered first, and nothing is cited as if it
// answered it — not a source that shares the word "point".
func TestUnansweredCitesNothing(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Pelican Point Power Station", Content: "The Pelican Point Power Station is located at Pelican Point, 20 km from the centre of Adelaide."},
		"S2": {ID: "S2", Title: "Fox's Glacier Mints", Content: "Peppy is the mascot of Fox's Glacier Mints, a brand of boiled mint."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{Question: "What is the boiling point of unobtainium?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "boiling point of unobtainium", SourceIDs: []string{"S1", "S2"}}}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Summary, "None of the 2 sources read mentions unobtainium") || len(research.ParseMarkers(d.Summary)) > 0 || len(d.Sections) > 0 {
		t.Fatalf("draft: %+v", d)
	}
}

// TestLongQuestionInItsOwnWords: a long question that names nothing is
// not refused for words of its own that no source uses ("clobbering",
// "colleague", "meanwhile": the page says "the remote has moved"); a short
// one about something no source mentions still is (above).
func TestLongQuestionInItsOwnWords(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "git-push(1)", Content: "To force-push a rebased branch safely, use git push --force-with-lease, which refuses to update the branch when the remote has moved since you last fetched it."},
		"S2": {ID: "S2", Title: "git-rebase(1)", Content: "Rebasing a branch you have already pushed rewrites commits others may have built on; push it without care and you risk clobbering their work."},
	}
	ids := []string{"S1", "S2"}
	for i := 3; i <= 12; i++ {
		// The manual's other pages, about branches, pushes and commits.
		id := fmt.Sprintf("S%d", i)
		srcs[id] = &research.Source{ID: id, Title: fmt.Sprintf("git-page-%d(1)", i), Content: fmt.Sprintf("A branch you have already pushed may be rebased without force only when page %d says its commits are yours; a force-push of it risks clobbering work.", i)}
		ids = append(ids, id)
	}
	q := "I rebased a branch I had already pushed. How can I force-push it without clobbering commits a colleague may have pushed meanwhile?"
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{Question: q,
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: q, SourceIDs: ids}}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(d.Summary, "None of") || !strings.Contains(d.Summary, "--force-with-lease") {
		t.Fatalf("summary: %q", d.Summary)
	}
}

// TestAsked: the relation a question asks about is its wh-word's own
// clause, whether the wh-word opens the question or ends it.
func TestAsked(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"The breed is typical of a comarca whose administrative centre is which town?": {"administr", "centr", "town"},
		"The attack took place on which road?":                                         {"attack", "took", "place", "road"},
		"What is the name of the book written by John Edmunds?":                        {"name", "book", "written"},
		"Which composer was born first, Verdi or Dvořák?":                              {"compos", "born", "first"},
		"The team was coached by whom?":                                                {"team", "coach"},
	} {
		got := asked(q)
		var terms []string
		for t := range got {
			terms = append(terms, t)
		}
		slices.Sort(terms)
		slices.Sort(want)
		if !slices.Equal(terms, want) {
			t.Errorf("asked(%q) = %q, want %q", q, terms, want)
		}
	}
}

// TestOpeningAnswersAskedRelation: in a two-hop question the second
// source's first sentence restates what the question says about it; the
// opening must quote the sentence that holds the relation asked about. A
// source titled with a word the question uses as a common word ("a
// ruined castle", the album "Ruined") is not evidence.
func TestOpeningAnswersAskedRelation(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Harrow Keep", Content: "Harrow Keep is a ruined castle in the county of Lindmoor. The river Aske flows past its walls before it joins Lake Merrow."},
		"S2": {ID: "S2", Title: "Lake Merrow", Content: "Lake Merrow is a glacial lake fed by the river Aske, which flows past Harrow Keep. The lake is popular with anglers and walkers. Its outflow is called the Tarn Race and reaches the sea at Holmport."},
		"S3": {ID: "S3", Title: "Ruined", Content: "Ruined is the second album by the Lindmoor band Aske Fire, released in 2009. It was ruined castle rock, a critic wrote."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     "The river that flows past the ruined castle Harrow Keep feeds a glacial lake whose outflow is called what?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "Harrow Keep river lake outflow", SourceIDs: []string{"S1", "S2", "S3"}}},
		Sources:      srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The opening is its first paragraphs: the pair's best sentences,
	// then a close second of each.
	open := strings.SplitN(d.Summary, "\n\n", 4)
	if len(open) < 3 || !strings.Contains(strings.Join(open[:3], " "), "Tarn Race") {
		t.Fatalf("the opening does not answer:\n%s", d.Summary)
	}
	if strings.Contains(d.Summary, "[cite:S3]") {
		t.Fatalf("the album was cited:\n%s", d.Summary)
	}
}

// TestNamedIn: a title is named where the text writes it as a name.
func TestNamedIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, base string
		want       bool
	}{
		{"It is a military transport aircraft built by Leonardo's Aircraft Division.", "military transport aircraft", false},
		{"The breed is typical of the region.", "typical", false},
		{"It uses the engines of the Lockheed C-130 Hercules.", "lockheed c-130 hercules", true},
		{"The film was released in 1938 by the University of Kansas.", "university of kansas", true},
		{"which composer was born first, dvořák or verdi?", "verdi", true}, // typed in lower case
	} {
		if got := namedIn(textseg.Words(tc.text), tc.base); got != tc.want {
			t.Errorf("namedIn(%q, %q) = %v, want %v", tc.text, tc.base, got, tc.want)
		}
	}
}

// TestSides: the two things a question compares, as it names them.
func TestSides(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"Which earthquake had the higher maximum intensity on the Mercalli scale, the 1952 San Juan earthquake or the Caucete earthquake?": {"1952 san juan earthquake", "caucete earthquake"},
		"Which Nissan nameplate has been produced for longer, the Sentra or the Sylphy?":                                                   {"sentra", "sylphy"},
		"Who was born first, Antonín Dvořák or Giuseppe Verdi?":                                                                            {"antonín dvořák", "giuseppe verdi"},
		"Is it true or false that water boils at sea level?":                                                                               nil,
		"What is the name of the book written by John Edmunds?":                                                                            nil,
	} {
		if got := sides(q); !slices.Equal(got, want) {
			t.Errorf("sides(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestComparisonLabelsSides: a side the question names by another name
// than its source's title is labelled with both, so the reader sees which
// side each quoted sentence is; a question that names two things on the
// way to its answer is not a comparison.
func TestComparisonLabelsSides(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "1950 Talca earthquake", Content: "The 1950 Talca earthquake struck the city of Talca in March 1950. It reached a maximum intensity of VII on the Mercalli scale."},
		"S2": {ID: "S2", Title: "1977 Talca earthquake", Content: "The 1977 Talca earthquake, also known as the Maule quake, struck Talca in 1977. It reached a maximum intensity of IX on the Mercalli scale."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     "Which earthquake reached the higher intensity on the Mercalli scale, the 1950 Talca earthquake or the Maule quake?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "Talca earthquakes", SourceIDs: []string{"S1", "S2"}}},
		Sources:      srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Summary, "Maule quake (1977 Talca earthquake): ") || !strings.Contains(d.Summary, "1950 Talca earthquake: ") {
		t.Fatalf("the sides are not labelled:\n%s", d.Summary)
	}
	if comparative("What is the name of the book written by John Edmunds published by the publisher owned by Pearson PLC?") {
		t.Fatal("a chain of two names is not a comparison")
	}
}

// TestOpeningQuotesAskedSentence: when a source's best sentence is its
// subject's definition, the sentence holding the relation asked about
// joins the opening even though it scores well below it.
func TestOpeningQuotesAskedSentence(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Mara J. Quill", Content: "Mara J. Quill is Professor of Finance and Research Director of the Institute for Trade Studies at Dunmore College. Quill has been described as an advocate of open trade. Her books, including Tides of Trade, have been praised and criticized by economists for their advocacy of open trade and financial expansion."},
		"S2": {ID: "S2", Title: "Fenwick Press", Content: "Fenwick Press is a major publisher owned by the Alder Group. Fenwick Press publishes textbooks."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     "What is the name of the book written by Mara J. Quill published in 2001 by the major publisher owned by the Alder Group?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "Mara J. Quill book", SourceIDs: []string{"S1", "S2"}}},
		Sources:      srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	paras := strings.Split(d.Summary, "\n\n")
	if !slices.ContainsFunc(paras, func(p string) bool { return strings.HasPrefix(p, "Her books, including Tides of Trade") }) {
		t.Fatalf("the sentence that answers is not in the opening:\n%s", d.Summary)
	}
}

// editionSummary writes a report over two pages on Cargo.toml's edition
// key, the first's text given and the second's, and returns its
// summary's paragraphs.
func editionSummary(t *testing.T, question, first, second string) []string {
	t.Helper()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Appendix E: Editions", Content: first},
		"S2": {ID: "S2", Title: "Hello, Cargo!", Content: second},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     question,
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "Cargo.toml edition key", SourceIDs: []string{"S1", "S2"}}},
		Sources:      srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(d.Summary, "\n\n")
}

// paraAt is the index of the first paragraph that opens with prefix, or
// -1.
func paraAt(paras []string, prefix string) int {
	return slices.IndexFunc(paras, func(p string) bool { return strings.HasPrefix(p, prefix) })
}

// The first page's window restates the question; its next sentence
// answers.
const (
	editionQuestion = "Which edition does the edition key in Cargo.toml indicate for the compiler?"
	editionPage     = "The edition key in Cargo.toml indicates which edition the compiler should use for your code. If the key is absent, Rust uses 2015 for backward compatibility reasons.\n\nEditions are opt in."
	cargoPage       = "Cargo.toml holds a package's name, its version and its edition key. The compiler reads it when Cargo builds the package."
)

// TestOpeningQuotesWindowContext: the sentence beside an answer window
// that holds no kind of answer asked for (it restates the question) is
// in the summary: right after the window when no other opening line
// adds to what it holds, after those lines when one does (the other hop
// of the question).
func TestOpeningQuotesWindowContext(t *testing.T) {
	t.Parallel()
	paras := editionSummary(t, editionQuestion, editionPage, cargoPage)
	summary := strings.Join(paras, "\n\n")
	if len(paras) < 2 || !strings.HasPrefix(paras[0], "The edition key in Cargo.toml indicates") {
		t.Fatalf("the summary does not open with the window:\n%s", summary)
	}
	if !strings.HasPrefix(paras[1], "If the key is absent, Rust uses 2015") || !strings.Contains(paras[1], "[cite:S1]") {
		t.Errorf("the window's neighbour does not follow it, citing its source, when the other line adds nothing:\n%s", summary)
	}
	// The question asks about workspaces too, which only the other page
	// speaks of: its line comes second.
	paras = editionSummary(t, "Which edition does the edition key in Cargo.toml indicate for the compiler in a workspace?", editionPage,
		"A workspace shares one Cargo.lock among its packages. The compiler reads it when Cargo builds the package.")
	summary = strings.Join(paras, "\n\n")
	neighbour, other := paraAt(paras, "If the key is absent"), slices.IndexFunc(paras, func(p string) bool { return strings.Contains(p, "[cite:S2]") })
	if neighbour < 0 || other < 0 || neighbour < other {
		t.Errorf("the neighbour is not after the line that adds the other side:\n%s", summary)
	}
	// The window's heading holds what the other line would add: nothing
	// is added, and the neighbour follows the window.
	paras = editionSummary(t, "Which edition does the edition key in Cargo.toml indicate for the compiler in a workspace?", "Workspaces\n\n"+editionPage,
		"A workspace shares one Cargo.lock among its packages. The compiler reads it when Cargo builds the package.")
	if len(paras) < 2 || !strings.HasPrefix(paras[1], "If the key is absent") {
		t.Errorf("the neighbour does not follow its window when the window's heading holds what the other line adds:\n%s", strings.Join(paras, "\n\n"))
	}
}

// TestWindowContextLabelled: the window's neighbour, quoted after
// another source's line, is labelled with its source's title when it
// points back with a pronoun, as any line is; right after its window it
// is not.
func TestWindowContextLabelled(t *testing.T) {
	t.Parallel()
	paras := editionSummary(t, "Which edition does the edition key in Cargo.toml indicate for the compiler in a workspace?",
		"The edition key in Cargo.toml indicates which edition the compiler should use for your code. It defaults to 2015 when the key is absent.\n\nEditions are opt in.",
		"A workspace shares one Cargo.lock among its packages. The compiler reads it when Cargo builds the package.")
	summary := strings.Join(paras, "\n\n")
	at := slices.IndexFunc(paras, func(p string) bool { return strings.Contains(p, "It defaults to 2015") })
	if at < 1 {
		t.Fatalf("the neighbour is not quoted after the window:\n%s", summary)
	}
	if !strings.Contains(paras[at-1], "[cite:S2]") || !strings.HasPrefix(paras[at], "Appendix E: Editions: It defaults") {
		t.Errorf("the neighbour after another source's line is not labelled:\n%s", summary)
	}
	// Right after its window, its own source's line, it is not labelled.
	paras = editionSummary(t, editionQuestion, "The edition key in Cargo.toml indicates which edition the compiler should use for your code. It defaults to 2015 when the key is absent.\n\nEditions are opt in.", cargoPage)
	if len(paras) < 2 || paras[1] != "It defaults to 2015 when the key is absent. [cite:S1]" {
		t.Errorf("the neighbour right after its window is not quoted as it stands:\n%s", strings.Join(paras, "\n\n"))
	}
}

// FuzzQuestion: any question — the user's own text — is read for its
// asked relation, its sides and its kind, and written up over two
// sources, without a panic; a side is words of the question.
func FuzzQuestion(f *testing.F) {
	f.Add("Which earthquake was stronger, the 1950 Talca earthquake or the Maule quake?")
	f.Add("The breed is typical of a comarca whose administrative centre is which town?")
	f.Add("İstanbul or Ankara, which is older? or")
	f.Fuzz(func(t *testing.T, q string) {
		asked(q)
		comparative(q)
		answerType(q)
		for _, s := range sides(q) {
			if !strings.Contains(phraseOf(q), " "+s+" ") && s != "" {
				t.Fatalf("side %q is not in %q", s, q)
			}
		}
		srcs := map[string]*research.Source{
			"S1": {ID: "S1", Title: "1950 Talca earthquake", Content: "The 1950 Talca earthquake struck Talca in 1950."},
			"S2": {ID: "S2", Title: "Maule quake", Content: "The Maule quake, also known as İstanbul, reached IX."},
		}
		if _, _, err := (Engine{}).Write(context.Background(), research.WriteInput{Question: q, SubQuestions: []research.SubQuestion{{ID: "Q1", Text: q, SourceIDs: []string{"S1", "S2"}}}, Sources: srcs}); err != nil {
			t.Fatal(err)
		}
	})
}

// A listing's comment is a line of code, not a sentence a report quotes;
// the prose around the listing is read.
func TestListingCommentsAreNotSentences(t *testing.T) {
	src := &research.Source{ID: "s1", Content: "Patterns in a .gitignore file ignore the files they match.\n\n" +
		"# ignore objects and archives, anywhere in the tree.\n*.[oa]\n\n" +
		"A line starting with # serves as a comment in the file itself."}
	var got []string
	for _, s := range newReader().sentences(src) {
		got = append(got, s.text)
	}
	want := []string{"Patterns in a .gitignore file ignore the files they match.", "A line starting with # serves as a comment in the file itself."}
	if !slices.Equal(got, want) {
		t.Errorf("sentences = %q, want %q", got, want)
	}
}

// TestKoreanReport: a question asked in Korean over a manual translated
// in part gets a summary in Korean: the sentences its sources left in
// English are not quoted in it, and the engine's own words — a refusal
// too — are Korean.
func TestKoreanReport(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "잘라내기 도구", Content: "잘라내기 도구는 이미지의 가장자리를 잘라냅니다. 사각형 영역을 드래그하여 잘라낼 부분을 정합니다. Tools have options that you can configure for cropping. 영역 안을 두 번 누르면 잘라내기가 적용됩니다."},
		"S2": {ID: "S2", Title: "도구 옵션", Content: "The crop tool options are shown in the Tool Options dialog. 잘라내기 도구의 옵션은 도구 옵션 대화 상자에 표시됩니다. 고정 비율 옵션으로 잘라낼 영역의 비율을 고정할 수 있습니다."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{Question: "잘라내기 도구로 이미지를 어떻게 잘라내나요?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "잘라내기 도구 사용법", SourceIDs: []string{"S1", "S2"}}}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	if len(research.ParseMarkers(d.Summary)) == 0 || !strings.Contains(d.Summary, "잘라내기") {
		t.Fatalf("no answer:\n%s", d.Summary)
	}
	for _, english := range []string{"Tools have options", "The crop tool options"} {
		if strings.Contains(d.Summary, english) {
			t.Errorf("the Korean summary quotes %q:\n%s", english, d.Summary)
		}
	}
	// The same question in English is answered from both languages'
	// sentences as they rank.
	en, _, err := Engine{}.Write(context.Background(), research.WriteInput{Question: "Where are the crop tool options shown?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "crop tool options", SourceIDs: []string{"S1", "S2"}}}, Sources: srcs})
	if err != nil || !strings.Contains(en.Summary, "options") {
		t.Fatalf("English question: %v\n%s", err, en.Summary)
	}

	no, _, err := Engine{}.Write(context.Background(), research.WriteInput{Question: "잘라내기 도구로 동영상의 프레임 속도를 바꾸려면 어떻게 하나요?",
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: "동영상 프레임 속도", SourceIDs: []string{"S1", "S2"}}}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	if len(research.ParseMarkers(no.Summary)) > 0 || !strings.HasPrefix(no.Summary, "읽은 출처 2개") {
		t.Fatalf("a Korean refusal:\n%s", no.Summary)
	}
	// Each message is as many sentences in Korean as in English: what
	// opens a summary is measured by its first sentences.
	for m, en := range messages["en"] {
		ko := messages["ko"][m]
		if a, b := strings.Count(en, ". "), strings.Count(ko, ". "); a != b {
			t.Errorf("message %d: %d sentence breaks in English, %d in Korean:\n%s\n%s", m, a, b, en, ko)
		}
	}
}

// TestFacetSections: contractions are function words, not keywords; what
// the question's and its keyword facets' sources say is quoted under the
// page it comes from, not under the question or the facet's words.
func TestFacetSections(t *testing.T) {
	t.Parallel()
	q := "How many times does timeit.timeit() execute my snippet if I don't tell it how many loops to run?"
	if got, want := keywords(q), []string{"many", "times", "timeit.timeit", "execute", "snippet", "tell", "loops", "run"}; !slices.Equal(got, want) {
		t.Errorf("keywords = %q, want %q", got, want)
	}
	for _, w := range []string{"don't", "doesn’t", "can't", "i'm", "we're", "they've"} {
		if !contraction(w) {
			t.Errorf("%q is not read as a contraction", w)
		}
	}
	for _, w := range []string{"o'neil", "rock'n'roll", "verdi's", "it"} {
		if contraction(w) {
			t.Errorf("%q is read as a contraction", w)
		}
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question: q,
		SubQuestions: []research.SubQuestion{
			{ID: "Q1", Text: q, SourceIDs: []string{"S1"}},
			{ID: "Q2", Text: "snippet tell", SourceIDs: []string{"S2"}},
			{ID: "Q3", Text: "loops run", SourceIDs: []string{"S3", "S2"}},
		},
		Sources: map[string]*research.Source{
			"S1": {ID: "S1", Title: "timeit", Content: "If number is not given, timeit runs the snippet one million times. " +
				"The snippet runs in a namespace of its own, so tell timeit what to import. Each of the many loops runs the snippet once. " +
				"The repeat function runs timeit several times and returns each time it took. A snippet that runs too fast to time gets more loops. " +
				"The default timer measures wall-clock time, not the process time the snippet used. The command-line interface picks the number of loops itself. " +
				"A snippet may be a string or a callable taking no arguments. Setup code runs once before the loops and is not timed."},
			"S2": {ID: "S2", Title: "Profiling", Content: "A profiler tells you where a snippet spends its time. Tell the profiler which snippet to run, and it reports each call. " +
				"A snippet that writes to a file spends most of its time waiting. Tell the profiler to sort its report by the time each call took."},
			"S3": {ID: "S3", Title: "Loops", Content: "A loop runs its body until its condition fails. Each run of the loop is one iteration."},
		},
		Evidence: []string{"S1", "S2", "S3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, s := range d.Sections {
		headings = append(headings, s.Heading)
	}
	if !slices.Contains(headings, "Profiling") || slices.ContainsFunc(headings, func(h string) bool {
		return h == q || h == "snippet tell" || h == "loops run" || h == "snippet if I don't tell" || h == "loops to run"
	}) {
		t.Errorf("section headings %q: want the pages', not the question's or its facets'", headings)
	}
}

// TestBySource: quoted sentences are grouped under their page's title, in
// the order the pages are first quoted, each page's in its text's order;
// a page and its copy share a section, whatever their dashes and whether
// the site's name follows the title, headed by the shorter title; a title
// that only begins another is another page's. Each page stands where the
// section that first quoted it would have.
func TestBySource(t *testing.T) {
	t.Parallel()
	w := &writer{factIDs: map[string]string{}, in: research.WriteInput{Sources: map[string]*research.Source{
		"A":  {ID: "A", Title: "Pragma statements — SQLite", Content: "One. Two. Three."},
		"A2": {ID: "A2", Title: "Pragma statements", Content: "Four. Five."},
		"B":  {ID: "B", URL: "file:///doc/b.html", Content: "Six. Seven."},
		"C":  {ID: "C", Title: "logging --- Logging facility", Content: "Eight."},
		"C2": {ID: "C2", Title: "logging — Logging facility | Python 3.11.2 documentation", Content: "Nine."},
		"D":  {ID: "D", Title: "Pragma", Content: "Ten."},
	}}}
	var said []placed
	for i, q := range []scored{
		{text: "Three.", sourceID: "A"}, {text: "Seven.", sourceID: "B"}, {text: "One.", sourceID: "A"}, {text: "Nine.", sourceID: "C2"},
		{text: "Five.", sourceID: "A2"}, {text: "Six.", sourceID: "B"}, {text: "Four.", sourceID: "A2"}, {text: "Eight.", sourceID: "C"},
		{text: "Ten.", sourceID: "D"},
	} {
		said = append(said, placed{at: i / 3, s: q}) // the section each would have stood in
	}
	got := w.bySource(said)
	want := []placedSection{
		{0, research.Section{Heading: "Pragma statements", Body: "One. [cite:A] Three. [cite:A] Four. [cite:A2] Five. [cite:A2]"}},
		{0, research.Section{Heading: "file:///doc/b.html", Body: "Six. [cite:B] Seven. [cite:B]"}},
		{1, research.Section{Heading: "logging --- Logging facility", Body: "Nine. [cite:C2] Eight. [cite:C]"}},
		{2, research.Section{Heading: "Pragma", Body: "Ten. [cite:D]"}},
	}
	if !slices.Equal(got, want) {
		t.Errorf("bySource = %+v, want %+v", got, want)
	}
}

// TestFollowUpAsWritten: a follow-up's heading names it as its sources
// write it: an identifier with its underscores or dots, a Latin name
// without the Korean particle run into it, a name without the verb that
// opened an instruction on it. Words the sources never join so, a
// capitalised word they also write in lower case, words they all also
// write in lower case and capitalise together only where a sentence opens,
// and a label they write only before a number ("Figure 2") are no name.
func TestFollowUpAsWritten(t *testing.T) {
	t.Parallel()
	w := &writer{read: []string{"A", "B", "C", "D"}, in: research.WriteInput{Sources: map[string]*research.Source{
		"A": {ID: "A", Content: "The xRead method returns SQLITE_IOERR_SHORT_READ or SQLITE_IOERR_DATA on a bad read; see Number.MAX_SAFE_INTEGER."},
		"B": {ID: "B", Content: "Stability: 0 - Deprecated. Please use the new API. Unfortunately, it is slow. A listing follows. Listing 3 shows it. Cargo 1.5 runs. Run Cargo."},
		"C": {ID: "C", Content: "TIFF와 JPG으로 내보낼 수 있습니다. LibreOffice Calc에서는 셀을 병합합니다. 보기 → 모눈 표시를 선택합니다."},
		"D": {ID: "D", Content: "See Figure 2 and Figure 3. Open Cargo.toml in your editor. The Cargo.toml file is the manifest; open it at any time. Use Buffer.alloc to get zeroed memory: Buffer.alloc(10). Open Source projects keep their source open. Use Visual Studio Code. Return the IEEE value; the IEEE standard says so, and we return. Call the Fetch API; fetch it. Fetch API calls are slow. Use Python 3.11 or python. We do not check it. Whether we check it, we do. Git uses the Partial Clone feature; a partial clone is small.\ngit-bisect run make\nWe run it.\nECONNREFUSED Indicates that the connection was refused.\nECONNRESET Indicates a reset. It indicates that ECONNREFUSED is retried. Only the Node API Indicates nothing.\nEPIPE Indicates. EPIPE Indicates that it broke."},
	}}}
	for _, c := range []struct {
		text, want string
		named      bool
	}{
		{"SQLITE IOERR DATA", "SQLITE_IOERR_DATA", true},
		{"Number.MAX SAFE INTEGER", "Number.MAX_SAFE_INTEGER", true},
		{"TIFF와", "TIFF", true},
		{"LibreOffice Calc에서는", "LibreOffice Calc", true},
		{"모눈 표시", "모눈 표시", true},
		{"Stability 0 Deprecated Please", "Stability 0 Deprecated Please", false},
		{"IOERR DATA SHORT", "IOERR DATA SHORT", false},
		{"Unfortunately", "Unfortunately", false},
		{"Listing", "Listing", false},
		{"Cargo", "Cargo", true},
		{"Figure", "Figure", false},
		{"Deprecated", "Deprecated", false},
		{"API", "API", true},
		{"Open Cargo.toml", "Cargo.toml", true},
		{"Use Buffer.alloc", "Buffer.alloc", true},
		{"Open Source", "Open Source", false},
		{"Partial Clone", "Partial Clone", true},
		{"git-bisect run", "git-bisect run", true},
		{"ECONNREFUSED Indicates", "ECONNREFUSED", true},
		{"Node API Indicates", "Node API Indicates", true},
		{"EPIPE Indicates", "EPIPE Indicates", true},
		{"Use Visual Studio Code", "Use Visual Studio Code", true},
		{"Return the IEEE", "IEEE", true},
		{"Fetch API", "Fetch API", true},
		{"Use Python 3.11", "Use Python 3.11", true},
		{"We do not check", "We do not check", false},
	} {
		got, named := w.asWritten(research.SubQuestion{Text: c.text, ParentID: "Q1", SourceIDs: []string{"B"}})
		if got != c.want || named != c.named {
			t.Errorf("asWritten(%q) = %q %v, want %q %v", c.text, got, named, c.want, c.named)
		}
	}
}

// TestAnsweredComparisonSections: once the summary derives which side
// comes first, the question's section draws on the two sides' pages
// alone, and a page that merely names a side (a theatre named after
// Verdi) is quoted in that side's section, not as an answer.
func TestAnsweredComparisonSections(t *testing.T) {
	t.Parallel()
	const q = "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?"
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Antonín Dvořák", Content: "Antonín Dvořák (8 September 1841 – 1 May 1904) was a Czech composer. He wrote nine symphonies."},
		"S2": {ID: "S2", Title: "Giuseppe Verdi", Content: "Giuseppe Verdi (10 October 1813 – 27 January 1901) was an Italian opera composer. He wrote Aida."},
		"S3": {ID: "S3", Title: "Teatro Giuseppe Verdi", Content: "Teatro Giuseppe Verdi is a small opera house in Busseto, named after the composer Giuseppe Verdi. The theatre opened in 1868 and seats 300."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question: q,
		SubQuestions: []research.SubQuestion{
			{ID: "Q1", Text: q, SourceIDs: []string{"S1", "S2", "S3"}},
			{ID: "Q2", Text: "Antonín Dvořák", SourceIDs: []string{"S1"}},
			{ID: "Q3", Text: "Giuseppe Verdi", SourceIDs: []string{"S2", "S3"}},
		},
		Sources:  srcs,
		Evidence: []string{"S1", "S2", "S3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Summary, "Derived from the quotes below: Giuseppe Verdi (1813) was born before Antonín Dvořák (1841).") {
		t.Fatalf("summary: %q", d.Summary)
	}
	var verdi string
	for _, s := range d.Sections {
		if s.Heading == q && strings.Contains(s.Body, "cite:S3") {
			t.Errorf("the question's section quotes the theatre's page: %q", s.Body)
		}
		if s.Heading == "Giuseppe Verdi" {
			verdi = s.Body
		}
	}
	if !strings.Contains(verdi, "Teatro Giuseppe Verdi is a small opera house") {
		t.Errorf("the theatre's page is not in Verdi's section: %+v", d.Sections)
	}
}

// TestSummaryFromSourcesThatBear: a source chosen as evidence whose best
// sentence barely bears on the question gives the summary nothing.
func TestSummaryFromSourcesThatBear(t *testing.T) {
	t.Parallel()
	const q = "How many times does timeit run the statement when number is not given?"
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "timeit", Content: "The timeit module times small snippets of Python code. When number is not given, timeit runs the statement one million times. The repeat count defaults to five timing runs of the statement."},
		"S2": {ID: "S2", Title: "timeit command line", Content: "python -m timeit runs the statement in a loop. If -n is not given, a suitable number of loops is calculated by trying increasing numbers until the total time is at least 0.2 seconds."},
		"S3": {ID: "S3", Title: "Design FAQ", Content: "A given Python program is portable across Unix variants."},
	}
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     q,
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: q, SourceIDs: []string{"S1", "S2", "S3"}}},
		Sources:      srcs,
		Evidence:     []string{"S1", "S2", "S3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Summary, "one million times") || strings.Contains(d.Summary, "cite:S3") {
		t.Errorf("summary: %q", d.Summary)
	}
}

// TestPronounLabelled: a sentence that points back at its source's
// subject, quoted after another source's line, carries its source's title.
func TestPronounLabelled(t *testing.T) {
	t.Parallel()
	w := &writer{in: research.WriteInput{Sources: map[string]*research.Source{
		"S1": {ID: "S1", Title: "Teatro Giuseppe Verdi"},
		"S2": {ID: "S2", Title: "Verdi, the King of Melody"},
	}}, used: quoted{}, factIDs: map[string]string{}}
	p := &quotes{sources: map[string]bool{}}
	p.add(w, scored{text: "Teatro Giuseppe Verdi is a small opera house.", sourceID: "S1"}, 100)
	p.add(w, scored{text: "It is based on adult life events of the composer.", sourceID: "S2"}, 100)
	p.add(w, scored{text: "It was released in 1953.", sourceID: "S2"}, 100)
	want := []string{
		"Teatro Giuseppe Verdi is a small opera house. [cite:S1]",
		"Verdi, the King of Melody: It is based on adult life events of the composer. [cite:S2]",
		"It was released in 1953. [cite:S2]",
	}
	if !slices.Equal(p.lines, want) {
		t.Errorf("lines %q, want %q", p.lines, want)
	}
}

// TestQuotedOnceWhateverItsMarks: a page read twice (its source and its
// HTML rendering) gives the same sentence with other quotation marks and
// dashes; the report quotes it once.
func TestQuotedOnceWhateverItsMarks(t *testing.T) {
	t.Parallel()
	w := &writer{in: research.WriteInput{Sources: map[string]*research.Source{
		"S1": {ID: "S1", Title: "Logging HOWTO"},
		"S2": {ID: "S2", Title: "Logging HOWTO — Python 3.11 documentation"},
	}}, used: quoted{}, factIDs: map[string]string{}}
	p := &quotes{sources: map[string]bool{}}
	for _, s := range []scored{
		{text: "The root logger's name is printed as 'root' --- in the output.", sourceID: "S1"},
		{text: "The root logger’s name is printed as ‘root’ — in the output.", sourceID: "S2"},
		{text: "The root logger is created with level WARNING.", sourceID: "S2"},
		{text: "The root logger is created with level ERROR.", sourceID: "S1"},
	} {
		p.add(w, s, 100)
	}
	want := []string{
		"The root logger's name is printed as 'root' --- in the output. [cite:S1]",
		"The root logger is created with level WARNING. [cite:S2]",
		"The root logger is created with level ERROR. [cite:S1]",
	}
	if !slices.Equal(p.lines, want) {
		t.Errorf("lines %q, want %q", p.lines, want)
	}

}

// TestUnscoped: a name most of the sources read write is their subject,
// not what the question is about; with fewer than four sources read, or
// when every name is so, the focus stands.
func TestUnscoped(t *testing.T) {
	srcs := map[string]*research.Source{}
	var ids []string
	for i, text := range []string{
		"Rust editions are set by the edition key in Cargo.toml.",
		"Rust programs start at main.",
		"Rust has no null; it has Option.",
		"Welcome to the Rust community!",
		"Cargo builds Rust crates.",
	} {
		id := fmt.Sprintf("S%d", i+1)
		srcs[id] = &research.Source{ID: id, Title: "Page " + id, Content: text}
		ids = append(ids, id)
	}
	ev := newEvidence("Which edition does Cargo use for Rust?", ids, srcs)
	got := ev.unscoped(map[string]bool{"rust": true, "cargo": true})
	if got["rust"] || !got["cargo"] {
		t.Errorf("unscoped = %v, want cargo without rust", got)
	}
	if got := ev.unscoped(map[string]bool{"rust": true}); !got["rust"] {
		t.Errorf("every name in scope: %v, want the focus as it was", got)
	}
	// Two of four is not more than half.
	four := newEvidence("Which edition does Cargo use for Rust?", []string{"S1", "S2", "S4", "S5"}, map[string]*research.Source{
		"S1": srcs["S1"], "S2": srcs["S2"], "S4": {ID: "S4", Title: "Page S4", Content: "Welcome to the community!"}, "S5": {ID: "S5", Title: "Page S5", Content: "Cargo builds crates."},
	})
	if got := four.unscoped(map[string]bool{"rust": true, "cargo": true}); !got["rust"] {
		t.Errorf("two of four sources: %v, want rust kept", got)
	}
	// A source the question names is what it is about.
	srcs["S6"] = &research.Source{ID: "S6", Title: "Rust", Content: "Rust is a language."}
	named := newEvidence("Which edition does Cargo use for Rust?", append(ids, "S6"), srcs)
	if got := named.unscoped(map[string]bool{"rust": true, "cargo": true}); !got["rust"] {
		t.Errorf("a named source's title: %v, want rust kept", got)
	}
	few := newEvidence("Which edition does Cargo use for Rust?", ids[:3], srcs)
	if got := few.unscoped(map[string]bool{"rust": true, "cargo": true}); !got["rust"] {
		t.Errorf("three sources read: %v, want the focus as it was", got)
	}
}

// TestSectionLeavesScopeOnlySentences: a sentence beyond its source's
// best that names only what every source read is about ("Rust" across
// the Rust book) is not quoted in the summary or a section; one naming
// the question's own subject is.
func TestSectionLeavesScopeOnlySentences(t *testing.T) {
	t.Parallel()
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Appendix E", Content: "The edition key in Cargo.toml chooses the edition the compiler uses. Cargo.toml also lists the dependencies of a package. Cargo.toml is written in the TOML format. Rust is for students and those interested in systems concepts."},
		"S2": {ID: "S2", Title: "Foreword", Content: "Rust empowers everyone to build reliable software."},
		"S3": {ID: "S3", Title: "Introduction", Content: "Rust is fast and memory efficient."},
		"S4": {ID: "S4", Title: "Installation", Content: "Rustup installs Rust and its tools."},
		"S5": {ID: "S5", Title: "Hello, Cargo", Content: "Cargo is Rust's build system and package manager."},
	}
	q := "Which edition does the edition key in Cargo.toml choose for Rust?"
	d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
		Question:     q,
		SubQuestions: []research.SubQuestion{{ID: "Q1", Text: q, SourceIDs: []string{"S1", "S2", "S3", "S4", "S5"}}},
		Sources:      srcs,
	})
	if err != nil {
		t.Fatal(err)
	}
	body := d.Summary
	for _, s := range d.Sections {
		body += "\n\n" + s.Body
	}
	if strings.Contains(body, "Rust is for students") {
		t.Errorf("a sentence naming only the collection's subject was quoted:\n%s", body)
	}
	if !strings.Contains(body, "Cargo.toml also lists the dependencies") {
		t.Errorf("a sentence naming the question's subject was left out:\n%s", body)
	}
}

// TestAntecedentBeforeWindow: a window whose sentence points back is
// quoted after the sentence it points back at, in the summary as on the
// page.
func TestAntecedentBeforeWindow(t *testing.T) {
	t.Parallel()
	paras := editionSummary(t, "Why is the hashing algorithm of the edition map not the fastest available?",
		"By default, the edition map uses a function called SipHash that resists flooding attacks. This is not the fastest hashing algorithm available, but the security is worth the cost.\n\nMaps grow.",
		"Cargo.toml holds a package's name and its version.")
	summary := strings.Join(paras, "\n\n")
	by, this := paraAt(paras, "By default, the edition map"), paraAt(paras, "This is not the fastest")
	if by < 0 || this < 0 || by > this {
		t.Errorf("the sentence the window points back at is not before it:\n%s", summary)
	}
}

// TestValueRefusalSaysWhy: research over sources that hold a question's
// words but not the value it asks for says which value no passage gives:
// a date, an amount, a release; in Korean for a question in Korean.
func TestValueRefusalSaysWhy(t *testing.T) {
	t.Parallel()
	const introduced = "The edition key in Cargo.toml was introduced so that the compiler knows which edition to use. It was introduced with editions.\n\nEditions are opt in."
	for _, c := range []struct{ question, source, says string }{
		{"On what date was the edition key of Cargo.toml introduced?", introduced, "none of the passages that come closest gives a date"},
		{"How many editions can one Cargo.toml edition key name?", "The edition key in Cargo.toml names the edition the compiler uses for the package. It was introduced with editions.\n\nEditions are opt in.", "none of the passages that come closest gives an amount"},
		{"Which Cargo release introduced the edition key of Cargo.toml?", introduced, "none of the passages that come closest gives a release or a year"},
		{"Cargo.toml의 edition 키 출시일은 언제인가요?", "Cargo.toml의 edition 키는 컴파일러가 어떤 에디션을 쓸지 알도록 도입되었습니다.\n\n에디션은 선택 사항입니다.", "날짜를 말하지 않습니다"},
	} {
		if paras := editionSummary(t, c.question, c.source, cargoPage); !strings.Contains(paras[0], c.says) {
			t.Errorf("%q: summary %q, want it to say %q", c.question, strings.Join(paras, "\n\n"), c.says)
		}
	}
}

// TestEndsInCall: prose whose last word is a call, with no full stop, is
// a sentence; a short label or a line of code before the call is not.
func TestEndsInCall(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"The number of usable CPUs can be obtained with len(os.sched_getaffinity(0))":    true,
		"  The number of usable CPUs can be obtained with len(os.sched_getaffinity(0)) ": true,
		"The path of each file found can be built with os.path.join(dirpath, name)":      true,
		"The number of usable CPUs can be obtained with (os.sched_getaffinity(0))":       false,
		"See os.cpu_count()":                                                      false,
		"The number of usable CPUs can be found":                                  false,
		"x = a + b; y = c * d; z = e / f; w = g(h)":                               false,
		"The number of usable CPUs can be obtained with len(os.sched_getaffinity": false,
	} {
		if got := endsInCall(s); got != want {
			t.Errorf("endsInCall(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestValueAmongTheFirstSourcesRead: a value that only a source read far
// down gives, where the first sources read give none, does not answer;
// with the rule ablated it does. Not parallel: it sets passage.Ablate.
func TestValueAmongTheFirstSourcesRead(t *testing.T) {
	q := "On what date was the edition key of Cargo.toml introduced?"
	sources := map[string]*research.Source{}
	var ids []string
	for i := range firstRead + 1 {
		id := fmt.Sprintf("S%d", i+1)
		body := fmt.Sprintf("The edition key in Cargo.toml was introduced so that the compiler knows which edition to use (page %d).\n\nEditions are opt in.", i+1)
		if i == firstRead {
			body = "The edition key of Cargo.toml was introduced on December 6, 2018, with Rust 1.31."
		}
		sources[id] = &research.Source{ID: id, Title: "Cargo", Content: body}
		ids = append(ids, id)
	}
	if got := answerable("en", q, ids, sources); !strings.Contains(got, "in the first 5 sources read gives a date") {
		t.Errorf("refusal = %q, want the first sources' missing date said", got)
	}
	if got := answerable("en", q, ids[firstRead:], sources); got != "" {
		t.Errorf("the dated source alone: refusal %q, want none", got)
	}
	// The dated source read first, the others after it: answered.
	if got := answerable("en", q, append([]string{ids[firstRead]}, ids[:firstRead]...), sources); got != "" {
		t.Errorf("the dated source first: refusal %q, want none", got)
	}
	ko := map[string]*research.Source{}
	for i, id := range ids {
		ko[id] = &research.Source{ID: id, Title: "Cargo", Content: fmt.Sprintf("Cargo.toml의 edition 키는 컴파일러가 어떤 에디션을 쓸지 알도록 도입되었습니다 (%d쪽).\n\n에디션은 선택 사항입니다.", i+1)}
	}
	ko[ids[firstRead]].Content = "Cargo.toml의 edition 키는 2018년 12월 6일에 도입되었습니다."
	if got := answerable("ko", "Cargo.toml의 edition 키 출시일은 언제인가요?", ids, ko); !strings.Contains(got, "처음 읽은 출처 5개의 가장 가까운 구절들도 날짜를 말하지 않습니다") {
		t.Errorf("Korean refusal = %q, want the first sources' missing date said", got)
	}
	passage.Ablate["firstread"] = true
	defer delete(passage.Ablate, "firstread")
	if got := answerable("en", q, ids, sources); got != "" {
		t.Errorf("ablated: refusal %q, want none", got)
	}
}

// TestAnswerWindowOfTheFirstPages: a window of the pages the question's
// own search ranked first opens the summary when it scores nearly as
// well as the best window of a page a facet's search found, though
// evidence selection did not choose its page; ablated, the facet's page
// opens it. Not parallel: it sets passage.Ablate.
func TestAnswerWindowOfTheFirstPages(t *testing.T) {
	q := "What does the edition key in Cargo.toml tell the compiler?"
	srcs := map[string]*research.Source{
		"S1": {ID: "S1", Title: "Hello, Cargo!", Content: "The edition key tells rustc which edition the package is written in.\n\nCargo builds packages."},
		"S2": {ID: "S2", Title: "Packages", Content: "A package holds crates.\n\nCrates compile alone."},
		"S3": {ID: "S3", Title: "Modules", Content: "Modules group code.\n\nPaths name items."},
		"S4": {ID: "S4", Title: "Workspaces", Content: "The edition key in the Cargo.toml of a workspace root tells the compiler what edition key its members inherit.\n\nMembers share a lock file."},
	}
	opening := func() string {
		d, _, err := Engine{}.Write(context.Background(), research.WriteInput{
			Question: q,
			SubQuestions: []research.SubQuestion{
				{ID: "Q1", Text: q, SourceIDs: []string{"S1", "S2", "S3"}},
				{ID: "Q2", Text: "Cargo.toml edition", SourceIDs: []string{"S4"}},
			},
			Sources:  srcs,
			Evidence: []string{"S4"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(d.Summary, "\n\n")[0]
	}
	if got := opening(); !strings.Contains(got, "[cite:S1]") {
		t.Errorf("opening %q, want the first page's window", got)
	}
	passage.Ablate["firstpages"] = true
	defer delete(passage.Ablate, "firstpages")
	if got := opening(); !strings.Contains(got, "[cite:S4]") {
		t.Errorf("ablated: opening %q, want the facet's page's window", got)
	}
}

// TestAnswerWindowInTheQuestionsScript: a first page's window that comes
// close but says nothing in the question's script (a Korean question,
// an English page) is not preferred to the best, which does.
func TestAnswerWindowInTheQuestionsScript(t *testing.T) {
	t.Parallel()
	q := "Cargo.toml의 edition key는 무엇인가요?"
	in := research.WriteInput{Question: q, Sources: map[string]*research.Source{
		"S1": {ID: "S1", Title: "Cargo.toml", Content: "The edition key of Cargo.toml is the Rust edition of a package.\n\nCargo builds packages."},
		"S2": {ID: "S2", Title: "패키지", Content: "패키지는 크레이트를 담습니다.\n\n크레이트는 따로 컴파일됩니다."},
		"S3": {ID: "S3", Title: "모듈", Content: "모듈은 코드를 묶습니다.\n\n경로는 항목을 가리킵니다."},
		"S4": {ID: "S4", Title: "에디션", Content: "Cargo.toml의 edition key는 패키지마다 다릅니다.\n\n에디션은 선택 사항입니다."},
	}}
	w := &writer{in: in, used: quoted{}, lang: "ko", read: []string{"S1", "S2", "S3", "S4"}, chosen: map[string]bool{"S4": true}}
	w.written = inScript(w.lang)
	if _, id, ok := w.window(w.windows()); !ok || id != "S4" {
		t.Errorf("window from %q (%v), want the Korean page's", id, ok)
	}
}

// TestFurtherWindows: the opening quotes, after the best window, the
// windows ask quotes beside it (passage.Answers) — here the question's
// other part, on the page the evidence chose — and not a page it did not
// choose; their words are counted apart from the summary's length.
func TestFurtherWindows(t *testing.T) {
	q := "How many listeners per event are allowed by default, and which method raises the limit for one emitter?"
	docs := []passage.Doc{
		{Title: "Events", Body: "By default, a maximum of 10 listeners can be registered for any single event.\n\nListeners are called in the order in which they were registered."},
		{Title: "Emitters", Body: "The emitter.setMaxListeners() method raises the limit for this specific emitter."},
	}
	const other = "The emitter.setMaxListeners() method raises the limit for this specific emitter."
	found, _ := passage.Find(q, docs, 4)
	if len(passage.Answers(found[:min(len(found), passage.MaxQuoted)])) < 2 || found[0].Doc != 0 {
		t.Fatalf("found %+v: want the default's window, then the method's", found)
	}
	for _, c := range []struct {
		name    string
		chosen  map[string]bool
		ablated []string
		want    bool
	}{
		{"chosen", map[string]bool{"E": true, "M": true}, nil, true},
		{"not chosen", map[string]bool{"E": true}, nil, false},
		{"ablated", map[string]bool{"E": true, "M": true}, []string{"further"}, false},
	} {
		if err := passage.SetAblated(c.ablated); err != nil {
			t.Fatal(err)
		}
		w := &writer{chosen: c.chosen, used: quoted{}}
		for _, s := range found[0].Sentences {
			w.used.mark(s) // the opening quoted the best window
		}
		p := &quotes{sources: map[string]bool{}}
		w.furtherWindows(p, found, []string{"E", "M"})
		got := slices.ContainsFunc(p.lines, func(l string) bool { return strings.HasPrefix(l, other) })
		if got != c.want || p.further != p.words || c.want && p.words != len(strings.Fields(other)) {
			t.Errorf("%s: lines %q (%d words, %d further), want the method's window quoted: %v", c.name, p.lines, p.words, p.further, c.want)
		}
	}
	passage.SetAblated(nil)
}
