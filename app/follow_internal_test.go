package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/store"
)

// listenPanics is a store whose listening panics, as a driver's bug would.
type listenPanics struct{ store.Store }

func (listenPanics) ListenEvents(context.Context, func(string)) error { panic("driver bug") }

// TestFollowEventsRecovers: a panic while following stored events is
// FollowEvents' error, its stack logged, not the end of the process; the
// count of followers returns to zero so watchers start their own again.
func TestFollowEventsRecovers(t *testing.T) {
	var log strings.Builder
	a := New(Config{}, slog.New(slog.NewTextHandler(&log, nil)))
	a.store = listenPanics{}
	err := a.FollowEvents(context.Background())
	var p *safe.PanicError
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "driver bug") {
		t.Fatalf("err = %v, want the panic as an error", err)
	}
	if !strings.Contains(log.String(), "following stored events panicked") || !strings.Contains(log.String(), "follow_internal_test.go") {
		t.Errorf("log lacks the panic and its stack: %s", log.String())
	}
	if a.following != 0 {
		t.Errorf("following = %d after the panic", a.following)
	}
}
