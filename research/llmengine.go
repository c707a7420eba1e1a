package research

import (
	"context"
	"fmt"
	"strings"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research/verify"
)

// LLMEngine thinks with a language model through structured output.
type LLMEngine struct {
	Provider llm.Provider
	// Temperature for every call (nil = the provider's default).
	Temperature *float64
}

var _ Engine = (*LLMEngine)(nil)

// Name implements Engine.
func (e *LLMEngine) Name() string { return e.Provider.Name() }

// ReadsPages implements PageReader.
func (e *LLMEngine) ReadsPages() bool { return true }

const systemPrompt = "You are one agent of Quarry, a research assistant that answers from evidence. Be precise and terse. Answer with one JSON object that matches the given schema and nothing else."

// planReply asks for what the research runs on and no more: the search
// steps shown to the user and the plan's keywords follow from the
// sub-questions and their queries, so the model does not write them.
type planReply struct {
	Strategy     string `json:"strategy" jsonschema:"how the research will go about the question, in one sentence"`
	SubQuestions []struct {
		Text     string   `json:"text"`
		Priority int      `json:"priority" jsonschema:"1 = most important; unique"`
		Queries  []string `json:"queries" jsonschema:"1-2 search queries for this sub-question"`
	} `json:"sub_questions"`
	EstimatedSeconds int `json:"estimated_seconds"`
}

// Plan implements Engine.
func (e *LLMEngine) Plan(ctx context.Context, in PlanInput) (*PlanOutput, llm.Usage, error) {
	prompt := fmt.Sprintf("Plan research on this question.\n\nQuestion: %s\nSources available: %s\n\nGive %d to %d prioritised sub-questions that together answer it, each with 1-2 search queries.",
		in.Question, strings.Join(in.Sources, ", "), in.Effort.MinSub, in.Effort.MaxSub)
	if len(in.History) > 0 {
		prompt += "\n\nThe question follows these earlier ones in the same conversation; resolve what it refers to (he, it, that, the first one) with them, and do not research again what they already answered:\n" + historyText(in.History)
	}
	rep, usage, err := llm.Structured[planReply](ctx, e.Provider, "research_plan", e.req(prompt, max(800, 150*in.Effort.MaxSub)))
	if err != nil {
		return nil, usage, err
	}
	out := &PlanOutput{Plan: Plan{Strategy: rep.Strategy, EstimatedSeconds: rep.EstimatedSeconds}}
	seen := map[string]bool{}
	for i, sq := range rep.SubQuestions {
		queries := nonEmpty(sq.Queries)
		text := strings.TrimSpace(sq.Text)
		out.SubQuestions = append(out.SubQuestions, PlannedQuestion{Text: text, Priority: sq.Priority, Queries: queries})
		out.Plan.Steps = append(out.Plan.Steps, SearchStep(i+1, in.Sources, text, queries))
		for _, q := range queries {
			if k := strings.ToLower(q); !seen[k] {
				seen[k] = true
				out.Plan.Keywords = append(out.Plan.Keywords, q)
			}
		}
	}
	return out, usage, nil
}

type analysisReply struct {
	Learnings []struct {
		Text      string   `json:"text" jsonschema:"one fact or insight, self-contained"`
		SourceIDs []string `json:"source_ids" jsonschema:"ids (S1, S2, ...) of the sources that say it"`
	} `json:"learnings"`
	Directions []struct {
		Text     string   `json:"text" jsonschema:"an open question worth researching next"`
		ParentID string   `json:"parent_id" jsonschema:"id (Q1, ...) of the sub-question it follows from"`
		Queries  []string `json:"queries"`
	} `json:"directions"`
	Facts []struct {
		SourceID string `json:"source_id" jsonschema:"id (S1, S2, ...) of the source quoted"`
		Quote    string `json:"quote" jsonschema:"one sentence copied word for word from that source, 10-500 characters, that states a checkable claim"`
		Topic    string `json:"topic" jsonschema:"the thing and the property the claim is about, as a short noun phrase (e.g. Eiffel Tower height); reuse a listed topic when it is the same"`
		Value    string `json:"value" jsonschema:"the value the quote gives for the topic, as written: a number with its unit, a date or a name"`
	} `json:"facts,omitempty" jsonschema:"checkable facts quoted from the new data"`
	IsComplete bool    `json:"is_complete" jsonschema:"true when the original question is fully answered"`
	Confidence float64 `json:"confidence" jsonschema:"0-1"`
	Relevance  float64 `json:"relevance" jsonschema:"0-1: how relevant the new data is"`
	Quality    float64 `json:"quality" jsonschema:"0-1: how trustworthy the new data is"`
}

// Facts asked of an analysis.
const (
	factsPerSource      = 2
	maxFactsPerAnalysis = 10
	// maxLearnings is how many learnings an analysis asks for.
	maxLearnings = 5
)

// Analyze implements Engine.
func (e *LLMEngine) Analyze(ctx context.Context, in AnalyzeInput) (*Analysis, llm.Usage, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Analyze the research results and extract: 1. at most %d key learnings, one sentence each, citing their source ids; 2. new directions (questions that remain unanswered, at most %d); 3. facts: up to %d per source of the new data and %d in all, each a sentence quoted word for word from one source that states a number, a date, a name or a comparison relevant to the question, with its topic and value (quotes are checked against the source text; one that is not there is thrown away); 4. whether the original question is fully answered, with a confidence 0-1.\n\nOriginal question: %s\n", maxLearnings, max(1, in.MaxDirections), factsPerSource, maxFactsPerAnalysis, in.Question)
	if len(in.Topics) > 0 {
		fmt.Fprintf(&b, "\nFact topics so far: %s\n", strings.Join(in.Topics, "; "))
	}
	b.WriteString("\nPrevious learnings:\n")
	for _, l := range in.Learnings {
		fmt.Fprintf(&b, "- %s [%s]\n", l.Text, strings.Join(l.SourceIDs, ","))
	}
	b.WriteString("\nNew data:\n")
	shown := map[string]bool{} // a source several sub-questions found is printed once
	for _, sq := range in.SubQuestions {
		fmt.Fprintf(&b, "\n## %s %s\n", sq.ID, sq.Text)
		for _, id := range sq.SourceIDs {
			s := in.Sources[id]
			switch {
			case s == nil:
			case shown[id]:
				fmt.Fprintf(&b, "[%s] (above)\n", s.ID)
			default:
				shown[id] = true
				// What bears on this sub-question, not the source's first bytes.
				fmt.Fprintf(&b, "[%s] %s (%s)\n%s\n", s.ID, s.Title, s.URL, passage.Select(s.Content, passage.NewQuery(in.Question, sq.Text), in.CharsPerSource))
			}
		}
	}
	rep, usage, err := llm.Structured[analysisReply](ctx, e.Provider, "research_analysis", e.req(b.String(), analyzeOutputTokens))
	if err != nil {
		return nil, usage, err
	}
	a := &Analysis{IsComplete: rep.IsComplete, Confidence: clamp01(rep.Confidence), Relevance: clamp01(rep.Relevance), Quality: clamp01(rep.Quality)}
	for _, l := range rep.Learnings {
		a.Learnings = append(a.Learnings, Learning{Text: strings.TrimSpace(l.Text), SourceIDs: l.SourceIDs})
	}
	// Facts beyond what was asked for (per source, per analysis) are not
	// kept: the limits bound what verification and the writer's prompt
	// carry whatever the model returns.
	perSource := map[string]int{}
	for _, f := range rep.Facts {
		id := strings.TrimSpace(f.SourceID)
		if perSource[id] == factsPerSource || len(a.Claims) == maxFactsPerAnalysis {
			continue
		}
		perSource[id]++
		a.Claims = append(a.Claims, Claim{SourceID: id, Claim: verify.Claim{Text: f.Quote, Topic: f.Topic, Value: f.Value}})
	}
	for i, d := range rep.Directions {
		a.Directions = append(a.Directions, Direction{Text: strings.TrimSpace(d.Text), ParentID: d.ParentID, Queries: nonEmpty(d.Queries), Score: float64(len(rep.Directions) - i)})
	}
	return a, usage, nil
}

// Write implements Engine.
func (e *LLMEngine) Write(ctx context.Context, in WriteInput) (*Draft, llm.Usage, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Write a research report that answers the question from the sources below. Every sentence that states a fact ends with a citation marker naming its source, like [cite:S3] or [cite:S3,S7], or the listed fact it states, like [cite:F12]. Cite only the ids listed below; never invent a source, a fact id or a URL. Give a title, an executive summary of %d-%d words and sections with headings, each section at least %d words drawing on at least %d sources, as far as the evidence allows (never pad: say less when the sources say less). The executive summary opens with the answer: one or two sentences that answer the question directly, with citations (for a comparison, the compared facts of each side); when the sources do not answer it, it says so first. Write only what bears on the question; a source that does not is not cited. Do not write a references list or a conflicts section; Quarry adds both.\n\nQuestion: %s\n", SummaryMinWords, SummaryMaxWords, SectionMinWords, SectionMinSources, in.Question)
	if in.Plan != nil && in.Plan.Strategy != "" {
		fmt.Fprintf(&b, "Strategy: %s\n", in.Plan.Strategy)
	}
	if len(in.History) > 0 {
		b.WriteString("\nEarlier in this conversation (context for what the question refers to; not a source: cite only the sources below):\n" + historyText(in.History))
	}
	b.WriteString("\nLearnings:\n")
	for _, l := range in.Learnings {
		fmt.Fprintf(&b, "- %s [%s]\n", l.Text, strings.Join(l.SourceIDs, ","))
	}
	if len(in.Facts) > 0 {
		b.WriteString("\nFacts (checked across sources):\n")
		for _, f := range in.Facts {
			fmt.Fprintf(&b, "- [%s] %s (%s)\n", f.ID, clip(f.Text, 200), f.SourceID)
		}
	}
	b.WriteString("\nSources:\n")
	ids := in.Evidence
	if ids == nil {
		ids = sortedIDs(in.Sources)
	}
	q := passage.NewQuery(in.Question)
	for _, id := range ids {
		s := in.Sources[id]
		if s == nil {
			continue
		}
		fmt.Fprintf(&b, "[%s] %s (%s)\n%s\n\n", s.ID, s.Title, s.URL, passage.Select(s.Content, q, in.CharsPerSource))
	}
	maxTok := in.MaxTokens
	if maxTok == 0 {
		maxTok = 4096
	}
	d, usage, err := llm.Structured[Draft](ctx, e.Provider, "research_report", e.req(b.String(), maxTok))
	if err != nil {
		return nil, usage, err
	}
	return &d, usage, nil
}

func (e *LLMEngine) req(prompt string, maxTokens int) llm.Request {
	return llm.Request{System: systemPrompt, Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}, MaxTokens: maxTokens, Temperature: e.Temperature}
}

func clamp01(f float64) float64 { return max(0, min(1, f)) }

func nonEmpty(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

type judgeReply struct {
	Verdicts []struct {
		ID        string `json:"id" jsonschema:"the passage id (P1, P2, ...)"`
		Supported bool   `json:"supported" jsonschema:"true only when the evidence states what the passage claims"`
		Reason    string `json:"reason" jsonschema:"for an unsupported passage, what the evidence does not say, in one sentence"`
	} `json:"verdicts" jsonschema:"one verdict per passage"`
}

var _ Judge = (*LLMEngine)(nil)

// Judge implements Judge: one call for the batch.
func (e *LLMEngine) Judge(ctx context.Context, items []JudgeItem) ([]Verdict, llm.Usage, error) {
	var b strings.Builder
	b.WriteString("You check the citations of a research report. For each passage below decide whether the evidence quoted from the sources it cites supports it. A passage is supported only when the evidence states what it claims: the same numbers, dates and names, the same direction of any comparison, no negation flipped and no claim stronger than the evidence. Paraphrase is fine. Judge only from the evidence shown, not from what you know. Give one verdict per passage id.\n")
	for _, it := range items {
		fmt.Fprintf(&b, "\nPassage %s: %s\nEvidence:\n%s\n", it.ID, it.Passage, it.Evidence)
	}
	rep, usage, err := llm.Structured[judgeReply](ctx, e.Provider, "citation_judge", e.req(b.String(), 200+80*len(items)))
	if err != nil {
		return nil, usage, err
	}
	out := make([]Verdict, len(rep.Verdicts))
	for i, v := range rep.Verdicts {
		out[i] = Verdict{ID: v.ID, Supported: v.Supported, Reason: v.Reason}
	}
	return out, usage, nil
}
