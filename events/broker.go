// Package events owns a research's events once the run has made them:
// dispatch (stored in sequence order, checkpoints with them, and only then
// published — Dispatcher), fan-out to the subscribers in this process
// (Broker), replay and follow for a watcher (Watch), and the events other
// processes store, brought to this process's broker (Follow).
package events

import (
	"errors"
	"sync"

	"github.com/quarryhq/quarry/store"
)

// ErrSlow ends a subscription whose reader fell too far behind.
var ErrSlow = errors.New("subscriber too slow: events were arriving faster than it read them; rejoin after the last sequence number it received")

// ErrClosed ends subscriptions when the broker closes.
var ErrClosed = errors.New("broker closed")

// DefaultBuffer is how many events a subscriber may lag behind.
const DefaultBuffer = 256

// Broker fans events out by topic (a research id) to the subscribers in
// this process, as they are stored. Publishing never blocks: a subscriber
// that falls a full buffer behind is cut off with ErrSlow and rejoins
// from the last sequence number it saw (the store holds every event). The
// zero value is not usable; call NewBroker.
type Broker struct {
	buf    int
	mu     sync.Mutex
	topics map[string]map[*Sub]struct{}
	closed bool
}

// NewBroker returns a broker whose subscribers may lag buf events
// (DefaultBuffer when buf <= 0).
func NewBroker(buf int) *Broker {
	if buf <= 0 {
		buf = DefaultBuffer
	}
	return &Broker{buf: buf, topics: map[string]map[*Sub]struct{}{}}
}

// Sub is one subscription. Events arrive on C in the order they were
// published; when the subscription ends C is closed and Err says why.
type Sub struct {
	C     <-chan store.ResearchEvent
	c     chan store.ResearchEvent
	b     *Broker
	topic string
	err   error
}

// Subscribe follows topic from now on.
func (b *Broker) Subscribe(topic string) *Sub {
	s := &Sub{c: make(chan store.ResearchEvent, b.buf), b: b, topic: topic}
	s.C = s.c
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.err = ErrClosed
		close(s.c)
		return s
	}
	if b.topics[topic] == nil {
		b.topics[topic] = map[*Sub]struct{}{}
	}
	b.topics[topic][s] = struct{}{}
	return s
}

// Publish delivers e to topic's subscribers. Callers publish one topic's
// events from one goroutine, in sequence order.
func (b *Broker) Publish(topic string, e store.ResearchEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.topics[topic] {
		select {
		case s.c <- e:
		default:
			b.endLocked(s, ErrSlow)
		}
	}
}

// Subscribers counts topic's subscribers.
func (b *Broker) Subscribers(topic string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.topics[topic])
}

// Close ends every subscription.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, subs := range b.topics {
		for s := range subs {
			b.endLocked(s, ErrClosed)
		}
	}
}

func (b *Broker) endLocked(s *Sub, err error) {
	subs := b.topics[s.topic]
	if _, ok := subs[s]; !ok {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(b.topics, s.topic)
	}
	s.err = err
	close(s.c)
}

// Close ends the subscription; C is closed and Err is nil.
func (s *Sub) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.endLocked(s, nil)
}

// Err says why C was closed: ErrSlow, ErrClosed, or nil after Close. Read
// it after C is closed.
func (s *Sub) Err() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.err
}
