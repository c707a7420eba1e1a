package research

import (
	"context"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research/verify"
)

// Engine does the thinking of a research: planning, analysis and writing.
// LLMEngine asks a language model; research/offline is extractive.
type Engine interface {
	// Name labels the engine in reports (OfflineEngine, "openai:gpt-4o").
	Name() string
	Plan(ctx context.Context, in PlanInput) (*PlanOutput, llm.Usage, error)
	Analyze(ctx context.Context, in AnalyzeInput) (*Analysis, llm.Usage, error)
	Write(ctx context.Context, in WriteInput) (*Draft, llm.Usage, error)
}

// PlanInput asks for a plan.
type PlanInput struct {
	Question string
	Sources  []string
	Effort   Effort
	// History holds the thread's earlier questions and answers, oldest
	// first: a follow-up may refer to them ("when did he die?").
	History []Turn
}

// PlanOutput is a plan with its prioritised root sub-questions.
type PlanOutput struct {
	Plan         Plan
	SubQuestions []PlannedQuestion
}

// PlannedQuestion is a sub-question as planned: its text and the search
// queries to run for it (the text itself when none).
type PlannedQuestion struct {
	Text     string
	Priority int
	Queries  []string
}

// AnalyzeInput is one round's new material.
type AnalyzeInput struct {
	Question string
	// SubQuestions are this round's, with their results.
	SubQuestions []SubQuestion
	// Sources holds every source of the research by id; the round's new
	// ones are named in SubQuestions' SourceIDs.
	Sources   map[string]*Source
	Learnings []Learning
	// MaxDirections caps the directions asked for.
	MaxDirections int
	// CharsPerSource caps how much of each source the engine may read.
	CharsPerSource int
	// Topics are the fact topics named in earlier rounds, for an engine
	// that extracts facts to reuse.
	Topics []string
}

// Analysis is the reflect agent's output.
type Analysis struct {
	Learnings  []Learning  `json:"learnings"`
	Directions []Direction `json:"directions"`
	IsComplete bool        `json:"is_complete"`
	Confidence float64     `json:"confidence"`
	Relevance  float64     `json:"relevance"`
	Quality    float64     `json:"quality"`
	// Claims are facts the engine took from the round's sources (an
	// engine that does not extract facts leaves them to the verifying
	// stage's extractive reading).
	Claims []Claim `json:"claims,omitempty"`
}

// Claim is a fact an engine took from a source: a quote, the topic it is
// about and the value it gives. The verifying stage keeps it only when the
// quote is found in the source.
type Claim struct {
	SourceID string `json:"source_id"`
	verify.Claim
}

// Direction is a question still open, with the sub-question it follows.
type Direction struct {
	Text     string   `json:"text"`
	ParentID string   `json:"parent_id,omitempty"`
	Queries  []string `json:"queries,omitempty"`
	Score    float64  `json:"score,omitempty"`
}

// WriteInput is everything the writer may use.
type WriteInput struct {
	Question string
	// History is the thread's earlier questions and answers: context for
	// the writer, never a source to cite.
	History      []Turn
	Plan         *Plan
	SubQuestions []SubQuestion
	Sources      map[string]*Source
	Learnings    []Learning
	// Facts are the facts the writer may cite as [cite:F<n>]; only these
	// resolve (a fact cites the source it was taken from).
	Facts []FactRef
	// MaxTokens caps the writer's reply (budget reserve); 0 = default.
	MaxTokens int
	// CharsPerSource caps how much of each source the writer may read.
	CharsPerSource int
	// Evidence lists the sources the report should cite, best first: the
	// writer is shown these only. Nil shows every source; empty (not
	// nil) means none bears on the question.
	Evidence []string
}

// PageReader is an Engine that reads pages, not passages: a model shown
// the passages of each source that bear on its sub-question (passage.
// Select) can find the one that answers among several of a page. The
// runner asks a source that can (search.PageSearcher) for pages, each
// with its passages among the source's best. The offline engine is not
// one: it quotes by the words a passage shares with the question, and
// more passages of a page gave it more that share words but do not
// answer (docs/answer-quality.md).
type PageReader interface {
	ReadsPages() bool
}

// Ranker chooses, among the sources a research read (ids, in the order
// its sub-questions found them), those that bear on the question, best
// first.
type Ranker interface {
	Evidence(question string, ids []string, sources map[string]*Source) []string
}

// FactRef is a fact as a writer sees it.
type FactRef struct {
	ID, SourceID, Text string
}

// Draft is a written report whose sentences cite sources as [cite:S<n>]
// or facts as [cite:F<n>].
type Draft struct {
	Title    string    `json:"title"`
	Summary  string    `json:"summary"`
	Sections []Section `json:"sections"`
}

// OfflineEngine is the name of the offline extractive engine, which uses
// no language model.
const OfflineEngine = "offline"
