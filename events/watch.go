package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/store"
)

// WatchOptions tune Watch.
type WatchOptions struct {
	// After skips the events up to this sequence number (0: all).
	After int64
	// Broker, when set, brings the events of researches running in this
	// process as they are stored.
	Broker *Broker
	// Poll is how often the store is read for events a broker did not
	// bring (a research running in another process): default 250 ms
	// without a broker, 5 s with one.
	Poll time.Duration
	// Ends reports an event after which the research says nothing more
	// (its run ended), and Ended a stored status that has ended; Watch
	// then returns. Nil: never.
	Ends  func(store.ResearchEvent) bool
	Ended func(status string) bool
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
	w := &watcher{st: st, id: id, broker: opt.Broker, fn: fn, ends: opt.Ends, endedStatus: opt.Ended, last: opt.After, checked: time.Now()}
	// Subscribe before reading the store, so nothing stored in between
	// is missed; what both bring is skipped by its sequence number.
	w.subscribe()
	defer func() {
		if w.sub != nil {
			w.sub.Close()
		}
	}()
	if err := w.catchUp(ctx); err != nil {
		return err
	}
	if w.last == opt.After && opt.After > 0 {
		n, err := st.ResearchLastSeq(ctx, id)
		if err != nil {
			return err
		}
		if opt.After > n {
			return &store.ValidationError{Field: "after", Rule: fmt.Sprintf("research %s has %d events so far; after must be at most that", id, n)}
		}
	}
	if !w.ended && opt.Ended != nil && opt.Ended(rec.Status) {
		// It had ended when the watch began and all it stored has been
		// delivered: it has nothing more to say (a research given up by
		// its job queue ends so without a last event).
		return nil
	}
	return w.follow(ctx, poll)
}

// watcher delivers one research's events to one subscriber.
type watcher struct {
	st     store.ResearchStore
	id     string
	broker *Broker
	fn     func(store.ResearchEvent) error
	ends   func(store.ResearchEvent) bool
	// endedStatus reports a stored status that has ended (opt.Ended).
	endedStatus func(status string) bool
	sub         *Sub
	live        <-chan store.ResearchEvent
	last        int64 // the last sequence number delivered
	ended       bool
	checked     time.Time // when the stored status was last read
}

// statusEvery is how often a watch reads the research's stored status at
// most: on its poll ticks (every 5 s with a broker), when this long has
// passed since the last read.
const statusEvery = 2 * time.Second

// subscribe joins the broker's stream of the research, when there is one.
func (w *watcher) subscribe() {
	if w.broker != nil {
		w.sub = w.broker.Subscribe(w.id)
		w.live = w.sub.C
	}
}

func (w *watcher) deliver(e store.ResearchEvent) error {
	if err := w.fn(e); err != nil {
		return err
	}
	w.last, w.ended = e.Seq, w.ends != nil && w.ends(e)
	return nil
}

// catchUp delivers what the store holds after the last event delivered.
func (w *watcher) catchUp(ctx context.Context) error {
	evs, err := w.st.ResearchEvents(ctx, w.id, w.last)
	if err != nil {
		return err
	}
	for _, e := range evs {
		if err := w.deliver(e); err != nil {
			return err
		}
	}
	return nil
}

// follow delivers new events as the broker brings them, reading the
// store for what it did not bring (a gap, a rejoin) and every poll,
// until the research ends.
func (w *watcher) follow(ctx context.Context, poll time.Duration) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !w.ended {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.live:
			if !ok {
				if errors.Is(w.sub.Err(), ErrClosed) {
					w.sub, w.live = nil, nil // the store alone from now on
				} else {
					w.subscribe() // cut off for being slow: rejoin
				}
				if err := w.catchUp(ctx); err != nil {
					return err
				}
				continue
			}
			switch {
			case e.Seq <= w.last:
			case e.Seq == w.last+1:
				if err := w.deliver(e); err != nil {
					return err
				}
			default: // the store has what came between
				if err := w.catchUp(ctx); err != nil {
					return err
				}
			}
		case <-tick.C:
			if err := w.catchUp(ctx); err != nil {
				return err
			}
			if err := w.checkStatus(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStatus ends the watch when the research's stored status has ended
// though no event said so: a research its job queue gave up on
// (store.ResearchGiveUp) ends without a last event. What was stored
// before the status changed is delivered first.
func (w *watcher) checkStatus(ctx context.Context) error {
	if w.ended || w.endedStatus == nil || time.Since(w.checked) < statusEvery {
		return nil
	}
	w.checked = time.Now()
	status, err := w.st.ResearchStatus(ctx, w.id)
	if err != nil {
		return err
	}
	if !w.endedStatus(status) {
		return nil
	}
	if err := w.catchUp(ctx); err != nil {
		return err
	}
	w.ended = true
	return nil
}
