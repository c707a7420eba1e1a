package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quarryhq/quarry/store"
)

// TokenCreate stores a token.
func (s *DB) TokenCreate(ctx context.Context, t store.Token) error {
	_, err := s.SQL.ExecContext(ctx, s.q(`INSERT INTO api_tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)`),
		t.ID, t.Name, t.Hash, strings.Join(t.Scopes, ","), s.tm(t.CreatedAt))
	if err != nil {
		if s.uniqueErr(err) {
			return fmt.Errorf("token %q: %w", t.Name, store.ErrExists)
		}
		return fmt.Errorf("token create: %w", err)
	}
	return nil
}

const tokenCols = `id, name, hash, scopes, created_at, revoked_at`

func scanToken(sc rowScanner) (store.Token, error) {
	var t store.Token
	var scopes string
	var created, revoked scanTime
	err := sc.Scan(&t.ID, &t.Name, &t.Hash, &scopes, &created, &revoked)
	t.CreatedAt = created.T
	if revoked.Valid {
		at := revoked.T
		t.RevokedAt = &at
	}
	t.Scopes = []string{}
	if scopes != "" {
		t.Scopes = strings.Split(scopes, ",")
	}
	return t, err
}

// TokenByHash returns the token with this hash.
func (s *DB) TokenByHash(ctx context.Context, hash string) (*store.Token, error) {
	t, err := scanToken(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+tokenCols+` FROM api_tokens WHERE hash = ?`), hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	return &t, nil
}

// TokenList returns every token, oldest first.
func (s *DB) TokenList(ctx context.Context) ([]store.Token, error) {
	return list(ctx, s.SQL, "token list", `SELECT `+tokenCols+` FROM api_tokens ORDER BY created_at, id`, nil, scanToken)
}

// TokenRevoke revokes a live token by name or id.
func (s *DB) TokenRevoke(ctx context.Context, nameOrID string, at time.Time) error {
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE api_tokens SET revoked_at = ? WHERE (name = ? OR id = ?) AND revoked_at IS NULL`), s.tm(at), nameOrID, nameOrID)
	if err != nil {
		return fmt.Errorf("token revoke: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("token revoke: %w", err)
	} else if n == 0 {
		return fmt.Errorf("token %q: %w", nameOrID, store.ErrNotFound)
	}
	return nil
}

// TokenLive counts tokens not revoked.
func (s *DB) TokenLive(ctx context.Context) (int, error) {
	var n int
	if err := s.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("token count: %w", err)
	}
	return n, nil
}
