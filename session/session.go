// Package session keeps Q&A conversations: a session has a
// language, its creation and last activity times and at most 50 messages,
// the oldest dropped first, and it expires 30 minutes after its last
// activity, refreshed on each. Two stores keep them behind one interface:
// Memory (the embedded default) and Redis (session:{id}, shared by every
// process). A session past its time is reported expired, never silently
// replaced by a new one.
package session

import (
	"context"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/errcode"
)

// Limits.
const (
	MaxMessages       = 50
	TTL               = 30 * time.Minute
	MaxContentChars   = 10000 // a console message's limit (a Q&A question's own 2,000 is qa's)
	MaxSuggestions    = 3
	MaxSuggestionChar = 200
	// Remember is how long an expired session is still known to have
	// existed, so that it is reported expired rather than unknown.
	Remember = 24 * time.Hour
)

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role        string    `json:"role"`
	Content     string    `json:"content"`
	Timestamp   time.Time `json:"timestamp"`
	Sources     []string  `json:"sources,omitempty"`
	Confidence  *float64  `json:"confidence_score,omitempty"`
	Suggestions []string  `json:"suggested_questions,omitempty"`
}

// Session is a conversation.
type Session struct {
	ID           string    `json:"session_id"`
	Language     string    `json:"language"`
	CreatedAt    time.Time `json:"created_at"`
	LastActivity time.Time `json:"last_activity"`
	Messages     []Message `json:"messages"`
	// Count is how many messages were ever appended (the kept ones are
	// the newest MaxMessages of them).
	Count int `json:"message_count"`
}

// Store keeps sessions. Append is atomic: two writers never lose a
// message.
type Store interface {
	// Create starts a session in language (ko or en).
	Create(ctx context.Context, language string) (*Session, error)
	// Get returns a session: ErrNotFound when there never was one,
	// ErrExpired when it passed its time.
	Get(ctx context.Context, id string) (*Session, error)
	// Append adds messages, drops the oldest beyond MaxMessages, and
	// refreshes the session's last activity and time to live.
	Append(ctx context.Context, id string, msgs ...Message) (*Session, error)
	// Delete ends a session (a cleared conversation).
	Delete(ctx context.Context, id string) error
}

// Errors a caller branches on.
var (
	ErrNotFound = errcode.Sentinel(errcode.NotFound, "session not found")
	ErrExpired  = errcode.Sentinel(errcode.NotFound, "session expired")
)

func notFound(id string) error { return fmt.Errorf("session %s: %w", id, ErrNotFound) }

func expired(id string, ttl time.Duration) error {
	return fmt.Errorf("session %s expired after %s without activity; start a new one: %w", id, ttl, ErrExpired)
}

// CheckID accepts a UUIDv4 session id.
func CheckID(id string) error {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 4 || len(id) != 36 {
		return errcode.New(errcode.Invalid, "session_id", fmt.Sprintf("must be a UUID v4, got %q", id))
	}
	return nil
}

// CheckLanguage accepts ko and en.
func CheckLanguage(lang string) error {
	if lang != "ko" && lang != "en" {
		return errcode.New(errcode.Invalid, "language", fmt.Sprintf("must be 'ko' or 'en', got %q", lang))
	}
	return nil
}

// Check applies the seed's message rules.
func (m Message) Check() error {
	bad := func(field, rule string) error { return errcode.New(errcode.Invalid, field, rule) }
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return bad("role", fmt.Sprintf("must be 'user' or 'assistant', got %q", m.Role))
	}
	if n := utf8.RuneCountInString(m.Content); n < 1 || n > MaxContentChars {
		return bad("content", fmt.Sprintf("must be 1-%d characters, got %d", MaxContentChars, n))
	}
	if m.Role == RoleUser && (len(m.Sources) > 0 || m.Confidence != nil || len(m.Suggestions) > 0) {
		return bad("role", "only assistant messages carry sources, confidence and suggestions")
	}
	for _, s := range m.Sources {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" && u.Scheme != "file" {
			return bad("sources", fmt.Sprintf("must be URLs, got %q", s))
		}
	}
	if c := m.Confidence; c != nil && (*c < 0 || *c > 1) {
		return bad("confidence_score", fmt.Sprintf("must be between 0.0 and 1.0, got %g", *c))
	}
	if len(m.Suggestions) > MaxSuggestions {
		return bad("suggested_questions", fmt.Sprintf("at most %d, got %d", MaxSuggestions, len(m.Suggestions)))
	}
	for _, s := range m.Suggestions {
		if n := utf8.RuneCountInString(s); n < 1 || n > MaxSuggestionChar {
			return bad("suggested_questions", fmt.Sprintf("each must be 1-%d characters, got %d", MaxSuggestionChar, n))
		}
	}
	return nil
}

// checkAppend checks an append's id and messages, and stamps messages
// without a time.
func checkAppend(id string, msgs []Message, now time.Time) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if len(msgs) == 0 {
		return errcode.New(errcode.Invalid, "messages", "give at least one message")
	}
	for i := range msgs {
		if err := msgs[i].Check(); err != nil {
			return err
		}
		if msgs[i].Timestamp.IsZero() {
			msgs[i].Timestamp = now
		}
		msgs[i].Timestamp = msgs[i].Timestamp.UTC()
	}
	return nil
}

func newSession(lang string, now time.Time) (*Session, error) {
	if err := CheckLanguage(lang); err != nil {
		return nil, err
	}
	// Microseconds: what every store keeps.
	now = now.UTC().Truncate(time.Microsecond)
	return &Session{ID: uuid.NewString(), Language: lang, CreatedAt: now, LastActivity: now, Messages: []Message{}}, nil
}
