package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry/mcpserver"
)

// startMCP runs quarry mcp in-process on pipes and connects the SDK's
// client to it.
func startMCP(t *testing.T, data string, opts *mcp.ClientOptions, args ...string) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	a := &cli{stdin: inR, stdout: outW, stderr: errf, env: envOf(t)}
	root := a.rootCmd()
	root.SetArgs(append([]string{"--data-dir", data, "--config", filepath.Join("testdata", "config.yaml"), "mcp"}, args...))
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(context.Background())
		a.close()
		outW.Close()
		done <- err
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts)
	s, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("quarry mcp: %v", err)
		}
		outR.Close()
		errf.Close()
	})
	return s
}

// researchIDRE reads the research id the first progress message names.
var researchIDRE = regexp.MustCompile(`^research ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}): `)

// TestMCPStdio: quarry mcp over stdio with the SDK's client — the tools,
// a research with progress notifications, and a cancel mid-research
// (a web search that does not answer) that cancels the research, which
// stays readable.
func TestMCPStdio(t *testing.T) {
	release := make(chan struct{})
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // a search engine that answers only when the test is over
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer searx.Close()
	defer close(release)
	setenv(t, "QUARRY_SEARXNG_URL", searx.URL)
	data := t.TempDir()
	if _, errOut, err := run(t, data, "kb", "add", "notes", filepath.Join("..", "..", "examples", "notes"), "--create"); err != nil {
		t.Fatalf("kb add: %v\n%s", err, errOut)
	}

	var mu sync.Mutex
	var progress []string
	var cancelCall context.CancelFunc
	s := startMCP(t, data, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, r.Params.Message)
		// Only the second call's own progress cancels it: a late
		// notification of the first research may still arrive.
		if cancelCall != nil && fmt.Sprint(r.Params.ProgressToken) == "2" && strings.Contains(r.Params.Message, "searching") {
			cancelCall()
		}
	}}, "--allow-private")
	ctx := context.Background()
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 5 {
		t.Fatalf("tools: %v %+v", err, tools)
	}
	p := &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?", "kb": "notes", "level": "quick"}}
	p.SetProgressToken(1)
	res, err := s.CallTool(ctx, p)
	if err != nil || res.IsError || !strings.Contains(mcpserver.ResultText(res), "was born before") {
		t.Fatalf("research: %v %s", err, mcpserver.ResultText(res))
	}
	mu.Lock()
	first := ""
	if len(progress) > 0 {
		first = progress[0]
	}
	mu.Unlock()
	if !strings.HasPrefix(first, "research ") {
		t.Errorf("first progress message %q does not name the research", first)
	}

	// Cancel mid-research: the web search blocks until then.
	cctx, cancel := context.WithCancel(ctx)
	mu.Lock()
	cancelCall = cancel
	mu.Unlock()
	p = &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "What is the airspeed of an unladen swallow?", "sources": []string{"web"}, "level": "quick"}}
	p.SetProgressToken(2)
	if _, err := s.CallTool(cctx, p); err == nil {
		t.Fatal("a cancelled research call returned a result")
	}
	// The cancelled research's id is in its first progress message (a
	// late one of the research before may come first).
	firstID := ""
	if out, ok := res.StructuredContent.(map[string]any); ok {
		firstID, _ = out["research_id"].(string)
	}
	mu.Lock()
	id := ""
	for _, m := range progress {
		if sub := researchIDRE.FindStringSubmatch(m); sub != nil && sub[1] != firstID {
			id = sub[1]
			break
		}
	}
	mu.Unlock()
	if id == "" {
		t.Fatal("no progress before the cancel")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "research_get", Arguments: map[string]any{"research_id": id}})
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Status string }
		b, _ := json.Marshal(got.StructuredContent)
		_ = json.Unmarshal(b, &out)
		if out.Status == "canceled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("research %s is %q after the call was cancelled", id, out.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMCPStdioMalformed: a host that sends a line that is not JSON, a
// cancel for a request never made, an unknown tool or arguments of the
// wrong type keeps its session, each request answered; quarry mcp ends
// when its input does.
func TestMCPStdioMalformed(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	a := &cli{stdin: inR, stdout: outW, stderr: outW, env: envOf(t)}
	root := a.rootCmd()
	root.SetArgs([]string{"--data-dir", t.TempDir(), "--config", filepath.Join("testdata", "config.yaml"), "mcp"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(context.Background()); a.close(); outW.Close() }()
	go func() {
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"a request this server never saw"}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool"}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"kb_search","arguments":{"kb":7,"query":["x"]}}}`,
			`this is not json`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"kb_list","arguments":{}}}`,
		} {
			_, _ = io.WriteString(inW, line+"\n")
		}
	}()
	// Read until request 4 is answered, then end the input.
	var b []byte
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		b = append(append(b, sc.Bytes()...), '\n')
		if strings.HasPrefix(sc.Text(), `{"jsonrpc":"2.0","id":4,`) {
			break
		}
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("quarry mcp did not end when its input did")
	}
	rest, _ := io.ReadAll(outR)
	b = append(b, rest...)
	if strings.Contains(string(b), "panic") {
		t.Fatalf("output: %s", b)
	}
	// Every request is answered: the unknown tool and the wrong types as
	// errors, kb_list as a result; the cancel of an unknown request and
	// the line that is not JSON change nothing (it is skipped and logged).
	answers := map[float64]map[string]any{}
	for _, line := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if id, ok := m["id"].(float64); ok {
				answers[id] = m
			}
		}
	}
	isErr := func(m map[string]any) bool {
		if m["error"] != nil {
			return true
		}
		r, _ := m["result"].(map[string]any)
		return r["isError"] == true
	}
	for id, wantErr := range map[float64]bool{1: false, 2: true, 3: true, 4: false} {
		m, ok := answers[id]
		if !ok {
			t.Fatalf("request %v got no answer; output:\n%s", id, b)
		}
		if isErr(m) != wantErr {
			t.Errorf("request %v: error %v, want %v: %v", id, isErr(m), wantErr, m)
		}
	}
}
