package server

import (
	"io"
	"log/slog"
	"net/http/httptest"
)

// ErrorBody is the status, code and message a request failing with err
// answers with.
func ErrorBody(err error) (int, string, string) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	status, body := s.errorBody(httptest.NewRequest("GET", "/", nil), err)
	return status, body.Code, body.Message
}
