package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestValidLines(t *testing.T) {
	in := "{\"a\":1}\nnot json\n\n  {\"b\":2}  \r\n" + strings.Repeat("x", MaxLine+10) + "\n[3]"
	var logs bytes.Buffer
	got, err := io.ReadAll(ValidLines(strings.NewReader(in), slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":1}\n{\"b\":2}\n[3]\n"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if n := strings.Count(logs.String(), "skipped"); n != 2 {
		t.Fatalf("%d skips logged: %s", n, logs.String())
	}
}

// FuzzValidLines: whatever a host writes, only whole JSON lines come out.
func FuzzValidLines(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnope\n"))
	f.Add([]byte("\n\n{]\n[1,2]"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := io.ReadAll(ValidLines(bytes.NewReader(in), slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
			if len(out) > 0 && !json.Valid(line) {
				t.Fatalf("passed %q", line)
			}
		}
	})
}
