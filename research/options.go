package research

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/store"
)

// Levels.
const (
	LevelQuick         = "quick"
	LevelStandard      = "standard"
	LevelComprehensive = "comprehensive"
)

// Limits.
const (
	MaxQuestionChars = 2000
	MaxDepth         = 5
	MaxBreadth       = 20
	// MaxTimeout bounds a research's wall-time budget: a day.
	MaxTimeout = 24 * time.Hour
	// DefaultConfidence is the early-stop threshold.
	DefaultConfidence = 0.7
	// ResultsPerSearch is how many hits each sub-question's search keeps
	// when the breadth is set by a level.
	ResultsPerSearch = 5
)

// Options are a research's inputs.
type Options struct {
	Sources []string `json:"sources"`
	// Thread, on Create, names the thread the question follows up (empty:
	// a new thread). The research records it as ThreadID.
	Thread string `json:"-"`
	// Level is quick, standard or comprehensive; ignored when Breadth or
	// Depth is set.
	Level string `json:"level,omitempty"`
	// Breadth is the number of sub-questions (queries) per round; Depth the
	// deepest sub-question level (root = 0), at most 5. Both 0 = use Level.
	Breadth int `json:"breadth,omitempty"`
	Depth   int `json:"depth,omitempty"`
	// DepthSet records an explicit depth (a depth of 0 is meaningful).
	DepthSet bool `json:"depth_set,omitempty"`
	// MaxTokens caps input+output tokens of all LLM calls (0 = none).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Timeout caps the wall time (0 = none).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Confidence is the early-stop threshold (default 0.7).
	Confidence float64 `json:"confidence,omitempty"`
}

// Effort is what the options resolve to.
type Effort struct {
	MinSub, MaxSub int
	// Depth is the deepest sub-question level: rounds = Depth + 1.
	Depth int
	// PerSearch is how many results each search keeps.
	PerSearch int
}

// Validate checks the question and options and fills defaults. A
// legacy --depth N given alone means one pass with breadth N:
// the caller turns it into Breadth N, Depth 0.
func Validate(question string, o *Options) (string, error) {
	// Control characters (a terminal's ESC sequences) and invalid bytes
	// never reach the store or a later "research list".
	q := textclean.Line(question)
	switch n := utf8.RuneCountInString(q); {
	case n == 0:
		return "", &store.ValidationError{Field: "question", Rule: "must not be empty"}
	case n > MaxQuestionChars:
		return "", &store.ValidationError{Field: "question", Rule: fmt.Sprintf("must be at most %d characters, got %d", MaxQuestionChars, n)}
	}
	if len(o.Sources) == 0 {
		return "", &store.ValidationError{Field: "source", Rule: "at least one source is required (web, arxiv, wikipedia or kb:<name>)"}
	}
	explicit := o.Breadth != 0 || o.DepthSet
	if o.Level == "" && !explicit {
		o.Level = LevelStandard
	}
	switch o.Level {
	case "", LevelQuick, LevelStandard, LevelComprehensive:
	default:
		return "", &store.ValidationError{Field: "level", Rule: fmt.Sprintf("must be quick, standard or comprehensive, got %q", o.Level)}
	}
	if explicit {
		o.Level = ""
		if o.Breadth == 0 {
			o.Breadth = 5
		}
		if !o.DepthSet {
			o.Depth = 2
		}
		o.DepthSet = true
	}
	if o.Breadth < 0 || o.Breadth > MaxBreadth {
		return "", &store.ValidationError{Field: "breadth", Rule: fmt.Sprintf("must be between 1 and %d, got %d", MaxBreadth, o.Breadth)}
	}
	if o.Depth < 0 || o.Depth > MaxDepth {
		return "", &store.ValidationError{Field: "depth", Rule: fmt.Sprintf("must be between 0 and %d, got %d", MaxDepth, o.Depth)}
	}
	if o.MaxTokens < 0 {
		return "", &store.ValidationError{Field: "max-tokens", Rule: "must not be negative"}
	}
	if o.MaxTokens > 0 && o.MaxTokens < MinTokenBudget {
		return "", &store.ValidationError{Field: "max-tokens", Rule: fmt.Sprintf("must be 0 (no limit) or at least %d, got %d", MinTokenBudget, o.MaxTokens)}
	}
	if o.Timeout < 0 {
		return "", &store.ValidationError{Field: "timeout", Rule: "must not be negative"}
	}
	if o.Timeout > MaxTimeout {
		return "", &store.ValidationError{Field: "timeout", Rule: fmt.Sprintf("must be at most %s (0 = none), got %s", MaxTimeout, o.Timeout)}
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Confidence < 0 || o.Confidence > 1 {
		return "", &store.ValidationError{Field: "confidence", Rule: fmt.Sprintf("must be between 0 and 1, got %g", o.Confidence)}
	}
	return q, nil
}

// MinTokenBudget is the smallest --max-tokens that leaves room to plan and
// write a report.
const MinTokenBudget = 8000

// Effort resolves validated options. Levels: quick 3–5
// sub-questions, standard 5–7, both depth 1; comprehensive 7–10, depth 2.
// Depth counts sub-question levels below the root ones, so a level's
// depth 1 allows one round of follow-up sub-questions.
func (o Options) Effort() Effort {
	switch o.Level {
	case LevelQuick:
		return Effort{MinSub: 3, MaxSub: 5, Depth: 1, PerSearch: ResultsPerSearch}
	case LevelStandard:
		return Effort{MinSub: 5, MaxSub: 7, Depth: 1, PerSearch: ResultsPerSearch}
	case LevelComprehensive:
		return Effort{MinSub: 7, MaxSub: 10, Depth: 2, PerSearch: ResultsPerSearch}
	}
	return Effort{MinSub: o.Breadth, MaxSub: o.Breadth, Depth: o.Depth, PerSearch: ResultsPerSearch}
}
