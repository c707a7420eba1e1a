package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/broker"
	"github.com/quarryhq/quarry/store"
)

// WatchOptions tune Watch.
type WatchOptions struct {
	// After skips the events up to this sequence number (0: all).
	After int64
	// Broker, when set, brings the events of researches running in this
	// process as they are stored.
	Broker *broker.Broker
	// Poll is how often the store is read for events a broker did not
	// bring (a research running in another process): default 250 ms
	// without a broker, 5 s with one.
	Poll time.Duration
}

// Watch calls fn with a research's events after opt.After: the stored ones
// first, then the new ones as they are stored, each once and in sequence
// order, until the research ends (completed, failed or canceled), fn
// returns an error, or ctx ends. A subscriber the broker cut off for being
// slow rejoins from its last event; nothing is lost or repeated.
func Watch(ctx context.Context, st store.ResearchStore, id string, opt WatchOptions, fn func(store.ResearchEvent) error) error {
	if opt.After < 0 {
		return &store.ValidationError{Field: "after", Rule: fmt.Sprintf("must not be negative, got %d", opt.After)}
	}
	rec, err := st.ResearchGet(ctx, id)
	if err != nil {
		return err
	}
	poll := opt.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
		if opt.Broker != nil {
			poll = 5 * time.Second
		}
	}
	var sub *broker.Sub
	var live <-chan store.ResearchEvent
	subscribe := func() {
		if opt.Broker != nil {
			sub = opt.Broker.Subscribe(id)
			live = sub.C
		}
	}
	// Subscribe before reading the store, so nothing stored in between
	// is missed; what both bring is skipped by its sequence number.
	subscribe()
	defer func() {
		if sub != nil {
			sub.Close()
		}
	}()

	last := opt.After
	ended := false
	deliver := func(e store.ResearchEvent) error {
		if err := fn(e); err != nil {
			return err
		}
		last, ended = e.Seq, terminal(e)
		return nil
	}
	catchUp := func() error {
		evs, err := st.ResearchEvents(ctx, id, last)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := deliver(e); err != nil {
				return err
			}
		}
		return nil
	}
	if err := catchUp(); err != nil {
		return err
	}
	if last == opt.After && opt.After > 0 {
		n, err := st.ResearchLastSeq(ctx, id)
		if err != nil {
			return err
		}
		if opt.After > n {
			return &store.ValidationError{Field: "after", Rule: fmt.Sprintf("research %s has %d events so far; after must be at most that", id, n)}
		}
	}
	if last == opt.After {
		// Nothing new: a research that has ended has nothing more to say.
		switch rec.Status {
		case StatusCompleted, StatusFailed, StatusCanceled:
			return nil
		}
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !ended {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-live:
			if !ok {
				if errors.Is(sub.Err(), broker.ErrClosed) {
					sub, live = nil, nil // the store alone from now on
				} else {
					subscribe() // cut off for being slow: rejoin
				}
				if err := catchUp(); err != nil {
					return err
				}
				continue
			}
			switch {
			case e.Seq <= last:
			case e.Seq == last+1:
				if err := deliver(e); err != nil {
					return err
				}
			default: // the store has what came between
				if err := catchUp(); err != nil {
					return err
				}
			}
		case <-tick.C:
			if err := catchUp(); err != nil {
				return err
			}
		}
	}
	return nil
}

// terminal reports whether e ends a run: a status event to completed,
// failed or canceled.
func terminal(e store.ResearchEvent) bool {
	if e.Type != EventStatus {
		return false
	}
	var ev Event
	if json.Unmarshal(e.Data, &ev) != nil || ev.Status == nil {
		return false
	}
	switch ev.Status.Status {
	case StatusCompleted, StatusFailed, StatusCanceled:
		return true
	}
	return false
}
