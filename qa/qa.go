// Package qa answers questions over a knowledge base: in
// the question's language, from that language's chunks, with the source
// URLs it used, a confidence, up to three follow-up suggestions drawn from
// what the knowledge base holds, and "I don't know" when the evidence is
// too weak. Without a model the answer is extractive: the sentences that
// answer, quoted and cited, and it says so. A session carries the
// conversation, so a follow-up is asked with the turns before it.
package qa

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/session"
)

// Limits.
const (
	MaxQuestionChars = 2000
	DefaultTopK      = 5
	MaxTopK          = 20
	maxQuotes        = 3
	maxQuoteChars    = 600
)

// Threshold is the confidence under which an answer is "I don't know"
// (passage.Weights.AskAnswered).
var Threshold = passage.Weights.AskAnswered

// Searcher searches one knowledge base.
type Searcher interface {
	Search(ctx context.Context, q kb.Query) ([]kb.Result, error)
}

// SearchFunc adapts a function to Searcher.
type SearchFunc func(ctx context.Context, q kb.Query) ([]kb.Result, error)

// Search implements Searcher.
func (f SearchFunc) Search(ctx context.Context, q kb.Query) ([]kb.Result, error) { return f(ctx, q) }

// Request is one question.
type Request struct {
	Question string
	// SessionID continues a conversation (empty: a new one).
	SessionID string
	// TopK is how many chunks are read (1–20, default 5).
	TopK int
}

// Quote is a sentence the answer quotes.
type Quote struct {
	Number  int     `json:"number"`
	Text    string  `json:"text"`
	URL     string  `json:"url"`
	Title   string  `json:"title"`
	ChunkID int64   `json:"chunk_id"`
	Score   float64 `json:"score"`
	// Code: the quote is a line of code (a command, a statement), quoted
	// in the answer between backticks, not as a sentence.
	Code bool `json:"code,omitempty"`
	// Term is the name of the option or setting the quote's window
	// defines, when it sits under one ("--reset-author"): the answer
	// quotes it before the window.
	Term string `json:"term,omitempty"`
}

// Answer is what Ask returns.
type Answer struct {
	SessionID   string   `json:"session_id"`
	Language    string   `json:"language"`
	Answer      string   `json:"answer"`
	Sources     []string `json:"sources"`
	Confidence  float64  `json:"confidence"`
	Suggestions []string `json:"suggestions"`
	Unknown     bool     `json:"unknown"`
	Quotes      []Quote  `json:"quotes"`
	Engine      string   `json:"engine"`
	Note        string   `json:"note"`
}

// Asker answers questions over one knowledge base.
type Asker struct {
	Search   Searcher
	Sessions session.Store
	// Model, when set, writes the answer from the chunks read (one
	// structured call, its citations checked); nil answers extractively.
	Model llm.Provider
	// Chunks, when set, counts the knowledge base's chunks, for the
	// names it is about (passage.Weights.Scope) and those it never
	// mentions; without it every name the chunks read do not hold
	// lowers an extractive answer's confidence, and none is said to be
	// never mentioned.
	Chunks func(ctx context.Context) (int, error)
}

// Validate checks a request and fills defaults.
func (r *Request) Validate() error {
	r.Question = strings.TrimSpace(textclean.Line(r.Question))
	if n := utf8.RuneCountInString(r.Question); n < 1 || n > MaxQuestionChars {
		return errcode.New(errcode.Invalid, "question", fmt.Sprintf("must be 1-%d characters, got %d", MaxQuestionChars, n))
	}
	if r.TopK == 0 {
		r.TopK = DefaultTopK
	}
	if err := CheckTopK(r.TopK); err != nil {
		return err
	}
	if r.SessionID != "" {
		return session.CheckID(r.SessionID)
	}
	return nil
}

// CheckTopK checks how many chunks a question reads, 1 to MaxTopK; a
// caller that tells 0 given from 0 left out (the MCP tool) refuses it
// here, as Validate reads 0 as DefaultTopK.
func CheckTopK(n int) error {
	if n < 1 || n > MaxTopK {
		return errcode.New(errcode.Invalid, "top_k", fmt.Sprintf("must be between 1 and %d, got %d", MaxTopK, n))
	}
	return nil
}

// Language is the language a question is answered in: ko or en.
func Language(question string) string {
	if analyze.Language(question) == "ko" {
		return "ko"
	}
	return "en"
}

// Ask answers a question and records both turns in its session.
func (a *Asker) Ask(ctx context.Context, req Request) (*Answer, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	lang := Language(req.Question)
	var sess *session.Session
	var err error
	if req.SessionID != "" {
		if sess, err = a.Sessions.Get(ctx, req.SessionID); err != nil {
			return nil, err
		}
	}
	question := resolve(req.Question, sess)
	query := queryOf(question, sess)
	// Chunks in the question's language first; when none answers, chunks
	// in any language, quoted as they are (a short English note detected
	// as undetermined, a Korean answer to an English follow-up).
	hits, err := a.Search.Search(ctx, kb.Query{Text: query, K: req.TopK, Mode: kb.ModeHybrid, Language: lang})
	if err != nil {
		return nil, err
	}
	var ans *Answer
	held := a.holds(ctx)
	if len(hits) > 0 && a.Model == nil {
		if ans, err = answer(query, lang, hits, held); err != nil {
			return nil, err
		}
	}
	if len(hits) == 0 || ans != nil && ans.Unknown {
		anyHits, err := a.Search.Search(ctx, kb.Query{Text: query, K: req.TopK, Mode: kb.ModeHybrid})
		if err != nil {
			return nil, err
		}
		if len(anyHits) == 0 {
			return nil, errcode.New(errcode.Invalid, "question", "the knowledge base holds no chunks; add documents first")
		}
		if a.Model == nil {
			other, err := answer(query, lang, anyHits, held)
			if err != nil {
				return nil, err
			}
			if ans == nil || !other.Unknown {
				ans, hits = other, anyHits
			}
		} else if len(hits) == 0 {
			hits = anyHits
		}
	}
	if a.Model != nil {
		if ans, err = a.askModel(ctx, question, lang, sess, hits); err != nil {
			return nil, err
		}
	}
	if sess == nil { // a new conversation, started once there is an answer
		if sess, err = a.Sessions.Create(ctx, lang); err != nil {
			return nil, err
		}
	}
	ans.SessionID = sess.ID
	conf := ans.Confidence
	reply := session.Message{Role: session.RoleAssistant, Content: textclean.Clip(ans.Answer, session.MaxContentChars), Sources: ans.Sources, Confidence: &conf, Suggestions: ans.Suggestions}
	if _, err := a.Sessions.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: req.Question}, reply); err != nil {
		return nil, err
	}
	return ans, nil
}

// queryOf is what is searched and answered: the question, and for a
// follow-up that names little ("and for businesses?") the question before
// it too.
func queryOf(q string, sess *session.Session) string {
	if len(passage.UniqueTerms(q)) > 3 || sess == nil {
		return q
	}
	for i := len(sess.Messages) - 1; i >= 0; i-- {
		if m := sess.Messages[i]; m.Role == session.RoleUser {
			return m.Content + " " + q // the question asked last reads its type
		}
	}
	return q
}

// scope is how much of a knowledge base writes a name the question
// gives (passage.Marked).
type scope int

const (
	// scopeSome: some chunk holds a word of the name, or it was not
	// looked up (a year or a version, no chunk count).
	scopeSome scope = iota
	// scopeAbout: the knowledge base is about the name: it writes it in
	// passage.Weights.Scope of its chunks or more.
	scopeAbout
	// scopeNever: no chunk holds a word of the name.
	scopeNever
)

// String names a scope.
func (s scope) String() string {
	return [...]string{"some", "about", "never"}[s]
}

// holds looks up how much of the knowledge base writes a name.
type holds func(name string) (scope, error)

// holds looks a name up: a search of the name asks for as many chunks as
// passage.Weights.Scope of them, and counts those that write it, its
// words in a row; when it finds none, no chunk holds any word of the
// name. (A name some of whose words no chunk holds is often misspelt,
// "Bod Dole" for Bob Dole, and its other words answer.) It reports
// scopeSome without Chunks, and for a year or a version.
func (a *Asker) holds(ctx context.Context) holds {
	n := -1                     // the knowledge base's chunks, once counted
	known := map[string]scope{} // the names already looked up
	return func(name string) (scope, error) {
		if a.Chunks == nil || !slices.ContainsFunc(analyze.Terms(name), func(t string) bool { return !textseg.Number(t) }) {
			return scopeSome, nil // a year or a version is never a topic
		}
		if sc, ok := known[name]; ok {
			return sc, nil
		}
		if n < 0 {
			var err error
			if n, err = a.Chunks(ctx); err != nil {
				return scopeSome, fmt.Errorf("count chunks: %w", err)
			}
		}
		need := min(max(int(math.Ceil(float64(n)*passage.Weights.Scope)), 1), maxScopeHits)
		hits, err := a.Search.Search(ctx, kb.Query{Text: name, K: need, Mode: kb.ModeBM25})
		if err != nil {
			return scopeSome, fmt.Errorf("search for %q: %w", name, err)
		}
		// The name's writers are all the hits, and as many as it needs: a
		// search returns at most need, so one hit short or one that does
		// not write it settles it.
		sc := scopeSome
		switch {
		case len(hits) == 0:
			sc = scopeNever
		case n > 0 && len(hits) >= need && passage.AllWrite(name, passageDocs(hits)):
			sc = scopeAbout
		}
		known[name] = sc
		return sc, nil
	}
}

// maxScopeHits caps the chunks a search for a name reads (a knowledge
// base of more than 100,000 chunks needs a name in 1,000 of them).
const maxScopeHits = 1000

// pick finds the windows that answer (passage.Find over the chunks read):
// the best, one nearly as good (another chunk's, or a second window of a
// chunk: passage.Weights.Alternative), and those that add what it lacks
// (a comparison's other side, a question's second hop), with their
// confidence (passage.Confidence).
// A name the question gives that no chunk read holds lowers the
// confidence unless the knowledge base is about it (held, when not nil,
// says): a passage of LibreOffice's help may answer a question about
// "Writer" in words that leave it unsaid ("text document"), but a
// knowledge base that names a thing rarely or never does not answer
// about it. never lists the names no chunk holds a word of, for the
// answer to say so when it does not know. (Such a name made the
// confidence 0 for a while: one more unanswerable question refused on
// the dev sets, but a question that names the user's own thing, "In
// MyCompanyApp, how do I open a database read-only?", refused too.)
func pick(query string, hits []kb.Result, held holds) (chosen []passage.Answer, conf float64, never []string, err error) {
	found, missing := passage.Find(query, passageDocs(hits), passage.MaxQuoted)
	chosen = passage.Answers(found)
	if held != nil {
		unknown := missing[:0:0]
		for _, name := range missing {
			sc, herr := held(name)
			if herr != nil {
				return nil, 0, nil, herr
			}
			if sc != scopeAbout {
				unknown = append(unknown, name)
			}
			if sc == scopeNever {
				never = append(never, name)
			}
		}
		missing = unknown
	}
	return chosen, passage.Confidence(query, chosen, missing), never, nil
}

// passageDocs are the chunks a search returned as the texts
// passage.Find reads.
func passageDocs(hits []kb.Result) []passage.Doc {
	docs := make([]passage.Doc, len(hits))
	for i, h := range hits {
		docs[i] = passage.Doc{Title: h.Title, Body: h.Text}
	}
	return docs
}

// answer quotes the picked windows with their citations, or says it does
// not know when the confidence is under Threshold. query is what was
// searched: the question, with the one before it for a follow-up that
// names little.
func answer(query, lang string, hits []kb.Result, held holds) (*Answer, error) {
	ans := &Answer{Language: lang, Sources: []string{}, Suggestions: []string{}, Quotes: []Quote{}, Engine: "offline-extractive", Note: note(lang)}
	chosen, conf, never, err := pick(query, hits, held)
	if err != nil {
		return nil, err
	}
	ans.Confidence = conf
	if ans.Confidence < Threshold || len(chosen) == 0 {
		ans.Unknown = true
		ans.Answer = unknownText(lang)
		if len(never) > 0 {
			ans.Answer += neverText(lang, never)
		}
		ans.Suggestions = suggestions(lang, hits, nil)
		return ans, nil
	}
	var b strings.Builder
	cited := map[int]int{} // hit → reference number
	for _, c := range chosen {
		n, ok := cited[c.Doc]
		if !ok {
			n = len(cited) + 1
			cited[c.Doc] = n
			ans.Sources = append(ans.Sources, hits[c.Doc].SourceURL)
		}
		for i, text := range c.Sentences {
			if b.Len() > 0 {
				b.WriteString(" ")
			}
			if i == 0 && c.Term != "" {
				// The option or setting the window defines.
				fmt.Fprintf(&b, "%s: ", passage.InlineCode(c.Term))
			}
			code := i < len(c.Code) && c.Code[i]
			if code {
				fmt.Fprintf(&b, "%s [%d]", passage.InlineCode(text), n)
			} else {
				fmt.Fprintf(&b, "\"%s\" [%d]", text, n)
			}
			ans.Quotes = append(ans.Quotes, Quote{Number: n, Text: text, URL: hits[c.Doc].SourceURL, Title: hits[c.Doc].Title, ChunkID: hits[c.Doc].ChunkID, Score: round2(c.Coverage), Code: code, Term: c.Term})
		}
	}
	ans.Answer = b.String()
	ans.Suggestions = suggestions(lang, hits, cited)
	return ans, nil
}

func cover(terms []string, have map[string]bool) float64 {
	if len(terms) == 0 {
		return 0
	}
	n := 0
	for _, t := range terms {
		if have[t] {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// suggestions are questions about what the knowledge base holds near the
// question: the titles of sources it found but did not quote.
func suggestions(lang string, hits []kb.Result, cited map[int]int) []string {
	out := []string{}
	seen := map[string]bool{}
	for i, h := range hits {
		if _, ok := cited[i]; ok {
			seen[strings.ToLower(h.Title)] = true
		}
	}
	for i, h := range hits {
		title := textclean.Line(h.Title)
		key := strings.ToLower(title)
		if _, ok := cited[i]; ok || title == "" || seen[key] || strings.Contains(title, "://") {
			continue
		}
		seen[key] = true
		// The title quoted: a title that is a phrase ("How the crawler
		// keeps a knowledge base fresh") reads as one inside the question.
		q := "What does the knowledge base say about “" + title + "”?"
		if lang == "ko" {
			q = "“" + title + "”에 대해 알려 주세요."
		}
		if utf8.RuneCountInString(q) > session.MaxSuggestionChar {
			continue
		}
		out = append(out, q)
		if len(out) == session.MaxSuggestions {
			break
		}
	}
	return out
}

func unknownText(lang string) string {
	if lang == "ko" {
		return "죄송합니다. 지식 베이스에서 이 질문에 답할 만한 근거를 찾지 못했습니다. 추측하지 않고 모른다고 답합니다."
	}
	return "I don't know: the knowledge base holds nothing that answers this question well enough, and I will not guess."
}

// neverText says which names the question gives that the knowledge
// base never mentions.
func neverText(lang string, names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "“" + n + "”"
	}
	if lang == "ko" {
		return " 지식 베이스에는 " + strings.Join(quoted, ", ") + "에 관한 내용이 전혀 없습니다."
	}
	return " The knowledge base never mentions " + strings.Join(quoted, " or ") + "."
}

func note(lang string) string {
	if lang == "ko" {
		return "오프라인 추출 엔진의 답변입니다: 언어 모델 없이 출처의 문장을 그대로 인용했습니다."
	}
	return "Answered by the offline extractive engine: the sentences are quoted from their sources; no language model was used."
}
