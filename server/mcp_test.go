package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/mcpserver"
	"github.com/quarryhq/quarry/server"
)

// bearer adds a token to every request of an MCP client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	// A client cannot claim scopes: the server sets this header itself.
	r.Header.Set("X-Quarry-Scopes", "*")
	return b.base.RoundTrip(r)
}

func mcpSession(t testing.TB, e *env, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestMCPOverHTTP: the SDK's own client over streamable HTTP at /mcp,
// behind the API's tokens: a token without the kb scope is refused the
// knowledge-base tools, one with it researches the bundled corpus with
// progress notifications, reads the research again as a tool and as a
// resource; bad arguments and unknown tools are errors, not crashes.
func TestMCPOverHTTP(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	st, err := e.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := server.CreateToken(ctx, st, "agent", []string{"research", "kb"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	researchOnly, _, err := server.CreateToken(ctx, st, "narrow", []string{"research"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	narrow := mcpSession(t, e, researchOnly, nil)
	for _, call := range []*mcp.CallToolParams{
		{Name: "kb_list", Arguments: map[string]any{}},
		{Name: "research", Arguments: map[string]any{"question": "Who was Giuseppe Verdi?", "kb": "wiki", "level": "quick"}},
	} {
		res, err := narrow.CallTool(ctx, call)
		if err != nil || !res.IsError || !strings.Contains(mcpserver.ResultText(res), `lacks the "kb" scope`) {
			t.Errorf("%s with a research-only token: %v %+v", call.Name, err, res)
		}
	}

	var mu sync.Mutex
	var progress []string
	s := mcpSession(t, e, full, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}})
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "ask,kb_list,kb_search,research,research_get" {
		t.Errorf("tools = %s", got)
	}
	list, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "kb_list", Arguments: map[string]any{}})
	if err != nil || list.IsError || !strings.Contains(mcpserver.ResultText(list), "wiki") {
		t.Fatalf("kb_list: %v %s", err, mcpserver.ResultText(list))
	}
	params := &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?", "kb": "wiki", "level": "quick"}}
	params.SetProgressToken("p1")
	res, err := s.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("research: %v %s", err, mcpserver.ResultText(res))
	}
	if md := mcpserver.ResultText(res); !strings.Contains(md, "was born before") || !strings.Contains(md, "## References") {
		t.Errorf("the report lacks its answer or references:\n%s", md)
	}
	out, _ := res.StructuredContent.(map[string]any)
	id, _ := out["research_id"].(string)
	if id == "" || out["status"] != "completed" {
		t.Fatalf("structured result %v", res.StructuredContent)
	}
	mu.Lock()
	if len(progress) == 0 {
		t.Error("no progress notification during the research")
	}
	mu.Unlock()
	got, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "research_get", Arguments: map[string]any{"research_id": id}})
	if err != nil || got.IsError || mcpserver.ResultText(got) != mcpserver.ResultText(res) {
		t.Errorf("research_get: %v %s", err, mcpserver.ResultText(got))
	}
	rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "quarry://researches/" + id})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != mcpserver.ResultText(res) {
		t.Errorf("resource: %v %+v", err, rr)
	}
	if _, err := narrow.ReadResource(ctx, &mcp.ReadResourceParams{URI: "quarry://researches/" + id + "/json"}); err == nil || !strings.Contains(err.Error(), "kb") {
		t.Errorf("a research-only token read a knowledge-base research: %v", err)
	}

	ask, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kb": "wiki", "question": "When was Giuseppe Verdi born?"}})
	if err != nil || ask.IsError || !strings.Contains(mcpserver.ResultText(ask), "1813") {
		t.Errorf("ask: %v %s", err, mcpserver.ResultText(ask))
	}
	search, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "kb_search", Arguments: map[string]any{"kb": "wiki", "query": "Verdi opera", "k": 3}})
	if err != nil || search.IsError || !strings.Contains(mcpserver.ResultText(search), "Verdi") {
		t.Errorf("kb_search: %v %s", err, mcpserver.ResultText(search))
	}

	// Bad input: the API's rules and messages, as tool errors.
	for _, bad := range []struct {
		call *mcp.CallToolParams
		want string
	}{
		{&mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "", "kb": "wiki"}}, "question"},
		{&mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "q", "kb": "wiki", "level": "deep"}}, "level"},
		{&mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "q"}}, "sources"},
		{&mcp.CallToolParams{Name: "kb_search", Arguments: map[string]any{"kb": "wiki", "query": "x", "k": 1000}}, "k: must be between"},
		{&mcp.CallToolParams{Name: "kb_search", Arguments: map[string]any{"kb": "wiki", "query": "x", "k": 0}}, "k: must be between 1 and 100, got 0"},
		{&mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kb": "wiki", "question": "Who?", "top_k": 0}}, "top_k: must be between 1 and 20, got 0"},
		{&mcp.CallToolParams{Name: "kb_search", Arguments: map[string]any{"kb": "missing", "query": "x"}}, "missing"},
		{&mcp.CallToolParams{Name: "research_get", Arguments: map[string]any{"research_id": "nope"}}, "does not exist"},
	} {
		res, err := s.CallTool(ctx, bad.call)
		if err == nil && (!res.IsError || !strings.Contains(mcpserver.ResultText(res), bad.want)) {
			t.Errorf("%s %v: %s, want an error naming %q", bad.call.Name, bad.call.Arguments, mcpserver.ResultText(res), bad.want)
		}
	}
	if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "kb_search", Arguments: map[string]any{"kb": 7, "query": "x"}}); err == nil && (!res.IsError || !strings.Contains(mcpserver.ResultText(res), "kb")) {
		t.Errorf("an argument of the wrong type was accepted: %s", mcpserver.ResultText(res))
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool was accepted")
	}
	// Without a token (and tokens existing) /mcp is a 401, as the API.
	resp, err := http.Post(e.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without a token: %d", resp.StatusCode)
	}
}

// TestMCPDisconnectMidResearch: a client that goes away mid-research
// (its session closed, no cancel) leaves the research running to its end,
// readable through the API; its PDF while it runs is a 409 naming its
// status.
func TestMCPDisconnectMidResearch(t *testing.T) {
	release := make(chan struct{})
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers once the client is gone
		case <-release:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"results":[{"url":"https://example.org/swallow","title":"Swallows","content":"An unladen European swallow flies at about 11 metres per second."}]}`))
		case <-r.Context().Done():
		}
	}))
	defer searx.Close()
	e := start(t, envOptions{configure: func(c *app.Config) { c.SearxNGURL = searx.URL }})
	ctx := context.Background()
	st, err := e.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := server.CreateToken(ctx, st, "agent", []string{"research", "kb"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ids := make(chan string, 16)
	// The client's connections, to cut them as a host that dies does.
	var connsMu sync.Mutex
	var conns []net.Conn
	dial := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial.DialContext(ctx, network, addr)
		if err == nil {
			connsMu.Lock()
			conns = append(conns, c)
			connsMu.Unlock()
		}
		return c, err
	}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		if m := regexp.MustCompile(`^research ([0-9a-f-]{36}): `).FindStringSubmatch(r.Params.Message); m != nil {
			ids <- m[1]
		}
	}})
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, tr}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "How fast does an unladen swallow fly?", "sources": []string{"web"}, "level": "quick"}}
	p.SetProgressToken("d")
	callDone := make(chan struct{})
	go func() {
		defer close(callDone)
		_, _ = s.CallTool(ctx, p)
	}()
	var id string
	select {
	case id = <-ids:
	case <-time.After(20 * time.Second):
		t.Fatal("no progress")
	}
	// A PDF of a research still running is a 409 naming its status.
	pdfr := e.do("GET", "/v1/researches/"+id+"?format=pdf", nil, map[string]string{"Authorization": "Bearer " + token}, true)
	want(t, pdfr, 409)
	if code, f, msg := pdfr.apiErr(t); code != "conflict" || f != "id" || !regexp.MustCompile(`status (pending|processing)`).MatchString(msg) {
		t.Fatalf("pdf of a running research: %s %s %q", code, f, msg)
	}
	// The host dies: its connections drop, nothing is cancelled. The
	// search answers once the server has had time to find the client
	// gone (its ping fails).
	connsMu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	connsMu.Unlock()
	time.Sleep(3 * time.Second)
	close(release)
	defer func() { _ = s.Close(); <-callDone }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := e.do("GET", "/v1/researches/"+id, nil, map[string]string{"Authorization": "Bearer " + token}, true)
		var got struct{ Status string }
		r.json(t, &got)
		if got.Status == "completed" {
			break
		}
		if got.Status == "canceled" || got.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("research %s is %s after its client left: %s", id, got.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkResearchMCPvsAPI: the same quick research over the bundled
// corpus through the MCP research tool (streamable HTTP) and through the
// JSON API (create, then poll every 5 ms until completed), and the time
// from the MCP call to its first progress notification.
func BenchmarkResearchMCPvsAPI(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	st, err := e.App.Store(ctx)
	if err != nil {
		b.Fatal(err)
	}
	token, _, err := server.CreateToken(ctx, st, "bench", []string{"research", "kb"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	auth := map[string]string{"Authorization": "Bearer " + token}
	const q = "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?"
	b.Run("api", func(b *testing.B) {
		for b.Loop() {
			body, _ := json.Marshal(map[string]any{"question": q, "sources": []string{"kb:wiki"}, "level": "quick"})
			r := e.do("POST", "/v1/researches", body, auth, true)
			var c struct{ ID string }
			r.json(b, &c)
			for {
				var got struct{ Status string }
				e.do("GET", "/v1/researches/"+c.ID, nil, auth, true).json(b, &got)
				if got.Status == "completed" {
					break
				}
				if got.Status == "failed" || got.Status == "canceled" {
					b.Fatalf("research %s", got.Status)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
	for _, transport := range []string{"mcp", "mcp-stdio"} {
		b.Run(transport, func(b *testing.B) {
			benchMCPResearch(b, e, token, transport == "mcp-stdio", q)
		})
	}
}

// benchMCPResearch calls the research tool over streamable HTTP, or over
// stdio: the server quarry mcp runs (mcpserver.New on the same app) on a
// pair of OS pipes, as a host that starts it as a process talks to it.
func benchMCPResearch(b *testing.B, e *env, token string, stdio bool, q string) {
	ctx := context.Background()
	var first time.Time
	var mu sync.Mutex
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		mu.Unlock()
	}}
	var s *mcp.ClientSession
	if stdio {
		s = mcpStdioSession(b, e, opts)
	} else {
		s = mcpSession(b, e, token, opts)
	}
	var toFirst time.Duration
	n := 0
	for b.Loop() {
		mu.Lock()
		first = time.Time{}
		mu.Unlock()
		p := &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": q, "kb": "wiki", "level": "quick"}}
		p.SetProgressToken(n)
		t0 := time.Now()
		res, err := s.CallTool(ctx, p)
		if err != nil || res.IsError {
			b.Fatalf("research: %v", err)
		}
		mu.Lock()
		if !first.IsZero() {
			toFirst += first.Sub(t0)
		}
		mu.Unlock()
		n++
	}
	b.ReportMetric(float64(toFirst.Microseconds())/1000/float64(n), "ms-to-first-progress")
}

// mcpStdioSession serves the app's MCP server on OS pipes and connects
// the SDK's client to it over the stdio transport.
func mcpStdioSession(b *testing.B, e *env, opts *mcp.ClientOptions) *mcp.ClientSession {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	srv := mcpserver.New(e.App, "quarry", slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, opts)
	s, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(func() {
		_ = s.Close()
		cancel()
		_ = inW.Close()
		<-done
		_ = outR.Close()
	})
	return s
}
