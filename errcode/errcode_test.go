package errcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	notFound := Sentinel(NotFound, "not found")
	cases := []struct {
		err  error
		want Code
	}{
		{fmt.Errorf("research %q: %w", "x", notFound), NotFound},
		{New(Invalid, "question", "must not be empty"), Invalid},
		{fmt.Errorf("wrapped: %w", New(Conflict, "", "already running")), Conflict},
		{errors.New("disk on fire"), Internal},
		{nil, Internal},
	}
	for _, tc := range cases {
		if got := Of(tc.err); got != tc.want {
			t.Errorf("Of(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
	if !errors.Is(fmt.Errorf("a: %w", notFound), notFound) {
		t.Fatal("a sentinel must match errors.Is through wrapping")
	}
	e := fmt.Errorf("create: %w", New(Invalid, "question", "must be at most 2000 characters"))
	if Field(e) != "question" || e.Error() != "create: question: must be at most 2000 characters" {
		t.Fatalf("field %q, message %q", Field(e), e)
	}
}
