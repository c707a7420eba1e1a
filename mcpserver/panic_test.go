package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry/internal/logbuf"
	"github.com/quarryhq/quarry/store"
)

// panicky is a backend whose store panics, as a bug in a tool would.
type panicky struct{ Backend }

func (panicky) Store(context.Context) (store.Store, error) { panic("store exploded") }

// TestPanicIsTheCallsFailure: a tool or resource whose handler panics
// fails that call, with the panic in the server's log and not in the
// result, and the server goes on answering.
func TestPanicIsTheCallsFailure(t *testing.T) {
	var logs logbuf.Buffer
	srv := New(panicky{}, "test", slog.New(slog.NewTextHandler(&logs, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ss.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kb_list", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("kb_list: %v, want a failed result", err)
		}
		if text := ResultText(res); !res.IsError || !strings.Contains(text, "internal error") || strings.Contains(text, "exploded") {
			t.Fatalf("kb_list = %v %q, want a failed result that does not show the panic", res.IsError, text)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "quarry://researches/r1"}); err == nil || strings.Contains(err.Error(), "exploded") {
		t.Fatalf("reading a report = %v, want an error that does not show the panic", err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping after the panics: %v", err)
	}
	if got := logs.String(); strings.Count(got, "store exploded") != 3 || !strings.Contains(got, "mcpserver.panicky.Store") {
		t.Fatalf("log = %s, want each panic with its stack", got)
	}
}
