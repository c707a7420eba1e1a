package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ExerciseTokens is the conformance part for API tokens.
func ExerciseTokens(t *testing.T, open Opener) {
	t.Helper()
	ctx := context.Background()
	t.Run("Tokens", func(t *testing.T) {
		s := open(t)
		t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		if n, err := s.TokenLive(ctx); err != nil || n != 0 {
			t.Fatalf("live on an empty store: %d %v", n, err)
		}
		a := store.Token{ID: "tok-a", Name: "ci", Hash: "h-a", Scopes: []string{"research", "kb"}, CreatedAt: t0}
		if err := s.TokenCreate(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := s.TokenCreate(ctx, store.Token{ID: "tok-b", Name: "ci", Hash: "h-b", CreatedAt: t0}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("a second live token of one name: %v", err)
		}
		got, err := s.TokenByHash(ctx, "h-a")
		if err != nil || got.ID != "tok-a" || got.Name != "ci" || strings.Join(got.Scopes, ",") != "research,kb" || got.RevokedAt != nil || !got.CreatedAt.Equal(t0) {
			t.Fatalf("by hash: %+v %v", got, err)
		}
		if _, err := s.TokenByHash(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown hash: %v", err)
		}
		if err := s.TokenRevoke(ctx, "ci", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.TokenRevoke(ctx, "ci", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("revoke twice: %v", err)
		}
		got, err = s.TokenByHash(ctx, "h-a")
		if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("revoked token: %+v %v", got, err)
		}
		// The name is free again once its token is revoked.
		if err := s.TokenCreate(ctx, store.Token{ID: "tok-c", Name: "ci", Hash: "h-c", Scopes: []string{}, CreatedAt: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.TokenLive(ctx); err != nil || n != 1 {
			t.Fatalf("live: %d %v", n, err)
		}
		list, err := s.TokenList(ctx)
		if err != nil || len(list) != 2 || list[0].ID != "tok-a" || list[1].ID != "tok-c" || list[1].Scopes == nil {
			t.Fatalf("list: %+v %v", list, err)
		}
		if err := s.TokenRevoke(ctx, "tok-c", t0); err != nil {
			t.Fatalf("revoke by id: %v", err)
		}
	})
}
