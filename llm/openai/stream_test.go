package openai

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// FuzzReadStream: whatever a server streams gives a reply or an error,
// never a panic, and the reply's text is exactly the deltas passed on.
func FuzzReadStream(f *testing.F) {
	f.Add(`data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}` + "\n\ndata: [DONE]\n\n")
	f.Add(`data: {"error":{"message":"engine crashed"}}` + "\n\n")
	f.Add(`data: {"choices":[{"index":1,"delta":{"content":"x"}}],"usage":null}` + "\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		var deltas strings.Builder
		resp, err := readStream(&http.Response{Body: io.NopCloser(strings.NewReader(in))}, func(s string) { deltas.WriteString(s) })
		if err != nil {
			return
		}
		if resp.Text != deltas.String() {
			t.Fatalf("text %q, deltas %q", resp.Text, deltas.String())
		}
	})
}
