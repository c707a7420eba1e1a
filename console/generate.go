package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/session"
)

// Model types: the seed's claude and vllm, and beyond it openai (or any
// OpenAI-compatible service) and ollama.
const (
	ModelClaude = "claude"
	ModelVLLM   = "vllm"
	ModelOpenAI = "openai"
	ModelOllama = "ollama"
)

// Generation defaults.
const (
	DefaultTemperature = 0.7
	DefaultMaxTokens   = 1000
	DefaultTopP        = 0.9
	// DefaultOllamaEndpoint is where a local Ollama serves its
	// OpenAI-compatible API.
	DefaultOllamaEndpoint = "http://127.0.0.1:11434/v1"
)

// Params are a generation's sampling parameters.
type Params struct {
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
}

// ModelConfig picks the model that writes an answer. APIKey is used for
// the one request it comes with: it is never stored, logged or echoed
// (it has no JSON name on the way out; see MarshalJSON).
type ModelConfig struct {
	Type       string `json:"type"`
	ModelName  string `json:"model_name"`
	APIKey     string `json:"api_key,omitempty"`
	Endpoint   string `json:"endpoint,omitempty"`
	Parameters Params `json:"parameters"`
}

// MarshalJSON leaves the key out, so a config that reaches a log, a
// stored run or a response carries none.
func (m ModelConfig) MarshalJSON() ([]byte, error) {
	type shown struct {
		Type       string `json:"type"`
		ModelName  string `json:"model_name"`
		Endpoint   string `json:"endpoint,omitempty"`
		Parameters Params `json:"parameters"`
	}
	return json.Marshal(shown{m.Type, m.ModelName, redactURL(m.Endpoint), m.Parameters})
}

// redactURL drops a URL's user information and query (either may hold a
// credential). A URL that does not parse, or has no host, is not shown at
// all: where its credential sits cannot be told (Check refuses such an
// endpoint before it is stored).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}

func field(name string) string { return "model_config." + name }

// Check applies the defaults and the seed's rules, with its messages.
func (m *ModelConfig) Check() error {
	p := &m.Parameters
	if p.Temperature == nil {
		p.Temperature = ptr(DefaultTemperature)
	}
	if p.TopP == nil {
		p.TopP = ptr(DefaultTopP)
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if t := *p.Temperature; t < 0 || t > 1 {
		return invalid(field("parameters.temperature"), "Temperature must be between 0.0 and 1.0")
	}
	if p.MaxTokens < 100 || p.MaxTokens > 4000 {
		return invalid(field("parameters.max_tokens"), "Max tokens must be between 100 and 4000")
	}
	if t := *p.TopP; t < 0 || t > 1 {
		return invalid(field("parameters.top_p"), "Top P must be between 0.0 and 1.0")
	}
	switch m.Type {
	case ModelClaude:
		if m.APIKey == "" {
			return invalid(field("api_key"), "api_key is required for Claude")
		}
		if !strings.HasPrefix(m.APIKey, "sk-ant-") {
			return invalid(field("api_key"), "Invalid Claude API key format")
		}
	case ModelVLLM:
		if m.Endpoint == "" {
			return invalid(field("endpoint"), "endpoint is required for vLLM")
		}
		if !httpURL(m.Endpoint) {
			return invalid(field("endpoint"), "Invalid vLLM endpoint URL")
		}
	case ModelOpenAI, ModelOllama:
	default:
		return invalid(field("type"), "type must be 'claude', 'vllm', 'openai' or 'ollama'")
	}
	if m.Endpoint != "" && !httpURL(m.Endpoint) {
		return invalid(field("endpoint"), "endpoint must be a valid HTTP(S) URL")
	}
	if strings.TrimSpace(m.ModelName) == "" {
		return invalid(field("model_name"), "model_name is required")
	}
	return nil
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func ptr[T any](v T) *T { return &v }

// ProviderOptions tune the model clients Service.Models builds (app's
// ConsoleModels).
type ProviderOptions struct {
	// Timeout bounds one model call (0: 2 minutes).
	Timeout time.Duration
	// MaxRetries of a 429, 5xx or connection failure (0: 2; negative: none).
	MaxRetries int
	HTTPClient *http.Client
}

// ResolvedEndpoint is where a model config's calls go: its endpoint, or the
// local server its type defaults to (Ollama's, on loopback). Empty is the
// hosted API's own public URL (OpenAI, Anthropic).
func (m ModelConfig) ResolvedEndpoint() string {
	if m.Endpoint == "" && m.Type == ModelOllama {
		return DefaultOllamaEndpoint
	}
	return m.Endpoint
}

// checkEndpoint vets where a request's model would be called, written
// out or defaulted alike, with CheckEndpoint (the server's SSRF guard).
func (s *Service) checkEndpoint(ctx context.Context, m ModelConfig) error {
	e := m.ResolvedEndpoint()
	if e == "" || s.CheckEndpoint == nil {
		return nil
	}
	u, err := url.Parse(e)
	if err != nil {
		return invalid("model_config.endpoint", "must be an HTTP(S) URL")
	}
	return s.CheckEndpoint(ctx, u)
}

// GenerateRequest is a retrieval and a model's answer request, plus an optional chat.
type GenerateRequest struct {
	Pipeline string      `json:"pipeline_id"`
	Query    string      `json:"query"`
	TopK     int         `json:"top_k,omitempty"`
	Model    ModelConfig `json:"model_config"`
	// ChatID continues a console chat: its earlier turns go to the model
	// and this turn is kept in it.
	ChatID string `json:"chat_id,omitempty"`
}

// Check applies the seed's rules to a request (top_k 0 is the
// pipeline's) and the model config's defaults.
func (r *GenerateRequest) Check() error {
	if err := CheckQuery(r.Query); err != nil {
		return err
	}
	if r.TopK != 0 {
		if err := CheckTopK(r.TopK); err != nil {
			return err
		}
	}
	return r.Model.Check()
}

// Generation is the model's answer with its chunks, plus the citation check.
type Generation struct {
	Query   string  `json:"query"`
	Answer  string  `json:"answer"`
	Sources []Chunk `json:"sources"`
	// Cited are the 1-based numbers of the sources the answer cites;
	// Unsupported counts citation markers that name no retrieved source
	// (they are removed from the answer).
	Cited          []int   `json:"cited"`
	Unsupported    int     `json:"unsupported_citations"`
	Model          string  `json:"model"`
	TokensUsed     int     `json:"tokens_used"`
	GenerationTime float64 `json:"generation_time"`
	RetrievalTime  float64 `json:"retrieval_time"`
	LLMTime        float64 `json:"llm_time"`
	ChatID         string  `json:"chat_id,omitempty"`
	// Messages is the chat's message count after this turn.
	Messages int `json:"chat_messages,omitempty"`
}

// GenerateError is a failed model call with the timings spent on it.
type GenerateError struct {
	Err                                    error
	GenerationTime, RetrievalTime, LLMTime float64
}

func (e *GenerateError) Error() string {
	return fmt.Sprintf("%v (retrieval %.3f s, model %.3f s)", e.Err, e.RetrievalTime, e.LLMTime)
}
func (e *GenerateError) Unwrap() error { return e.Err }

// ErrorCode classifies a model failure: the model is unavailable.
func (e *GenerateError) ErrorCode() errcode.Code {
	if c := errcode.Of(e.Err); c != errcode.Internal {
		return c
	}
	return errcode.Unavailable
}

// MaxChatMessages is the console chat's cap.
const MaxChatMessages = 50

const generateSystem = `You answer questions from the numbered passages you are given, and from nothing else.
Cite the passages each statement rests on with their markers, e.g. [S1] or [S2, S3], right after the statement.
If the passages do not hold the answer, say that they do not. Answer in the language of the question.`

// Generate retrieves with a pipeline and has a model answer from the
// chunks. onDelta, when set, receives the answer as it streams. A model
// that fails returns a *GenerateError with the timings spent.
func (s *Service) Generate(ctx context.Context, req GenerateRequest, onDelta func(string)) (*Generation, error) {
	t0 := time.Now()
	if err := req.Check(); err != nil {
		return nil, err
	}
	if err := s.checkEndpoint(ctx, req.Model); err != nil {
		return nil, err
	}
	var history []session.Message
	if req.ChatID != "" {
		if s.Chats == nil {
			return nil, invalid("chat_id", "this service keeps no chats")
		}
		chat, err := s.Chats.Get(ctx, req.ChatID)
		if err != nil {
			return nil, err
		}
		if len(chat.Messages)+2 > MaxChatMessages {
			return nil, errcode.New(errcode.Conflict, "chat_id", "Chat session has reached maximum message limit")
		}
		history = chat.Messages
	}
	if s.Models == nil {
		return nil, errcode.New(errcode.Invalid, "model_config", "this console has no model clients")
	}
	p, err := s.Models(req.Model)
	if err != nil {
		return nil, invalid(field("endpoint"), err.Error())
	}
	ret, err := s.Retrieve(ctx, req.Pipeline, req.Query, req.TopK)
	if err != nil {
		return nil, err
	}
	g := &Generation{Query: req.Query, Sources: ret.Chunks, Cited: []int{}, Model: p.Name(), RetrievalTime: ret.RetrievalTime, ChatID: req.ChatID}
	msgs := make([]llm.Message, 0, len(history)+1)
	for _, m := range history {
		msgs = append(msgs, llm.Message{Role: m.Role, Content: m.Content})
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: prompt(req.Query, ret.Chunks)})
	par := req.Model.Parameters
	t1 := time.Now()
	resp, err := p.Chat(ctx, llm.Request{System: generateSystem, Messages: msgs, MaxTokens: par.MaxTokens, Temperature: par.Temperature, TopP: par.TopP}, onDelta)
	g.LLMTime = time.Since(t1).Seconds()
	g.GenerationTime = time.Since(t0).Seconds()
	if resp != nil {
		g.TokensUsed = resp.Usage.Total()
	}
	if err != nil {
		return nil, &GenerateError{Err: err, GenerationTime: g.GenerationTime, RetrievalTime: g.RetrievalTime, LLMTime: g.LLMTime}
	}
	g.Answer, g.Cited, g.Unsupported = checkCitations(resp.Text, len(ret.Chunks))
	if req.ChatID != "" {
		now := s.now()
		var srcs []string
		for _, n := range g.Cited {
			srcs = append(srcs, ret.Chunks[n-1].DatasourceID)
		}
		chat, err := s.Chats.Append(ctx, req.ChatID,
			session.Message{Role: session.RoleUser, Content: req.Query, Timestamp: now},
			session.Message{Role: session.RoleAssistant, Content: textclean.Clip(g.Answer, session.MaxContentChars), Timestamp: now, Sources: srcs})
		if err != nil {
			return nil, fmt.Errorf("chat %s: %w", req.ChatID, err)
		}
		g.Messages = len(chat.Messages)
	}
	return g, nil
}

// prompt lays out the retrieved chunks as numbered passages, then the
// question.
func prompt(query string, chunks []Chunk) string {
	var b strings.Builder
	b.WriteString("Passages:\n\n")
	for i, c := range chunks {
		fmt.Fprintf(&b, "[S%d] %s\n%s\n\n", i+1, c.Metadata["title"], strings.TrimSpace(c.Content))
	}
	if len(chunks) == 0 {
		b.WriteString("(none were found)\n\n")
	}
	b.WriteString("Question: ")
	b.WriteString(strings.TrimSpace(query))
	return b.String()
}

// checkCitations keeps the markers that name a retrieved passage and
// removes the rest, returning the cited passage numbers in order of first
// citation and how many markers named none.
func checkCitations(text string, n int) (string, []int, int) {
	cited, seen, bad := []int{}, map[int]bool{}, 0
	var b strings.Builder
	last := 0
	for _, m := range research.ParseMarkers(text) {
		var ok []string
		for _, id := range m.IDs {
			k, err := strconv.Atoi(strings.TrimPrefix(id, "S"))
			if err != nil || !strings.HasPrefix(id, "S") || k < 1 || k > n {
				bad++
				continue
			}
			ok = append(ok, "S"+strconv.Itoa(k))
			if !seen[k] {
				seen[k] = true
				cited = append(cited, k)
			}
		}
		b.WriteString(text[last:m.Start])
		if len(ok) > 0 {
			b.WriteString("[" + strings.Join(ok, ", ") + "]")
		}
		last = m.End
	}
	b.WriteString(text[last:])
	return strings.TrimSpace(b.String()), cited, bad
}

// NewChat starts a console chat in the language of its first query.
func (s *Service) NewChat(ctx context.Context, firstQuery string) (*session.Session, error) {
	if s.Chats == nil {
		return nil, errors.New("console: this service keeps no chats")
	}
	return s.Chats.Create(ctx, qa.Language(firstQuery))
}

// ClearChat ends a chat, deleting its messages.
func (s *Service) ClearChat(ctx context.Context, id string) error {
	if s.Chats == nil {
		return errors.New("console: this service keeps no chats")
	}
	if _, err := s.Chats.Get(ctx, id); err != nil {
		return err
	}
	return s.Chats.Delete(ctx, id)
}

// stripMarkers removes citation markers, for scoring an answer's words.
func stripMarkers(text string) string {
	plain, _, _ := checkCitations(text, 0) // no passage: every marker goes
	return plain
}
