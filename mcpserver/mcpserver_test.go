package mcpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

func TestAllowed(t *testing.T) {
	h := func(scopes string) *mcp.RequestExtra {
		return &mcp.RequestExtra{Header: http.Header{ScopesHeader: []string{scopes}}}
	}
	for _, tc := range []struct {
		extra *mcp.RequestExtra
		want  []string
		ok    bool
	}{
		{nil, []string{ScopeKB}, true}, // stdio: the local user
		{h("*"), []string{ScopeKB, ScopeResearch}, true},
		{h("research"), []string{ScopeResearch}, true},
		{h("research"), []string{ScopeResearch, ScopeKB}, false},
		{h(""), []string{ScopeResearch}, false},
		{h("research, kb"), []string{ScopeKB}, true},
	} {
		err := allowed(tc.extra, tc.want...)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, errForbidden) {
			t.Errorf("allowed(%v, %v) = %v", tc.extra, tc.want, err)
		}
	}
}

func TestDescribe(t *testing.T) {
	ev := func(e research.Event) store.ResearchEvent {
		b, _ := json.Marshal(e)
		return store.ResearchEvent{Type: e.Type, Data: b}
	}
	for _, tc := range []struct {
		e    store.ResearchEvent
		want string
	}{
		{ev(research.Event{Type: "status", Status: &research.StatusChange{Status: "processing", Stage: "searching"}}), "processing: searching"},
		{ev(research.Event{Type: "source", Source: &research.Source{Title: "Giuseppe Verdi"}}), "read: Giuseppe Verdi"},
		{store.ResearchEvent{Type: "odd", Data: []byte("not json")}, "odd"},
	} {
		if got := describe(tc.e); got != tc.want {
			t.Errorf("describe = %q, want %q", got, tc.want)
		}
	}
}
