package research

import (
	"time"

	"github.com/quarryhq/quarry/llm"
)

// Event types. Every event carries the research id and a sequence number so
// a client can resume the stream after the last one it saw.
const (
	EventStatus   = "status"   // query status and stage changed
	EventAgent    = "agent"    // an agent's state changed
	EventMessage  = "message"  // an agent message
	EventSource   = "source"   // a source was read
	EventLearning = "learning" // a learning was kept
	EventWarning  = "warning"  // something degraded (a source failed, a budget stopped the loop)
	EventUsage    = "usage"    // tokens spent so far
	EventReport   = "report"   // the report is written
)

// Agents.
const (
	AgentPlanner    = "planner"
	AgentResearcher = "researcher"
	AgentReflector  = "reflector"
	AgentWriter     = "writer"
)

// Agent states.
const (
	AgentIdle      = "idle"
	AgentThinking  = "thinking"
	AgentWorking   = "working"
	AgentCompleted = "completed"
	AgentFailed    = "failed"
)

// Message kinds.
const (
	MsgRequest      = "request"
	MsgResponse     = "response"
	MsgNotification = "notification"
	MsgError        = "error"
)

// Event is one thing that happened in a research. Exactly one of the
// pointer fields is set, matching Type.
type Event struct {
	ResearchID string    `json:"research_id"`
	Seq        int64     `json:"seq"`
	Type       string    `json:"type"`
	At         time.Time `json:"at"`

	Status   *StatusChange `json:"status,omitempty"`
	Agent    *AgentState   `json:"agent,omitempty"`
	Message  *AgentMessage `json:"message,omitempty"`
	Source   *Source       `json:"source,omitempty"`
	Learning *Learning     `json:"learning,omitempty"`
	Warning  string        `json:"warning,omitempty"`
	Usage    *llm.Usage    `json:"usage,omitempty"`
	Report   *ReportReady  `json:"report,omitempty"`
}

// StatusChange is the query status and stage.
type StatusChange struct {
	Status string `json:"status"`
	Stage  string `json:"stage"`
}

// AgentState is one agent's state.
type AgentState struct {
	Agent    string  `json:"agent"`
	Status   string  `json:"status"`
	Progress float64 `json:"progress"`
	Task     string  `json:"task,omitempty"`
	// Result is the agent's intermediate result, in a sentence.
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// AgentMessage is one entry of the agent message log. An
// empty To is a broadcast.
type AgentMessage struct {
	From    string `json:"from"`
	To      string `json:"to,omitempty"`
	Kind    string `json:"kind"`
	Content string `json:"content"`
}

// ReportReady announces the written report.
type ReportReady struct {
	Title      string `json:"title"`
	Sections   int    `json:"sections"`
	References int    `json:"references"`
}
