package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/mcpserver"
)

func (a *cli) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve Quarry to an agent host over the Model Context Protocol on stdin/stdout",
		Long: `Serves the tools research, research_get, ask, kb_search and kb_list, and
finished reports as resources (quarry://researches/{id}, .../json), over
stdio, for an agent host that starts quarry mcp as its server (Claude Desktop,
VS Code, Cursor). It runs until the host closes stdin. Logs go to stderr; the
same store, models and sources as every other command (--data-dir,
--database-url, --llm, …). quarry serve offers the same at /mcp over HTTP.`,
		Example: `  {"mcpServers": {"quarry": {"command": "quarry", "args": ["mcp", "--data-dir", "/home/me/.local/share/quarry"]}}}`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.q().SetLongLived(true) // long-lived: searches where --search says
			s := mcpserver.New(a.q(), versionLine(), a.logger)
			t := &mcp.IOTransport{Reader: mcpserver.ValidLines(a.stdin, a.logger), Writer: nopWriteCloser{a.stdout}}
			if err := s.Run(cmd.Context(), t); err != nil && !errors.Is(err, io.EOF) && cmd.Context().Err() == nil {
				return fmt.Errorf("mcp: %w", err)
			}
			return nil
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
