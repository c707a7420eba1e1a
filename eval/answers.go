package eval

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/jsonx"
	"github.com/quarryhq/quarry/internal/textseg"
)

// AnswerQuestion is one question of an answer dataset (JSON Lines): what
// a person asked, the pages that answer it (paths that a reference URL
// ends with), strings a right answer holds (any of them, case and
// spacing aside), or that the documents cannot answer it.
type AnswerQuestion struct {
	ID           string   `json:"id"`
	Question     string   `json:"question"`
	Pages        []string `json:"pages"`
	Answers      []string `json:"answers"`
	Unanswerable bool     `json:"unanswerable"`
	Lang         string   `json:"lang,omitempty"`
}

// ReadAnswerSet reads and checks an answer dataset: every line a
// question with an id of its own, answerable ones with at least one
// answer string and page.
func ReadAnswerSet(path string) ([]AnswerQuestion, error) {
	qs, err := jsonx.ReadLinesFile[AnswerQuestion](path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, q := range qs {
		switch {
		case strings.TrimSpace(q.ID) == "":
			return nil, fmt.Errorf("question %d: id: must not be empty", i+1)
		case seen[q.ID]:
			return nil, fmt.Errorf("question %s: id: must be unique", q.ID)
		case strings.TrimSpace(q.Question) == "":
			return nil, fmt.Errorf("question %s: question: must not be empty", q.ID)
		case !q.Unanswerable && (len(q.Answers) == 0 || len(q.Pages) == 0):
			return nil, fmt.Errorf("question %s: an answerable question needs answers and pages", q.ID)
		}
		seen[q.ID] = true
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("the dataset holds no question")
	}
	return qs, nil
}

var (
	citationRE = regexp.MustCompile(`\s*\[\d{1,4}(?:\s*,\s*\d{1,4})*\]`)
	spaceRE    = regexp.MustCompile(`\s+`)
	quoteRE    = regexp.MustCompile("[\"“”‘’'`*_]")
)

// fold is text compared for an answer: lower case, quotes and emphasis
// dropped, spacing collapsed.
func fold(s string) string {
	return strings.TrimSpace(spaceRE.ReplaceAllString(quoteRE.ReplaceAllString(strings.ToLower(s), ""), " "))
}

// Holds reports whether text holds one of the answer strings, on word
// edges ("no" is not in "now", "ort" not in "short"). A bare "yes" or
// "no" never counts: most texts say one somewhere ("no longer", "no
// error"), so a yes/no question is answered by the words that say why
// ("index is updated"), which its answer strings must give.
func (q AnswerQuestion) Holds(text string) bool {
	t := fold(text)
	for _, a := range q.Answers {
		if a = fold(a); a != "" && !polar[a] && onEdges(t, a) {
			return true
		}
	}
	return false
}

// polar are the bare answers to a yes/no question.
var polar = map[string]bool{"yes": true, "no": true}

func onEdges(t, a string) bool {
	// Korean particles attach to the word before ("사업자는"): Hangul
	// needs no edge.
	wordy := func(r rune) bool { return unicode.IsLetter(r) && !unicode.Is(unicode.Hangul, r) || unicode.IsDigit(r) }
	for from := 0; ; {
		i := strings.Index(t[from:], a)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(t[:i])
		after, _ := utf8.DecodeRuneInString(t[i+len(a):])
		first, _ := utf8.DecodeRuneInString(a)
		last, _ := utf8.DecodeLastRuneInString(a)
		// A number goes on past a decimal point or a thousands comma:
		// "3" is not in "3.5" or "3,000".
		numberGoesOn := unicode.IsDigit(last) && (after == '.' || after == ',') && unicode.IsDigit(firstRune(t[i+len(a)+1:]))
		if (i == 0 || !wordy(before) || !wordy(first)) && (i+len(a) == len(t) || !wordy(after) || !wordy(last)) && !numberGoesOn {
			return true
		}
		from = i + 1
	}
}

// PageRank is the 1-based position of the first reference URL that is
// one of the question's pages (it ends with the page's path), or 0.
func (q AnswerQuestion) PageRank(refURLs []string) int {
	for i, u := range refURLs {
		u = strings.TrimSuffix(strings.SplitN(u, "#", 2)[0], "/")
		for _, p := range q.Pages {
			p = strings.Trim(p, "/")
			if p != "" && (u == p || strings.HasSuffix(u, "/"+p)) {
				return i + 1
			}
		}
	}
	return 0
}

// Opening is the first n sentences of a summary, citations removed.
func Opening(summary string, n int) string {
	text := citationRE.ReplaceAllString(summary, "")
	var out []string
	for _, sp := range textseg.Spans(text) {
		if len(out) == n {
			break
		}
		out = append(out, text[sp.Start:sp.End])
	}
	return strings.Join(out, " ")
}

// Cites reports whether a summary cites anything: one that cites nothing
// says the sources do not answer (a refusal).
func Cites(summary string) bool { return citationRE.MatchString(summary) }

// ResearchOutcome is one research's figures on its question.
type ResearchOutcome struct {
	ID           string `json:"id"`
	Unanswerable bool   `json:"unanswerable"`
	Status       string `json:"status"`
	PageRank     int    `json:"page_rank"` // 0: the answering page is not among the references
	References   int    `json:"references"`
	InSummary    bool   `json:"in_summary"`
	InOpening    bool   `json:"in_opening"` // in the summary's first two sentences
	Refused      bool   `json:"refused"`
	// NonProse are the summary's sentences that are not prose (NonProse).
	NonProse []string `json:"non_prose"`
	Support  float64  `json:"citation_support"`
	// Summary is the executive summary, to read why a figure is what it is.
	Summary string `json:"summary"`
	// PageRead: the answering page was among the sources read; InContext
	// (with a model): the answer string was in a prompt the model was
	// shown.
	PageRead  bool    `json:"page_read"`
	InContext *bool   `json:"in_model_context,omitempty"`
	Calls     int     `json:"llm_calls"`
	Tokens    int     `json:"tokens"`
	Seconds   float64 `json:"seconds"`
	Error     string  `json:"error,omitempty"`
}

// ScoreResearch scores a research's report on its question.
func ScoreResearch(q AnswerQuestion, summary string, refURLs []string) ResearchOutcome {
	return ResearchOutcome{ID: q.ID, Unanswerable: q.Unanswerable, PageRank: q.PageRank(refURLs), References: len(refURLs),
		InSummary: q.Holds(summary), InOpening: q.Holds(Opening(summary, 2)), Refused: !Cites(summary),
		NonProse: append([]string{}, NonProse(summary)...), Summary: summary}
}

// ResearchScores are a dataset's figures: shares over the answerable
// questions, refusals over the unanswerable ones.
type ResearchScores struct {
	Questions         int     `json:"questions"`
	Answerable        int     `json:"answerable"`
	Failed            int     `json:"failed"`
	PageAmongRefs     float64 `json:"page_among_references"`
	PageInFirst3      float64 `json:"page_in_first_3"`
	MeanReferences    float64 `json:"mean_references"`
	InSummary         float64 `json:"answer_in_summary"`
	InOpening         float64 `json:"answer_in_first_two_sentences"`
	FalseRefusals     float64 `json:"false_refusals"`
	RefusedUnanswered float64 `json:"unanswerable_refused"`
	CitationSupport   float64 `json:"citation_support"`
	// NonProse counts the summaries' sentences that are not prose, over
	// all questions, of Sentences in all.
	NonProse  int `json:"non_prose_sentences"`
	Sentences int `json:"summary_sentences"`
	// InContext is the share of the answerable questions whose answering
	// page was read where the model was shown the answer string.
	InContext float64 `json:"answer_in_model_context,omitempty"`
	Calls     int     `json:"llm_calls"`
	Tokens    int     `json:"tokens"`
	Seconds   float64 `json:"seconds"`
}

// SummarizeResearch averages outcomes.
func SummarizeResearch(outs []ResearchOutcome) ResearchScores {
	var s ResearchScores
	var unans, refs, ctx, ctxN, supported int
	var page, first3, inSum, inOpen, falseRef, refused, support float64
	for _, o := range outs {
		s.Questions++
		s.Calls += o.Calls
		s.Tokens += o.Tokens
		s.Seconds += o.Seconds
		if o.Error != "" {
			s.Failed++
		}
		support += o.Support
		supported++
		s.NonProse += len(o.NonProse)
		s.Sentences += summarySentences(o.Summary)
		if o.Unanswerable {
			unans++
			if o.Refused {
				refused++
			}
			continue
		}
		s.Answerable++
		refs += o.References
		if o.PageRank > 0 {
			page++
		}
		if o.PageRank > 0 && o.PageRank <= 3 {
			first3++
		}
		if o.InSummary {
			inSum++
		}
		if o.InOpening {
			inOpen++
		}
		if o.Refused {
			falseRef++
		}
		if o.InContext != nil && o.PageRead {
			ctxN++
			if *o.InContext {
				ctx++
			}
		}
	}
	share := func(x float64, n int) float64 {
		if n == 0 {
			return 0
		}
		return x / float64(n)
	}
	a := s.Answerable
	s.PageAmongRefs, s.PageInFirst3, s.MeanReferences = share(page, a), share(first3, a), share(float64(refs), a)
	s.InSummary, s.InOpening, s.FalseRefusals = share(inSum, a), share(inOpen, a), share(falseRef, a)
	s.RefusedUnanswered = share(refused, unans)
	s.CitationSupport = share(support, supported)
	s.InContext = share(float64(ctx), ctxN)
	return s
}

// AskOutcome is one ask's figures on its question.
type AskOutcome struct {
	ID           string  `json:"id"`
	Unanswerable bool    `json:"unanswerable"`
	Right        bool    `json:"right"`
	Refused      bool    `json:"refused"`
	Confidence   float64 `json:"confidence"`
	// Answer is what ask said, to read why it was right or wrong.
	Answer string `json:"answer"`
	// NonProse are the answer's quoted sentences that are not prose
	// (NonProse): a heading, a fragment, code quoted as a sentence.
	NonProse []string `json:"non_prose,omitempty"`
	// InRead reports an answer string in the chunks ask read (nil when
	// they were not recorded): the search found the answer, and the
	// choice of what to quote decides.
	InRead  *bool   `json:"answer_in_chunks_read,omitempty"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// AskScores are a dataset's ask figures. ConfidentWrong is the share of
// answered questions given with confidence ≥ 0.5 and wrong; AUC is how
// well confidence separates right from wrong answers among answered ones
// (0.5: not at all).
type AskScores struct {
	Questions         int     `json:"questions"`
	Answerable        int     `json:"answerable"`
	Right             float64 `json:"right"`
	FalseRefusals     float64 `json:"false_refusals"`
	RefusedUnanswered float64 `json:"unanswerable_refused"`
	ConfidentWrong    float64 `json:"confident_and_wrong"`
	AUC               float64 `json:"confidence_auc"`
	// InRead is the share of answerable questions whose answer string
	// is in the chunks ask read, and RightOfRead the share of those
	// answered right: a search that missed the answer against a choice
	// of sentences that missed it (both 0 when the chunks read were not
	// recorded).
	InRead      float64 `json:"answer_in_chunks_read,omitempty"`
	RightOfRead float64 `json:"right_of_read,omitempty"`
	// NonProse counts the answers' quoted sentences that are not prose,
	// over all questions answered, of Sentences in all.
	NonProse  int     `json:"non_prose_sentences"`
	Sentences int     `json:"quoted_sentences"`
	Seconds   float64 `json:"seconds"`
}

// ScoreAsk is the outcome of an answer to q (refused: ask said it does
// not know).
func ScoreAsk(q AnswerQuestion, answer string, refused bool, confidence float64) AskOutcome {
	o := AskOutcome{ID: q.ID, Unanswerable: q.Unanswerable, Refused: refused, Confidence: confidence, Answer: answer}
	if !refused {
		o.Right = q.Holds(answer)
		o.NonProse = NonProse(answer)
	}
	return o
}

// SummarizeAsk averages ask outcomes.
func SummarizeAsk(outs []AskOutcome) AskScores {
	var s AskScores
	var unans, refused, right, falseRef, answered, confWrong, read, rightRead int
	var rightConf, wrongConf []float64
	for _, o := range outs {
		s.Questions++
		s.Seconds += o.Seconds
		if !o.Refused {
			s.NonProse += len(o.NonProse)
			s.Sentences += summarySentences(o.Answer)
		}
		if o.Unanswerable {
			unans++
			if o.Refused {
				refused++
			} else {
				answered++
				wrongConf = append(wrongConf, o.Confidence) // any answer to it is wrong
				if o.Confidence >= 0.5 {
					confWrong++
				}
			}
			continue
		}
		s.Answerable++
		if o.InRead != nil && *o.InRead {
			read++
			if o.Right && !o.Refused {
				rightRead++
			}
		}
		switch {
		case o.Refused:
			falseRef++
		case o.Right:
			right++
			answered++
			rightConf = append(rightConf, o.Confidence)
		default:
			answered++
			wrongConf = append(wrongConf, o.Confidence)
			if o.Confidence >= 0.5 {
				confWrong++
			}
		}
	}
	if s.Answerable > 0 {
		s.Right = float64(right) / float64(s.Answerable)
		s.FalseRefusals = float64(falseRef) / float64(s.Answerable)
		s.InRead = float64(read) / float64(s.Answerable)
	}
	if read > 0 {
		s.RightOfRead = float64(rightRead) / float64(read)
	}
	if unans > 0 {
		s.RefusedUnanswered = float64(refused) / float64(unans)
	}
	if answered > 0 {
		s.ConfidentWrong = float64(confWrong) / float64(answered)
	}
	s.AUC = AUC(rightConf, wrongConf)
	return s
}

// AUC is the area under the ROC curve of scores separating pos from neg
// (the chance a random positive outscores a random negative; ties count
// half); 0.5 when either side is empty.
func AUC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return 0.5
	}
	sort.Float64s(neg)
	var sum float64
	for _, p := range pos {
		lo := sort.SearchFloat64s(neg, p)
		hi := sort.Search(len(neg), func(i int) bool { return neg[i] > p })
		sum += float64(lo) + 0.5*float64(hi-lo)
	}
	return sum / float64(len(pos)*len(neg))
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// summarySentences counts a summary's sentences as NonProse reads them.
func summarySentences(summary string) int {
	n := 0
	for _, part := range citeSplitRE.Split(fenceRE.ReplaceAllString(summary, ""), -1) {
		for _, sp := range textseg.Spans(part) {
			if strings.TrimSpace(part[sp.Start:sp.End]) != "" {
				n++
			}
		}
	}
	return n
}
