// Package errcode classifies errors once, by what the caller did wrong or
// what went wrong, so the CLI maps them to exit codes and the server to
// HTTP statuses without matching on error strings.
package errcode

import "errors"

// Code is an error's class.
type Code string

// The codes. Internal is anything unclassified.
const (
	Invalid      Code = "invalid"      // bad input: a field broke a rule (exit 2, HTTP 400/422)
	NotFound     Code = "not_found"    // no such thing (HTTP 404)
	Conflict     Code = "conflict"     // the thing is in a state that forbids it (HTTP 409)
	Unauthorized Code = "unauthorized" // no or bad credentials (HTTP 401)
	Forbidden    Code = "forbidden"    // credentials without the right (HTTP 403)
	TooLarge     Code = "too_large"    // input over a size limit (HTTP 413)
	RateLimited  Code = "rate_limited" // slow down (HTTP 429)
	Unavailable  Code = "unavailable"  // a dependency is down (HTTP 503)
	Internal     Code = "internal"     // anything else (HTTP 500)
)

// Coder is implemented by errors that know their code.
type Coder interface {
	ErrorCode() Code
}

// Of returns the code of the first error in err's chain that has one, or
// Internal.
func Of(err error) Code {
	var c Coder
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return Internal
}

// Field returns the field named by the first *Error in err's chain that
// names one.
func Field(err error) string {
	var e *Error
	for errors.As(err, &e) {
		if e.Field != "" {
			return e.Field
		}
		err = e.Err
		if err == nil {
			break
		}
	}
	return ""
}

// Error is an error with a code, and the field it is about when it is
// about one.
type Error struct {
	Code    Code
	Field   string
	Message string
	Err     error // an underlying cause, optional
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	return msg
}

// ErrorCode implements Coder.
func (e *Error) ErrorCode() Code { return e.Code }

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with a code.
func New(code Code, field, message string) *Error {
	return &Error{Code: code, Field: field, Message: message}
}

// Wrap gives err a code, keeping its message.
func Wrap(code Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Sentinel returns an error value for errors.Is comparisons that carries a
// code (store.ErrNotFound, say).
func Sentinel(code Code, message string) error { return &sentinel{code, message} }

type sentinel struct {
	code Code
	msg  string
}

func (s *sentinel) Error() string   { return s.msg }
func (s *sentinel) ErrorCode() Code { return s.code }

// DependencyError is a dependency that does not answer (Unavailable),
// named so a client is told which without the details (addresses, the
// driver's words), which stay in the log.
type DependencyError struct {
	Name string // "redis", "the store", …
	Err  error
}

// Dependency wraps err as the dependency name not answering.
func Dependency(name string, err error) error { return &DependencyError{Name: name, Err: err} }

func (e *DependencyError) Error() string   { return e.Name + " is unavailable: " + e.Err.Error() }
func (e *DependencyError) Unwrap() error   { return e.Err }
func (e *DependencyError) ErrorCode() Code { return Unavailable }
