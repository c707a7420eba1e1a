package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHeartbeatEndsWithItsHandler: a stream's heartbeat stops when its
// handler ends, a panic included, while the stream's context is still
// live; a beat that panics stops beating and takes nothing down.
func TestHeartbeatEndsWithItsHandler(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // live until the test ends
	var beats atomic.Int64
	recovered := func() (v any) {
		defer func() { v = recover() }()
		defer heartbeat(ctx, time.Millisecond, slog.New(slog.DiscardHandler), func(context.Context) { beats.Add(1) })()
		for beats.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		panic("handler failed")
	}()
	if recovered != "handler failed" {
		t.Fatalf("recovered %v", recovered)
	}
	n := beats.Load()
	time.Sleep(10 * time.Millisecond)
	if beats.Load() != n {
		t.Fatal("the heartbeat went on after its handler ended")
	}

	var panicked atomic.Int64
	var logs bytes.Buffer
	stop := heartbeat(ctx, time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)), func(context.Context) { panicked.Add(1); panic("beat failed") })
	for panicked.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	stop()
	if got := panicked.Load(); got != 1 || !strings.Contains(logs.String(), "beat failed") {
		t.Fatalf("a panicking beat ran %d times, want 1, logged: %s", got, logs.String())
	}
}
