package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/errcode"
)

// FuzzResearchOptions: whatever body POST /v1/researches (and a thread's
// follow-up) decodes to, checking it never panics, and what it refuses
// is an invalid-input error naming the field, or a knowledge base or
// thread that is not there. FuzzRequestBody leaves the
// route out, since what it takes starts a research.
func FuzzResearchOptions(f *testing.F) {
	for _, s := range []string{
		`{"question":"Who was Verdi?","sources":["kb:wiki"],"level":"quick"}`,
		`{"question":"x","breadth":0,"depth":-1,"level":"deep"}`,
		`{"question":"","timeout":"-5s","confidence":1e308,"max_tokens":-1}`,
		`{"question":"q","sources":["web:","kb:","arxiv","wikipedia:ko","kb:a,b"," "]}`,
		`{"question":"q","thread_id":"../../etc","level":"standard","breadth":3}`,
		`{"question":"` + "\u0000" + `"}`,
	} {
		f.Add(s)
	}
	a := app.New(app.Config{DataDir: f.TempDir()}, nil)
	f.Cleanup(func() { _ = a.Close() })
	s := &Server{app: a}
	f.Fuzz(func(t *testing.T, body string) {
		var req researchRequest
		if json.Unmarshal([]byte(body), &req) != nil {
			return
		}
		_, err := s.options(context.Background(), req)
		if err == nil {
			return
		}
		var he *httpError
		if errors.As(err, &he) {
			if he.field == "" || he.msg == "" {
				t.Fatalf("%q: %v names no field", body, err)
			}
			return
		}
		switch errcode.Of(err) {
		case errcode.Invalid:
			if fieldOf(err) == "" {
				t.Fatalf("%q: %v names no field", body, err)
			}
		case errcode.NotFound: // a knowledge base or thread that is not there
		default:
			t.Fatalf("%q: %v (%s), want invalid input", body, err, errcode.Of(err))
		}
	})
}
