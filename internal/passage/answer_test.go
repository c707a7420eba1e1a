package passage

import (
	"slices"
	"strings"
	"testing"
)

func TestTypeOf(t *testing.T) {
	for q, want := range map[string]Type{
		"By default, how many loose objects have to pile up before git gc --auto packs them?": Default,
		"How many columns can a table have?":                                                  Number,
		"I rebased a branch. How can I force-push it without clobbering commits?":             HowTo,
		"Which git commit option does that?":                                                  HowTo,
		"What does git worktree lock do?":                                                     Definition,
		"What is the difference between git reset --soft and git reset --mixed?":              Difference,
		"Does git mv commit the rename for me?":                                               YesNo,
		"Which SQLite release first added window functions?":                                  Time,
		"Calc에서 문서를 공유하려면 어떤 메뉴를 사용하나요?":                                                      HowTo,
		"GBR과 GIH의 차이는 무엇인가요?":                                                                Difference,
		"Tell me about Verdi.":                                                                Other,
		// What happens when nothing is chosen is the default.
		"How big are the chunks fs.createReadStream() reads when I don't pass a highWaterMark?": Default,
		"통합 대화 상자에서 함수를 따로 고르지 않으면 어떤 함수로 값이 합쳐지나요?":                                            Default,
		"How do I clone a repository without downloading blobs?":                                HowTo,
		"How can I push when I don't set an upstream branch?":                                   HowTo,
		"Which command lists remotes if I don't pass -v?":                                       HowTo,
		"Why does it fail if I never set HOME?":                                                 Other,
		"문서를 수정하지 않으면 무엇이 저장되나요?":                                                               Other,
		"필드가 자동으로 갱신되지 않을 때 어떤 키를 누르나요?":                                                        HowTo,
		// "What is the …" asks for a definition unless it asks for the
		// default, an extreme amount, or what to type.
		"What is the default stack size of a new thread?":    Default,
		"What is the largest file size a push accepts?":      Number,
		"What is the syntax for creating a view?":            HowTo,
		"What is the Node equivalent of rm -rf?":             HowTo,
		"What is the default?":                               Default,
		"What is a type affinity?":                           Definition,
		"What is the largest city on the river?":             Definition,
		"What is the maximum line width rustfmt formats to?": Number,
	} {
		if got := TypeOf(q); got != want {
			t.Errorf("TypeOf(%q) = %v, want %v", q, got, want)
		}
	}
}

// Korean interrogatives and a bare question ending are not what a
// question is about ("None of the sources mentions 어느, 좋나요").
// "how many", "how much", "how long" and "how often" ask for an amount:
// "many" is no word of
// what the question is about, and a sentence saying it ("tells you how
// many times") holds no more of it.
func TestContentDropsHowMany(t *testing.T) {
	if got := Content("Does cpu_count() tell me how many CPUs my process can use, and how much memory?"); strings.Contains(got, "many") || strings.Contains(got, "much") || !strings.Contains(got, "CPUs") {
		t.Errorf("Content = %q", got)
	}
	if got := Content(`Does it say ("how many") or "How much"?`); strings.Contains(got, "many") || strings.Contains(got, "much") {
		t.Errorf("Content after punctuation = %q", got)
	}
	if got := Content("How long does the server wait, and how often does it retry?"); strings.Contains(got, "long") || strings.Contains(got, "often") || !strings.Contains(got, "retry") {
		t.Errorf("Content = %q", got)
	}
	if got := Content("Many users ask: are there many workers?"); strings.Count(got, "any") != 2 {
		t.Errorf("a many that does not follow how is content: %q", got)
	}
	docs := []Doc{
		{Title: "timeit", Body: "The loop count, which tells you how many times the statement body was run per timing loop repetition."},
		{Title: "os", Body: "cpu_count()\n\nReturn the number of CPUs in the system.\n\nThis number is not equivalent to the number of CPUs the current process can use."},
	}
	// "current process" is written so in the os entry: the phrase rule
	// would decide too.
	Ablate["phrase"] = true
	firstWithAndWithout(t, "content", "Does os.cpu_count() tell me how many CPUs my current process is actually allowed to run on?", docs, 1, 0)
}

// firstWithAndWithout checks that Find's best answer is document with's,
// and document without's when rule is ablated: the rule decides.
func firstWithAndWithout(t *testing.T, rule, q string, docs []Doc, with, without int) {
	t.Helper()
	if found, _ := Find(q, docs, 1); len(found) == 0 || found[0].Doc != with {
		t.Errorf("found %+v, want document %d's window", found, with)
	}
	Ablate[rule] = true
	defer clear(Ablate)
	if found, _ := Find(q, docs, 1); len(found) == 0 || found[0].Doc != without {
		t.Errorf("with %s ablated, found %+v: the rule does not decide here", rule, found)
	}
}

// TestKeyFits: a question that asks which key to press is answered by a
// sentence naming a key the question does not: a function key, a
// combination, a key of the keyboard's names pressed or named as a key;
// neither a question about a table's, a signature's or a file's key asks
// for one, nor a capitalised word before "key" names one.
func TestKeyFits(t *testing.T) {
	for _, c := range []struct {
		q, s string
		fits bool
	}{
		{"Writer에서 조건부 텍스트 필드가 자동으로 갱신되지 않을 때 누를 키는 무엇인가요?", "필드가 자동으로 업데이트되지 않으면 F9 키를 누릅니다.", true},
		{"자동 텍스트 이름을 입력한 뒤 어떤 키를 누르면 항목이 삽입되나요?", "바로 가기를 입력한 다음 F3 키를 누릅니다.", true},
		{"자동 텍스트 이름을 입력한 뒤 어떤 키를 누르면 항목이 삽입되나요?", "이름을 입력하고 Enter를 누릅니다.", true},
		{"What is the keyboard shortcut that pastes without formatting?", "Press Ctrl+Shift+V to paste unformatted text.", true},
		{"Which key do I press to close the dialog?", "Press the Esc key to close it.", true},
		{"Which key do I press to confirm?", "Press Enter to confirm.", true},
		{"What is the keyboard shortcut that pastes without formatting?", "Unformatted text keeps no font or colour.", false},
		{"Which key do I press after F3?", "Type the shortcut, then F3.", false},                                // F3 is the question's own
		{"Which shortcut besides Ctrl+Shift+V pastes unformatted text?", "Press Ctrl+Shift+V.", false},          // so is this
		{"Which key do I press to confirm?", "Set the GPG key with the signing option.", false},                 // no key to press
		{"Which key does Git use to sign tags?", "Press Ctrl+S to save.", false},                                // a signing key
		{"기본 키는 어떻게 지정하나요?", "SQL 키워드는 대소문자를 구분하지 않습니다. F1을 누르면 도움말이 열립니다.", false},                             // a table's key
		{"How many seconds does the refresh take after I press F5?", "Press Ctrl+R to reload the page.", false}, // an amount
		{"If my Cargo.toml has no edition key, which edition is used?", "The default is F2 for now.", false},
	} {
		if got := askedOf(c.q).fit(Unit{Text: c.s}); got != c.fits {
			t.Errorf("%q: %q fits %v, want %v", c.q, c.s, got, c.fits)
		}
	}
	firstWithAndWithout(t, "key", "Writer에서 조건부 텍스트 필드가 자동으로 갱신되지 않을 때 누를 키는 무엇인가요?", []Doc{
		{Title: "조건부 텍스트", Body: "원할 경우 조건부 텍스트 필드가 충족되지 않을 때 표시할 텍스트를 기타 상자에 입력할 수도 있습니다."},
		{Title: "조건부 텍스트를 표시하려면", Body: "필드가 자동으로 업데이트되지 않으면 F9 키를 누릅니다."},
	}, 1, 0)
}

// TestHowToFitsWhatIsTyped: a how-to is answered by what the user
// types, an option or not: keywords in capitals ("NULLS LAST"), a name
// in camelCase ("maxBuffer"), a file's extension (".cjs"), a key and its
// value, code in backticks; not by a word the question says already.
func TestHowToFitsWhatIsTyped(t *testing.T) {
	for _, c := range []struct {
		q, s string
		fits bool
	}{
		{"How do I make NULL values sort last?", "This can be changed using the ASC NULLS LAST syntax.", true},
		{"How do I raise the cap on the output exec collects?", "Set maxBuffer to raise the largest amount of output allowed.", true},
		{"How do I keep one old script as CommonJS?", "Name the old script with .cjs and it stays CommonJS.", true},
		{"How do I delete a directory with everything in it?", "Pass recursive=true to delete it.", true},
		{"How do I stop the watcher?", "Call `close` when done.", true},
		{"How do I set maxBuffer for exec?", "The `maxBuffer` of exec is the largest amount of output allowed.", false},
		{"How do I call the API?", "The HTTP API returns JSON.", false},
		{"How do I keep one old script as CommonJS?", "An old script stays CommonJS when nothing says otherwise.", false},
		{"How do I set maxBuffer for exec?", "The maxBuffer of exec is the largest amount of output allowed.", false},
	} {
		if got := askedOf(c.q).fit(Unit{Text: c.s}); got != c.fits {
			t.Errorf("%q: %q fits %v, want %v", c.q, c.s, got, c.fits)
		}
	}
	firstWithAndWithout(t, "codeword", "How do I make NULL values sort at the end of an ascending order of a column?", []Doc{
		{Title: "SELECT", Body: "NULL values sort first in an ascending order of a column."},
		{Title: "ORDER BY", Body: "NULL values sort last in an ascending order with ASC NULLS LAST."},
	}, 1, 0)
	firstWithAndWithout(t, "codeword", "How do I raise the cap on the output exec collects?", []Doc{
		{Title: "child_process", Body: "The cap on the output exec collects is passed to the callback."},
		{Title: "child_process", Body: "Set maxBuffer to raise the output exec collects."},
	}, 1, 0)
}

func TestContentDropsKoreanQuestionWords(t *testing.T) {
	got := Content("사진을 저장할 때 어느 형식이 좋나요?")
	for _, w := range []string{"어느", "좋나요"} {
		if strings.Contains(got, w) {
			t.Errorf("Content kept %q: %q", w, got)
		}
	}
	if !strings.Contains(got, "형식이") || !strings.Contains(got, "사진을") {
		t.Errorf("Content dropped the subject: %q", got)
	}
	if got := Content("요금은 언제 납부하나요?"); !strings.Contains(got, "납부하나요") {
		t.Errorf("a predicate with a stem of two syllables is content: %q", got)
	}
	// Each clause that asks closes on a question ending; a noun a comma
	// ends is content.
	got = Content("셀에는 보호 속성이 켜져 있나요, 꺼져 있나요?")
	if strings.Contains(got, "있나요") || !strings.Contains(got, "켜져") || !strings.Contains(got, "꺼져") {
		t.Errorf("Content of two asking clauses: %q", got)
	}
	if got := Content("설치에 무엇이 필요, 무엇이 선택인가요?"); !strings.Contains(got, "필요") {
		t.Errorf("Content dropped a noun a comma ends: %q", got)
	}
}

func TestMarked(t *testing.T) {
	got := Marked("How do I set up Git LFS so that all .psd files in my repo use gc.auto and --reset-author? Writer에서 2.4에 GBR과 GIH는")
	for _, want := range []string{"Git LFS", ".psd", "gc.auto", "--reset-author", "Writer", "2.4", "GBR", "GIH"} {
		if !slices.Contains(got, want) {
			t.Errorf("Marked lacks %q: %q", want, got)
		}
	}
	if slices.Contains(got, "How") || slices.Contains(got, "I") {
		t.Errorf("Marked holds a question word: %q", got)
	}
	// A call names its function; "I'm" names no one.
	if got := Marked("Will fs.watch(dir, { recursive: true }) report it while I'm away?"); !slices.Equal(got, []string{"fs.watch"}) {
		t.Errorf("Marked = %q, want the function's name alone", got)
	}
	// A name is quoted as the question writes it.
	if got := Marked("It fails with ECONNREFUSED ::1 since Node 18."); !slices.Equal(got, []string{"ECONNREFUSED ::1", "Node 18"}) {
		t.Errorf("Marked = %q, want the names as written", got)
	}
}

// A number in a name is held as a version: "Node 18" is written
// "Node.js v18.3.1".
func TestMissingMarkedVersion(t *testing.T) {
	docs := []Doc{{Title: "Child process | Node.js v18.3.1 Documentation", Body: "The child_process module spawns subprocesses."}}
	if _, got := Find("Does Node 18 kill it?", docs, 1); len(got) != 0 {
		t.Errorf("missing %q, want none", got)
	}
	if _, got := Find("Does Node 20 kill it?", docs, 1); !slices.Equal(got, []string{"Node 20"}) {
		t.Errorf("missing %q, want Node 20", got)
	}
}

// A release's number in a name is held where it is written as one: a
// page on Python 3.0 that names 3.11 does not write Python 3.11.0.
func TestMissingMarkedInRow(t *testing.T) {
	other := Doc{Title: "What's New In Python 3.0", Body: "Python 3.0 was released on December 3, 2008. Python 3.11 is faster."}
	if _, got := Find("On what date was Python 3.11.0 first released?", []Doc{other}, 1); !slices.Equal(got, []string{"Python 3.11.0"}) {
		t.Errorf("missing %q, want Python 3.11.0", got)
	}
	this := Doc{Title: "Changelog", Body: "Python 3.11.0 final was released on October 24, 2022."}
	if _, got := Find("On what date was Python 3.11.0 first released?", []Doc{other, this}, 1); len(got) != 0 {
		t.Errorf("missing %q, want none", got)
	}
	for _, tc := range []struct {
		name, body string
		held       bool
	}{
		{"PHP 7.4", "PHP 7 and 4 more releases.", false}, // the parts apart, a stop word between
		{"PHP 7.4", "PHP 17.4 and PHP 7.45 shipped.", false},
		{"PHP 7.4", "PHP v7.4.3 shipped.", true},
		{"PHP v7.4", "PHP 7.4 shipped.", true},
		{"PHP V7.4.", "PHP 7.4 shipped.", true},
		{"PHP 7.4", "The release was PHP 7.4. It shipped late.", true},
	} {
		_, got := Find("Does "+tc.name+" ship it?", []Doc{{Title: "PHP", Body: tc.body}}, 1)
		if held := len(got) == 0; held != tc.held {
			t.Errorf("%s in %q: missing %q, want held %v", tc.name, tc.body, got, tc.held)
		}
	}
}

// The answer to a default is the sentence that states it, beside the
// one that matches the question best; the window holds both.
func TestFindDefaultWindow(t *testing.T) {
	docs := []Doc{
		{Title: "git-config", Body: settings},
		{Title: "git-gc", Body: "Setting this to 0 disables not only automatic packing based on the number of loose objects, but any other heuristic git gc --auto will otherwise use to determine if there's work to do."},
	}
	found, missing := Find("By default, how many loose objects have to pile up before an automatic git gc --auto packs them?", docs, 2)
	if len(found) == 0 || len(missing) != 0 {
		t.Fatalf("found %+v, missing %q", found, missing)
	}
	text := strings.Join(found[0].Sentences, " ")
	if !strings.Contains(text, "6700") || !strings.Contains(text, "loose objects") || found[0].Heading != "gc.auto" || !found[0].Fits {
		t.Errorf("best answer %+v, want the gc.auto window with its default", found[0])
	}
}

// A question naming what no document holds is answered with low
// confidence, whatever else matches.
func TestConfidenceMissingName(t *testing.T) {
	docs := []Doc{{Title: "gitattributes", Body: "Git tracks files in the repository. Every file in the working tree can be tracked or untracked by git."}}
	q := "How do I track all .psd files in my repository with Git LFS?"
	found, missing := Find(q, docs, 1)
	if !slices.Contains(missing, ".psd") {
		t.Fatalf("missing = %q, want .psd among them", missing)
	}
	if c := Confidence(q, Answers(found), missing); c >= Weights.Answered {
		t.Errorf("confidence %.2f for a question about a file type no document names", c)
	}
	q = "Can every file in the working tree be tracked by git?"
	found, missing = Find(q, docs, 1)
	if c := Confidence(q, Answers(found), missing); c < Weights.Answered {
		t.Errorf("confidence %.2f for a question the document answers", c)
	}
}

func FuzzFind(f *testing.F) {
	f.Add(settings, "By default, how many loose objects?")
	f.Add("실행 취소\n\n편집 → 실행 취소를 선택합니다.", "어떻게 취소하나요?")
	f.Add("Limits:\n| Name | Default |\n| --- | --- |\n| SQLITE_MAX_ATTACHED | 10 |\n\nThe default is 10.", "What is the default of SQLITE_MAX_ATTACHED?")
	f.Add("PASSWORD_RESET_TIMEOUT\n\nNew in Django 3.1.\n\nDefault: 259200 (3 days, in seconds)\n\nThe number of seconds a password reset link is valid for.", "By default, how long does a password reset link stay usable?")
	f.Fuzz(func(t *testing.T, body, question string) {
		found, missing := Find(question, []Doc{{Title: "t", Body: body}, {Body: body + "\n\nmore"}}, 3)
		c := Confidence(question, Answers(found), missing)
		if c < 0 || c > 1 {
			t.Fatalf("confidence %v out of [0, 1]", c)
		}
		for _, a := range found {
			for _, s := range a.Sentences {
				if s == "" {
					t.Fatal("an empty sentence quoted")
				}
			}
		}
	})
}

// A sentence that goes on from the answer ("Instead, …") is quoted with
// it, and does not count in its share of the question.
func TestFindContinuation(t *testing.T) {
	docs := []Doc{{Title: "Datatypes In SQLite", Body: "SQLite does not have a separate Boolean storage class. Instead, Boolean values are stored as integers 0 (false) and 1 (true).\n\nDate and time values are stored as text."}}
	q := "Does SQLite have a dedicated boolean storage class?"
	found, _ := Find(q, docs, 1)
	if len(found) == 0 || len(found[0].Sentences) != 2 || !strings.HasPrefix(found[0].Sentences[1], "Instead,") {
		t.Fatalf("found %+v, want the answer and the sentence that goes on from it", found)
	}
	Ablate["continued"] = true
	defer delete(Ablate, "continued")
	alone, _ := Find(q, docs, 1)
	if len(alone) == 0 || len(alone[0].Sentences) != 1 || alone[0].Coverage != found[0].Coverage {
		t.Errorf("without the rule %+v; the continuation must not change the share (%v)", alone, found[0].Coverage)
	}
}

func TestContinues(t *testing.T) {
	for s, want := range map[string]bool{
		"Instead, Boolean values are stored as integers.": true,
		"So the default is 10.":                           true,
		"So-called shadow tables hold them.":              false,
		"따라서 실행 취소 이력은 모두 사라지게 됩니다.":                      true,
		"즉시 저장됩니다.":                                       false,
		"Insteadof is an option.":                         false,
	} {
		if got := continues(s); got != want {
			t.Errorf("continues(%q) = %v, want %v", s, got, want)
		}
	}
}

// A sentence that holds no kind of answer asked for is quoted with its
// paragraph's next sentence, or its previous one when it closes its
// paragraph, marked as context and not counted in its share; a sentence
// that holds the kind asked for, or stands alone in its paragraph, is
// quoted alone.
func TestFindNeighbour(t *testing.T) {
	cases := []struct {
		name, body, question string
		want                 []string // the window's sentences
		context              int      // the index of the context sentence, or -1
	}{{
		name:     "next",
		body:     "The edition key in Cargo.toml indicates which edition the compiler should use for your code. If the key is absent, Rust uses 2015 for backward compatibility reasons. Editions are opt in.\n\nCargo builds crates.",
		question: "Which edition does the edition key in Cargo.toml indicate for the compiler?",
		want:     []string{"The edition key in Cargo.toml indicates which edition the compiler should use for your code.", "If the key is absent, Rust uses 2015 for backward compatibility reasons."},
		context:  1,
	}, {
		name:     "previous when it closes its paragraph",
		body:     "Each pixel is made of three components. RGB mode stores red, green and blue components for every pixel of the layer.\n\nIndexed mode uses a palette.",
		question: "Which components does RGB mode store for each pixel?",
		want:     []string{"Each pixel is made of three components.", "RGB mode stores red, green and blue components for every pixel of the layer."},
		context:  0,
	}, {
		name:     "alone in its paragraph",
		body:     "RGB mode stores red, green and blue components for every pixel of the layer.\n\nIndexed mode uses a palette of colours.",
		question: "Which components does RGB mode store for each pixel?",
		want:     []string{"RGB mode stores red, green and blue components for every pixel of the layer."},
		context:  -1,
	}, {
		name:     "a neighbour that says nothing by itself",
		body:     "The edition key in Cargo.toml indicates which edition the compiler should use for your code. For example:\n\nEditions are opt in.",
		question: "Which edition does the edition key in Cargo.toml indicate for the compiler?",
		want:     []string{"The edition key in Cargo.toml indicates which edition the compiler should use for your code."},
		context:  -1,
	}, {
		name:     "a next sentence that says nothing, not the previous instead",
		body:     "Editions are opt in for every crate. The edition key in Cargo.toml indicates which edition the compiler should use for your code. See cargo(1).\n\nCargo builds crates.",
		question: "Which edition does the edition key in Cargo.toml indicate for the compiler?",
		want:     []string{"The edition key in Cargo.toml indicates which edition the compiler should use for your code."},
		context:  -1,
	}, {
		name:     "previous when it points back",
		body:     "By default, the map uses a function called SipHash that resists flooding attacks. This is not the fastest hashing algorithm available, but the security is worth the cost. You can switch to another hasher.\n\nMaps grow.",
		question: "Why is the hashing algorithm not the fastest available?",
		want:     []string{"By default, the map uses a function called SipHash that resists flooding attacks.", "This is not the fastest hashing algorithm available, but the security is worth the cost."},
		context:  0,
	}, {
		name:     "the next when the one it points back at says nothing",
		body:     "Default: none. This is not the fastest hashing algorithm available, but the security is worth the cost. You can switch to another hasher.\n\nMaps grow.",
		question: "Why is the hashing algorithm not the fastest available?",
		want:     []string{"This is not the fastest hashing algorithm available, but the security is worth the cost.", "You can switch to another hasher."},
		context:  1,
	}, {
		name:     "a sentence of the kind asked for",
		body:     "Git 2.23 introduced git switch in 2019. It is still experimental.\n\nOther commands.",
		question: "When was git switch introduced?",
		want:     []string{"Git 2.23 introduced git switch in 2019."},
		context:  -1,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := best(t, c.question, Doc{Body: c.body})
			if !slices.Equal(a.Sentences, c.want) {
				t.Fatalf("sentences %q, want %q", a.Sentences, c.want)
			}
			for i := range a.Sentences {
				if a.Context[i] != (i == c.context) {
					t.Errorf("Context = %v, want sentence %d only", a.Context, c.context)
				}
			}
			if c.context < 0 {
				return
			}
			Ablate["context"] = true
			defer delete(Ablate, "context")
			alone, _ := Find(c.question, []Doc{{Body: c.body}}, 1)
			if len(alone) == 0 || len(alone[0].Sentences) != 1 || alone[0].Coverage != a.Coverage {
				t.Errorf("without the rule %+v; the neighbour must not change the share (%v)", alone, a.Coverage)
			}
		})
	}
}

// best is the answer Find puts first for a question over one document;
// the test fails when it finds none.
func best(t *testing.T, question string, doc Doc) Answer {
	t.Helper()
	found, _ := Find(question, []Doc{doc}, 1)
	if len(found) == 0 {
		t.Fatal("nothing found")
	}
	return found[0]
}

func TestSaid(t *testing.T) {
	for s, want := range map[string]bool{
		"Rust uses 2015 then.":        true,
		"For example:":                false,
		"See git-gc(1).":              false,
		"Default: false.":             false,
		"The options are as follows:": false,
		"각 요소는 0-255의 농도값을 갖습니다.": true,
		"예를 들어：": false,
		"既定のエディションは2015です。": true,
		"例如：": false,
	} {
		if got := said(s); got != want {
			t.Errorf("said(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestValueNeedsAValue: a question for a date is not answered by a
// passage that holds its words and a version number but no date; one for
// a release needs a release or a year, one for an amount an amount, in
// figures or in words.
func TestValueNeedsAValue(t *testing.T) {
	for _, c := range []struct {
		question, body string
		answered       bool
	}{
		{"On what date was GIMP 3.0 released?", "GIMP 3.0 was released after a long development. Every new feature of 2.10 will be part of 3.0.\n\nBrushes load at start.", false},
		{"On what date was GIMP 3.0 released?", "GIMP 3.0 was released on March 16, 2025, after a long development.\n\nBrushes load at start.", true},
		{"김프 3.0의 출시일은 언제인가요?", "김프 3.0은 오랜 개발 끝에 출시되었습니다. 2.10의 새 기능은 모두 3.0의 일부가 됩니다.\n\n붓을 불러옵니다.", false},
		{"김프 3.0의 출시일은 언제인가요?", "김프 3.0은 2025년 3월 16일에 출시되었습니다.\n\n붓을 불러옵니다.", true},
		// A release is not a date: a version answers it.
		{"Which GIMP release first added the healing tool?", "The healing tool was added in GIMP 2.2 for retouching photos.\n\nBrushes load at start.", true},
		// An amount is not a year.
		{"On what date was the GIMP 3.0 brush cache released?", "The GIMP 3.0 brush cache was released with a size of 2048 bytes.\n\nBrushes load at start.", false},
		// A word ending in 일 (파일, a file) does not ask for a date.
		{"김프 백업 파일은 언제 만들어지나요?", "김프 백업 파일은 이미지를 저장할 때마다 자동으로 만들어집니다.\n\n붓을 불러옵니다.", true},
		{"Which GIMP release first added the healing tool?", "The healing tool was added to GIMP for retouching photos.\n\nBrushes load at start.", false},
		{"How many docks does GIMP open at its first start?", "GIMP opens its docks at its first start, beside the image window.\n\nBrushes load at start.", false},
		{"How many docks does GIMP open at its first start?", "GIMP opens three docks at its first start, beside the image window.\n\nBrushes load at start.", true},
		{"How often can a GIMP brush preset be applied to one stroke?", "A GIMP brush preset can be applied only once to one stroke.\n\nBrushes load at start.", true},
		{"김프를 처음 실행했을 때 독은 몇 개인가요?", "김프를 처음 실행하면 세 개의 독이 열립니다.\n\n붓을 불러옵니다.", true},
		{"김프를 처음 실행했을 때 독은 몇 개인가요?", "김프를 처음 실행하면 독이 이미지 창 옆에 열립니다.\n\n붓을 불러옵니다.", false},
		{"김프를 처음 실행했을 때 독은 몇 개인가요?", "김프를 처음 실행하면 두 번째 독이 이미지 창 옆에 열립니다.\n\n붓을 불러옵니다.", false},
		// "ten" is no word of "often".
		{"How often does GIMP write its backup file?", "GIMP writes its backup file every ten minutes.\n\nBrushes load at start.", true},
		// Asking whether, not how many.
		{"Is there a limit on how long a GIMP brush name can be?", "GIMP does not limit the length of a brush name.\n\nBrushes load at start.", true},
		// A bare "when" asks for no value; "what year" for one.
		{"When does GIMP write its backup file?", "GIMP writes its backup file whenever an image is saved.\n\nBrushes load at start.", true},
		{"What year did GIMP add the healing tool?", "The healing tool was added to GIMP for retouching photos.\n\nBrushes load at start.", false},
	} {
		found, missing := Find(c.question, []Doc{{Title: "GIMP", Body: c.body}}, 3)
		conf := Confidence(c.question, Answers(found), missing)
		if got := conf > 0; got != c.answered {
			t.Errorf("%q over %q: confidence %v, answered %v, want %v", c.question, c.body, conf, got, c.answered)
		}
	}
}

// TestWindowQuotesWhatItsColonIntroduces: a window whose last sentence
// ends in a colon is quoted with what it introduces, here a line of code.
func TestWindowQuotesWhatItsColonIntroduces(t *testing.T) {
	body := "Custom macro attributes can be defined only in top-level gitattributes files. The built-in macro attribute \"binary\" is equivalent to:\n\n```text\n[attr]binary -diff -merge -text\n```\n\nNOTES\n\nGit does not follow symbolic links."
	a := best(t, "What does the built-in binary macro attribute in gitattributes files set?", Doc{Title: "gitattributes(5)", Body: body})
	if got := a.Sentences[len(a.Sentences)-1]; got != "[attr]binary -diff -merge -text" || !a.Code[len(a.Code)-1] {
		t.Errorf("window %q (code %v), want it to end with the line of code", a.Sentences, a.Code)
	}
}

// A command alone between a sentence's colon and prose reads as a term
// (Unit.Term); the sentence's window still quotes it, as code.
func TestWindowQuotesTheCommandItsColonIntroduces(t *testing.T) {
	body := "To amend the last commit without editing its message, run:\n\ngit commit --amend --no-edit\n\nThe staged changes are added to the commit."
	a := best(t, "How do I amend the last commit without editing its message?", Doc{Title: "git-commit(1)", Body: body})
	if len(a.Sentences) < 2 || a.Sentences[1] != "git commit --amend --no-edit" || !a.Code[1] {
		t.Errorf("window %q (code %v), want the command after the sentence, as code", a.Sentences, a.Code)
	}
}

// TestCodeColonIntroducesNothing: a line of code ending in a colon does
// not pull the prose after it into a window.
func TestCodeColonIntroducesNothing(t *testing.T) {
	us := []Unit{
		{Text: "Walk the tree with a loop over the entries of a folder.", Kind: Sentence, Heading: -1, Block: 0},
		{Text: "for name in os.listdir(path):", Kind: Code, Heading: -1, Block: 1},
		{Text: "Symbolic links are listed as files and never followed.", Kind: Sentence, Heading: -1, Block: 2},
	}
	if j := continuation(us, []int{0, 1}); j != -1 {
		t.Errorf("continuation = %d, want -1", j)
	}
	us[1] = Unit{Text: "The loop reads:", Kind: Sentence, Heading: -1, Block: 0}
	if j := continuation(us, []int{0, 1}); j != 2 {
		t.Errorf("continuation = %d, want 2", j)
	}
}

// TestHowToQuotesTheStepThatNamesTheMenu: a procedure's steps are
// paragraphs of their own; a how-to answered by a step that names no
// menu is quoted with the step under the same heading that does.
func TestHowToQuotesTheStepThatNamesTheMenu(t *testing.T) {
	body := "고유 시나리오 만들기\n\n시나리오를 만들려면 시나리오에 데이터를 제공하는 모든 셀을 선택합니다.\n\n여기에서는 다음 단계에 따라 추가 시나리오를 만들 수 있습니다.\n\n도구 - 시나리오를 선택합니다. 시나리오 만들기 대화 상자가 나타납니다.\n\n시나리오 사용\n\n내비게이터에 시나리오가 나열됩니다."
	a := best(t, "Calc에서 새 시나리오를 만들려면 셀을 선택한 뒤 어떤 메뉴를 고르나요?", Doc{Title: "시나리오", Body: body})
	if !slices.Contains(a.Sentences, "도구 - 시나리오를 선택합니다.") {
		t.Errorf("window %q does not quote the step that names the menu", a.Sentences)
	}
	// The step holds the kind of answer asked for, as a sentence of the
	// window would: the window wins over another document's sentence
	// that names a menu but holds less of the question.
	docs := []Doc{
		{Title: "시나리오 사용", Body: body},
		{Title: "개체 뒤로", Body: "Choose Shape - Arrange - Behind Object\n\n선택한 개체의 콘텍스트 메뉴를 열고 배치 - 개체 뒤를 선택합니다."},
	}
	firstWithAndWithout(t, "context", "Calc에서 새 시나리오를 만들려면 셀을 선택한 뒤 어떤 메뉴를 고르나요?", docs, 0, 1)
}

// Two words of a question the sources write as one ("thread pool",
// "threadpool"; "request timeout", "requestTimeout") are held by a
// sentence that writes them so, and only together: "thread" alone is
// not "threadpool".
func TestFindJoinedWords(t *testing.T) {
	docs := []Doc{
		{Title: "Worker threads", Body: "Each worker thread runs its own event loop and shares memory through a SharedArrayBuffer pool of buffers."},
		{Title: "Environment variables", Body: "UV_THREADPOOL_SIZE sets the number of threads in libuv's threadpool to the size given; the default is 4."},
	}
	question := "How large is libuv's thread pool by default, and how do I make it bigger?"
	found, _ := Find(question, docs, 2)
	if len(found) == 0 || found[0].Doc != 1 {
		t.Fatalf("found %+v, want the threadpool sentence first", found)
	}
	joined := found[0].Coverage
	if held := found[0].held; !held["thread"] || !held["pool"] {
		t.Errorf("the threadpool window does not hold the words it holds joined (for the next answer's gain): %v", held)
	}
	Ablate["joined"] = true
	defer delete(Ablate, "joined")
	found, _ = Find(question, docs, 2)
	i := slices.IndexFunc(found, func(a Answer) bool { return a.Doc == 1 })
	if i < 0 || found[i].Coverage >= joined {
		t.Errorf("the threadpool sentence holds %.2f of the question with the joined words, %+v without", joined, found)
	}
	if got := joinedTerm("thread", "pool"); got != "threadpool" {
		t.Errorf(`joinedTerm("thread", "pool") = %q`, got)
	}
	for _, pair := range [][2]string{{"thread", "pools2"}, {"the", "pool"}, {"스레드", "풀"}, {"make", "it"}, {"connect", "ion"}} {
		if got := joinedTerm(pair[0], pair[1]); got != "" {
			t.Errorf("joinedTerm(%q, %q) = %q, want none", pair[0], pair[1], got)
		}
	}
}

// weighed reads a question over docs as Find does.
func weighed(question string, docs []Doc) *finder {
	f := &finder{asked: askedOf(question)}
	f.read(docs)
	f.weigh(question, Content(question))
	return f
}

// joinedOf is the joined terms of the question's word whose terms are
// ts, or nil.
func (f *finder) joinedOf(ts ...string) []string {
	for _, qw := range f.words {
		if slices.Equal(qw.terms, ts) {
			return qw.joined
		}
	}
	return nil
}

// TestWeighJoined: a word is joined with the one beside it also when it
// was asked before ("pool … thread pool"), never across a stop word
// ("size of pool" is not "sizepool"), and a word a sentence holds only
// joined is held: it does not weigh less as a word none holds.
func TestWeighJoined(t *testing.T) {
	docs := []Doc{{Body: "The threadpool has a fixed sizepool of four workers, and the uv loop runs on it."}}
	f := weighed("Which pool size does libuv use, and how large is the thread pool?", docs)
	if got := f.joinedOf("thread"); !slices.Equal(got, []string{"threadpool"}) {
		t.Errorf("thread joined %q, want threadpool", got)
	}
	if got := f.joinedOf("pool"); !slices.Contains(got, "threadpool") {
		t.Errorf("pool, asked before, joined %q, want threadpool among them", got)
	}
	if got := weighed("How large is the thread, pool or queue of libuv?", docs).joinedOf("thread"); len(got) != 0 {
		t.Errorf("thread joined %q across a comma", got)
	}
	f = weighed("What is the size of pool that libuv keeps for work?", docs)
	if got := f.joinedOf("size"); len(got) != 0 {
		t.Errorf("size joined %q across a stop word", got)
	}
	// A long question: no sentence holds "thread" or "pool" apart.
	q := "My server does many parallel crypto calls; how large is the thread pool by default?"
	f = weighed(q, docs)
	Ablate["joined"] = true
	g := weighed(q, docs)
	delete(Ablate, "joined")
	for _, w := range []string{"thread", "pool"} {
		i := slices.IndexFunc(f.words, func(qw qword) bool { return slices.Equal(qw.terms, []string{w}) })
		j := slices.IndexFunc(g.words, func(qw qword) bool { return slices.Equal(qw.terms, []string{w}) })
		if i < 0 || j < 0 || f.words[i].w <= g.words[j].w {
			t.Errorf("%s held joined weighs as a word none holds (Weights.Unheld)", w)
		}
	}
}

// The prose under a function's or an option's name is about it: the
// name counts for the window as its heading, and the answer carries it
// (Answer.Term) to be quoted with it.
func TestFindUnderTerm(t *testing.T) {
	doc := Doc{Title: "os — Miscellaneous operating system interfaces", Body: "Miscellaneous System Information\n\n" +
		"cpu_count()\n\nReturn the number of logical CPUs in the system. Returns None if undetermined.\n\n" +
		"This number is not equivalent to the number of CPUs the current process can use. The number of usable CPUs can be obtained with len(os.sched_getaffinity(0))\n\n" +
		"getloadavg()\n\nReturn the number of processes in the system run queue averaged over the last 1, 5, and 15 minutes."}
	q := "Does os.cpu_count() tell me how many CPUs my current process is actually allowed to run on?"
	a := best(t, q, doc)
	if !strings.HasPrefix(a.Sentences[0], "This number is not equivalent") || a.Term != "cpu_count()" {
		t.Errorf("answer %q under %q, want the one that says which CPUs, under cpu_count()", a.Sentences, a.Term)
	}
	Ablate["term"] = true
	defer clear(Ablate)
	if b := best(t, q, doc); b.Coverage >= a.Coverage || b.Term != "" {
		t.Errorf("with term ablated: %q under %q holds %.2f, want less than %.2f", b.Sentences, b.Term, b.Coverage, a.Coverage)
	}
}

// A window that opens by pointing back at the sentence before it is
// quoted after that sentence, marked as its context: "This tool is …"
// alone does not say which tool.
func TestFindQuotesWhatAWindowPointsBackAt(t *testing.T) {
	for _, tc := range []struct {
		name, question, body, want string
	}{
		{"noun", "Which tool looks at the surrounding colours to work out what to fix?",
			"The Heal tool was added in GIMP 2.4. This tool looks at the surrounding colours to work out what to fix and how. It was written by a volunteer.", "The Heal tool was added in GIMP 2.4."},
		{"pronoun", "What does the write-fetch-head option do by default?",
			"Write the list of remote refs fetched in the FETCH_HEAD file. This is the default for the write-fetch-head option.", "Write the list of remote refs fetched in the FETCH_HEAD file."},
		{"korean pronoun", "주변 색을 참고해 수정할 곳을 스스로 알아내는 기능은 무엇인가요?",
			"복원 도구는 김프 2.4에 새롭게 추가된 기능입니다. 이것은 주변 색을 참고하여 수정할 곳을 스스로 알아낼 정도로 훌륭합니다.", "복원 도구는 김프 2.4에 새롭게 추가된 기능입니다."},
		{"korean", "주변 색을 참고해 수정할 곳을 스스로 알아내는 도구는 무엇인가요?",
			"복원 도구는 김프 2.4에 새롭게 추가된 도구입니다. 이 도구는 주변 색을 참고하여 수정할 곳을 스스로 알아낼 정도로 훌륭합니다.", "복원 도구는 김프 2.4에 새롭게 추가된 도구입니다."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, _ := Find(tc.question, []Doc{{Body: tc.body}}, 1)
			if len(found) != 1 {
				t.Fatalf("found %d answers", len(found))
			}
			a := found[0]
			if !a.Back || len(a.Sentences) != 2 || a.Sentences[0] != tc.want || !a.Context[0] || a.Context[1] {
				t.Errorf("answer = %q (context %v, back %v), want %q first, as context", a.Sentences, a.Context, a.Back, tc.want)
			}
		})
	}
	// A demonstrative before a noun the sentence before does not hold
	// names its own subject.
	found, _ := Find("Which option makes the push atomic?", []Doc{{Body: "Remotes are listed by the remote command. This option makes the push atomic on the remote side. Servers must support it."}}, 1)
	if len(found) != 1 || found[0].Back || !strings.HasPrefix(found[0].Sentences[0], "This option") {
		t.Errorf("answer = %+v, want the window first, not what comes before it", found)
	}
	Ablate["back"] = true
	defer delete(Ablate, "back")
	found, _ = Find("Which tool looks at the surrounding colours to work out what to fix?", []Doc{{Body: "The Heal tool was added in GIMP 2.4. This tool looks at the surrounding colours to work out what to fix and how. It was written by a volunteer."}}, 1)
	if len(found) != 1 || found[0].Back || !strings.HasPrefix(found[0].Sentences[0], "This tool") {
		t.Errorf("ablated: answer = %+v, want the window first, no antecedent", found)
	}
}

// A window nearly as good as the best is quoted beside it though it
// holds no word of the question the best does not: the one holding more
// of the question's words may only restate it.
func TestFindQuotesANearlyAsGoodAlternative(t *testing.T) {
	q := "What does adding a RETURNING clause to an INSERT statement do?"
	docs := []Doc{
		{Body: "The values emitted by the RETURNING clause of an INSERT statement are the values as seen by the top-level statement."},
		{Body: "The effect of the RETURNING clause is to cause the INSERT statement to return one result row for each row inserted."},
		{Body: "Triggers run for each row of an INSERT."},
	}
	found, _ := Find(q, docs, MaxQuoted)
	got := Answers(found)
	if len(got) != 2 || got[0].Doc != 0 || got[1].Doc != 1 {
		t.Fatalf("answers = %+v, want documents 0 and 1", got)
	}
	if found[1].Gain < Weights.Gain {
		t.Errorf("the alternative's Gain = %v, want at least %v", found[1].Gain, Weights.Gain)
	}
	if got := answersAblated("alternative", q, docs); len(got) != 1 {
		t.Errorf("ablated: %d answers, want the best alone", len(got))
	}
}

// answersAblated is what Answers keeps of Find's answers with a rule
// switched off.
func answersAblated(rule, q string, docs []Doc) []Answer {
	Ablate[rule] = true
	defer delete(Ablate, rule)
	found, _ := Find(q, docs, MaxQuoted)
	return Answers(found)
}

// A document's runner-up, the best of its windows that shares no
// sentence with its best, is an alternative as another document's best
// is, unless that best holds the kind of answer asked for; it is never
// quoted for what it adds.
func TestFindQuotesADocumentsRunnerUp(t *testing.T) {
	docs := []Doc{{Body: "The values emitted by the RETURNING clause of an INSERT statement are the values as seen by the top-level statement.\n\n" +
		"Triggers fire for each row.\n\n" +
		"The effect of the RETURNING clause is to cause the INSERT statement to return one result row for each row inserted."}}
	q := "Tell me about the RETURNING clause of an INSERT statement."
	found, _ := Find(q, docs, MaxQuoted)
	got := Answers(found)
	if len(got) != 2 || got[0].Doc != 0 || got[1].Doc != 0 || got[0].Fits || !strings.HasPrefix(got[1].Sentences[0], "The effect") {
		t.Fatalf("answers = %+v, want the document's two windows", got)
	}
	// "What does … do?" is answered by a sentence saying what it is
	// or does: the best fits, and its page's other window is not quoted.
	found, _ = Find("What does adding a RETURNING clause to an INSERT statement do?", docs, MaxQuoted)
	if got := Answers(found); len(got) != 1 || !got[0].Fits {
		t.Errorf("beside a best that fits: %+v, want the best alone", got)
	}
	if got := answersAblated("alternative", q, docs); len(got) != 1 {
		t.Errorf("ablated: %d answers, want one", len(got))
	}
}

// The first alternative comes right after the best, ahead of a window
// that adds a word of the question; a further alternative counts as
// adding Weights.Gain, after it. A document's runner-up is never quoted
// for a word it adds alone.
func TestFindOrdersAlternatives(t *testing.T) {
	q := "Tell me about the RETURNING clause of an INSERT statement and triggers."
	docs := []Doc{
		{Body: "The values emitted by the RETURNING clause of an INSERT statement are the values seen by the top-level statement."},
		{Body: "Triggers may change rows later."},
		{Body: "The effect of the RETURNING clause is to make the INSERT statement return one row for each row inserted."},
		{Body: "A RETURNING clause may follow an INSERT statement, written at its end."},
	}
	found, _ := Find(q, docs, 4)
	got := Answers(found)
	docsOf := func(as []Answer) []int {
		var ds []int
		for _, a := range as {
			ds = append(ds, a.Doc)
		}
		return ds
	}
	if ds := docsOf(got); len(ds) < 4 || ds[0] != 0 || ds[1] != 2 || ds[2] != 1 || ds[3] != 3 {
		t.Fatalf("answers from documents %v, want 0, 2 (the alternative), 1 (it adds \"triggers\"), 3", ds)
	}
	if got[3].Gain < Weights.Gain {
		t.Errorf("the second alternative's Gain = %v, want at least %v", got[3].Gain, Weights.Gain)
	}
	// A document's runner-up that adds "triggers" but scores far below
	// the best is not quoted for it.
	one := []Doc{{Body: "The values emitted by the RETURNING clause of an INSERT statement are the values seen by the top-level statement.\n\nTriggers may change rows later."}}
	found, _ = Find(q, one, MaxQuoted)
	if got := Answers(found); len(got) != 1 {
		t.Errorf("answers = %+v, want the best alone", got)
	}
}

// A runner-up that comes before its document's best, in the page or in
// the order the windows are scored, is still found.
func TestFindRunnerUpBeforeTheBest(t *testing.T) {
	q := "Tell me about the RETURNING clause of an INSERT statement."
	docs := []Doc{{Body: "The values emitted by the RETURNING clause are the values seen by the top-level statement. Triggers fire for each row of an INSERT statement.\n\n" +
		"An INSERT statement writes new rows into a table. The effect of the RETURNING clause of an INSERT statement is to return one row for each row inserted."}}
	found, _ := Find(q, docs, MaxQuoted)
	got := Answers(found)
	if len(got) != 2 || got[0].Doc != 0 || got[1].Doc != 0 || got[0].overlaps(got[1]) {
		t.Fatalf("answers = %+v, want the document's best and its runner-up", got)
	}
}

// A Korean word is held by its stem: "공유하려면" by "공유를", "메뉴를" by
// "메뉴에서"; its ending's syllable pairs, which another verb's ending
// shares ("저장하려면"), hold nothing of what it asks.
func TestFindHoldsAKoreanWordByItsStem(t *testing.T) {
	docs := []Doc{{Body: "저장하려면 파일 메뉴를 엽니다.\n\n도구 메뉴에서 문서 공유를 선택합니다."}}
	q := "공유하려면 어느 메뉴를 선택하나요?"
	found, _ := Find(q, docs, 1)
	if len(found) != 1 || !strings.HasPrefix(found[0].Sentences[0], "도구 메뉴에서") || found[0].Coverage != 1 {
		t.Fatalf("found %+v, want the sentence holding every stem, whole", found)
	}
	if got := answersAblated("stem", q, docs); len(got) == 0 || got[0].Coverage >= 1 {
		t.Errorf("ablated: %+v, want the stems unheld", got)
	}
	// A window holding every stem holds the word whole: a second that
	// holds the ending's pairs adds nothing to it.
	docs = []Doc{{Body: "도구 메뉴에서 문서 공유를 선택합니다."}, {Body: "저장하려면 파일 메뉴를 엽니다."}}
	if found, _ := Find(q, docs, MaxQuoted); len(Answers(found)) != 1 {
		t.Errorf("answers %+v, want the one holding every stem", Answers(found))
	}
}

// A call's signature that gives its parameters' defaults is the entry's
// fields written in its name: a question for a default or an amount is
// answered by the entry's prose, quoted under the signature, rather than
// by a sentence elsewhere that holds more of the question's words.
func TestSignatureGivesTheDefault(t *testing.T) {
	docs := []Doc{{Title: "functools", Body: "@functools.lru_cache(maxsize=128, typed=False)\n\n" +
		"Decorator to wrap a function with a memoizing callable that saves up to the maxsize most recent calls. " +
		"It can save time when an expensive function is periodically called with the same arguments.\n\n" +
		"Note, type specificity applies only to the function’s immediate arguments rather than their contents, so recent calls with distinct results are kept apart."}}
	q := "When I put @lru_cache on a function without any arguments, how many recent call results does it keep?"
	found, _ := Find(q, docs, 1)
	if len(found) == 0 || found[0].Term != "@functools.lru_cache(maxsize=128, typed=False)" || !found[0].Fits {
		t.Fatalf("the answer is %+v, want the decorator's prose under its signature, holding the kind asked for", found)
	}
	if err := SetAblated([]string{"field"}); err != nil {
		t.Fatal(err)
	}
	defer SetAblated(nil)
	if found, _ := Find(q, docs, 1); len(found) > 0 && found[0].Fits {
		t.Errorf("ablated, the signature's default still makes %+v fit", found[0])
	}
}

// A window that quotes an item of a parameter list without its opening
// sentence, which names the parameter with its type, is quoted under
// that name, as under a heading's.
func TestItemNameIsTheWindowsTerm(t *testing.T) {
	docs := []Doc{{Title: "Child process", Body: "child_process.exec(command[, options][, callback])\n\n" +
		"encoding <string> The encoding used for all stdio inputs and outputs. Default: 'utf8'.\n\n" +
		"maxBuffer <number> Largest amount of data in bytes allowed on stdout or stderr. If exceeded, the child process is terminated and any output is truncated. Default: 1024 * 1024."}}
	found, _ := Find("exec() kills my command when its output is truncated. What is the default cap?", docs, 1)
	if len(found) == 0 || found[0].Term != "maxBuffer" || !strings.Contains(strings.Join(found[0].Sentences, " "), "1024 * 1024") {
		t.Fatalf("the answer is %+v, want the maxBuffer item's default under its name", found)
	}
	if err := SetAblated([]string{"field"}); err != nil {
		t.Fatal(err)
	}
	defer SetAblated(nil)
	if found, _ := Find("exec() kills my command when its output is truncated. What is the default cap?", docs, 1); len(found) > 0 && found[0].Term == "maxBuffer" {
		t.Errorf("ablated, the item's name is still the term: %+v", found[0])
	}
}

// A window that writes the question's words one after the other, as
// the question does, says what it asks about; one that holds the same
// words apart only mentions them. A number before a word counts it and
// makes no pair.
func TestFindPrefersTheQuestionsPhrase(t *testing.T) {
	docs := []Doc{
		{Title: "accounts", Body: "Reset the password in the settings; the link then expires."},
		{Title: "login", Body: "When a password reset link expires, the user must ask for a new one."},
	}
	firstWithAndWithout(t, "phrase", "What happens when a password reset link expires?", docs, 1, 0)
	f := weighed("What happens if I read five elements past one test vector?", docs)
	for _, p := range f.pairs {
		if p.first == "five" || p.first == "one" {
			t.Errorf("pair %+v: a number counts the word after it", p)
		}
	}
}
