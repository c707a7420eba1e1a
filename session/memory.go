package session

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Memory keeps sessions in this process, with Redis's semantics: the
// same cap, time to live and expiry reports.
type Memory struct {
	// TTL is a session's time to live after its last activity (default
	// 30 minutes); Now the clock (default time.Now).
	TTL time.Duration
	Now func() time.Time

	mu    sync.Mutex
	m     map[string]*Session
	sweep time.Time
}

var _ Store = (*Memory)(nil)

func (s *Memory) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return TTL
}

func (s *Memory) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Create starts a session.
func (s *Memory) Create(_ context.Context, language string) (*Session, error) {
	ss, err := newSession(language, s.now())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*Session{}
	}
	s.m[ss.ID] = ss
	return clone(ss), nil
}

// live returns a session that has not expired. s.mu is held.
func (s *Memory) live(id string, now time.Time) (*Session, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	if now.Sub(s.sweep) > time.Minute {
		for k, v := range s.m {
			if now.Sub(v.LastActivity) > s.ttl()+Remember {
				delete(s.m, k)
			}
		}
		s.sweep = now
	}
	ss := s.m[id]
	switch {
	case ss == nil:
		return nil, notFound(id)
	case now.Sub(ss.LastActivity) >= s.ttl():
		ss.Messages = nil // what Redis would have dropped
		return nil, expired(id, s.ttl())
	}
	return ss, nil
}

// Get returns a session.
func (s *Memory) Get(_ context.Context, id string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, err := s.live(id, s.now())
	if err != nil {
		return nil, err
	}
	return clone(ss), nil
}

// Append adds messages atomically.
func (s *Memory) Append(_ context.Context, id string, msgs ...Message) (*Session, error) {
	now := s.now()
	msgs = slices.Clone(msgs)
	if err := checkAppend(id, msgs, now); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, err := s.live(id, now)
	if err != nil {
		return nil, err
	}
	ss.Messages = append(ss.Messages, msgs...)
	if n := len(ss.Messages); n > MaxMessages {
		ss.Messages = slices.Clone(ss.Messages[n-MaxMessages:])
	}
	ss.Count += len(msgs)
	ss.LastActivity = now.UTC()
	return clone(ss), nil
}

// Delete ends a session.
func (s *Memory) Delete(_ context.Context, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[id] == nil {
		return notFound(id)
	}
	delete(s.m, id)
	return nil
}

func clone(ss *Session) *Session {
	c := *ss
	c.Messages = make([]Message, len(ss.Messages))
	for i, m := range ss.Messages {
		m.Sources, m.Suggestions = slices.Clone(m.Sources), slices.Clone(m.Suggestions)
		c.Messages[i] = m
	}
	return &c
}
