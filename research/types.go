// Package research is Quarry's research engine: the iterative loop of plan →
// execute → analyze → decide → write over any set of search
// sources, with token and time budgets that keep a reserve for the report,
// typed events for every agent, and checkpoints after every step so a run
// can be resumed. The thinking is done by an Engine: one backed by a
// language model (LLMEngine) or the offline extractive engine
// (research/offline). The package never imports a provider, a database
// driver or net/http.
package research

import (
	"fmt"
	"strings"
	"time"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research/verify"
	"github.com/quarryhq/quarry/search"
)

// Query statuses.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	// StatusCanceled: stopped by Cancel; Run continues it.
	StatusCanceled = "canceled"
)

// Stages.
const (
	StagePlanning     = "planning"
	StageExecuting    = "executing"
	StageVerifying    = "verifying"
	StageSynthesizing = "synthesizing"
	StageCompleted    = "completed"
	StageFailed       = "failed"
)

// stageAnalyzing keys the analyses' usage and time: they run within the
// executing stage but are accounted apart (reflect agent).
const stageAnalyzing = "analyzing"

// stageChecking keys the citation judge's usage and time: it runs within
// the synthesizing stage, after the report is written.
const stageChecking = "checking"

// Research is one research run: its input, everything it found, and its
// report. It is also the checkpoint: stored whole after every step.
type Research struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Status   string `json:"status"`
	Stage    string `json:"stage"`
	// ThreadID is the conversation the research belongs to; History the
	// earlier answers of that thread it was given as context.
	ThreadID     string        `json:"thread_id"`
	History      []Turn        `json:"history,omitempty"`
	Options      Options       `json:"options"`
	Engine       string        `json:"engine"`
	Plan         *Plan         `json:"plan,omitempty"`
	SubQuestions []SubQuestion `json:"sub_questions"`
	Sources      []Source      `json:"sources"`
	Learnings    []Learning    `json:"learnings"`
	Rounds       []Round       `json:"rounds"`
	// Facts and Discrepancies come from the verifying stage.
	Facts         []verify.Fact        `json:"facts"`
	Discrepancies []verify.Discrepancy `json:"discrepancies"`
	// RejectedClaims are the model's facts that verification threw out
	// (a quote not found in its source, a wrong length).
	RejectedClaims []verify.Rejected `json:"rejected_claims,omitempty"`
	Report         *Report           `json:"report,omitempty"`
	// Checks is the citation check of the report.
	Checks     *Checks     `json:"checks,omitempty"`
	Usage      UsageReport `json:"usage"`
	Timings    Timings     `json:"timings"`
	Warnings   []string    `json:"warnings,omitempty"`
	StopReason string      `json:"stop_reason,omitempty"`
	Error      string      `json:"error,omitempty"`
	// FailedStage is the stage a failed or interrupted research stopped
	// in; a resume starts there.
	FailedStage string `json:"failed_stage,omitempty"`
	// Attempts counts the runs of this research that started and have not
	// ended (a run that completes, fails, is canceled or hands over at a
	// shutdown sets it back to 0): above MaxAttempts a queued research is
	// failed instead of run again, so a research whose runs kill their
	// process cannot crash-loop its workers.
	Attempts  int       `json:"attempts,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Plan is the planning agent's output.
type Plan struct {
	Strategy         string   `json:"strategy"`
	Keywords         []string `json:"keywords"`
	Steps            []Step   `json:"steps"`
	EstimatedSeconds int      `json:"estimated_seconds"`
}

// Step is one numbered search step of a plan.
type Step struct {
	Number      int      `json:"number"`
	Description string   `json:"description"`
	Sources     []string `json:"sources"`
	Keywords    []string `json:"keywords"`
}

// SearchStep is step n of a plan: search the sources for a sub-question.
func SearchStep(n int, sources []string, text string, keywords []string) Step {
	return Step{Number: n, Description: fmt.Sprintf("Search %s for %q", strings.Join(sources, ", "), text), Sources: sources, Keywords: keywords}
}

// Sub-question statuses.
const (
	SubPending = "pending"
	SubDone    = "done"
	SubFailed  = "failed"
)

// SubQuestion is one question the research pursues. Root
// sub-questions have depth 0; a child follows a direction its parent's
// round found and has depth parent+1.
type SubQuestion struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Priority int      `json:"priority"`
	Depth    int      `json:"depth"`
	ParentID string   `json:"parent_id,omitempty"`
	Status   string   `json:"status"`
	Queries  []string `json:"queries,omitempty"`
	// SourceIDs are the sources its searches returned, in rank order.
	SourceIDs []string `json:"source_ids,omitempty"`
	Error     string   `json:"error,omitempty"`
	// Hits are its search results between the search and their merge into
	// the research's sources (kept in checkpoints only).
	Hits []search.Result `json:"hits,omitempty"`
}

// Source is a document read during the research. Citations may only point
// at these.
type Source struct {
	ID          string     `json:"id"`
	URL         string     `json:"url"`
	Title       string     `json:"title"`
	Domain      string     `json:"domain"`
	Kind        string     `json:"kind"`
	Credibility float64    `json:"credibility"`
	AccessedAt  time.Time  `json:"accessed_at"`
	Published   *time.Time `json:"published,omitempty"`
	Authors     []string   `json:"authors,omitempty"`
	// Content is the text read, at most MaxContentChars.
	Content string `json:"content,omitempty"`
}

// MaxContentChars is kept per source.
const MaxContentChars = 10000

// Learning is something the research learned, with the sources that say it.
type Learning struct {
	Text      string   `json:"text"`
	SourceIDs []string `json:"source_ids"`
	// SubQuestionID is the sub-question whose results it came from.
	SubQuestionID string  `json:"sub_question_id,omitempty"`
	Round         int     `json:"round"`
	Score         float64 `json:"score,omitempty"`
}

// MaxLearnings is how many of the most recent learnings are kept.
const MaxLearnings = 20

// Round records one pass of execute → analyze → decide.
type Round struct {
	Depth    int       `json:"depth"`
	Analysis *Analysis `json:"analysis,omitempty"`
	Decided  bool      `json:"decided"`
}

// Report is the written result. Markdown is the rendered report with
// numbered citations; Sections keep the internal [cite:S<n>] markers.
type Report struct {
	Title      string      `json:"title"`
	Summary    string      `json:"summary"`
	Sections   []Section   `json:"sections"`
	References []Reference `json:"references"`
	// Conflicts is the "Conflicting evidence" part: each discrepancy and
	// how it was resolved, with citations.
	Conflicts []Conflict `json:"conflicts"`
	Metadata  Metadata   `json:"metadata"`
	// Quality is 0–1: see QualityScore.
	Quality  float64 `json:"quality"`
	Markdown string  `json:"markdown"`
	Engine   string  `json:"engine"`
	// Notes are printed under the report (offline engine label, budget
	// stops, dropped citations).
	Notes []string `json:"notes,omitempty"`
}

// Conflict renders one discrepancy in the report.
type Conflict struct {
	DiscrepancyID string `json:"discrepancy_id"`
	Topic         string `json:"topic"`
	Strategy      string `json:"strategy"`
	// Text states the values with numbered citations and the resolution.
	Text       string  `json:"text"`
	Confidence float64 `json:"confidence"`
}

// Metadata describes the report.
type Metadata struct {
	// SourcesByKind counts the sources read per kind (kb, web, arxiv, …).
	SourcesByKind map[string]int `json:"sources_by_kind"`
	Sources       int            `json:"sources"`
	References    int            `json:"references"`
	WordCount     int            `json:"word_count"`
	Facts         int            `json:"facts"`
	VerifiedFacts int            `json:"verified_facts"`
	// VerificationRate is verified facts over facts (0 with no facts).
	VerificationRate float64 `json:"verification_rate"`
	Discrepancies    int     `json:"discrepancies"`
}

// Section is one part of the report body.
type Section struct {
	Heading string `json:"heading"`
	Body    string `json:"body"`
}

// Reference is one numbered entry of the references list.
type Reference struct {
	Number     int       `json:"number"`
	SourceID   string    `json:"source_id"`
	URL        string    `json:"url"`
	Title      string    `json:"title"`
	Authors    []string  `json:"authors,omitempty"`
	AccessedAt time.Time `json:"accessed_at"`
}

// UsageReport is token usage overall and per stage.
type UsageReport struct {
	llm.Usage
	Stages map[string]llm.Usage `json:"stages,omitempty"`
}

// Timings are wall-clock seconds per stage and in total.
type Timings struct {
	Stages map[string]float64 `json:"stages,omitempty"`
	Total  float64            `json:"total_seconds"`
}
