package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quarryhq/quarry/store"
)

// dispatcher delivers one run's events: it stores them in sequence order
// and only then publishes them and calls OnEvent, all from one goroutine,
// so every subscriber sees each event once, in order, never concurrently,
// and never an event the store does not hold. The research itself only
// queues events and never waits for a subscriber.
type dispatcher struct {
	st      store.ResearchStore
	id      string
	publish func(store.ResearchEvent)
	onEvent func(Event)
	logger  *slog.Logger

	mu        sync.Mutex
	cond      *sync.Cond
	queue     []Event
	state     *store.Research // a checkpoint to write with the queued events
	enqueued  int
	delivered int
	closed    bool
	err       error
	done      chan struct{}
}

func newDispatcher(st store.ResearchStore, id string, publish func(store.ResearchEvent), onEvent func(Event), logger *slog.Logger) *dispatcher {
	d := &dispatcher{st: st, id: id, publish: publish, onEvent: onEvent, logger: logger, done: make(chan struct{})}
	d.cond = sync.NewCond(&d.mu)
	go d.loop()
	return d
}

// enqueue queues e for delivery; its Seq is already set.
func (d *dispatcher) enqueue(e Event) {
	d.mu.Lock()
	d.queue = append(d.queue, e)
	d.enqueued++
	d.cond.Broadcast()
	d.mu.Unlock()
}

// flush waits until every event queued so far is stored and delivered,
// and returns the first store error.
func (d *dispatcher) flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	target := d.enqueued
	for d.delivered < target {
		d.cond.Wait()
	}
	return d.err
}

// put queues a checkpoint of the research's state, after the given
// events, so that both are written in one transaction with the events
// queued before them (a client that sees the events reads the state they
// announce). flush waits for it.
func (d *dispatcher) put(rec store.Research, events ...Event) {
	d.mu.Lock()
	d.queue = append(d.queue, events...)
	d.state = &rec
	d.enqueued += len(events) + 1 // the checkpoint counts as one delivery
	d.cond.Broadcast()
	d.mu.Unlock()
}

// close delivers what is queued and stops the goroutine.
func (d *dispatcher) close() error {
	err := d.flush()
	d.mu.Lock()
	d.closed = true
	d.cond.Broadcast()
	d.mu.Unlock()
	<-d.done
	return err
}

func (d *dispatcher) loop() {
	defer close(d.done)
	for {
		d.mu.Lock()
		for len(d.queue) == 0 && d.state == nil && !d.closed {
			d.cond.Wait()
		}
		batch, state, closed := d.queue, d.state, d.closed
		d.queue, d.state = nil, nil
		d.mu.Unlock()
		if len(batch) == 0 && state == nil && closed {
			return
		}
		err := d.deliver(batch, state)
		d.mu.Lock()
		d.delivered += len(batch)
		if state != nil {
			d.delivered++
		}
		if err != nil && d.err == nil {
			d.err = err
		}
		d.cond.Broadcast()
		d.mu.Unlock()
	}
}

func (d *dispatcher) deliver(batch []Event, state *store.Research) error {
	recs := make([]store.ResearchEvent, len(batch))
	for i, e := range batch {
		data, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("event %d: %w", e.Seq, err)
		}
		recs[i] = store.ResearchEvent{Seq: e.Seq, Type: e.Type, At: e.At, Data: data}
	}
	// Events are kept even when the research was interrupted: they say
	// what happened up to then. A database away (a restart, a failover)
	// is waited for up to storeAway.
	ctx, cancel := context.WithTimeout(context.Background(), storeAway)
	defer cancel()
	if state != nil {
		if err := retryTransient(ctx, d.logger, func() error { return d.st.ResearchSave(ctx, *state, recs) }); err != nil {
			d.logger.Error("checkpoint", "err", err)
			return fmt.Errorf("store checkpoint: %w", err)
		}
	} else if err := retryTransient(ctx, d.logger, func() error { return d.st.ResearchAppendEvents(ctx, d.id, recs) }); err != nil {
		d.logger.Error("store research events", "err", err)
		return fmt.Errorf("store events: %w", err)
	}
	for i, e := range batch {
		if d.publish != nil {
			d.publish(recs[i])
		}
		if d.onEvent != nil {
			d.onEvent(e)
		}
	}
	return nil
}

// storeAway is how long a checkpoint waits for a database that went away
// before the research fails (resumable): a restart or a failover of half
// a minute or more is not a failure.
const storeAway = 2 * time.Minute

// retryTransient runs a store write again while the database connection
// is lost (a restart, a dropped connection), backing off up to 2 s, until
// ctx ends. A write refused as a duplicate after such a loss had committed
// before the connection went: it is done.
func retryTransient(ctx context.Context, logger *slog.Logger, write func() error) error {
	wait := 100 * time.Millisecond
	lost := false
	for {
		err := write()
		if err == nil || lost && errors.Is(err, store.ErrExists) {
			return nil
		}
		if !store.Transient(err) {
			return err
		}
		lost = true
		logger.Warn("store: connection lost; writing again", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (the store did not come back: %v)", err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
