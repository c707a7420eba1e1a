package qa_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/kb/kbtest"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/session"
)

// asker builds an Asker over a knowledge base of the files.
func asker(t *testing.T, sessions session.Store, files ...string) *qa.Asker {
	t.Helper()
	emb := embed.Hash{Dim: 64}
	svc := kbtest.New(t, "notes", emb, files...)
	return &qa.Asker{Sessions: sessions, Search: qa.SearchFunc(func(ctx context.Context, q kb.Query) ([]kb.Result, error) {
		return svc.Search(ctx, "notes", emb, q)
	}), Chunks: func(ctx context.Context) (int, error) { return svc.Chunks(ctx, "notes") }}
}

var wiki = filepath.Join("..", "cmd", "quarry", "testdata", "research", "corpus.jsonl")

func TestAskEnglish(t *testing.T) {
	a := asker(t, &session.Memory{}, wiki)
	ctx := context.Background()
	ans, err := a.Ask(ctx, qa.Request{Question: "When was Giuseppe Verdi born?"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Unknown || ans.Language != "en" || !strings.Contains(ans.Answer, "1813") || ans.Confidence < qa.Threshold || ans.Confidence > 1 {
		t.Fatalf("answer: %+v", ans)
	}
	if len(ans.Sources) == 0 || !strings.HasPrefix(ans.Sources[0], "kb://notes/") || !strings.Contains(ans.Answer, "[1]") || ans.Engine != "offline-extractive" || !strings.Contains(ans.Note, "no language model") {
		t.Fatalf("sources and label: %+v", ans)
	}
	for _, q := range ans.Quotes {
		if !strings.Contains(ans.Answer, q.Text) || q.URL != ans.Sources[q.Number-1] {
			t.Fatalf("quote %+v is not in the answer or not its source", q)
		}
	}
	if len(ans.Suggestions) > 3 {
		t.Fatalf("%d suggestions", len(ans.Suggestions))
	}
	for _, s := range ans.Suggestions {
		if utf8.RuneCountInString(s) > 200 || strings.Contains(s, "Verdi") {
			t.Fatalf("suggestion %q: too long, or about what was already quoted", s)
		}
		// A title reads as one inside the question: quoted.
		if !strings.HasPrefix(s, "What does the knowledge base say about “") || !strings.HasSuffix(s, "”?") {
			t.Fatalf("suggestion %q does not quote its title", s)
		}
	}
	// What the corpus does not hold is "I don't know", in English.
	no, err := a.Ask(ctx, qa.Request{Question: "Who designed the Sydney Opera House?"})
	if err != nil {
		t.Fatal(err)
	}
	if !no.Unknown || !strings.HasPrefix(no.Answer, "I don't know") || len(no.Sources) != 0 || no.Confidence >= qa.Threshold {
		t.Fatalf("unanswerable: %+v", no)
	}
}

func TestAskKoreanWithSession(t *testing.T) {
	sessions := &session.Memory{}
	a := asker(t, sessions, filepath.Join("testdata", "ko.jsonl"))
	ctx := context.Background()
	ans, err := a.Ask(ctx, qa.Request{Question: "요금은 언제 납부하나요?"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Unknown || ans.Language != "ko" || !strings.Contains(ans.Answer, "25일") || !strings.Contains(ans.Note, "언어 모델") {
		t.Fatalf("Korean answer: %+v", ans)
	}
	for _, s := range ans.Suggestions {
		if !strings.HasSuffix(s, "알려 주세요.") {
			t.Fatalf("a Korean question gets Korean suggestions: %q", s)
		}
	}
	// A follow-up that names little is asked with the turn before it.
	next, err := a.Ask(ctx, qa.Request{Question: "사업자는요?", SessionID: ans.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if next.SessionID != ans.SessionID || !strings.Contains(next.Answer, "말일") {
		t.Fatalf("follow-up: %+v", next)
	}
	ss, err := sessions.Get(ctx, ans.SessionID)
	if err != nil || len(ss.Messages) != 4 || ss.Language != "ko" || ss.Messages[1].Confidence == nil || ss.Messages[3].Sources == nil {
		t.Fatalf("session: %+v %v", ss, err)
	}
	no, err := a.Ask(ctx, qa.Request{Question: "화성 탐사선의 발사 일정은 어떻게 되나요?"})
	if err != nil {
		t.Fatal(err)
	}
	if !no.Unknown || !strings.HasPrefix(no.Answer, "죄송합니다") {
		t.Fatalf("unanswerable in Korean: %+v", no)
	}
}

func TestAskBadInput(t *testing.T) {
	clock := time.Now()
	sessions := &session.Memory{Now: func() time.Time { return clock }}
	a := asker(t, sessions, wiki)
	ctx := context.Background()
	for _, c := range []struct {
		req   qa.Request
		field string
	}{
		{qa.Request{Question: "  "}, "question"},
		{qa.Request{Question: strings.Repeat("x", 2001)}, "question"},
		{qa.Request{Question: "q", TopK: 21}, "top_k"},
		{qa.Request{Question: "q", SessionID: "nope"}, "session_id"},
	} {
		_, err := a.Ask(ctx, c.req)
		if errcode.Of(err) != errcode.Invalid || errcode.Field(err) != c.field {
			t.Errorf("%+v: %v, want invalid %s", c.req.TopK, err, c.field)
		}
	}
	if _, err := a.Ask(ctx, qa.Request{Question: "Who was Verdi?", SessionID: "2c1c7f3e-8f2a-4d4b-9f53-6b2f0e6f7a10"}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	ans, err := a.Ask(ctx, qa.Request{Question: "Who was Verdi?"})
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(31 * time.Minute)
	if _, err := a.Ask(ctx, qa.Request{Question: "And Dvořák?", SessionID: ans.SessionID}); !errors.Is(err, session.ErrExpired) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired session: %v", err)
	}
}

// TestAskAcrossLanguagesAndFollowUps: a short English note (too short
// for the language detector's statistics) answers an English question;
// when no chunk in the question's language answers, one in the other
// language does, quoted as it is; a follow-up's pronoun is the subject of
// the conversation, not whatever shares its other words.
func TestAskAcrossLanguagesAndFollowUps(t *testing.T) {
	dir := t.TempDir()
	note := filepath.Join(dir, "verdi.md")
	fees := filepath.Join(dir, "fees.md")
	if err := os.WriteFile(note, []byte("Verdi died in Milan on 27 January 1901."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fees, []byte("# 요금 안내\n\n사업자 고객의 요금은 매월 말일까지 납부합니다. 개인 고객은 매월 25일까지 납부합니다."), 0o644); err != nil {
		t.Fatal(err)
	}
	a := asker(t, &session.Memory{}, note, fees, wiki)
	ctx := context.Background()
	ans, err := a.Ask(ctx, qa.Request{Question: "When did Verdi die?"})
	if err != nil || ans.Unknown || !strings.Contains(ans.Answer, "27 January 1901") {
		t.Fatalf("a one-sentence English note: %v %+v", err, ans)
	}
	ans, err = a.Ask(ctx, qa.Request{Question: "When do businesses pay 사업자 요금?"})
	if err != nil || ans.Unknown || !strings.Contains(ans.Answer, "말일") {
		t.Fatalf("an answer in the other language: %v %+v", err, ans)
	}
	first, err := a.Ask(ctx, qa.Request{Question: "Who was Giuseppe Verdi?"})
	if err != nil {
		t.Fatal(err)
	}
	ans, err = a.Ask(ctx, qa.Request{Question: "When did he die?", SessionID: first.SessionID})
	if err != nil || ans.Unknown || !strings.Contains(ans.Answer, "1901") {
		t.Fatalf("follow-up: %v %+v", err, ans)
	}
}

// TestAskQuotesCodeAsCode: a how-to whose answer is a command quotes it
// between backticks, as code, and a page's listing stays out of the
// sentences around it.
func TestAskQuotesCodeAsCode(t *testing.T) {
	doc := "# Cleaning up a repository\n\nLoose objects pile up as you work, and a repository slows down when there are many of them. " +
		"To pack the loose objects of a repository by hand, run the garbage collector:\n\n```sh\ngit gc --aggressive --prune=now\n```\n\n" +
		"The collector also runs by itself after some commands, when there are more loose objects than gc.auto allows.\n"
	ans := askPage(t, "gc.md", doc, "How do I pack the loose objects of a repository by hand?")
	if ans.Unknown || !strings.Contains(ans.Answer, "`git gc --aggressive --prune=now` [1]") {
		t.Fatalf("the command is not quoted as code: %+v", ans)
	}
	code := 0
	for _, q := range ans.Quotes {
		if q.Code {
			code++
			if q.Text != "git gc --aggressive --prune=now" {
				t.Errorf("quote %q marked code", q.Text)
			}
		} else if strings.Contains(q.Text, "git gc --aggressive") {
			t.Errorf("the command ran into a sentence: %q", q.Text)
		}
	}
	if code != 1 {
		t.Errorf("%d quotes marked code, want 1: %+v", code, ans.Quotes)
	}
}

// An answer under an option's name quotes the name: the prose of a
// definition does not repeat it, and the reader needs to know which
// option it describes.
func TestAskQuotesTheTermAnswered(t *testing.T) {
	doc := "git-commit(1)\n\nOPTIONS\n\n--amend\n\nReplace the tip of the current branch by creating a new commit.\n\n" +
		"`--reset-author`\n\nWhen used with --amend, declare that the authorship of the resulting commit now belongs to the committer. This also renews the author timestamp.\n"
	ans := askPage(t, "git-commit.txt", doc, "After --amend, how do I make the authorship of the commit mine and renew its timestamp?")
	if ans.Unknown || !strings.HasPrefix(ans.Answer, "`--reset-author`: \"When used with --amend") || len(ans.Quotes) == 0 || ans.Quotes[0].Term != "--reset-author" {
		t.Fatalf("the option is not quoted with its description: %+v", ans)
	}
}

// askPage asks question over a knowledge base of one page, name, that
// holds doc.
func askPage(t *testing.T, name, doc, question string) *qa.Answer {
	t.Helper()
	page := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ans, err := asker(t, &session.Memory{}, page).Ask(context.Background(), qa.Request{Question: question})
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

// TestAskNamesInScope: a name the chunks read do not hold lowers the
// confidence unless the knowledge base is about it: the answering page of
// an office suite's help need not name the application, but a name the
// knowledge base never writes is not answered about, and an answer that
// does not know says so; beside a name it is about (the user's own app),
// such a name lowers the confidence as any name the chunks read lack
// does (scope_test.go: a name written rarely is not what it is about
// either).
func TestAskNamesInScope(t *testing.T) {
	a := asker(t, &session.Memory{}, officeHelp(t))
	ctx := context.Background()
	ask := func(q string) *qa.Answer {
		t.Helper()
		ans, err := a.Ask(ctx, qa.Request{Question: q})
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	writer := ask("How do I hyphenate the selected text by hand in Writer?")
	if writer.Unknown || !strings.Contains(writer.Answer, "Tools - Language - Hyphenation") {
		t.Errorf("Writer: %+v", writer)
	}
	if draw := ask("How do I hyphenate the selected text by hand in Draw?"); !draw.Unknown || !strings.HasSuffix(draw.Answer, " The knowledge base never mentions “Draw”.") {
		t.Errorf("Draw: %+v", draw)
	}
	// The user's own name lowers the confidence, as the words it adds
	// do, but does not make it 0 (here it is too low to answer).
	own := ask("In MyCompanyApp, how do I hyphenate the selected text by hand in Writer?")
	if own.Confidence <= 0 || own.Confidence >= writer.Confidence || own.Unknown != (own.Confidence < qa.Threshold) || own.Unknown && !strings.HasSuffix(own.Answer, " The knowledge base never mentions “MyCompanyApp”.") {
		t.Errorf("MyCompanyApp: %+v, want a confidence in (0, Writer's %v)", own, writer.Confidence)
	}
}

// officeHelp writes an office suite's help as a corpus: a page on
// hyphenation that does not name the application, one on slides that
// names Impress, 20 on selected text that name nothing, and 150 that
// name Writer.
func officeHelp(t *testing.T) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	docs := []map[string]string{
		{"_id": "hyphen", "title": "Hyphenation", "text": "To hyphenate the selected text by hand, choose Tools - Language - Hyphenation, then confirm each break."},
		{"_id": "impress", "title": "Slides", "text": "Impress shows the transitions of a slide in the sidebar."},
	}
	for i := range 20 {
		docs = append(docs, map[string]string{"_id": fmt.Sprintf("s%d", i), "title": fmt.Sprintf("Selection %d", i), "text": fmt.Sprintf("The selected text can be moved by hand to place %d.", i)})
	}
	for i := range 150 {
		docs = append(docs, map[string]string{"_id": fmt.Sprintf("p%d", i), "title": fmt.Sprintf("Page style %d", i), "text": fmt.Sprintf("Writer lays out page %d with the margins of its page style, number %d.", i, i)})
	}
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
	}
	corpus := filepath.Join(t.TempDir(), "help.jsonl")
	if err := os.WriteFile(corpus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus
}

// TestAskQuotesASentenceOnce: two chunks that overlap hold the same
// sentence, one as an answer's neighbour (quoted for context), the other
// as its best; the answer quotes it once.
func TestAskQuotesASentenceOnce(t *testing.T) {
	s1 := "The edition key in Cargo.toml indicates which edition the compiler should use for your code."
	s2 := "If the key is absent, Rust uses 2015 for backward compatibility reasons."
	hits := []kb.Result{
		{ChunkID: 1, SourceURL: "file:///book/editions.html", Title: "Editions", Language: "en", Text: "Editions are opt in for crates. " + s1 + " " + s2},
		{ChunkID: 2, SourceURL: "file:///book/editions.html", Title: "Editions", Language: "en", Text: s2 + " Later editions changed the module system."},
	}
	a := &qa.Asker{Sessions: &session.Memory{}, Search: qa.SearchFunc(func(context.Context, kb.Query) ([]kb.Result, error) { return hits, nil })}
	ans, err := a.Ask(context.Background(), qa.Request{Question: "Which edition does the edition key in Cargo.toml indicate when the key is absent?"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Unknown || !strings.Contains(ans.Answer, s2) {
		t.Fatalf("the answer does not quote the sentence that answers: %+v", ans)
	}
	if n := strings.Count(ans.Answer, s2); n != 1 {
		t.Errorf("%q quoted %d times: %s", s2, n, ans.Answer)
	}
	seen := map[string]bool{}
	for _, q := range ans.Quotes {
		if seen[q.Text] {
			t.Errorf("quote %q listed twice", q.Text)
		}
		seen[q.Text] = true
	}
}
