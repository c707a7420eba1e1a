// Package sessiontest is the conformance suite every session.Store runs.
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/session"
)

// Opener returns a fresh store whose sessions live ttl after their last
// activity.
type Opener func(t *testing.T, ttl time.Duration) session.Store

// Exercise runs the suite.
func Exercise(t *testing.T, open Opener) {
	t.Run("Lifecycle", func(t *testing.T) { lifecycle(t, open) })
	t.Run("Rules", func(t *testing.T) { rules(t, open) })
	t.Run("Cap", func(t *testing.T) { capped(t, open) })
	t.Run("TTL", func(t *testing.T) { expiry(t, open) })
	t.Run("ConcurrentAppends", func(t *testing.T) { concurrentAppends(t, open) })
}

// lifecycle: a session is created, appended to, read and deleted.
func lifecycle(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, time.Hour)
	ss, err := s.Create(ctx, "ko")
	if err != nil {
		t.Fatal(err)
	}
	if session.CheckID(ss.ID) != nil || ss.Language != "ko" || ss.CreatedAt.IsZero() || ss.Messages == nil {
		t.Fatalf("created: %+v", ss)
	}
	got, err := s.Append(ctx, ss.ID,
		session.Message{Role: "user", Content: "요금은 언제 납부하나요?"},
		session.Message{Role: "assistant", Content: "매월 25일입니다.", Sources: []string{"https://example.com/fees"}, Confidence: conf(0.92), Suggestions: []string{"연체료는 얼마인가요?"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 2 || got.Count != 2 || got.Messages[1].Confidence == nil || *got.Messages[1].Confidence != 0.92 ||
		got.Messages[1].Sources[0] != "https://example.com/fees" || got.Messages[0].Timestamp.IsZero() || !got.LastActivity.After(ss.CreatedAt.Add(-time.Millisecond)) {
		t.Fatalf("appended: %+v", got)
	}
	again, err := s.Get(ctx, ss.ID)
	if err != nil || len(again.Messages) != 2 || again.Messages[0].Content != "요금은 언제 납부하나요?" || again.Language != "ko" || !again.CreatedAt.Equal(ss.CreatedAt) {
		t.Fatalf("get: %+v %v", again, err)
	}
	if err := s.Delete(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, ss.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := s.Delete(ctx, ss.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

// rules: what a message must be for a session to keep it.
func rules(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, time.Hour)
	ss, err := s.Create(ctx, "en")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		field string
		call  func() error
	}{
		{"language", func() error { _, err := s.Create(ctx, "fr"); return err }},
		{"session_id", func() error { _, err := s.Get(ctx, "not-a-uuid"); return err }},
		{"session_id", func() error { _, err := s.Get(ctx, "6ba7b810-9dad-11d1-80b4-00c04fd430c8"); return err }}, // v1
		{"role", func() error {
			_, err := s.Append(ctx, ss.ID, session.Message{Role: "system", Content: "x"})
			return err
		}},
		{"content", func() error { _, err := s.Append(ctx, ss.ID, session.Message{Role: "user", Content: ""}); return err }},
		{"content", func() error {
			_, err := s.Append(ctx, ss.ID, session.Message{Role: "user", Content: strings.Repeat("가", session.MaxContentChars+1)})
			return err
		}},
		{"confidence_score", func() error {
			_, err := s.Append(ctx, ss.ID, session.Message{Role: "assistant", Content: "x", Confidence: conf(1.5)})
			return err
		}},
		{"sources", func() error {
			_, err := s.Append(ctx, ss.ID, session.Message{Role: "assistant", Content: "x", Sources: []string{"not a url"}})
			return err
		}},
		{"suggested_questions", func() error {
			_, err := s.Append(ctx, ss.ID, session.Message{Role: "assistant", Content: "x", Suggestions: []string{"a", "b", "c", "d"}})
			return err
		}},
		{"suggested_questions", func() error {
			_, err := s.Append(ctx, ss.ID, session.Message{Role: "assistant", Content: "x", Suggestions: []string{strings.Repeat("q", 201)}})
			return err
		}},
		{"messages", func() error { _, err := s.Append(ctx, ss.ID); return err }},
	}
	for i, c := range cases {
		err := c.call()
		if errcode.Of(err) != errcode.Invalid || errcode.Field(err) != c.field {
			t.Errorf("case %d: %v (field %q), want invalid %s", i, err, errcode.Field(err), c.field)
		}
	}
	// A refused append wrote nothing.
	if got, err := s.Get(ctx, ss.ID); err != nil || len(got.Messages) != 0 {
		t.Fatalf("after refused appends: %+v %v", got, err)
	}
	if _, err := s.Get(ctx, "2c1c7f3e-8f2a-4d4b-9f53-6b2f0e6f7a10"); !errors.Is(err, session.ErrNotFound) || errcode.Of(err) != errcode.NotFound {
		t.Fatalf("unknown session: %v", err)
	}
	if _, err := s.Append(ctx, "2c1c7f3e-8f2a-4d4b-9f53-6b2f0e6f7a10", session.Message{Role: "user", Content: "hi"}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("append to an unknown session: %v", err)
	}
}

// capped: a session keeps its most recent messages only.
func capped(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, time.Hour)
	ss, _ := s.Create(ctx, "en")
	var last *session.Session
	for i := range 60 {
		var err error
		if last, err = s.Append(ctx, ss.ID, session.Message{Role: "user", Content: "m" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if len(last.Messages) != session.MaxMessages || last.Messages[0].Content != "m10" || last.Messages[49].Content != "m59" || last.Count != 60 {
		t.Fatalf("cap: %d messages from %s, count %d", len(last.Messages), last.Messages[0].Content, last.Count)
	}
}

// expiry: activity keeps a session alive past its time to live, and
// without it the session ends.
func expiry(t *testing.T, open Opener) {
	ctx := context.Background()
	const ttl = 800 * time.Millisecond
	s := open(t, ttl)
	// Activity keeps it alive past its first time to live (a quarter
	// of it apart). A session whose activity came within its time to
	// live must not expire; one whose machine stalled past it (the
	// previous append began more than ttl before this one ended) may,
	// and the walk starts again with a new session, three times at most.
	var ss *session.Session
	for attempt := 1; ; attempt++ {
		prev := time.Now()
		ss, _ = s.Create(ctx, "en")
		stalled := false
		for range 5 {
			time.Sleep(ttl / 4)
			start := time.Now()
			_, err := s.Append(ctx, ss.ID, session.Message{Role: "user", Content: "still here"})
			if err != nil {
				if gap := time.Since(prev); gap < ttl || attempt == 3 {
					t.Fatalf("an active session expired %v after its last activity began (attempt %d): %v", gap.Round(time.Millisecond), attempt, err)
				}
				stalled = true
				break
			}
			prev = start
		}
		if !stalled {
			break
		}
		t.Logf("attempt %d: the machine stalled past the time to live; again", attempt)
	}
	time.Sleep(ttl + 300*time.Millisecond)
	_, err := s.Get(ctx, ss.ID)
	if !errors.Is(err, session.ErrExpired) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("after its time: %v, want expired", err)
	}
	if _, err := s.Append(ctx, ss.ID, session.Message{Role: "user", Content: "hello?"}); !errors.Is(err, session.ErrExpired) {
		t.Fatalf("append after expiry: %v (an expired session must not come back)", err)
	}
}

// concurrentAppends: appends from many writers at once are all kept, in
// one order.
func concurrentAppends(t *testing.T, open Opener) {
	ctx := context.Background()
	const writers, each = 8, 125
	s := open(t, time.Hour)
	ss, _ := s.Create(ctx, "en")
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Append(ctx, ss.ID, session.Message{Role: "user", Content: fmt.Sprintf("w%d-%d", w, i)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != writers*each || len(got.Messages) != session.MaxMessages {
		t.Fatalf("%d appended, %d kept; want %d and %d", got.Count, len(got.Messages), writers*each, session.MaxMessages)
	}
	// The kept messages are each writer's newest, in its order.
	next := map[int]int{}
	seen := map[string]bool{}
	for _, m := range got.Messages {
		var w, i int
		if _, err := fmt.Sscanf(m.Content, "w%d-%d", &w, &i); err != nil || seen[m.Content] {
			t.Fatalf("message %q", m.Content)
		}
		seen[m.Content] = true
		if prev, ok := next[w]; ok && i != prev {
			t.Fatalf("writer %d: %d after %d (a message lost or out of order)", w, i, prev-1)
		}
		next[w] = i + 1
	}
	for w, n := range next {
		if n != each {
			t.Fatalf("writer %d's last kept message is %d, not its newest %d", w, n-1, each-1)
		}
	}
}

func conf(v float64) *float64 { return &v }
