package provider

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{name: "data only", in: "data: {\"a\":1}\n\ndata: [DONE]\n\n", want: []Event{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{name: "typed, CRLF", in: "event: ping\r\ndata: {}\r\n\r\n", want: []Event{{Type: "ping", Data: "{}"}}},
		{name: "multi-line data", in: "data: one\ndata:two\n\n", want: []Event{{Data: "one\ntwo"}}},
		{name: "comments and ids ignored", in: ": keep-alive\nid: 7\nretry: 10\ndata: x\n\n", want: []Event{{Data: "x"}}},
		{name: "an event without data is dropped", in: "event: nothing\n\ndata: y\n\n", want: []Event{{Data: "y"}}},
		{name: "cut off before the blank line", in: "data: tail", want: []Event{{Data: "tail"}}},
		{name: "empty", in: "", want: nil},
	}
	for _, tt := range tests {
		var got []Event
		err := Events(strings.NewReader(tt.in), func(e Event) error { got = append(got, e); return nil })
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: events = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEventsStops(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	n := 0
	err := Events(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n"), func(Event) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("err = %v after %d events", err, n)
	}
	long := "data: " + strings.Repeat("x", MaxEventSize) + "\n\n"
	if err := Events(strings.NewReader(long), func(Event) error { return nil }); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("a line over the limit: err = %v", err)
	}
}

// FuzzEvents: any bytes give events in order without a panic, and each
// event's data is what its data lines said.
func FuzzEvents(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
	f.Add("data: a\r\ndata: b\r\n\r\n: c\n")
	f.Add("data\n\ndata:\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		err := Events(strings.NewReader(in), func(e Event) error {
			if !strings.Contains(in, strings.SplitN(e.Data, "\n", 2)[0]) {
				t.Fatalf("data %q not in the input", e.Data)
			}
			if utf8.ValidString(in) && !utf8.ValidString(e.Data) {
				t.Fatalf("invalid UTF-8 %q from valid input", e.Data)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
	})
}
