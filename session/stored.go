package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quarryhq/quarry/store"
)

// Stored keeps sessions in Quarry's database (SQLite or PostgreSQL), for
// the CLI, whose runs are separate processes: the same cap, time to live
// and expiry reports as Memory and Redis. An append reads and writes the
// session in one transaction.
type Stored struct {
	Store store.ChatSessionStore
	// TTL is a session's time to live after its last activity (default
	// 30 minutes); Now the clock (default time.Now).
	TTL time.Duration
	Now func() time.Time
}

var _ Store = (*Stored)(nil)

func (s *Stored) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return TTL
}

func (s *Stored) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Create starts a session; sessions past remembering are purged first.
func (s *Stored) Create(ctx context.Context, language string) (*Session, error) {
	now := s.now()
	ss, err := newSession(language, now)
	if err != nil {
		return nil, err
	}
	if _, err := s.Store.ChatSessionPurge(ctx, now.Add(-s.ttl()-Remember)); err != nil {
		return nil, err
	}
	rec := store.ChatSession{ID: ss.ID, Language: ss.Language, CreatedAt: ss.CreatedAt, LastActivity: ss.LastActivity, Messages: []byte("[]")}
	if err := s.Store.ChatSessionCreate(ctx, rec); err != nil {
		return nil, err
	}
	return ss, nil
}

// Get returns a session.
func (s *Stored) Get(ctx context.Context, id string) (*Session, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	rec, err := s.Store.ChatSessionGet(ctx, id)
	if err != nil {
		return nil, s.missing(id, err)
	}
	if s.now().Sub(rec.LastActivity) >= s.ttl() {
		return nil, expired(id, s.ttl())
	}
	return decodeStored(rec)
}

func (s *Stored) missing(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound(id)
	}
	return err
}

// errExpired carries an expiry out of an update without writing.
var errExpired = errors.New("expired")

// Append adds messages in one transaction.
func (s *Stored) Append(ctx context.Context, id string, msgs ...Message) (*Session, error) {
	now := s.now()
	msgs = slices.Clone(msgs)
	if err := checkAppend(id, msgs, now); err != nil {
		return nil, err
	}
	rec, err := s.Store.ChatSessionUpdate(ctx, id, func(c *store.ChatSession) error {
		if now.Sub(c.LastActivity) >= s.ttl() {
			return errExpired
		}
		var kept []Message
		if err := json.Unmarshal(c.Messages, &kept); err != nil {
			return fmt.Errorf("session %s: stored messages: %w", id, err)
		}
		kept = append(kept, msgs...)
		if n := len(kept); n > MaxMessages {
			kept = kept[n-MaxMessages:]
		}
		data, err := json.Marshal(kept)
		if err != nil {
			return err
		}
		c.Messages, c.Count, c.LastActivity = data, c.Count+len(msgs), now.UTC()
		return nil
	})
	if errors.Is(err, errExpired) {
		return nil, expired(id, s.ttl())
	}
	if err != nil {
		return nil, s.missing(id, err)
	}
	return decodeStored(rec)
}

// Delete ends a session.
func (s *Stored) Delete(ctx context.Context, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	return s.missing(id, s.Store.ChatSessionDelete(ctx, id))
}

func decodeStored(rec *store.ChatSession) (*Session, error) {
	ss := &Session{ID: rec.ID, Language: rec.Language, CreatedAt: rec.CreatedAt, LastActivity: rec.LastActivity, Count: rec.Count, Messages: []Message{}}
	if err := json.Unmarshal(rec.Messages, &ss.Messages); err != nil {
		return nil, fmt.Errorf("session %s: stored messages: %w", rec.ID, err)
	}
	return ss, nil
}
