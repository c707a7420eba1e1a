package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry/mcpserver"
)

// mcpIdle closes an MCP session nobody used for this long.
const mcpIdle = 30 * time.Minute

// mcpHandler serves the MCP tools over streamable HTTP to a caller the
// guard let in, telling the tools its scopes (mcpserver.ScopesHeader; a
// client's own such header is dropped).
func (s *Server) mcpHandler() http.HandlerFunc {
	s.mcp = mcpserver.New(s.app, "quarry", s.log)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{SessionTimeout: mcpIdle, Logger: s.log})
	return func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(mcpserver.ScopesHeader)
		p := principalOf(r.Context())
		scopes := strings.Join(p.scopes, ",")
		if p.local {
			scopes = "*"
		}
		r.Header.Set(mcpserver.ScopesHeader, scopes)
		h.ServeHTTP(w, r)
	}
}

// closeMCP ends the MCP sessions (their streams end with them).
func (s *Server) closeMCP() {
	if s.mcp == nil {
		return
	}
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
}
