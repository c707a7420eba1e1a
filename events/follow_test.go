package events

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/store"
)

// notifier is a Listener that announces the ids it is given, in order.
type notifier []string

func (n notifier) ListenEvents(_ context.Context, fn func(string)) error {
	for _, id := range n {
		fn(id)
	}
	return nil
}

// eventsOf is a research store that panics for research "bad" and holds
// one event for every other.
type eventsOf struct{ store.ResearchStore }

func (eventsOf) ResearchLastSeq(_ context.Context, id string) (int64, error) {
	if id == "bad" {
		panic("a payload nobody expected")
	}
	return 1, nil
}

func (eventsOf) ResearchEvents(context.Context, string, int64) ([]store.ResearchEvent, error) {
	return []store.ResearchEvent{ev(1)}, nil
}

// TestFollowSurvivesAPanic: a notification whose handling panics is
// logged, and the next one is followed.
func TestFollowSurvivesAPanic(t *testing.T) {
	b := NewBroker(4)
	defer b.Close()
	bad, good := b.Subscribe("bad"), b.Subscribe("good")
	defer bad.Close()
	defer good.Close()
	var logs bytes.Buffer
	if err := Follow(context.Background(), eventsOf{}, notifier{"bad", "good"}, b, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-good.C:
		if e.Seq != 1 {
			t.Fatalf("good got event %d", e.Seq)
		}
	default:
		t.Fatal("the research notified after the panic was not followed")
	}
	if !strings.Contains(logs.String(), "a payload nobody expected") {
		t.Fatalf("the panic was not logged: %s", logs.String())
	}
}
