package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
)

// MaxLine is the longest line a host may send over stdio. A longer one is
// skipped to its end, never held whole in memory.
const MaxLine = 16 << 20

// ValidLines reads newline-delimited JSON-RPC from a host and passes on
// only the lines that are JSON, each whole, logging what it skips. The
// SDK's stdio transport ends the session at the first line it cannot
// parse, taking the calls in flight with it; a host that writes one bad
// line (a stray log line, a cut message) keeps its session this way.
func ValidLines(r io.Reader, log *slog.Logger) io.ReadCloser {
	return &validLines{in: bufio.NewReaderSize(r, 64<<10), log: log}
}

type validLines struct {
	in      *bufio.Reader
	log     *slog.Logger
	pending []byte
	err     error
}

func (v *validLines) Read(p []byte) (int, error) {
	for len(v.pending) == 0 {
		if v.err != nil {
			return 0, v.err
		}
		line, err := v.line()
		v.err = err
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if json.Valid(trimmed) {
				v.pending = append(trimmed, '\n')
			} else {
				v.log.Warn("mcp: skipped a line that is not JSON", "bytes", len(line))
			}
		}
	}
	n := copy(p, v.pending)
	v.pending = v.pending[n:]
	return n, nil
}

// line reads up to the next newline; a line over MaxLine is read to its
// end and returned empty.
func (v *validLines) line() ([]byte, error) {
	var buf []byte
	skipping := false
	for {
		frag, err := v.in.ReadSlice('\n')
		if !skipping {
			if len(buf)+len(frag) > MaxLine {
				skipping, buf = true, nil
				v.log.Warn("mcp: skipped a line over the limit", "limit", MaxLine)
			} else {
				buf = append(buf, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, err
	}
}

func (v *validLines) Close() error { return nil }
