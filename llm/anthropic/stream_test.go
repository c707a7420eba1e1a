package anthropic

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/llm"
)

// FuzzReadStream: whatever a server streams gives a message or an error,
// never a panic, and the message's text is as long as the deltas passed on.
func FuzzReadStream(f *testing.F) {
	f.Add(`event: message_start` + "\n" + `data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}` + "\n\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}` + "\n\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}` + "\n\n" +
		`data: {"type":"message_stop"}` + "\n\n")
	f.Add(`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"answer","input":{}}}` + "\n\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}` + "\n\n")
	f.Add(`data: {"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}` + "\n\n")
	f.Add(`event: error` + "\n" + `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		var deltas strings.Builder
		msg, err := readStream(&http.Response{Body: io.NopCloser(strings.NewReader(in))}, false, func(s string) { deltas.WriteString(s) })
		if err != nil {
			return
		}
		if got := msg.text((*llm.Schema)(nil)); len(got) < deltas.Len() {
			t.Fatalf("text %q shorter than the deltas %q", got, deltas.String())
		}
	})
}
