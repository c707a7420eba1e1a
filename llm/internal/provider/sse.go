package provider

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// MaxEventSize bounds one server-sent event: a line longer than this ends
// the stream with an error rather than growing without limit.
const MaxEventSize = 4 << 20

// Event is one server-sent event: its type (the "event:" field, empty when
// the server sent none) and its data lines joined by "\n".
type Event struct {
	Type string
	Data string
}

// Events reads a text/event-stream and calls fn for each event that
// carries data, in order, until the stream ends or fn returns an error,
// which Events returns. Comments, "id:" and "retry:" fields are ignored; an
// event still open when the stream ends is delivered, as browsers do not
// but servers cut off mid-stream deserve.
func Events(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxEventSize)
	var typ string
	var data bytes.Buffer
	hasData := false
	flush := func() error {
		if !hasData {
			typ = ""
			return nil
		}
		ev := Event{Type: typ, Data: data.String()}
		typ, hasData = "", false
		data.Reset()
		return fn(ev)
	}
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(line) == 0 {
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return fmt.Errorf("event stream: a line over %d bytes", MaxEventSize)
		}
		return err
	}
	return flush()
}
