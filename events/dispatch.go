package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/store"
)

// Dispatcher delivers one run's events of type E: it stores them in
// sequence order and only then publishes them and hands them to onEvent,
// all from one goroutine, so every subscriber sees each event once, in
// order, never concurrently, and never an event the store does not hold.
// The run itself only queues events and never waits for a subscriber.
type Dispatcher[E any] struct {
	st      store.ResearchStore
	id      string
	record  func(E) (store.ResearchEvent, error)
	publish func(store.ResearchEvent)
	onEvent func(E)
	logger  *slog.Logger

	mu        sync.Mutex
	cond      *sync.Cond
	queue     []E
	state     *store.Research // a checkpoint to write with the queued events
	enqueued  int
	delivered int
	closed    bool
	err       error
	done      chan struct{}
}

// NewDispatcher starts the delivery of the events of research id: record
// turns an event into the record stored, publish (when set) and onEvent
// (when set) receive each once it is stored. Close stops it.
func NewDispatcher[E any](st store.ResearchStore, id string, record func(E) (store.ResearchEvent, error), publish func(store.ResearchEvent), onEvent func(E), logger *slog.Logger) *Dispatcher[E] {
	d := &Dispatcher[E]{st: st, id: id, record: record, publish: publish, onEvent: onEvent, logger: logger, done: make(chan struct{})}
	d.cond = sync.NewCond(&d.mu)
	go d.loop()
	return d
}

// Enqueue queues e for delivery; its sequence number is already set.
func (d *Dispatcher[E]) Enqueue(e E) {
	d.mu.Lock()
	d.queue = append(d.queue, e)
	d.enqueued++
	d.cond.Broadcast()
	d.mu.Unlock()
}

// Flush waits until every event queued so far is stored and delivered,
// and returns the first store error.
func (d *Dispatcher[E]) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	target := d.enqueued
	for d.delivered < target {
		d.cond.Wait()
	}
	return d.err
}

// Put queues a checkpoint of the research's state, after the given
// events, so that both are written in one transaction with the events
// queued before them (a client that sees the events reads the state they
// announce). Flush waits for it.
func (d *Dispatcher[E]) Put(rec store.Research, events ...E) {
	d.mu.Lock()
	d.queue = append(d.queue, events...)
	d.state = &rec
	d.enqueued += len(events) + 1 // the checkpoint counts as one delivery
	d.cond.Broadcast()
	d.mu.Unlock()
}

// Close delivers what is queued and stops the goroutine.
func (d *Dispatcher[E]) Close() error {
	err := d.Flush()
	d.mu.Lock()
	d.closed = true
	d.cond.Broadcast()
	d.mu.Unlock()
	<-d.done
	return err
}

func (d *Dispatcher[E]) loop() {
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
		// A panic in a subscriber (a caller's OnEvent) fails this run's
		// delivery — the next checkpoint reports it — not the process.
		err := safe.Call(func() error { return d.deliver(batch, state) })
		if stack := safe.Stack(err); stack != nil {
			d.logger.Error("event delivery panicked", "research", d.id, "err", err, "stack", string(stack))
		}
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

func (d *Dispatcher[E]) deliver(batch []E, state *store.Research) error {
	recs := make([]store.ResearchEvent, len(batch))
	for i, e := range batch {
		rec, err := d.record(e)
		if err != nil {
			return err
		}
		recs[i] = rec
	}
	// Events are kept even when the research was interrupted: they say
	// what happened up to then. A database away (a restart, a failover)
	// is waited for up to storeAway.
	ctx, cancel := context.WithTimeout(context.Background(), storeAway)
	defer cancel()
	if state != nil {
		if err := RetryTransient(ctx, d.logger, func() error { return d.st.ResearchSave(ctx, *state, recs) }); err != nil {
			d.logger.Error("checkpoint", "err", err)
			return fmt.Errorf("store checkpoint: %w", err)
		}
	} else if err := RetryTransient(ctx, d.logger, func() error { return d.st.ResearchAppendEvents(ctx, d.id, recs) }); err != nil {
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

// RetryTransient runs a store write again while the database connection
// is lost (a restart, a dropped connection), backing off up to 2 s, until
// ctx ends. A write refused as a duplicate after such a loss had committed
// before the connection went: it is done.
func RetryTransient(ctx context.Context, logger *slog.Logger, write func() error) error {
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
