package safe

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestCall(t *testing.T) {
	t.Parallel()
	if err := Call(func() error { return io.EOF }); err != io.EOF {
		t.Fatalf("Call passed on %v, want EOF", err)
	}
	err := Call(func() error {
		var s []int
		_ = s[1:] // slice bounds out of range
		return nil
	})
	p, ok := errors.AsType[*PanicError](err)
	if !ok || !strings.Contains(err.Error(), "slice bounds out of range") || len(p.Stack) == 0 || Stack(err) == nil {
		t.Fatalf("Call = %v, want a *PanicError with its stack", err)
	}
	if err := Do(func() { panic(io.ErrUnexpectedEOF) }); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Do = %v, want it to wrap the panicked error", err)
	}
	if Stack(io.EOF) != nil {
		t.Fatal("a plain error has no stack")
	}
	if Stack(fmt.Errorf("stage writing: %w", err)) != nil {
		t.Fatal("a panic already turned into its work's failure is not recovered again")
	}
}
