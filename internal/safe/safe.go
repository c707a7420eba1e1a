// Package safe runs a unit of work so that a panic in it becomes that
// work's error instead of ending the process. Every goroutine that runs a
// research, a crawl, an ingest or a request goes through it: the work
// fails with the panic's message, its stack goes to the log, and the
// process and its other work go on.
package safe

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered from a unit of work.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the goroutine's stack where it panicked
}

func (e *PanicError) Error() string { return fmt.Sprintf("internal error: panic: %v", e.Value) }

// Unwrap lets errors.Is see an error that was panicked with.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// Call runs fn and returns its error, or a *PanicError when it panicked.
func Call(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if p, ok := v.(*PanicError); ok {
				err = p // passed on from another goroutine: keep its stack
				return
			}
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
}

// Do runs fn and returns a *PanicError when it panicked, else nil.
func Do(fn func()) error {
	return Call(func() error { fn(); return nil })
}

// Stack is the stack of the panic Call or Do recovered when err is that
// panic itself, or nil. A panic recovered deeper and already turned into
// its work's failure (wrapped in another error) is not reported again.
func Stack(err error) []byte {
	if p, ok := err.(*PanicError); ok {
		return p.Stack
	}
	return nil
}
