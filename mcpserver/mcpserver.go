// Package mcpserver serves Quarry to agent hosts (Claude Desktop, VS Code,
// Cursor, other agents) over the Model Context Protocol, on the official
// Go SDK: tools to research a question, read a research again, ask a
// knowledge base, search it and list the knowledge bases; finished
// reports as resources. `quarry mcp` serves it over stdio; `quarry serve`
// at /mcp over streamable HTTP, behind the API's tokens and scopes.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// Backend is what the tools use; *app.App is one.
type Backend interface {
	Runner(ctx context.Context) (*research.Runner, error)
	Watch(ctx context.Context, id string, after int64, fn func(store.ResearchEvent) error) error
	Asker(ctx context.Context, kbName string) (*qa.Asker, error)
	OpenKB(ctx context.Context, name string, create bool) (*kb.Service, embed.Embedder, error)
	Store(ctx context.Context) (store.Store, error)
}

// Scopes, as the API names them.
const (
	ScopeResearch = "research"
	ScopeKB       = "kb"
)

// ScopesHeader carries, on a request /mcp let through, the scopes of the
// caller's token ("*" for all). The HTTP front sets it after
// authenticating and drops any a client sent; over stdio there is no
// header and the caller (the local user) may do everything.
const ScopesHeader = "X-Quarry-Scopes"

// New builds the MCP server.
func New(b Backend, version string, log *slog.Logger) *mcp.Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &tools{b: b, log: log}
	s := mcp.NewServer(&mcp.Implementation{Name: "quarry", Title: "Quarry", Version: version}, &mcp.ServerOptions{
		Instructions: "Quarry researches questions from evidence and answers from knowledge bases, always citing the text it read. Use kb_list to see the knowledge bases, research for a cited report (long-running; progress is reported), ask for a short cited answer, kb_search for the chunks themselves.",
		Logger:       log,
	})
	s.AddReceivingMiddleware(recoverPanics(log))
	mcp.AddTool(s, &mcp.Tool{Name: "research", Description: "Research a question over knowledge bases (and any other configured source) and return the cited report in Markdown with its numbered references. Long-running: progress notifications follow the research's stages; cancelling the call cancels the research. The research_id in the result reads it again with research_get."}, t.research)
	mcp.AddTool(s, &mcp.Tool{Name: "research_get", Description: "Read a research by its id: its status and, when it is finished, its report in Markdown."}, t.researchGet)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask a knowledge base a question and get a short answer quoting and citing its sources, with a confidence; \"I don't know\" when the evidence is too weak. Pass the session_id of an earlier answer to ask a follow-up."}, t.ask)
	mcp.AddTool(s, &mcp.Tool{Name: "kb_search", Description: "Search a knowledge base (hybrid BM25 and vector search) and return the matching chunks with their source URLs."}, t.kbSearch)
	mcp.AddTool(s, &mcp.Tool{Name: "kb_list", Description: "List the knowledge bases with their sizes."}, t.kbList)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "research-report", Title: "Research report (Markdown)", URITemplate: "quarry://researches/{id}", MIMEType: "text/markdown"}, t.readReport)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "research-json", Title: "Research (JSON)", URITemplate: "quarry://researches/{id}/json", MIMEType: "application/json"}, t.readReport)
	return s
}

// recoverPanics turns a panic in a request's handler into that request's
// failure: a tool call's result says it failed, any other request gets
// an error. The SDK runs each request in a goroutine of its own and
// recovers nothing, so a panic in a tool would end the process — every
// host's session, and `quarry serve` with them.
func recoverPanics(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			perr := safe.Call(func() error {
				res, err = next(ctx, method, req)
				return nil
			})
			if perr == nil {
				return res, err
			}
			log.ErrorContext(ctx, "mcp: request panicked", "method", method, "err", perr, "stack", string(safe.Stack(perr)))
			failed := errors.New("internal error: the request failed; the server's log has the details")
			if method == "tools/call" {
				return toolError(failed), nil
			}
			return nil, failed
		}
	}
}

type tools struct {
	b   Backend
	log *slog.Logger
}

// errForbidden is a tool call the caller's token does not allow.
var errForbidden = errors.New("forbidden")

// allowed checks the caller's scopes (ScopesHeader; none over stdio).
func allowed(extra *mcp.RequestExtra, scopes ...string) error {
	if extra == nil || extra.Header == nil {
		return nil // stdio: the local user
	}
	have := extra.Header.Get(ScopesHeader)
	if have == "*" {
		return nil
	}
	for _, want := range scopes {
		ok := false
		for _, sc := range strings.Split(have, ",") {
			ok = ok || strings.TrimSpace(sc) == want
		}
		if !ok {
			return fmt.Errorf("%w: the token lacks the %q scope", errForbidden, want)
		}
	}
	return nil
}

// ResultText is the text of a tool result, its text parts joined.
func ResultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// toolError is a failed call as the protocol has it: a result the model
// reads, not a protocol error.
func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// ResearchInput is the research tool's arguments.
type ResearchInput struct {
	Question string   `json:"question" jsonschema:"the question to research (1-2000 characters)"`
	KB       string   `json:"kb,omitempty" jsonschema:"a knowledge base to research (kb_list names them); the same as sources [\"kb:NAME\"]"`
	Sources  []string `json:"sources,omitempty" jsonschema:"sources to search: kb:NAME, web, arxiv, wikipedia (default: the kb given)"`
	Level    string   `json:"level,omitempty" jsonschema:"quick, standard (default) or comprehensive"`
}

// ResearchOutput is what a research returns besides its Markdown.
type ResearchOutput struct {
	ResearchID string `json:"research_id"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
}

func (t *tools) research(ctx context.Context, req *mcp.CallToolRequest, in ResearchInput) (*mcp.CallToolResult, ResearchOutput, error) {
	srcs := append([]string(nil), in.Sources...)
	if in.KB != "" {
		srcs = append(srcs, "kb:"+in.KB)
	}
	if len(srcs) == 0 {
		return toolError(errors.New("sources: give kb or sources (kb_list names the knowledge bases)")), ResearchOutput{}, nil
	}
	scopes := []string{ScopeResearch}
	for _, s := range srcs {
		if strings.HasPrefix(s, "kb:") {
			scopes = append(scopes, ScopeKB) // a research over a knowledge base takes the kb scope
			break
		}
	}
	if err := allowed(req.Extra, scopes...); err != nil {
		return toolError(err), ResearchOutput{}, nil
	}
	rn, err := t.b.Runner(ctx)
	if err != nil {
		return nil, ResearchOutput{}, err
	}
	r, err := rn.Create(ctx, in.Question, research.Options{Sources: srcs, Level: in.Level})
	if err != nil {
		return toolError(err), ResearchOutput{}, nil // the API's rule and message
	}
	stop := t.progress(ctx, req, r.ID)
	// The research runs on its own. When the call ends early, a client
	// that still answers a ping cancelled it: the research is cancelled
	// as any is (the runner ends it canceled). A client that is gone
	// (disconnected mid-research) leaves it running to its end; either
	// way it stays readable with research_get.
	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		select {
		case <-ctx.Done():
			// The ping and the cancel both recover: a panic in either
			// is logged, never the end of the server.
			err := safe.Call(func() error {
				if !t.present(req) {
					t.log.Warn("mcp: the client is gone; the research goes on", "research", r.ID)
					return nil
				}
				return rn.Cancel(context.WithoutCancel(ctx), r.ID)
			})
			if err != nil {
				t.log.Warn("mcp: the call ended early; pinging the client or cancelling its research failed", "research", r.ID, "err", err)
			}
		case <-done:
		}
	}()
	res, err := rn.Run(context.WithoutCancel(ctx), r.ID)
	close(done)
	watch.Wait()
	stop()
	if ctx.Err() != nil {
		return nil, ResearchOutput{}, ctx.Err()
	}
	if err != nil && res == nil {
		return toolError(fmt.Errorf("research %s: %w", r.ID, err)), ResearchOutput{ResearchID: r.ID, Status: research.StatusFailed, Error: err.Error()}, nil
	}
	out := ResearchOutput{ResearchID: res.ID, Status: res.Status, Error: res.Error}
	if res.Report == nil {
		return toolError(fmt.Errorf("research %s ended %s: %s", res.ID, res.Status, res.Error)), out, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Report.Markdown}}}, out, nil
}

// pingTimeout bounds the ping that tells a cancel from a disconnect.
const pingTimeout = 2 * time.Second

// present reports whether the caller's session still answers.
func (t *tools) present(req *mcp.CallToolRequest) bool {
	if req.Session == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	return req.Session.Ping(ctx, nil) == nil
}

// progress relays a research's events to the caller as progress
// notifications while it runs, when the call asked for them; stop ends
// the relay and waits for it.
func (t *tools) progress(ctx context.Context, req *mcp.CallToolRequest, id string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		first := true
		err := safe.Call(func() error {
			return t.b.Watch(wctx, id, 0, func(e store.ResearchEvent) error {
				msg := describe(e)
				if first {
					// The id, for research_get should the call be lost.
					msg, first = "research "+id+": "+msg, false
				}
				return req.Session.NotifyProgress(wctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(e.Seq), Message: msg})
			})
		})
		if err != nil && wctx.Err() == nil {
			t.log.Warn("mcp: progress", "research", id, "err", err)
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// describe is an event as a progress message: its type and what it says.
func describe(e store.ResearchEvent) string {
	var ev research.Event
	if err := json.Unmarshal(e.Data, &ev); err != nil {
		return e.Type
	}
	switch {
	case ev.Status != nil && ev.Status.Stage != "":
		return ev.Status.Status + ": " + ev.Status.Stage
	case ev.Status != nil:
		return ev.Status.Status
	case ev.Source != nil:
		return "read: " + ev.Source.Title
	case ev.Agent != nil && ev.Agent.Task != "":
		return ev.Agent.Agent + ": " + ev.Agent.Task
	case ev.Warning != "":
		return "warning: " + ev.Warning
	}
	return e.Type
}

// ResearchGetInput names a research.
type ResearchGetInput struct {
	ID string `json:"research_id" jsonschema:"the research_id a research call returned"`
}

// ResearchGetOutput is a research's state.
type ResearchGetOutput struct {
	ResearchID string `json:"research_id"`
	Question   string `json:"question"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
}

func (t *tools) researchGet(ctx context.Context, req *mcp.CallToolRequest, in ResearchGetInput) (*mcp.CallToolResult, ResearchGetOutput, error) {
	r, err := t.load(ctx, req.Extra, in.ID)
	if err != nil {
		return toolError(err), ResearchGetOutput{}, nil
	}
	out := ResearchGetOutput{ResearchID: r.ID, Question: r.Question, Status: r.Status, Error: r.Error}
	text := fmt.Sprintf("Research %s is %s.", r.ID, r.Status)
	if r.Report != nil {
		text = r.Report.Markdown
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

// load reads a research the caller may read: the research scope, and
// the kb scope for one over a knowledge base.
func (t *tools) load(ctx context.Context, extra *mcp.RequestExtra, id string) (*research.Research, error) {
	if err := allowed(extra, ScopeResearch); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New("research_id: must not be empty")
	}
	st, err := t.b.Store(ctx)
	if err != nil {
		return nil, err
	}
	r, err := research.Load(ctx, st, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("research_id: research %s does not exist", id)
	}
	if err != nil {
		return nil, err
	}
	for _, src := range r.Options.Sources {
		if strings.HasPrefix(src, "kb:") {
			if err := allowed(extra, ScopeKB); err != nil {
				return nil, fmt.Errorf("research %s reads knowledge base %s: %w", id, strings.TrimPrefix(src, "kb:"), err)
			}
		}
	}
	return r, nil
}

func (t *tools) readReport(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, "quarry://researches/")
	if !ok || rest == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	id, asJSON := strings.CutSuffix(rest, "/json")
	r, err := t.load(ctx, req.Extra, id)
	if err != nil {
		if errors.Is(err, errForbidden) {
			return nil, err
		}
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if asJSON {
		data, err := json.Marshal(research.Public(r))
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(data)}}}, nil
	}
	if r.Report == nil {
		return nil, fmt.Errorf("research %s is %s: it has no report yet", r.ID, r.Status)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: r.Report.Markdown}}}, nil
}

// AskInput is the ask tool's arguments.
type AskInput struct {
	KB        string `json:"kb" jsonschema:"the knowledge base to ask"`
	Question  string `json:"question" jsonschema:"the question (1-2000 characters), Korean or English"`
	SessionID string `json:"session_id,omitempty" jsonschema:"an earlier answer's session_id, to ask a follow-up"`
	TopK      *int   `json:"top_k,omitempty" jsonschema:"how many chunks are read (1-20, default 5)"`
}

func (t *tools) ask(ctx context.Context, req *mcp.CallToolRequest, in AskInput) (*mcp.CallToolResult, *qa.Answer, error) {
	if err := allowed(req.Extra, ScopeKB); err != nil {
		return toolError(err), nil, nil
	}
	if in.KB == "" {
		return toolError(errors.New("kb: must not be empty (kb_list names the knowledge bases)")), nil, nil
	}
	a, err := t.b.Asker(ctx, in.KB)
	if err != nil {
		return toolError(err), nil, nil
	}
	topK := qa.DefaultTopK
	if in.TopK != nil {
		// Given, 0 is refused as any other number out of range is,
		// not read as the default.
		topK = *in.TopK
		if err := qa.CheckTopK(topK); err != nil {
			return toolError(err), nil, nil
		}
	}
	ans, err := a.Ask(ctx, qa.Request{Question: in.Question, SessionID: in.SessionID, TopK: topK})
	if err != nil {
		return toolError(err), nil, nil
	}
	var b strings.Builder
	b.WriteString(ans.Answer)
	for i, src := range ans.Sources {
		fmt.Fprintf(&b, "\n[%d] %s", i+1, src)
	}
	fmt.Fprintf(&b, "\n\nconfidence %.2f; session_id %s", ans.Confidence, ans.SessionID)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, ans, nil
}

// SearchInput is the kb_search tool's arguments.
type SearchInput struct {
	KB    string `json:"kb" jsonschema:"the knowledge base to search"`
	Query string `json:"query" jsonschema:"what to search for"`
	K     *int   `json:"k,omitempty" jsonschema:"how many chunks (1-100, default 5)"`
	Mode  string `json:"mode,omitempty" jsonschema:"hybrid (default), bm25 or vector"`
}

// SearchOutput is the chunks found.
type SearchOutput struct {
	Results []kb.Result `json:"results"`
	// Notes say how the results were found when otherwise than asked
	// (kb.TermsAlone).
	Notes []string `json:"notes,omitempty"`
}

func (t *tools) kbSearch(ctx context.Context, req *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	if err := allowed(req.Extra, ScopeKB); err != nil {
		return toolError(err), SearchOutput{}, nil
	}
	k := 5
	if in.K != nil {
		if k = *in.K; k < 1 || k > 100 {
			return toolError(fmt.Errorf("k: must be between 1 and 100, got %d", k)), SearchOutput{}, nil
		}
	}
	q := kb.Query{Text: in.Query, K: k, Mode: in.Mode}
	if err := q.Validate(); err != nil {
		return toolError(err), SearchOutput{}, nil
	}
	svc, emb, err := t.b.OpenKB(ctx, in.KB, false)
	if err != nil {
		return toolError(err), SearchOutput{}, nil
	}
	found, err := svc.SearchNoted(ctx, in.KB, emb, q)
	if err != nil {
		return toolError(err), SearchOutput{}, nil
	}
	res := found.Results
	if res == nil {
		res = []kb.Result{}
	}
	var b strings.Builder
	for _, n := range found.Notes {
		fmt.Fprintf(&b, "Note: %s.\n\n", n)
	}
	for i, r := range res {
		fmt.Fprintf(&b, "%d. %s (%s)\n%s\n\n", i+1, r.Title, r.SourceURL, r.Text)
	}
	if len(res) == 0 {
		b.WriteString("No chunk matches.")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, SearchOutput{Results: res, Notes: found.Notes}, nil
}

// ListInput takes nothing.
type ListInput struct{}

// KBInfo is one knowledge base.
type KBInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Embedder    string `json:"embedder"`
}

// ListOutput is the knowledge bases.
type ListOutput struct {
	KnowledgeBases []KBInfo `json:"knowledge_bases"`
}

func (t *tools) kbList(ctx context.Context, req *mcp.CallToolRequest, _ ListInput) (*mcp.CallToolResult, ListOutput, error) {
	if err := allowed(req.Extra, ScopeKB); err != nil {
		return toolError(err), ListOutput{}, nil
	}
	st, err := t.b.Store(ctx)
	if err != nil {
		return nil, ListOutput{}, err
	}
	ks, err := st.KBList(ctx)
	if err != nil {
		return nil, ListOutput{}, err
	}
	out := ListOutput{KnowledgeBases: []KBInfo{}}
	var b strings.Builder
	for _, k := range ks {
		out.KnowledgeBases = append(out.KnowledgeBases, KBInfo{Name: k.Name, Description: k.Description, Embedder: k.Embedder})
		fmt.Fprintf(&b, "%s — %s\n", k.Name, k.Description)
	}
	if len(ks) == 0 {
		b.WriteString("No knowledge base yet: add one with quarry kb add NAME PATH --create.")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, out, nil
}
