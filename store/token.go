package store

import (
	"context"
	"time"
)

// Token is an API bearer token. Only a hash of the secret is stored; the
// secret itself is shown once, when the token is created.
type Token struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Hash      string     `json:"-"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// TokenStore persists API tokens.
type TokenStore interface {
	// TokenCreate stores a token; ErrExists when one of that name is
	// not revoked.
	TokenCreate(ctx context.Context, t Token) error
	// TokenByHash returns the token whose secret hashes to hash, revoked
	// or not; ErrNotFound if none.
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	// TokenList returns every token, oldest first.
	TokenList(ctx context.Context) ([]Token, error)
	// TokenRevoke revokes the live token named name (or with that id);
	// ErrNotFound if none.
	TokenRevoke(ctx context.Context, nameOrID string, at time.Time) error
	// TokenLive counts tokens not revoked.
	TokenLive(ctx context.Context) (int, error)
}

// ResearchFilter selects a page of researches, newest first.
type ResearchFilter struct {
	Status   string
	ThreadID string
	Limit    int
	// Before continues a listing after the research with this creation
	// time and id (the last one of the previous page).
	Before *ResearchCursor
}

// ResearchCursor is a position in the newest-first order.
type ResearchCursor struct {
	CreatedAt time.Time
	ID        string
}

// ChatSession is a stored Q&A conversation (package session keeps the
// rules): its fields, and its messages as a JSON array.
type ChatSession struct {
	ID           string
	Language     string
	CreatedAt    time.Time
	LastActivity time.Time
	Count        int
	Messages     []byte
}

// ChatSessionStore persists Q&A conversations for the embedded mode.
type ChatSessionStore interface {
	ChatSessionCreate(ctx context.Context, s ChatSession) error
	// ChatSessionGet returns a session; ErrNotFound if none.
	ChatSessionGet(ctx context.Context, id string) (*ChatSession, error)
	// ChatSessionUpdate reads a session and writes what fn made of it, in
	// one transaction (two writers never lose each other's change);
	// ErrNotFound if none. An error from fn writes nothing.
	ChatSessionUpdate(ctx context.Context, id string, fn func(*ChatSession) error) (*ChatSession, error)
	ChatSessionDelete(ctx context.Context, id string) error
	// ChatSessionPurge deletes sessions last active before before.
	ChatSessionPurge(ctx context.Context, before time.Time) (int, error)
}
